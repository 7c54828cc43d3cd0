// `ffn`'s harness: the feed-forward block through each variant, one row per variant.
#include "tcsolve/bench/ffn_bench.hpp"

namespace tcsolve::bench {

MemoryNeed ffn_memory(const demos::FfnShape& shape, Backend backend) {
  const double t = shape.tokens, dm = shape.d_model, df = shape.d_ff;
  const double elements = 2 * t * dm + 2 * dm * df + t * df;
  MemoryNeed need;
  need.host = 12 * elements;
  if (backend == Backend::cuda) need.device = 4 * elements + 64.0 * 1024 * 1024;
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
