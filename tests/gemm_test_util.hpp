// Helpers shared by the GEMM accuracy tests: random problems and per-variant residuals.
#pragma once

#include <string>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/metrics.hpp"
#include "tcsolve/gemm/random.hpp"

namespace tcsolve::test {

/// A (m x k) and B (k x n), column-major, drawn from their distributions, with the FP64 product.
struct Problem {
  int m, n, k;
  std::vector<float> A, B;
  std::vector<double> C64;
};

inline Problem make_problem(int m, int n, int k, const std::string& dist_a, const std::string& dist_b,
                            std::uint64_t seed) {
  Problem p{m, n, k, std::vector<float>(static_cast<std::size_t>(m) * k), std::vector<float>(static_cast<std::size_t>(k) * n), {}};
  Rng rng(seed);
  fill(parse_distribution(dist_a), rng, p.A.data(), p.A.size());
  fill(parse_distribution(dist_b), rng, p.B.data(), p.B.size());
  p.C64 = reference_product(Op::n, Op::n, m, n, k, p.A.data(), m, p.B.data(), k);
  return p;
}

/// C = op(A) op(B) through `v` on the cpu backend.
inline std::vector<float> run(const Problem& p, Variant v, const GemmOptions& options = {}, GemmInfo* info = nullptr) {
  std::vector<float> C(static_cast<std::size_t>(p.m) * p.n);
  const GemmInfo i = cpu::gemm(v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, p.A.data(), p.m, p.B.data(), p.k, 0.0f,
                               C.data(), p.m, options);
  if (info) *info = i;
  return C;
}

/// ||C_v - C64||_F / ||C64||_F.
inline double residual(const Problem& p, Variant v, const GemmOptions& options = {}, GemmInfo* info = nullptr) {
  const std::vector<float> C = run(p, v, options, info);
  return relative_residual(C.data(), p.m, p.C64.data(), p.m, p.n);
}

}  // namespace tcsolve::test
