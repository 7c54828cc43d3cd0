// `tcsolve gemm-bench`: times GEMM variants on random FP32 matrices and measures their accuracy
// against an FP64 product of the same inputs (ARCHITECTURE.md, "gemm-bench").
//
// C (m x n) = A (m x k) * B (k x n), column-major, alpha = 1, beta = 0. A is drawn first, then B,
// from one Rng seeded by --seed, so a (seed, dist, dist-b, shape) names the inputs exactly.
// fp32-simt is always timed: it is the baseline of every speedup.
// On the cpu backend everything is on the host and timed by the wall clock. On the cuda backend
// the inputs, the FP64 reference and the accuracy metrics stay on the device, calls are timed
// with CUDA events after a warm-up, and small problems rotate through copies of their inputs so
// that no timed call finds them in L2 (CudaBench).
#include <unistd.h>

#include <algorithm>
#include <chrono>
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
#include "input.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "versions.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/metrics.hpp"
#include "tcsolve/gemm/random.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace tcsolve::app {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
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
  bool json = false;
  ProgressMode progress = ProgressMode::automatic;
  std::string csv;  ///< empty: no CSV
  bool force = false;  ///< --force: an existing --csv file may be replaced
};

/// The inputs, on the host.
struct Problem {
  int m, n, k;
  std::vector<float> A;  ///< m x k, column-major, lda = m
  std::vector<float> B;  ///< k x n, column-major, ldb = k
  /// --shape lu: the trailing matrix C0 (m x n, drawn like A) and C = C0 - A*B (alpha -1,
  /// beta 1: C read and written, as in the LU's update); square: empty, C = A*B.
  std::vector<float> C0;
  GemmOptions options;  ///< what the variants run with (--ec-chunk-k)
  float alpha() const { return C0.empty() ? 1.0f : -1.0f; }
  float beta() const { return C0.empty() ? 0.0f : 1.0f; }
};

/// One variant run `repeats` times, and the accuracy of its (last) result.
struct Measurement {
  GemmInfo info;
  double median_s = kNaN;
  double relative_residual = kNaN, max_relative_error = kNaN;
};

/// One row of the output.
struct Result {
  Variant variant;
  bool available = false;
  std::string resolved;  ///< empty when it did not run
  double time_s = kNaN, tflops = kNaN, relative_residual = kNaN, max_relative_error = kNaN,
         speedup = kNaN;
  std::string note;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// --- backends -------------------------------------------------------------------------------

/// Times variants on one Problem and measures their accuracy against its FP64 product.
class Bench {
 public:
  virtual ~Bench() = default;
  virtual Measurement measure(Variant v, int repeats) = 0;
};

/// cpu: host buffers, the reference by Eigen in double, wall-clock time (steady_clock) per call.
/// No warm-up run: the emulated variants are slow, and a cold first run of Eigen costs little
/// next to them.
class CpuBench final : public Bench {
 public:
  explicit CpuBench(const Problem& p)
      : p_(p),
        C64_(reference_product(Op::n, Op::n, p.m, p.n, p.k, p.A.data(), p.m, p.B.data(), p.k)) {
    if (!p.C0.empty())  // C0 - A*B
      for (std::size_t i = 0; i < C64_.size(); ++i) C64_[i] = static_cast<double>(p.C0[i]) - C64_[i];
  }

  Measurement measure(Variant v, int repeats) override {
    Measurement r;
    std::vector<float> C(static_cast<std::size_t>(p_.m) * p_.n, 0.0f);
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(repeats));
    for (int i = 0; i < repeats; ++i) {
      if (!p_.C0.empty()) C = p_.C0;
      const auto t0 = std::chrono::steady_clock::now();
      r.info = gemm(Backend::cpu, v, Op::n, Op::n, p_.m, p_.n, p_.k, p_.alpha(), p_.A.data(), p_.m,
                    p_.B.data(), p_.k, p_.beta(), C.data(), p_.m, p_.options);
      const auto t1 = std::chrono::steady_clock::now();
      times.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    r.median_s = median(std::move(times));
    r.relative_residual = relative_residual(C.data(), p_.m, C64_.data(), p_.m, p_.n);
    r.max_relative_error = max_relative_error(C.data(), p_.m, C64_.data(), p_.m, p_.n);
    return r;
  }

 private:
  const Problem& p_;
  std::vector<double> C64_;  ///< m x n, FP64 product of the FP32 A and B
};

/// cuda: A and B uploaded once; the reference C64 computed on the device (cuBLAS DGEMM on FP64
/// copies) and the metrics by a reduction kernel there, so nothing of size m x n crosses to the
/// host (C64 alone is 2 GiB at m = n = 16384). Per variant: one untimed warm-up call, then
/// `repeats` calls timed one by one with CUDA events (each waited for); the median counts.
///
/// L2: when A, B and C together take less than 2x the L2 cache, the device holds enough copies
/// of them (one "slot" each) to exceed 4x L2 in total, and every call -- warm-up and timed,
/// across variants -- takes the next slot in turn, so no timed call finds its inputs in L2 from
/// the previous one. All slots hold the same A and B, so every C is compared with the same C64.
class CudaBench final : public Bench {
 public:
  CudaBench(const Problem& p, Progress& progress)
      : m_(p.m),
        n_(p.n),
        k_(p.k),
        alpha_(p.alpha()),
        beta_(p.beta()),
        options_(p.options),
        size_a_(static_cast<std::size_t>(p.m) * p.k),
        size_b_(static_cast<std::size_t>(p.k) * p.n),
        size_c_(static_cast<std::size_t>(p.m) * p.n) {
    stride_a_ = round_up(size_a_), stride_b_ = round_up(size_b_), stride_c_ = round_up(size_c_);
    const std::size_t set_bytes = sizeof(float) * (size_a_ + size_b_ + size_c_);
    const std::size_t slot_bytes = sizeof(float) * (stride_a_ + stride_b_ + stride_c_);
    const std::size_t l2 = cuda::l2_cache_bytes();
    // Counted with the padding, so that tiny problems take about 4x L2 of memory, not more.
    slots_ = set_bytes < 2 * l2 ? ceil_div(4 * l2, slot_bytes) + 1 : 1;  // > 4x L2 in total
    progress.step(std::string("uploading the inputs") +
                  (slots_ > 1 ? " (" + std::to_string(slots_) + " copies rotate through L2)" : "") +
                  ", FP64 reference on the device");

    A_ = cuda::DeviceBuffer<float>(slots_ * stride_a_);
    B_ = cuda::DeviceBuffer<float>(slots_ * stride_b_);
    C_ = cuda::DeviceBuffer<float>(slots_ * stride_c_);
    cuda::copy_to_device(A_.data(), p.A.data(), size_a_ * sizeof(float));
    cuda::copy_to_device(B_.data(), p.B.data(), size_b_ * sizeof(float));
    // Slots [0, s) copied to [s, 2s) until all are filled: log2(slots) copies of each array.
    for (std::size_t done = 1; done < slots_; done *= 2) {
      const std::size_t count = std::min(done, slots_ - done);
      cuda::copy_device_to_device(A_.data() + done * stride_a_, A_.data(),
                                  count * stride_a_ * sizeof(float));
      cuda::copy_device_to_device(B_.data() + done * stride_b_, B_.data(),
                                  count * stride_b_ * sizeof(float));
    }
    C64_ = cuda::DeviceBuffer<double>(size_c_);
    if (!p.C0.empty()) {
      C0_ = cuda::DeviceBuffer<float>(size_c_);
      cuda::copy_to_device(C0_.data(), p.C0.data(), size_c_ * sizeof(float));
    }
    cuda::reference_product_device(Op::n, Op::n, m_, n_, k_, A_.data(), m_, B_.data(), k_,
                                   C64_.data(), alpha_, C0_.size() ? C0_.data() : nullptr, beta_);
    cuda::device_synchronize();
  }

  Measurement measure(Variant v, int repeats) override {
    Measurement r;
    const std::size_t warm = next_slot();
    reset_c(warm);
    run(v, warm);  // warm-up: module loading, cuBLAS heuristics, workspaces
    cuda::device_synchronize();
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(repeats));
    std::size_t slot = 0;
    for (int i = 0; i < repeats; ++i) {
      slot = next_slot();
      reset_c(slot);  // untimed
      timer_.start();
      r.info = run(v, slot);
      times.push_back(timer_.stop_ms() * 1e-3);
    }
    r.median_s = median(std::move(times));
    const cuda::ErrorMetrics e =
        cuda::error_metrics_device(C_.data() + slot * stride_c_, m_, C64_.data(), m_, n_);
    r.relative_residual = e.relative_residual;
    r.max_relative_error = e.max_relative_error;
    return r;
  }

 private:
  /// Elements rounded up to 64 floats, so that every slot starts 256-byte aligned.
  static std::size_t round_up(std::size_t elements) { return ceil_div<std::size_t>(elements, 64) * 64; }

  std::size_t next_slot() {
    const std::size_t s = next_;
    next_ = (next_ + 1) % slots_;
    return s;
  }

  GemmInfo run(Variant v, std::size_t slot) {
    return cuda::gemm(v, Op::n, Op::n, m_, n_, k_, alpha_, A_.data() + slot * stride_a_, m_,
                      B_.data() + slot * stride_b_, k_, beta_, C_.data() + slot * stride_c_, m_, options_);
  }

  /// --shape lu: C of the slot = C0 before each call (C is read and updated in place).
  void reset_c(std::size_t slot) {
    if (C0_.size() != 0)
      cuda::copy_device_to_device(C_.data() + slot * stride_c_, C0_.data(), size_c_ * sizeof(float));
  }

  int m_, n_, k_;
  float alpha_, beta_;
  GemmOptions options_;
  std::size_t size_a_, size_b_, size_c_;        ///< elements of A, B, C
  std::size_t stride_a_ = 0, stride_b_ = 0, stride_c_ = 0;  ///< elements between slots
  std::size_t slots_ = 1, next_ = 0;
  cuda::DeviceBuffer<float> A_, B_, C_;  ///< slots_ copies each, slot s at s * stride
  cuda::DeviceBuffer<double> C64_;       ///< m x n, leading dimension m
  cuda::DeviceBuffer<float> C0_;         ///< --shape lu: the trailing matrix before the update
  cuda::EventTimer timer_;
};

std::unique_ptr<Bench> make_bench(Backend backend, const Problem& p, Progress& progress) {
  switch (backend) {
    case Backend::cpu: return std::make_unique<CpuBench>(p);
    case Backend::cuda: return std::make_unique<CudaBench>(p, progress);
    case Backend::automatic: break;
  }
  throw Error("gemm-bench: backend not resolved");
}

// --- options --------------------------------------------------------------------------------

std::optional<BenchOptions> parse(int argc, char** argv) {
  long long m = 256, n = 256, k = 256, repeats = 3, seed = 1, chunk = GemmOptions{}.ec_chunk_k;
  std::string shape, dist, dist_b, variants, backend;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("m", po::value(&m)->default_value(256)->value_name("M"), "rows of A and C")
      ("n", po::value(&n)->default_value(256)->value_name("N"), "columns of B and C (--shape lu: equal to --m)")
      ("k", po::value(&k)->default_value(256)->value_name("K"), "columns of A, rows of B (--shape lu: block size)")
      ("shape", po::value(&shape)->default_value("square")->value_name("SHAPE"),
       "square: C = A*B with the sizes as given; lu: the LU's trailing update C = C0 - A*B "
       "(C0 drawn like A, so C is read and written), n = m, k = block size (needs --m and --k)")
      ("dist", po::value(&dist)->default_value("urand")->value_name("D"),
       "distribution of A (and of B without --dist-b): urand = U(-1,1), urand:A:B = U(A,B), "
       "exp_rand:A:B = random sign, exponent uniform in [A,B], significand in [1,2)")
      ("dist-b", po::value(&dist_b)->value_name("D"), "distribution of B (default: --dist)")
      ("variants", po::value(&variants)->default_value("all")->value_name("LIST"),
       ("all, or a comma-separated list of: " + variant_names()).c_str())
      ("backend", po::value(&backend)->default_value("auto")->value_name("B"), "auto | cpu | cuda")
      ("repeats", po::value(&repeats)->default_value(kCpuRepeats, "3 on cpu, 10 on cuda")->value_name("R"),
       "timed runs per variant (cuda: after one untimed warm-up run); the median counts")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of the random inputs (A drawn, then B)")
      ("ec-chunk-k", po::value(&chunk)->default_value(GemmOptions{}.ec_chunk_k)->value_name("K"),
       "ec-fp16 / auto (FP16): k of hi*hi accumulated inside the tensor core before the outside "
       "FP32 add (a multiple of 16)")
      ("json", "print one JSON object on stdout")
      ("csv", po::value<std::string>()->value_name("FILE"), "also write the rows as CSV to this file")
      ("force", "replace an existing --csv file")
      ("help", "print this help");
  // clang-format on
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout,
                "tcsolve gemm-bench [--m M --n N --k K] [--shape square|lu] [--dist D] "
                "[--dist-b D]\n"
                "                          [--variants all|v1,v2] [--backend auto|cpu|cuda] "
                "[--repeats R]\n"
                "                          [--seed S] [--ec-chunk-k K] [--json] [--csv FILE [--force]]",
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

  o.dist = parse_distribution(dist);
  o.dist_b = vm.count("dist-b") ? parse_distribution(dist_b) : o.dist;
  o.variants = parse_variant_list(variants);
  o.explicit_variants = variants != "all";
  if (o.variants.empty()) throw InvalidInput("--variants names no variant");
  o.requested_backend = parse_backend(backend);
  o.json = vm.count("json") > 0;
  o.progress = progress_mode(vm);
  o.force = vm.count("force") > 0;
  if (vm.count("csv")) {
    o.csv = vm["csv"].as<std::string>();
    if (o.csv.empty()) throw InvalidInput("--csv needs a file name");
  }
  return o;
}

// --- output ---------------------------------------------------------------------------------

void write_csv(std::ostream& out, const BenchOptions& o, const std::string& backend,
               const std::string& device, const std::vector<Result>& results) {
  out << "variant,resolved_variant,available,m,n,k,shape,dist,dist_b,backend,device,repeats,seed,"
         "time_s,tflops,relative_residual,max_relative_error,speedup_vs_fp32_simt,note\n";
  for (const Result& r : results) {
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
                const std::vector<Result>& results) {
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
  w.key("results").begin_array();
  for (const Result& r : results) {
    w.begin_object().field("variant", to_string(r.variant));
    w.field_or_null("resolved_variant", !r.resolved.empty(), r.resolved);
    w.field("available", r.available)
        .field("time_s", r.time_s)
        .field("tflops", r.tflops)
        .field("relative_residual", r.relative_residual)
        .field("max_relative_error", r.max_relative_error)
        .field("speedup_vs_fp32_simt", r.speedup)
        .field("note", r.note)
        .end_object();
  }
  w.end_array();
  finish_command_json(w);
}

void write_table(const BenchOptions& o, const std::string& backend, const std::string& device,
                 const std::vector<Result>& results) {
  std::printf("gemm-bench: m = %d, n = %d, k = %d (%s), A ~ %s, B ~ %s, seed %llu\n", o.m, o.n,
              o.k, o.shape.c_str(), to_string(o.dist).c_str(), to_string(o.dist_b).c_str(),
              static_cast<unsigned long long>(o.seed));
  std::printf("backend %s on %s, median of %d run%s\n\n", backend.c_str(), device.c_str(),
              o.repeats, o.repeats == 1 ? "" : "s");
  std::printf("%-14s %-14s %10s %9s %12s %12s %8s\n", "variant", "resolved", "time ms", "TFLOP/s",
              "rel. resid.", "max rel.err", "speedup");
  std::vector<std::string> notes;
  for (const Result& r : results) {
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

  // A variant the user named must run here; one that came from "all" is reported unavailable.
  for (Variant v : o.variants)
    if (o.explicit_variants && !available(v, backend))
      throw Unavailable("variant " + std::string(to_string(v)) + " is not available on the " +
                        backend_name + " backend here");
  if (!available(Variant::fp32_simt, backend))
    throw Unavailable("the baseline fp32-simt is not available on the " + backend_name +
                      " backend here");

  std::optional<CsvFile> csv;
  if (!o.csv.empty()) csv.emplace(o.csv, output_options(o.force, {}));

  {
    // Host: A, B, C0 and C in FP32 with FP64 copies of A and B and the FP64 product C64 (12
    // bytes per element); device (cuda): the FP32 operands (one copy when larger than the L2
    // rotation needs) and the FP64 reference.
    const double mk = static_cast<double>(o.m) * o.k, kn = static_cast<double>(o.k) * o.n,
                 mn = static_cast<double>(o.m) * o.n;
    const std::string what = "gemm-bench with m = " + std::to_string(o.m) + ", n = " + std::to_string(o.n) +
                             ", k = " + std::to_string(o.k);
    require_host_memory(what, 12 * (mk + kn) + 24 * mn);
    if (backend == Backend::cuda) require_device_memory(what, 12 * (mk + kn + mn) + 8 * mn + 64.0 * 1024 * 1024);
  }
  Problem p{o.m, o.n, o.k, {}, {}, {}, {}};
  p.A.resize(static_cast<std::size_t>(o.m) * o.k);
  p.B.resize(static_cast<std::size_t>(o.k) * o.n);
  Rng rng(o.seed);
  fill(o.dist, rng, p.A.data(), p.A.size());
  fill(o.dist_b, rng, p.B.data(), p.B.size());
  p.options.ec_chunk_k = o.ec_chunk_k;
  if (o.shape == "lu") {
    p.C0.resize(static_cast<std::size_t>(o.m) * o.n);
    fill(o.dist, rng, p.C0.data(), p.C0.size());
  }

  Progress progress("gemm-bench", o.progress);
  const std::unique_ptr<Bench> bench = make_bench(backend, p, progress);
  const double flops = 2.0 * o.m * o.n * o.k;
  const std::size_t total = o.variants.size();

  // The baseline first: fp32-simt is timed whether or not it was selected.
  progress.step("fp32-simt (baseline)");
  const Measurement baseline = bench->measure(Variant::fp32_simt, o.repeats);

  std::vector<Result> results;
  results.reserve(total);
  for (std::size_t i = 0; i < total; ++i) {
    const Variant v = o.variants[i];
    Result r;
    r.variant = v;
    r.available = available(v, backend);
    if (!r.available) {
      r.note = "not available on the " + backend_name + " backend here";
      results.push_back(std::move(r));
      continue;
    }
    if (v != Variant::fp32_simt)
      progress.step("[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] " + std::string(to_string(v)));
    const Measurement m = v == Variant::fp32_simt ? baseline : bench->measure(v, o.repeats);
    r.resolved = std::string(to_string(m.info.resolved));
    r.note = m.info.note;
    r.time_s = m.median_s;
    r.tflops = flops / m.median_s / 1e12;
    r.relative_residual = m.relative_residual;
    r.max_relative_error = m.max_relative_error;
    r.speedup = baseline.median_s / m.median_s;
    results.push_back(std::move(r));
  }

  if (o.json)
    write_json(o, backend_name, device, results);
  else
    write_table(o, backend_name, device, results);
  if (csv) {
    write_csv(csv->stream(), o, backend_name, device, results);
    csv->commit();
  }
  return 0;
}

}  // namespace tcsolve::app
