// `tcsolve gemm-bench`: times GEMM variants on random FP32 matrices and measures their accuracy
// against an FP64 product of the same inputs (docs/architecture.md, "gemm-bench").
//
// This file holds the options and the output (table, JSON, CSV); the harness -- inputs, timing,
// the FP64 reference and the metrics, the rows -- is tcsolve::bench (tools/bench:
// gemm_problem.hpp, gemm_bench.hpp). fp32-simt is always timed: it is the baseline of every
// speedup.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "env_options.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "tcsolve/bench/gemm_bench.hpp"
#include "tcsolve/bench/gemm_problem.hpp"
#include "tcsolve/bench/variant_rows.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/random.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/error.hpp"
#include "versions.hpp"

namespace tcsolve::app {
namespace {

constexpr int kCpuRepeats = 3;   ///< default --repeats on the cpu backend (the emulation is slow)
constexpr int kCudaRepeats = 10;  ///< default --repeats on the cuda backend

struct BenchOptions {
  int m = 256, n = 256, k = 256;
  std::string shape = "square";  ///< "square" | "lu" (trailing update: n = m, k = block size)
  Distribution dist, dist_b;
  std::vector<Variant> variants;
  bool explicit_variants = false;  ///< named by the user, not "all"
  Backend requested_backend = Backend::automatic;
  int repeats = 3;
  bool repeats_given = false;  ///< --repeats on the command line (else a per-backend default)
  std::uint64_t seed = 1;
  int ec_chunk_k = GemmOptions{}.ec_chunk_k;
  CudaKernels kernels = CudaKernels::automatic;  ///< TCSOLVE_GEMM_KERNEL, then --gemm-kernels
  bool time_phases = false;                      ///< TCSOLVE_GEMM_PHASES set
  bool json = false;
  ProgressMode progress = ProgressMode::automatic;
  std::string csv;  ///< empty: no CSV
  bool force = false;  ///< --force: an existing --csv file may be replaced
};

// --- options --------------------------------------------------------------------------------

constexpr double kFp32Max = std::numeric_limits<float>::max();  // 3.4028235e38

/// `text` (of --option) parsed; a urand distribution whose bounds lie outside FP32's range is
/// refused: its draws would become +-inf in the FP32 inputs without a word. (exp_rand's
/// exponents are checked against FP32's range by parse_distribution.)
Distribution fp32_distribution(const std::string& option, const std::string& text) {
  const Distribution d = parse_distribution(text);
  if (d.kind == Distribution::Kind::urand && (std::fabs(d.lo) > kFp32Max || std::fabs(d.hi) > kFp32Max))
    throw InvalidInput("--" + option + " " + text +
                       ": the bounds lie outside FP32's range (|x| <= 3.4028235e38, the largest float): the "
                       "inputs are FP32, and such draws would be inf");
  return d;
}

/// The largest |x| a draw from `d` can have.
double largest_draw(const Distribution& d) {
  if (d.kind == Distribution::Kind::urand) return std::max(std::fabs(d.lo), std::fabs(d.hi));
  return std::ldexp(2.0, d.emax);  // significand below 2, exponent at most emax
}

std::optional<BenchOptions> parse(int argc, char** argv) {
  long long m = 256, n = 256, k = 256, repeats = 3, seed = 1, chunk = GemmOptions{}.ec_chunk_k;
  std::string shape, dist, dist_b, variants, backend, kernels;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("m", po::value(&m)->default_value(256)->value_name("M"), "rows of A and C")
      ("n", po::value(&n)->default_value(256)->value_name("N"), "columns of B and C (--shape lu: equal to --m)")
      ("k", po::value(&k)->default_value(256)->value_name("K"), "columns of A, rows of B (--shape lu: block size)")
      ("shape", po::value(&shape)->default_value("square")->value_name("square|lu"),
       "square: C = A*B with the sizes as given; lu: the LU's trailing update C = C0 - A*B "
       "(C0 drawn like A, so C is read and written), n = m, k = block size (needs --m and --k)")
      ("dist", po::value(&dist)->default_value("urand")->value_name("DIST"),
       "distribution of A (and of B without --dist-b): urand = U(-1,1), urand:A:B = U(A,B), "
       "exp_rand:A:B = random sign, exponent uniform in [A,B], significand in [1,2)")
      ("dist-b", po::value(&dist_b)->value_name("DIST"), "distribution of B (default: --dist)")
      ("variants", po::value(&variants)->default_value("all")->value_name("all|V1,V2,..."),
       ("all, or a comma-separated list of: " + variant_names()).c_str())
      ("backend", po::value(&backend)->default_value("auto")->value_name("auto|cpu|cuda"),
       "where the products run (auto: cuda when a usable GPU is present, else cpu)")
      ("repeats", po::value(&repeats)->default_value(kCpuRepeats, "3 on cpu, 10 on cuda")->value_name("R"),
       "timed runs per variant (cuda: after one untimed warm-up run); the median counts")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of the random inputs (A drawn, then B)")
      ("ec-chunk-k", po::value(&chunk)->default_value(GemmOptions{}.ec_chunk_k)->value_name("K"),
       "ec-fp16 / auto (FP16): k of hi*hi accumulated inside the tensor core before the outside "
       "FP32 add (a multiple of 16)")
      ("gemm-kernels", po::value(&kernels)->value_name("automatic|wgmma|mma"),
       "cuda: automatic (default: wgmma on sm_90, else mma.sync) | wgmma | mma: the kernels of "
       "the tensor-core variants; after TCSOLVE_GEMM_KERNEL")
      ("json", "print one JSON object on stdout")
      ("csv", po::value<std::string>()->value_name("FILE"), "also write the rows as CSV to this file")
      ("force", "replace an existing --csv file")
      ("help", "print this help");
  // clang-format on
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"gemm-bench", {}, {}},
                "Times C = A*B (column-major FP32, A m x k, B k x n) for each variant and measures\n"
                "its accuracy against an FP64 product of the same inputs: relative residual\n"
                "||C - C64||_F / ||C64||_F and max |C - C64| / |C64|. Speedups are against\n"
                "fp32-simt, which is always timed.",
                options);
    return std::nullopt;
  }

  BenchOptions o;
  o.m = positive_int("m", m);
  o.n = positive_int("n", n);
  o.k = positive_int("k", k);
  o.repeats = positive_int("repeats", repeats);
  o.ec_chunk_k = positive_int("ec-chunk-k", chunk);
  if (o.ec_chunk_k % 16 != 0)
    throw InvalidInput("--ec-chunk-k must be a positive multiple of 16, got " + std::to_string(o.ec_chunk_k));
  o.repeats_given = !vm["repeats"].defaulted();
  if (seed < 0) throw InvalidInput("--seed must be a non-negative integer, got " + std::to_string(seed));
  o.seed = static_cast<std::uint64_t>(seed);

  o.shape = shape;
  if (shape == "lu") {
    if (vm["m"].defaulted() || vm["k"].defaulted())
      throw InvalidInput("--shape lu needs --m (the trailing matrix order) and --k (the block size)");
    if (!vm["n"].defaulted() && o.n != o.m)
      throw InvalidInput("--shape lu: --n must equal --m (or be left out), got --n " +
                         std::to_string(o.n) + " and --m " + std::to_string(o.m));
    o.n = o.m;
  } else if (shape != "square") {
    throw InvalidInput("--shape must be square or lu, got '" + shape + "'");
  }

  o.dist = fp32_distribution("dist", dist);
  o.dist_b = vm.count("dist-b") ? fp32_distribution("dist-b", dist_b) : o.dist;
  o.variants = parse_variant_list(variants);
  o.explicit_variants = variants != "all";
  if (o.variants.empty()) throw InvalidInput("--variants names no variant");
  o.requested_backend = parse_backend(backend);
  GemmOptions environment;
  apply_gemm_environment(environment);
  o.kernels = vm.count("gemm-kernels") ? parse_cuda_kernels(kernels) : environment.cuda_kernels;
  o.time_phases = gemm_phases_requested();
  o.json = vm.count("json") > 0;
  o.progress = progress_mode(vm);
  o.force = vm.count("force") > 0;
  if (vm.count("csv")) {
    o.csv = vm["csv"].as<std::string>();
    if (o.csv.empty()) throw InvalidInput("--csv needs a file name");
  }
  return o;
}

// --- overflow -------------------------------------------------------------------------------

/// Rows that ran but whose C holds inf or NaN (the relative residual is then not finite): with
/// finite inputs, the product overflowed FP32. A variant that keeps the IEEE infinity (BLAS's
/// fp32-simt: inf, or NaN where inf - inf met) and one whose scaling turns it into something
/// else are shown alike: both accuracy columns inf (the error is unbounded), and a note. Returns
/// whether any row overflowed.
bool mark_overflow(std::vector<bench::GemmRow>& rows) {
  bool any = false;
  for (bench::GemmRow& r : rows) {
    if (!r.available || std::isnan(r.time_s) || std::isfinite(r.relative_residual)) continue;
    any = true;
    r.relative_residual = r.max_relative_error = std::numeric_limits<double>::infinity();
    r.note += std::string(r.note.empty() ? "" : "; ") +
              "overflow: C holds inf or NaN where the FP64 product is finite (error unbounded)";
  }
  return any;
}

/// One sentence on why the product overflowed: the bound on |C| the distributions allow.
std::string overflow_explanation(const BenchOptions& o) {
  const double a = largest_draw(o.dist), b = largest_draw(o.dist_b);
  double bound = static_cast<double>(o.k) * a * b;
  if (o.shape == "lu") bound += a;  // C0 - A*B, C0 drawn like A
  char text[320];
  if (bound > kFp32Max)
    std::snprintf(text, sizeof text,
                  "overflow: with |A| <= %.3g, |B| <= %.3g and k = %d, entries of C (and the sums that form them) "
                  "can reach %.3g, beyond FP32's largest value 3.4e38: FP32 results become inf, or NaN where "
                  "inf - inf meets. Smaller --dist bounds keep the product in range.",
                  a, b, o.k, bound);
  else
    std::snprintf(text, sizeof text,
                  "overflow: |C| <= %.3g stays within FP32's range, but a variant's intermediate values "
                  "(its scaling or split terms) exceeded 3.4e38.",
                  bound);
  return text;
}

// --- output ---------------------------------------------------------------------------------

void write_csv(std::ostream& out, const BenchOptions& o, const std::string& backend,
               const std::string& device, const std::vector<bench::GemmRow>& results) {
  out << "variant,resolved_variant,available,m,n,k,shape,dist,dist_b,backend,device,repeats,seed,"
         "time_s,tflops,relative_residual,max_relative_error,speedup_vs_fp32_simt,note\n";
  for (const bench::GemmRow& r : results) {
    out << to_string(r.variant) << ',' << r.resolved << ',' << (r.available ? "true" : "false")
        << ',' << o.m << ',' << o.n << ',' << o.k << ',' << o.shape << ','
        << csv_field(to_string(o.dist)) << ',' << csv_field(to_string(o.dist_b)) << ',' << backend
        << ',' << csv_field(device) << ',' << o.repeats << ',' << o.seed << ','
        << csv_number(r.time_s) << ',' << csv_number(r.tflops) << ','
        << csv_number(r.relative_residual) << ',' << csv_number(r.max_relative_error) << ','
        << csv_number(r.speedup) << ',' << csv_field(r.note) << '\n';
  }
}

void write_json(const BenchOptions& o, const std::string& backend, const std::string& device,
                const std::vector<bench::GemmRow>& results, const std::string& overflow) {
  JsonWriter w(std::cout);
  w.begin_object()
      .field("command", "gemm-bench")
      .field("m", o.m)
      .field("n", o.n)
      .field("k", o.k)
      .field("shape", o.shape)
      .field("dist", to_string(o.dist))
      .field("dist_b", to_string(o.dist_b))
      .field("backend", backend)
      .field("device", device)
      .field("repeats", o.repeats)
      .field("ec_chunk_k", o.ec_chunk_k)
      .field("seed", o.seed);
  w.field_or_null("overflow", !overflow.empty(), overflow);
  w.key("results").begin_array();
  for (const bench::GemmRow& r : results) {
    w.begin_object().field("variant", to_string(r.variant));
    w.field_or_null("resolved_variant", !r.resolved.empty(), r.resolved);
    w.field("available", r.available)
        .field("time_s", r.time_s)
        .field("tflops", r.tflops)
        .field("relative_residual", r.relative_residual)
        .field("max_relative_error", r.max_relative_error)
        .field("speedup_vs_fp32_simt", r.speedup)
        .field("split_k", r.split_k)
        .field("note", r.note)
        .end_object();
  }
  w.end_array();
  finish_command_json(w);
}

void write_table(const BenchOptions& o, const std::string& backend, const std::string& device,
                 const std::vector<bench::GemmRow>& results, const std::string& overflow) {
  std::printf("gemm-bench: m = %d, n = %d, k = %d (%s), A ~ %s, B ~ %s, seed %llu\n", o.m, o.n,
              o.k, o.shape.c_str(), to_string(o.dist).c_str(), to_string(o.dist_b).c_str(),
              static_cast<unsigned long long>(o.seed));
  std::printf("backend %s on %s, median of %d run%s\n\n", backend.c_str(), device.c_str(),
              o.repeats, o.repeats == 1 ? "" : "s");
  std::printf("%-14s %-14s %10s %9s %12s %12s %8s\n", "variant", "resolved", "time ms", "TFLOP/s",
              "rel. resid.", "max rel.err", "speedup");
  std::vector<std::string> notes;
  for (const bench::GemmRow& r : results) {
    const std::string name(to_string(r.variant));
    std::printf("%-14s %-14s %10s %9s %12s %12s %8s\n", name.c_str(),
                r.resolved.empty() ? "-" : r.resolved.c_str(), fmt("%.3f", r.time_s * 1e3).c_str(),
                fmt("%.3f", r.tflops).c_str(), fmt("%.3e", r.relative_residual).c_str(),
                fmt("%.3e", r.max_relative_error).c_str(), fmt("%.2f", r.speedup).c_str());
    if (!r.note.empty()) notes.push_back(name + ": " + r.note);
  }
  if (!notes.empty()) {
    std::printf("\nNotes:\n");
    for (const std::string& s : notes) std::printf("  %s\n", s.c_str());
  }
  if (!overflow.empty()) std::printf("\n%s\n", overflow.c_str());
  std::fflush(stdout);
}

}  // namespace

int run_gemm_bench(int argc, char** argv) {
  const std::optional<BenchOptions> parsed = parse(argc, argv);
  if (!parsed) return 0;
  BenchOptions o = *parsed;

  const Backend backend = choose_backend(o.requested_backend);
  if (!o.repeats_given) o.repeats = backend == Backend::cuda ? kCudaRepeats : kCpuRepeats;
  const std::string backend_name(to_string(backend));
  const std::string device = device_description(backend);

  bench::require_available(o.variants, o.explicit_variants, backend);

  std::optional<CsvFile> csv;
  if (!o.csv.empty()) csv.emplace(o.csv, output_options(o.force, {}));

  {
    const bench::MemoryNeed need = bench::gemm_memory(o.m, o.n, o.k, backend);
    const std::string what = "gemm-bench with m = " + std::to_string(o.m) + ", n = " + std::to_string(o.n) +
                             ", k = " + std::to_string(o.k);
    require_host_memory(what, need.host);
    if (backend == Backend::cuda) require_device_memory(what, need.device);
  }
  bench::GemmSetup setup;
  setup.m = o.m;
  setup.n = o.n;
  setup.k = o.k;
  setup.update = o.shape == "lu";
  setup.dist = o.dist;
  setup.dist_b = o.dist_b;
  setup.seed = o.seed;
  setup.options.ec_chunk_k = o.ec_chunk_k;
  setup.options.cuda_kernels = o.kernels;
  setup.time_phases = o.time_phases;
  const bench::GemmProblem p = bench::make_gemm_problem(setup);

  Progress progress("gemm-bench", o.progress);
  const bench::StepCallback step = [&progress](const std::string& text) { progress.step(text); };
  const std::unique_ptr<bench::GemmBench> harness = bench::make_gemm_bench(backend, p, step);
  std::vector<bench::GemmRow> results = bench::gemm_rows(*harness, p, o.variants, backend, o.repeats, step);
  const std::string overflow = mark_overflow(results) ? overflow_explanation(o) : std::string();

  if (o.time_phases)  // TCSOLVE_GEMM_PHASES: each variant's last timed call, on stderr
    for (const bench::GemmRow& r : results)
      for (const auto& [phase, seconds] : r.phases)
        std::fprintf(stderr, "gemm phase %-14s %-18s %9.3f ms\n", std::string(to_string(r.variant)).c_str(),
                     phase.c_str(), 1e3 * seconds);
  if (csv) {  // first: a CSV that cannot be written is the error (exit 2), with --json its object alone
    write_csv(csv->stream(), o, backend_name, device, results);
    csv->commit();
  }
  if (o.json)
    write_json(o, backend_name, device, results, overflow);
  else
    write_table(o, backend_name, device, results, overflow);
  return 0;
}

}  // namespace tcsolve::app
