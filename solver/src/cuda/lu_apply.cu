// The FP64 LU's solve in one launch (kernels::lu_apply): x = C A_s^-1 R b with dgetrf's factors
// of the equilibrated A_s, for DeviceFp64Lu::apply (the FP64 path of small systems, whose solve
// cuSOLVER does in five launches: a column maximum, a scaling, dgetrs's interchanges and two
// triangular solves, then a scaling: 73 us at n = 200 on an H200, 18% of dgetrf's time).
//
// One thread block per right-hand side holds the vector in shared memory:
//   scale     the block's maximum of |R b| (NaN kept), its frexp exponent k, and w = ldexp(b,
//             log2 R - k) (EquilibratedInverse's scaling, bitwise scale_pow2's);
//   permute   one thread composes dgetrf's interchanges into a permutation while the others
//             reduce the maximum; then w is gathered through it;
//   L, U      by blocks of 32 rows: warp 0 solves the diagonal block by substitution, a lane per
//             row, its 32 x 32 block of the factors in registers (loaded while the previous
//             block's update runs), one shuffle a column; then every warp updates the rest of
//             the vector by the block's columns, four lanes a row, each summing 8 columns
//             (column-major: the lanes of a warp read 8 consecutive rows of 4 columns), the four
//             sums added by two shuffles in a fixed tree. U's diagonal is applied through its
//             reciprocal, computed beside the load (triangular.cu does the same);
//   unscale   x = ldexp(w, log2 C + k).
// Every step's order is fixed by the indices alone: the result is bitwise cpu/lu_apply.hpp's
// lu_apply_reference. Accuracy: each triangular solve is a substitution over at most n + 2
// roundings per entry (a reciprocal and a product for U's diagonal), backward stable with
// gamma_{n+2} (Higham, Thm 8.5), as dgetrs's.
#include <cuda_runtime.h>

#include <cfloat>
#include <cstddef>
#include <string>

#include "../cpu/lu_apply.hpp"
#include "kernels.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kBlock = cpu::kLuApplyBlock;  ///< rows of a diagonal block: one warp's lanes
constexpr int kParts = cpu::kLuApplyParts;  ///< lanes (partial sums) per row of an update
constexpr int kPartCols = kBlock / kParts;
constexpr int kRowsPerWarp = 32 / kParts;
constexpr unsigned kFull = 0xffffffffu;
static_assert(kBlock == 32 && kParts == 4, "a diagonal block is one warp; a row's update four lanes");

__device__ __forceinline__ double nan_max(double a, double b) { return (a != a || a > b) ? a : b; }

__device__ __forceinline__ double at(const double* lu, int n, int i, int j) {
  return lu[i + static_cast<std::size_t>(j) * n];
}

/// Lane `lane`'s row of the diagonal block [r0, r1): L's entries left of the diagonal (lower) or
/// U's right of it (upper), 0 elsewhere.
template <bool kLower>
__device__ __forceinline__ void load_diagonal_block(const double* lu, int n, int r0, int r1, int lane,
                                                    double (&t)[kBlock]) {
  const int r = r0 + lane;
#pragma unroll
  for (int c = 0; c < kBlock; ++c) {
    const bool inside = kLower ? c < lane : c > lane;
    t[c] = (inside && r < r1 && r0 + c < r1) ? at(lu, n, r, r0 + c) : 0.0;
  }
}

/// w_i -= (the product of row i of the columns [c0, c1) with w[c0, c1)) for the rows [i0, i1),
/// four lanes a row (cpu/lu_apply.cpp's block_product).
__device__ __forceinline__ void update_rows(const double* lu, int n, int c0, int c1, int i0, int i1, double* w,
                                            int warp, int lane) {
  const int part = lane % kParts;
  for (int base = i0 + warp * kRowsPerWarp; base < i1; base += kWarps * kRowsPerWarp) {
    const int i = base + lane / kParts;  // uniform trip count per warp: the shuffles need every lane
    double s = 0;
    if (i < i1) {
#pragma unroll
      for (int j = 0; j < kPartCols; ++j) {
        const int c = c0 + part * kPartCols + j;
        if (c < c1) s = fma(at(lu, n, i, c), w[c], s);
      }
    }
    s = __dadd_rn(s, __shfl_xor_sync(kFull, s, 1));  // (s0 + s1), (s2 + s3)
    s = __dadd_rn(s, __shfl_xor_sync(kFull, s, 2));  // their sum
    if (i < i1 && part == 0) w[i] = __dsub_rn(w[i], s);
  }
}

__global__ void __launch_bounds__(kThreads)
    lu_apply_kernel(const double* __restrict__ lu, int n, const int* __restrict__ ipiv,
                    const double* __restrict__ row_scale, const double* __restrict__ col_scale, const double* rhs,
                    int cols, double* out, double* __restrict__ diagonal, const int* __restrict__ info) {
  extern __shared__ double shared[];
  double* w = shared;                                    // n
  int* perm = reinterpret_cast<int*>(shared + n);        // n
  __shared__ double partial[kWarps];
  __shared__ int exponent;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  if (diagonal != nullptr && blockIdx.x == 0) {  // U's diagonal and info for the caller's read-back
    for (int i = tid; i < n; i += kThreads) diagonal[i] = at(lu, n, i, i);
    if (tid == 0) *reinterpret_cast<int*>(diagonal + n) = *info;
  }
  for (int col = blockIdx.x; col < cols; col += gridDim.x) {
    const double* b = rhs + static_cast<std::size_t>(col) * n;
    // scale and permute: thread 0 composes the interchanges; the others find max |R b|
    for (int i = tid; i < n; i += kThreads) perm[i] = i;
    __syncthreads();
    double m = 0;
    if (tid == 0) {
      for (int i = 0; i < n; ++i) {
        const int p = ipiv[i] - 1;
        const int t = perm[i];
        perm[i] = perm[p];
        perm[p] = t;
      }
    } else {
      for (int i = tid - 1; i < n; i += kThreads - 1) m = nan_max(m, fabs(__dmul_rn(row_scale[i], b[i])));
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) m = nan_max(m, __shfl_xor_sync(kFull, m, o));
    if (lane == 0) partial[warp] = m;
    __syncthreads();
    if (tid == 0) {
      double s = partial[0];
      for (int q = 1; q < kWarps; ++q) s = nan_max(s, partial[q]);
      int e = 0;
      if (s > 0 && s <= DBL_MAX) frexp(s, &e);
      exponent = e;
    }
    __syncthreads();
    const int k = exponent;
    for (int i = tid; i < n; i += kThreads) {
      const int p = perm[i];
      w[i] = ldexp(b[p], ilogb(row_scale[p]) - k);
    }
    double t[kBlock];
    if (warp == 0) load_diagonal_block<true>(lu, n, 0, min(n, kBlock), lane, t);
    __syncthreads();

    // L (unit lower), top down
    for (int r0 = 0; r0 < n; r0 += kBlock) {
      const int r1 = min(n, r0 + kBlock);
      if (warp == 0) {
        double v = r0 + lane < r1 ? w[r0 + lane] : 0.0;
#pragma unroll
        for (int c = 0; c < kBlock; ++c) {
          const double x = __shfl_sync(kFull, v, c);
          if (lane > c) v = fma(-t[c], x, v);
        }
        if (r0 + lane < r1) w[r0 + lane] = v;
        if (r1 < n) load_diagonal_block<true>(lu, n, r1, min(n, r1 + kBlock), lane, t);  // the next block's
      }
      __syncthreads();
      update_rows(lu, n, r0, r1, r1, n, w, warp, lane);
      __syncthreads();
    }

    // U (upper), bottom up
    const int blocks = (n + kBlock - 1) / kBlock;
    double inverse = 1;
    if (warp == 0) {
      const int r0 = (blocks - 1) * kBlock;
      load_diagonal_block<false>(lu, n, r0, n, lane, t);
      if (r0 + lane < n) inverse = __ddiv_rn(1.0, at(lu, n, r0 + lane, r0 + lane));
    }
    for (int q = blocks - 1; q >= 0; --q) {
      const int r0 = q * kBlock, r1 = min(n, r0 + kBlock);
      if (warp == 0) {
        double v = r0 + lane < r1 ? w[r0 + lane] : 0.0;
#pragma unroll
        for (int c = kBlock - 1; c >= 0; --c) {
          if (r0 + c >= r1) continue;  // past the last row (uniform across the warp)
          if (lane == c) v = __dmul_rn(v, inverse);
          const double x = __shfl_sync(kFull, v, c);
          if (lane < c) v = fma(-t[c], x, v);
        }
        if (r0 + lane < r1) w[r0 + lane] = v;
        if (q > 0) {  // the next block's factors and reciprocals
          load_diagonal_block<false>(lu, n, r0 - kBlock, r0, lane, t);
          inverse = __ddiv_rn(1.0, at(lu, n, r0 - kBlock + lane, r0 - kBlock + lane));
        }
      }
      __syncthreads();
      update_rows(lu, n, r0, r1, 0, r0, w, warp, lane);
      __syncthreads();
    }

    double* x = out + static_cast<std::size_t>(col) * n;
    for (int i = tid; i < n; i += kThreads) x[i] = ldexp(w[i], ilogb(col_scale[i]) + k);
    __syncthreads();  // w and perm are the next column's
  }
}

/// The dynamic shared memory: the vector w and the permutation.
std::size_t shared_bytes(int n) { return static_cast<std::size_t>(n) * (sizeof(double) + sizeof(int)); }

}  // namespace

void lu_apply(CUstream_st* stream, const double* lu, int n, const int* ipiv, const double* row_scale,
              const double* col_scale, const double* rhs, int cols, double* out, double* diagonal, const int* info) {
  if (n < 1 || n > kLuApplyMaxN) throw InvalidInput("lu_apply: n = " + std::to_string(n) + " outside 1.." +
                                                    std::to_string(kLuApplyMaxN));
  if (cols < 1) return;
  const unsigned grid = static_cast<unsigned>(cols < 65535 ? cols : 65535);
  lu_apply_kernel<<<grid, kThreads, shared_bytes(n), stream>>>(lu, n, ipiv, row_scale, col_scale, rhs,
                                                                         cols, out, diagonal, info);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
