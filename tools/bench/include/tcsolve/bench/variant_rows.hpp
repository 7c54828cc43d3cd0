// One row per variant, measured against the fp32-simt baseline: the loop that `gemm-bench` and
// `ffn` share. The baseline is measured first whether or not it was selected; a variant not
// available on the backend gets a row that says so; every other variant is measured once, in
// the order given, and its speedup is the baseline's time over its own.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace tcsolve::bench {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Reports the step about to start ("fp32-simt (baseline)", "[2/5] ec-fp16", ...); the
/// commands show it as progress on stderr. The library itself prints nothing.
using StepCallback = std::function<void(const std::string&)>;

/// The fields every benchmark row has. Commands extend it with their accuracy metrics.
struct VariantRow {
  Variant variant = Variant::fp32_simt;
  bool available = false;
  std::string resolved;  ///< the variant that ran; empty when it did not run
  double time_s = kNaN, tflops = kNaN;
  double speedup = kNaN;  ///< the baseline's time_s / time_s
  std::string note;       ///< the variant's fallback note, or why it did not run
};

/// Throws Unavailable when a variant the user named (`explicit_variants`; variants that came
/// from "all" are reported unavailable in their rows instead) or the baseline fp32-simt cannot
/// run on `backend` here.
void require_available(const std::vector<Variant>& variants, bool explicit_variants, Backend backend);

/// "not available on the <backend> backend here": the note of a row that did not run.
std::string unavailable_note(Backend backend);

/// Measures the baseline, then every variant of `variants` in order (see the file comment).
/// `measure(v)` runs variant v and returns its Measurement; `fill(row, m)` sets the row's
/// resolved, note, time_s, tflops and metrics from it; speedup is set here.
template <class Row, class Measurement, class Measure, class Fill>
std::vector<Row> run_variants(const std::vector<Variant>& variants, Backend backend, Measure measure,
                              Fill fill, const StepCallback& step) {
  step("fp32-simt (baseline)");
  const Measurement baseline = measure(Variant::fp32_simt);
  Row baseline_row;
  fill(baseline_row, baseline);

  std::vector<Row> rows;
  rows.reserve(variants.size());
  const std::size_t total = variants.size();
  for (std::size_t i = 0; i < total; ++i) {
    const Variant v = variants[i];
    Row r;
    r.variant = v;
    r.available = available(v, backend);
    if (!r.available) {
      r.note = unavailable_note(backend);
      rows.push_back(std::move(r));
      continue;
    }
    if (v != Variant::fp32_simt)
      step("[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] " + std::string(to_string(v)));
    if (v == Variant::fp32_simt)
      fill(r, baseline);
    else
      fill(r, measure(v));
    r.speedup = baseline_row.time_s / r.time_s;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace tcsolve::bench
