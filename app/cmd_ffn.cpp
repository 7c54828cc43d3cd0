// `tcsolve ffn`: a BERT-base feed-forward block Y = GELU(X W1 + b1) W2 + b2 with both GEMMs
// through each GEMM variant, against the block in FP64 on the same inputs (docs/architecture.md,
// "ffn"; the data, layout and timing are documented in tcsolve/demos/ffn.hpp).
//
// Per variant: relative error ||Y - Y64||_F / ||Y64||_F, the median time of the whole block and
// TFLOP/s counting its two GEMMs (4 T d_model d_ff flops). fp32-simt is always run: it is the
// baseline of the speedups. cuda: one untimed warm-up run per variant, then --repeats runs timed
// with CUDA events; cpu: --repeats runs on the steady clock (no warm-up run: the emulation is
// slow, and the buffers are touched once before any timed run). This file holds the options and
// the output; the rows come from tcsolve::bench (tools/bench, ffn_bench.hpp).
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "tcsolve/bench/ffn_bench.hpp"
#include "tcsolve/bench/variant_rows.hpp"
#include "tcsolve/demos/ffn.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/error.hpp"
#include "versions.hpp"

namespace tcsolve::app {
namespace {

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
      ("variants", po::value(&variants)->default_value("all")->value_name("all|V1,V2,..."),
       ("all, or a comma-separated list of: " + variant_names()).c_str())
      ("backend", po::value(&backend)->default_value("auto")->value_name("auto|cpu|cuda"),
       "where the blocks run (auto: cuda when a usable GPU is present, else cpu)")
      ("repeats", po::value(&repeats)->default_value(kCpuRepeats, "1 on cpu, 10 on cuda")->value_name("R"),
       "timed runs per variant (cuda: after one untimed warm-up run); the median counts")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of the weights, biases and tokens")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  // clang-format on
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"ffn", {}, {}},
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
                const std::vector<bench::FfnRow>& rows) {
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
  for (const bench::FfnRow& r : rows) {
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
                 const std::vector<bench::FfnRow>& rows) {
  std::printf("ffn: Y = GELU(X W1 + b1) W2 + b2, %d tokens, d_model %d, d_ff %d, seed %llu\n", o.shape.tokens,
              o.shape.d_model, o.shape.d_ff, static_cast<unsigned long long>(o.seed));
  std::printf("backend %s on %s, median of %d run%s; error against the block in FP64\n\n", backend.c_str(),
              device.c_str(), o.repeats, o.repeats == 1 ? "" : "s");
  std::printf("%-14s %-24s %12s %12s %9s %8s\n", "variant", "resolved", "rel. error", "time ms", "TFLOP/s",
              "speedup");
  std::vector<std::string> notes;
  for (const bench::FfnRow& r : rows) {
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
    const bench::MemoryNeed need = bench::ffn_memory(o.shape, backend);
    const std::string what = "ffn with --tokens " + std::to_string(o.shape.tokens) + ", --d-model " +
                             std::to_string(o.shape.d_model) + ", --d-ff " + std::to_string(o.shape.d_ff);
    require_host_memory(what, need.host);
    if (on_cuda) require_device_memory(what, need.device);
  }
  bench::require_available(o.variants, o.explicit_variants, backend);

  Progress progress("ffn", o.progress);
  const bench::StepCallback step = [&progress](const std::string& text) { progress.step(text); };
  const std::vector<bench::FfnRow> rows =
      bench::ffn_rows(o.shape, o.seed, o.variants, backend, o.repeats, warmups, step);

  if (o.json)
    write_json(o, backend_name, device, rows);
  else
    write_table(o, backend_name, device, rows);
  return 0;
}

}  // namespace tcsolve::app
