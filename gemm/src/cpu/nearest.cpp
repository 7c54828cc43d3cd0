// cpu::nearest_columns (gemm.hpp): the reference of cuda::nearest_columns, the nearest column of
// B for every column of A without the m x n distance block.
//   ec-fp16, ec-tf32, auto   D tile by tile (128 columns of B at a time, as the cuda kernels'
//                            tiles) by cpu::gemm: the ec scaling is per row of op(A) and column
//                            of op(B), so a tile's D is bitwise those columns of the whole D;
//                            auto resolves once over the whole operands (as one cuda call), then
//                            every tile runs the variant it chose;
//   fp32-simt                FP32 FMAs in k order from zero (the cuda SIMT kernel's arithmetic,
//                            not Eigen's blocked sums).
// Each tile's minimum per row is merged with the running one lexicographically on (score, j):
// the result is the argmin over all j, the lowest j on ties, whatever the tiling.
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/scaling.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cpu {
namespace {

constexpr int kTileColumns = 128;  ///< columns of B per tile (the cuda kernels' tile width)

/// Largest exponent range (nonzero finite values) over the `count` vectors of length k at V.
int largest_range(const float* V, int ld, int count, int k) {
  int largest = 0;
  for (int v = 0; v < count; ++v) {
    int hi = INT_MIN, lo = INT_MAX;
    for (int p = 0; p < k; ++p) fold_exponent(V[static_cast<std::size_t>(v) * ld + p], hi, lo);
    if (hi != INT_MIN) largest = std::max(largest, hi - lo);
  }
  return largest;
}

}  // namespace

GemmInfo nearest_columns(Variant variant, int m, int n, int k, const float* A, int lda, const float* B, int ldb,
                         const double* weights, int* labels, long long* changed, const GemmOptions& options) {
  check_gemm_arguments(Op::t, Op::n, m, n, k, lda, ldb, m);  // D = A^T B, m x n
  GemmInfo info;
  info.requested = info.resolved = variant;
  Variant run = variant;
  switch (variant) {
    case Variant::fp32_simt:
    case Variant::ec_fp16:
    case Variant::ec_tf32: break;
    case Variant::auto_:
      run = auto_uses_fp16(largest_range(A, lda, m, k), largest_range(B, ldb, n, k)) ? Variant::ec_fp16
                                                                                        : Variant::ec_tf32;
      info.resolved = run;
      break;
    default:
      throw Unavailable("nearest_columns: no fused path for " + std::string(to_string(variant)) +
                        " (fp32-simt, ec-fp16, ec-tf32, auto)");
  }
  std::vector<double> best(static_cast<std::size_t>(m), std::numeric_limits<double>::infinity());
  std::vector<int> best_j(static_cast<std::size_t>(m), INT_MAX);
  std::vector<float> D(static_cast<std::size_t>(m) * kTileColumns);
  GemmOptions unsplit = options;  // the cuda kernel's epilogue needs whole rows: k is never split
  unsplit.split_k = 1;
  for (int j0 = 0; j0 < n; j0 += kTileColumns) {
    const int cols = std::min(kTileColumns, n - j0);
    const float* Bt = B + static_cast<std::size_t>(j0) * ldb;
    if (run == Variant::fp32_simt) {
      for (int c = 0; c < cols; ++c)
        for (int i = 0; i < m; ++i) {
          const float *a = A + static_cast<std::size_t>(i) * lda, *b = Bt + static_cast<std::size_t>(c) * ldb;
          float acc = 0.0f;
          for (int p = 0; p < k; ++p) acc = std::fma(a[p], b[p], acc);
          D[static_cast<std::size_t>(c) * m + i] = acc;
        }
    } else {
      gemm(run, Op::t, Op::n, m, cols, k, 1.0f, A, lda, Bt, ldb, 0.0f, D.data(), m, unsplit);
    }
    // this tile's minimum per row (columns ascending, strict <), merged into the running one
    for (int i = 0; i < m; ++i) {
      double tb = std::numeric_limits<double>::infinity();
      int tj = INT_MAX;
      for (int c = 0; c < cols; ++c) {
        const double s = weights[j0 + c] - 2.0 * static_cast<double>(D[static_cast<std::size_t>(c) * m + i]);
        if (s < tb) tb = s, tj = j0 + c;
      }
      if (tb < best[i] || (tb == best[i] && tj < best_j[i])) best[i] = tb, best_j[i] = tj;
    }
  }
  for (int i = 0; i < m; ++i) {
    const int label = best_j[i] == INT_MAX ? 0 : best_j[i];
    if (changed != nullptr) *changed += labels[i] != label;
    labels[i] = label;
  }
  return info;
}

}  // namespace tcsolve::cpu
