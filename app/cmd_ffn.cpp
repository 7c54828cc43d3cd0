// `tcsolve ffn`: a BERT-base feed-forward block Y = GELU(X W1 + b1) W2 + b2 with both GEMMs
// through each GEMM variant, against the block in FP64 on the same inputs (ARCHITECTURE.md,
// "ffn"; the data, layout and timing are documented in tcsolve/demos/ffn.hpp).
//
// Per variant: relative error ||Y - Y64||_F / ||Y64||_F, the median time of the whole block and
// TFLOP/s counting its two GEMMs (4 T d_model d_ff flops). fp32-simt is always run: it is the
// baseline of the speedups. cuda: one untimed warm-up run per variant, then --repeats runs timed
// with CUDA events; cpu: --repeats runs on the steady clock (no warm-up run: the emulation is
// slow, and the buffers are touched once before any timed run).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "input.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "versions.hpp"
#include "tcsolve/demos/ffn.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace tcsolve::app {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kCpuTokens = 256;     ///< default --tokens on the cpu backend (the emulation is slow)
constexpr int kCudaTokens = 16384;  ///< default --tokens on the cuda backend
constexpr int kCpuRepeats = 1;
constexpr int kCudaRepeats = 10;
constexpr int kCudaWarmups = 1;

struct FfnOptions {
  demos::FfnShape shape;
  bool tokens_given = false;
  std::vector<Variant> variants;
  bool explicit_variants = false;  ///< named by the user, not "all"
  Backend requested_backend = Backend::automatic;
  int repeats = kCpuRepeats;
  bool repeats_given = false;
  std::uint64_t seed = 1;
  bool json = false;
  ProgressMode progress = ProgressMode::automatic;
};

/// One row of the output.
struct Row {
  Variant variant;
  bool available = false;
  std::string resolved;  ///< empty when it did not run
  double relative_error = kNaN, time_s = kNaN, tflops = kNaN, speedup = kNaN;
  std::string note;
};

std::optional<FfnOptions> parse(int argc, char** argv) {
  long long tokens = kCpuTokens, d_model = demos::kBertDModel, d_ff = demos::kBertDFf, repeats = kCpuRepeats,
            seed = 1;
  std::string variants, backend;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("tokens", po::value(&tokens)->default_value(kCpuTokens, "16384 on cuda, 256 on cpu")->value_name("T"),
       "tokens (columns of X) per block")
      ("d-model", po::value(&d_model)->default_value(demos::kBertDModel)->value_name("D"), "model width (BERT-base: 768)")
      ("d-ff", po::value(&d_ff)->default_value(demos::kBertDFf)->value_name("F"), "feed-forward width (BERT-base: 3072)")
      ("variants", po::value(&variants)->default_value("all")->value_name("LIST"),
       ("all, or a comma-separated list of: " + variant_names()).c_str())
      ("backend", po::value(&backend)->default_value("auto")->value_name("B"), "auto | cpu | cuda")
      ("repeats", po::value(&repeats)->default_value(kCpuRepeats, "1 on cpu, 10 on cuda")->value_name("R"),
       "timed runs per variant (cuda: after one untimed warm-up run); the median counts")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of the weights, biases and tokens")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  // clang-format on
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout,
                "tcsolve ffn [--tokens T] [--d-model 768] [--d-ff 3072] [--variants all|v1,v2]\n"
                "                   [--backend auto|cpu|cuda] [--repeats R] [--seed S] [--json]",
                "A BERT-base feed-forward block Y = GELU(X W1 + b1) W2 + b2 with both GEMMs through\n"
                "each variant; GELU (erf form) and biases in FP32. Weights and biases N(0, 0.02^2),\n"
                "tokens layer-normalized N(0,1). Reports the relative error ||Y - Y64||_F / ||Y64||_F\n"
                "against the whole block in FP64 on the same inputs, the median time of the block\n"
                "and TFLOP/s counting its two GEMMs (4 T d_model d_ff flops). Speedups are against\n"
                "fp32-simt, which is always run.",
                options);
    return std::nullopt;
  }

  FfnOptions o;
  o.shape.tokens = positive_int("tokens", tokens);
  o.tokens_given = !vm["tokens"].defaulted();
  o.shape.d_model = positive_int("d-model", d_model);
  o.shape.d_ff = positive_int("d-ff", d_ff);
  o.repeats = positive_int("repeats", repeats);
  o.repeats_given = !vm["repeats"].defaulted();
  if (seed < 0) throw InvalidInput("--seed must be a non-negative integer, got " + std::to_string(seed));
  o.seed = static_cast<std::uint64_t>(seed);
  o.variants = parse_variant_list(variants);
  o.explicit_variants = variants != "all";
  if (o.variants.empty()) throw InvalidInput("--variants names no variant");
  o.requested_backend = parse_backend(backend);
  o.json = vm.count("json") > 0;
  o.progress = progress_mode(vm);
  return o;
}

// --- output ---------------------------------------------------------------------------------

void write_json(const FfnOptions& o, const std::string& backend, const std::string& device,
                const std::vector<Row>& rows) {
  JsonWriter w(std::cout);
  w.begin_object()
      .field("command", "ffn")
      .field("tokens", o.shape.tokens)
      .field("d_model", o.shape.d_model)
      .field("d_ff", o.shape.d_ff)
      .field("backend", backend)
      .field("device", device)
      .field("repeats", o.repeats)
      .field("seed", o.seed)
      .field("flops_per_block", demos::ffn_flops(o.shape));
  w.key("results").begin_array();
  for (const Row& r : rows) {
    w.begin_object().field("variant", to_string(r.variant));
    w.field_or_null("resolved_variant", !r.resolved.empty(), r.resolved);
    w.field("available", r.available)
        .field("relative_error", r.relative_error)
        .field("time_s", r.time_s)
        .field("tflops", r.tflops)
        .field("speedup_vs_fp32_simt", r.speedup)
        .field("note", r.note)
        .end_object();
  }
  w.end_array();
  finish_command_json(w);
}

void write_table(const FfnOptions& o, const std::string& backend, const std::string& device,
                 const std::vector<Row>& rows) {
  std::printf("ffn: Y = GELU(X W1 + b1) W2 + b2, %d tokens, d_model %d, d_ff %d, seed %llu\n", o.shape.tokens,
              o.shape.d_model, o.shape.d_ff, static_cast<unsigned long long>(o.seed));
  std::printf("backend %s on %s, median of %d run%s; error against the block in FP64\n\n", backend.c_str(),
              device.c_str(), o.repeats, o.repeats == 1 ? "" : "s");
  std::printf("%-14s %-24s %12s %12s %9s %8s\n", "variant", "resolved", "rel. error", "time ms", "TFLOP/s",
              "speedup");
  std::vector<std::string> notes;
  for (const Row& r : rows) {
    const std::string name(to_string(r.variant));
    std::printf("%-14s %-24s %12s %12s %9s %8s\n", name.c_str(),
                r.resolved.empty() ? "-" : r.resolved.c_str(), fmt("%.3e", r.relative_error).c_str(),
                fmt("%.3f", r.time_s * 1e3).c_str(), fmt("%.3f", r.tflops).c_str(),
                fmt("%.2f", r.speedup).c_str());
    if (!r.note.empty()) notes.push_back(name + ": " + r.note);
  }
  if (!notes.empty()) {
    std::printf("\nNotes:\n");
    for (const std::string& s : notes) std::printf("  %s\n", s.c_str());
  }
  std::fflush(stdout);
}

/// The fallback notes of the two GEMMs, once each.
std::string note_of(const demos::FfnInfo& info) {
  if (info.first.note == info.second.note) return info.first.note;
  if (info.first.note.empty()) return info.second.note;
  if (info.second.note.empty()) return info.first.note;
  return info.first.note + "; " + info.second.note;
}

}  // namespace

int run_ffn(int argc, char** argv) {
  const std::optional<FfnOptions> parsed = parse(argc, argv);
  if (!parsed) return 0;
  FfnOptions o = *parsed;

  const Backend backend = choose_backend(o.requested_backend);
  const bool on_cuda = backend == Backend::cuda;
  if (!o.tokens_given) o.shape.tokens = on_cuda ? kCudaTokens : kCpuTokens;
  if (!o.repeats_given) o.repeats = on_cuda ? kCudaRepeats : kCpuRepeats;
  const int warmups = on_cuda ? kCudaWarmups : 0;
  const std::string backend_name(to_string(backend));
  const std::string device = device_description(backend);
  {
    // X (T x d_model), W1, W2 (d_model x d_ff), H (T x d_ff) and Y in FP32, the FP64 reference
    // of H and Y with FP64 copies of the inputs: 12 bytes per element of each on the host, FP32
    // inputs, H and Y on the device.
    const double t = o.shape.tokens, dm = o.shape.d_model, df = o.shape.d_ff;
    const double elements = 2 * t * dm + 2 * dm * df + t * df;
    const std::string what = "ffn with --tokens " + std::to_string(o.shape.tokens) + ", --d-model " +
                             std::to_string(o.shape.d_model) + ", --d-ff " + std::to_string(o.shape.d_ff);
    require_host_memory(what, 12 * elements);
    if (on_cuda) require_device_memory(what, 4 * elements + 64.0 * 1024 * 1024);
  }

  // A variant the user named must run here; one that came from "all" is reported unavailable.
  for (Variant v : o.variants)
    if (o.explicit_variants && !available(v, backend))
      throw Unavailable("variant " + std::string(to_string(v)) + " is not available on the " + backend_name +
                        " backend here");
  if (!available(Variant::fp32_simt, backend))
    throw Unavailable("the baseline fp32-simt is not available on the " + backend_name + " backend here");

  Progress progress("ffn", o.progress);
  progress.step("drawing the inputs, FP64 reference on the " + backend_name + " backend");
  const demos::FfnProblem problem = demos::make_problem(o.shape, o.seed);
  demos::FfnBench bench(backend, problem);

  progress.step("fp32-simt (baseline)");
  const demos::FfnResult baseline = bench.run(Variant::fp32_simt, o.repeats, warmups);

  std::vector<Row> rows;
  const std::size_t total = o.variants.size();
  for (std::size_t i = 0; i < total; ++i) {
    const Variant v = o.variants[i];
    Row r;
    r.variant = v;
    r.available = available(v, backend);
    if (!r.available) {
      r.note = "not available on the " + backend_name + " backend here";
      rows.push_back(std::move(r));
      continue;
    }
    if (v != Variant::fp32_simt)
      progress.step("[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] " + std::string(to_string(v)));
    const demos::FfnResult m = v == Variant::fp32_simt ? baseline : bench.run(v, o.repeats, warmups);
    r.resolved = demos::resolved_name(m.info);
    r.note = note_of(m.info);
    r.relative_error = m.relative_error;
    r.time_s = m.time_s;
    r.tflops = m.tflops;
    r.speedup = baseline.time_s / m.time_s;
    rows.push_back(std::move(r));
  }

  if (o.json)
    write_json(o, backend_name, device, rows);
  else
    write_table(o, backend_name, device, rows);
  return 0;
}

}  // namespace tcsolve::app
