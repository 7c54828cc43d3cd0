// `gemm-bench`'s harness: the backend switch and the rows.
#include "tcsolve/bench/gemm_bench.hpp"

#include <string>

#include "gemm_bench_backends.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::bench {

std::unique_ptr<GemmBench> make_gemm_bench(Backend backend, const GemmProblem& p, const StepCallback& step) {
  switch (backend) {
    case Backend::cpu: return detail::make_cpu_gemm_bench(p);
    case Backend::cuda: return detail::make_cuda_gemm_bench(p, step);
    case Backend::automatic: break;
  }
  throw Error("gemm-bench: backend not resolved");
}

std::vector<GemmRow> gemm_rows(GemmBench& bench, const GemmProblem& p, const std::vector<Variant>& variants,
                               Backend backend, int repeats, const StepCallback& step) {
  const double flops = 2.0 * p.m * p.n * p.k;
  return run_variants<GemmRow, GemmMeasurement>(
      variants, backend, [&](Variant v) { return bench.measure(v, repeats); },
      [&](GemmRow& r, const GemmMeasurement& m) {
        r.resolved = std::string(to_string(m.info.resolved));
        r.note = m.info.note;
        r.split_k = m.info.split_k;
        r.phases = m.info.phases;
        r.time_s = m.median_s;
        r.tflops = flops / m.median_s / 1e12;
        r.relative_residual = m.relative_residual;
        r.max_relative_error = m.max_relative_error;
      },
      step);
}

}  // namespace tcsolve::bench
