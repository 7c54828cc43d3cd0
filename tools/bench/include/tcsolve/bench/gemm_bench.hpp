// `gemm-bench`'s harness: times GEMM variants on one GemmProblem and measures their accuracy
// against an FP64 product of the same FP32 inputs: relative residual ||C - C64||_F / ||C64||_F
// and max |C - C64| / |C64|.
//
// cpu: everything on the host, timed by the wall clock (gemm_bench_cpu.cpp). cuda: the inputs,
// the FP64 reference and the metrics stay on the device, calls are timed with CUDA events after
// a warm-up, and small problems rotate through copies of their inputs so that no timed call
// finds them in L2 (gemm_bench_cuda.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/bench/gemm_problem.hpp"
#include "tcsolve/bench/variant_rows.hpp"

namespace tcsolve::bench {

/// One variant run `repeats` times, and the accuracy of its (last) result.
struct GemmMeasurement {
  GemmInfo info;
  double median_s = kNaN;
  double relative_residual = kNaN, max_relative_error = kNaN;
};

/// Times variants on one GemmProblem (which must outlive it) against its FP64 product.
class GemmBench {
 public:
  virtual ~GemmBench() = default;
  virtual GemmMeasurement measure(Variant v, int repeats) = 0;
};

/// The harness of a resolved backend (cpu or cuda); it computes the FP64 reference at once
/// (cuda: after reporting the upload through `step`).
std::unique_ptr<GemmBench> make_gemm_bench(Backend backend, const GemmProblem& p, const StepCallback& step);

/// One row of gemm-bench's output.
struct GemmRow : VariantRow {
  double relative_residual = kNaN, max_relative_error = kNaN;
  int split_k = 1;  ///< GemmInfo::split_k: the ec path's k ranges that ran (1: k not split)
  /// GemmSetup::time_phases: the last timed call's phases (name, device seconds).
  std::vector<std::pair<std::string, double>> phases;
};

/// The rows of `variants` on `bench` (variant_rows.hpp): tflops counts 2 m n k flops per call.
std::vector<GemmRow> gemm_rows(GemmBench& bench, const GemmProblem& p, const std::vector<Variant>& variants,
                               Backend backend, int repeats, const StepCallback& step);

}  // namespace tcsolve::bench
