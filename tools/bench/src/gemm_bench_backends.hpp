// The two implementations of GemmBench, one per file, chosen by make_gemm_bench.
#pragma once

#include <memory>

#include "tcsolve/bench/gemm_bench.hpp"

namespace tcsolve::bench::detail {

std::unique_ptr<GemmBench> make_cpu_gemm_bench(const GemmProblem& p);
std::unique_ptr<GemmBench> make_cuda_gemm_bench(const GemmProblem& p, const StepCallback& step);

}  // namespace tcsolve::bench::detail
