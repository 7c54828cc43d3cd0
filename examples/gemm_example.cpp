// The library API in a dozen lines: one FP32-accurate product on the chosen backend.
//   example_gemm [variant]      (default ec-fp16; cpu backend unless a GPU is present)
#include <cstdio>
#include <string>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/metrics.hpp"
#include "tcsolve/gemm/random.hpp"

int main(int argc, char** argv) {
  const tcsolve::Variant variant = tcsolve::parse_variant(argc > 1 ? argv[1] : "ec-fp16");
  const int m = 64, n = 64, k = 512;
  tcsolve::Rng rng(42);
  std::vector<float> A(m * k), B(k * n), C(m * n);
  tcsolve::fill(tcsolve::parse_distribution("urand"), rng, A.data(), A.size());
  tcsolve::fill(tcsolve::parse_distribution("urand"), rng, B.data(), B.size());

  // Column-major, C = 1 * A * B + 0 * C, on the host (cpu backend).
  const tcsolve::GemmInfo info = tcsolve::gemm(tcsolve::Backend::cpu, variant, tcsolve::Op::n, tcsolve::Op::n,
                                               m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f, C.data(), m);
  const std::vector<double> ref = tcsolve::reference_product(tcsolve::Op::n, tcsolve::Op::n, m, n, k, A.data(), m,
                                                             B.data(), k);
  std::printf("%s (ran as %s): relative residual %.3e\n", std::string(tcsolve::to_string(variant)).c_str(),
              std::string(tcsolve::to_string(info.resolved)).c_str(),
              tcsolve::relative_residual(C.data(), m, ref.data(), m, n));
  return 0;
}
