// Non-finite inputs (issue #31): what each variant gives where a row of op(A) or a column of
// op(B) holds inf or NaN, against BLAS's IEEE semantics. The variants fed one operand per input
// (fp64, fp32-simt, fp16-simt, fp16-tc, tf32-tc, fp16-fp16acc, fp16-twostage) give BLAS's +-inf.
// The split variants (input format fp16x2 / tf32x2, and auto) give NaN there instead: the
// residual of inf is inf - inf = NaN, and even with a residual of 0 the cross products
// lo(a) hi(b) of a finite a against hi(b) = inf would be 0 * inf = NaN (docs/guide/variants.md,
// "Non-finite inputs", says so). NaN inputs give NaN in every variant. Every other entry of C is exact.
// [exact]: the cpu emulation; [gpu]: the cuda kernels, with the same results.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace {

using namespace tcsolve;

constexpr float kInf = std::numeric_limits<float>::infinity();

/// The variants fed a hi + lo split of each input (and auto, which picks one of them).
bool is_split(const VariantInfo& v) {
  return v.variant == Variant::auto_ || v.input_format == "fp16x2" || v.input_format == "tf32x2";
}

/// C = A B (column-major, m x k ones times k x n ones) with B(0, 0) = `bad` (column 0 of B) and,
/// in a second product, A(0, 0) = `bad` (row 0 of A); `run` computes one product.
template <typename Run>
void check_variant(const VariantInfo& v, Run run) {
  const int m = 40, n = 24, k = 32;
  for (const float bad : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN()}) {
    for (const bool in_b : {true, false}) {
      std::vector<float> A(static_cast<std::size_t>(m) * k, 1.0f), B(static_cast<std::size_t>(k) * n, 1.0f),
          C(static_cast<std::size_t>(m) * n, 0.0f);
      (in_b ? B : A)[0] = bad;
      run(v.variant, m, n, k, A, B, C);
      INFO(v.name << ", " << bad << " in " << (in_b ? "column 0 of B" : "row 0 of A"));
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          const float c = C[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * m];
          const bool affected = in_b ? j == 0 : i == 0;
          if (!affected) {
            CHECK(c == static_cast<float>(k));  // sums of k ones: exact in every variant
          } else if (std::isnan(bad) || is_split(v)) {
            CHECK(std::isnan(c));
          } else {
            CHECK(c == bad);  // BLAS: +-inf + (k - 1)
          }
        }
    }
  }
}

TEST_CASE("non-finite inputs: one-operand variants give BLAS's inf, split variants NaN, on the cpu", "[exact]") {
  for (const VariantInfo& v : kVariants) {
    if (!v.on_cpu) continue;
    check_variant(v, [](Variant variant, int m, int n, int k, const std::vector<float>& A, const std::vector<float>& B,
                        std::vector<float>& C) {
      gemm(Backend::cpu, variant, Op::n, Op::n, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f, C.data(), m);
    });
  }
}

TEST_CASE("non-finite inputs: the cuda kernels give what the cpu emulation gives", "[gpu]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device: skipping non-finite inputs on cuda (" << cuda::device_name() << ")");
    return;
  }
  cuda::Context context;
  for (const VariantInfo& v : kVariants) {
    if (!v.on_cpu) continue;  // the cuBLAS baselines: cuBLAS's own semantics
    check_variant(v, [&](Variant variant, int m, int n, int k, const std::vector<float>& A,
                         const std::vector<float>& B, std::vector<float>& C) {
      const cuda::DeviceBuffer<float> dA(A), dB(B);
      cuda::DeviceBuffer<float> dC(C.size());
      dC.upload(C);
      cuda::gemm(context, variant, Op::n, Op::n, m, n, k, 1.0f, dA.data(), m, dB.data(), k, 0.0f, dC.data(), m);
      C = dC.download();
    });
  }
}

}  // namespace
