// The inputs of `gemm-bench` and the memory a run needs.
#include "tcsolve/bench/gemm_problem.hpp"

#include <cstddef>

namespace tcsolve::bench {

GemmProblem make_gemm_problem(const GemmSetup& setup) {
  GemmProblem p;
  p.m = setup.m;
  p.n = setup.n;
  p.k = setup.k;
  p.A.resize(static_cast<std::size_t>(p.m) * p.k);
  p.B.resize(static_cast<std::size_t>(p.k) * p.n);
  Rng rng(setup.seed);
  fill(setup.dist, rng, p.A.data(), p.A.size());
  fill(setup.dist_b, rng, p.B.data(), p.B.size());
  p.options = setup.options;
  p.time_phases = setup.time_phases;
  if (setup.update) {
    p.C0.resize(static_cast<std::size_t>(p.m) * p.n);
    fill(setup.dist, rng, p.C0.data(), p.C0.size());
  }
  return p;
}

MemoryNeed gemm_memory(int m, int n, int k, Backend backend) {
  const double mk = static_cast<double>(m) * k, kn = static_cast<double>(k) * n,
               mn = static_cast<double>(m) * n;
  MemoryNeed need;
  need.host = 12 * (mk + kn) + 24 * mn;
  if (backend == Backend::cuda) need.device = 12 * (mk + kn + mn) + 8 * mn + 64.0 * 1024 * 1024;
  return need;
}

}  // namespace tcsolve::bench
