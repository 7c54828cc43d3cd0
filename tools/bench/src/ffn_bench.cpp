// `ffn`'s harness: the feed-forward block through each variant, one row per variant.
#include "tcsolve/bench/ffn_bench.hpp"

#include <algorithm>

namespace tcsolve::bench {

MemoryNeed ffn_memory(const demos::FfnShape& shape, Backend backend) {
  const double x = static_cast<double>(shape.tokens) * shape.d_model;  // X, Y
  const double w = static_cast<double>(shape.d_model) * shape.d_ff;    // W1, W2 each
  const double h = static_cast<double>(shape.tokens) * shape.d_ff;     // H
  MemoryNeed need;
  const double inputs = 4 * x + 8 * w;  // FP32 X, W1, W2
  if (backend == Backend::cuda) {
    need.host = inputs;
    // X, W1, W2, H, Y in FP32 and Y64; while the reference is formed H64 and FP64 copies of W1
    // and X (the FP64 W2 of the second product comes after those are freed).
    need.device = 4 * x + 8 * w + 4 * h + 4 * x + 8 * x + 8 * h + 8 * w + 8 * x + 64.0 * 1024 * 1024;
  } else {
    // The reference (demos::ffn_reference): FP64 W1, X and W2, H64 and its GELU, Y64 and its
    // copy -- at most 16 w + 16 h + 16 x at once; then Y64, the FP32 H and Y, and an emulated
    // GEMM's copies of its operands (splits and scales: 16 bytes a value of W and of X or H).
    const double reference = 16 * w + 16 * h + 16 * x;
    const double runs = 8 * x + 4 * h + 4 * x + 16 * (w + std::max(x, h));
    need.host = 2 * inputs + std::max(reference, runs) + 64.0 * 1024 * 1024;  // + the program itself
  }
  return need;
}

std::string ffn_note(const demos::FfnInfo& info) {
  if (info.first.note == info.second.note) return info.first.note;
  if (info.first.note.empty()) return info.second.note;
  if (info.second.note.empty()) return info.first.note;
  return info.first.note + "; " + info.second.note;
}

std::vector<FfnRow> ffn_rows(const demos::FfnShape& shape, std::uint64_t seed, const std::vector<Variant>& variants,
                             Backend backend, int repeats, int warmups, const StepCallback& step) {
  step("drawing the inputs, FP64 reference on the " + std::string(to_string(backend)) + " backend");
  const demos::FfnProblem problem = demos::make_problem(shape, seed);
  demos::FfnBench bench(backend, problem);
  return run_variants<FfnRow, demos::FfnResult>(
      variants, backend, [&](Variant v) { return bench.run(v, repeats, warmups); },
      [](FfnRow& r, const demos::FfnResult& m) {
        r.resolved = demos::resolved_name(m.info);
        r.note = ffn_note(m.info);
        r.relative_error = m.relative_error;
        r.time_s = m.time_s;
        r.tflops = m.tflops;
      },
      step);
}

}  // namespace tcsolve::bench
