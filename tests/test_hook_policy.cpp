// The cuBLAS drop-in's policy, settings, log format and exit report (hook/src/policy.hpp,
// settings.hpp, journal.hpp) and its epilogue arithmetic (activation.hpp) on the CPU: which
// products it intercepts and which it passes through, with the reason the log names. [hook]
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "activation.hpp"
#include "journal.hpp"
#include "policy.hpp"
#include "settings.hpp"
#include "tcsolve/gemm/batch.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve::hook;

/// An FP32 product cuBLAS would run in its default math mode: the case the hook is for.
Request square(std::int64_t n) {
  Request r;
  r.m = r.n = r.k = n;
  r.lda = r.ldb = r.ldc = n;
  return r;
}

/// A batch of `batch` m x n x k products, op(A) op(B) as `ops` says ("NN", "TN", ...), through
/// `entry`, with the smallest leading dimensions.
Request batched(Entry entry, const char* ops, std::int64_t batch, std::int64_t m, std::int64_t n,
                std::int64_t k) {
  Request r;
  r.entry = entry;
  r.ta = ops[0], r.tb = ops[1];
  r.m = m, r.n = n, r.k = k, r.batch = batch;
  r.lda = r.ta == 'N' ? m : k;
  r.ldb = r.tb == 'N' ? k : n;
  r.ldc = m;
  return r;
}

/// A pass-through's log record.
CallRecord passed(const Request& r, const std::string& reason) {
  CallRecord c;
  c.function = entry_name(r.entry, r.is64);
  c.ta = r.ta, c.tb = r.tb;
  c.m = r.m, c.n = r.n, c.k = r.k, c.batch = r.batch;
  c.flops = flops(r);
  c.units = work_units(r);
  c.reason = reason;
  return c;
}

Config from(const std::map<std::string, std::string>& env) {
  return parse_config([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

/// What the process writes on stderr (file descriptor 2) while it lives.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()), saved_(::dup(2)) {
    std::fflush(stderr);
    if (file_ && saved_ >= 0) ::dup2(::fileno(file_), 2);
  }
  ~StderrCapture() { restore(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  /// Restores stderr and returns what was written.
  std::string text() {
    restore();
    std::string out;
    if (!file_) return out;
    std::rewind(file_);
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::FILE* file_;
  int saved_;
};

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t count = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("the hook intercepts a large FP32 product asked for in default or pedantic math mode", "[hook]") {
  const Settings s;
  for (MathMode math : {MathMode::default_math, MathMode::pedantic}) {
    Request r = square(4096);
    r.math = math;
    const Decision d = decide(r, s);
    CHECK(d.intercept);
    CHECK(d.variant == HookVariant::auto_);
    CHECK(d.reason.empty());
  }
  for (Compute c : {Compute::f32, Compute::f32_pedantic}) {
    Request r = square(4096);
    r.entry = Entry::gemm_ex;
    r.compute = c;
    CHECK(decide(r, s).intercept);
  }
}

TEST_CASE("TF32 requests pass through unless TCSOLVE_HOOK_TF32=replace", "[hook]") {
  Request math = square(4096);
  math.math = MathMode::tf32;
  Request compute = square(4096);
  compute.compute = Compute::f32_fast_tf32;
  Settings s;
  CHECK(decide(math, s).reason == "tf32 math mode");
  CHECK(decide(compute, s).reason == "compute type 32F_FAST_TF32");
  s.tf32_replace = true;
  CHECK(decide(math, s).intercept);
  CHECK(decide(compute, s).intercept);
  // other reduced precisions and emulations are never replaced
  Request fast16 = square(4096);
  fast16.compute = Compute::f32_fast_16f;
  CHECK(decide(fast16, s).reason == "compute type 32F_FAST_16F");
  Request bf16x9 = square(4096);
  bf16x9.math = MathMode::emulated_bf16x9;
  CHECK(decide(bf16x9, s).reason == "bf16x9 math mode");
}

TEST_CASE("the hook passes through what it does not serve, naming the reason", "[hook]") {
  const Settings s;
  auto reason = [&](const Request& r) { return decide(r, s).reason; };
  Request r = square(4096);
  r.fp32_types = false;
  CHECK(reason(r) == "data type");
  r = square(4096), r.compute = Compute::other;
  CHECK(reason(r) == "compute type not 32F");
  r = square(4096), r.pointers = Pointers::vector;
  CHECK(reason(r) == "pointer mode vector");
  r = square(4096), r.unsupported = "epilogue 512";
  CHECK(reason(r) == "epilogue 512");
  r = square(4096), r.k = 0;
  CHECK(reason(r) == "k = 0");
  r = square(4096), r.m = 0;
  CHECK(reason(r) == "empty");
  r = square(4096), r.batch = 0;
  CHECK(reason(r) == "empty");
  r = square(4096), r.alpha = 0.0f;
  CHECK(reason(r) == "alpha = 0");
  r = square(4096), r.pointers = Pointers::device, r.alpha = 0.0f;  // alpha unread on the host
  CHECK(decide(r, s).intercept);
  r = square(4096), r.ta = 'T', r.k = 1000, r.lda = 1000;  // A is k x m: lda >= k suffices
  CHECK(decide(r, s).intercept);
  r = square(4096), r.n = 3000000000LL, r.ldc = 4096;
  CHECK(reason(r) == "size beyond int");
  r = square(4096), r.reentrant = true;
  CHECK(reason(r) == "reentrant");
}

TEST_CASE("a call cuBLAS rejects as invalid passes through untouched, naming the argument", "[hook]") {
  const Settings s;
  auto reason = [&](const Request& r) { return decide(r, s).reason; };
  Request r = square(4096);
  r.ta = '?';  // transa 7 (cublas_entries.cpp's op_letter): never run as 'T'
  CHECK(reason(r) == "invalid transa");
  r = square(4096), r.tb = '?';
  CHECK(reason(r) == "invalid transb");
  r = square(4096), r.ta = 'C';  // CUBLAS_OP_C: valid, the transpose for real data
  CHECK(decide(r, s).intercept);
  r = square(4096), r.m = -1;
  CHECK(reason(r) == "invalid m");
  r = square(4096), r.n = -4096;
  CHECK(reason(r) == "invalid n");
  r = square(4096), r.k = -1;
  CHECK(reason(r) == "invalid k");
  r = square(4096), r.batch = -2;
  CHECK(reason(r) == "invalid batch count");
  r = square(4096), r.lda = 4095;
  CHECK(reason(r) == "invalid lda");
  r = square(4096), r.tb = 'T', r.ldb = 4095;  // B is n x k: ldb >= n
  CHECK(reason(r) == "invalid ldb");
  r = square(4096), r.ldc = 0;
  CHECK(reason(r) == "invalid ldc");
  r = square(4096), r.m = 0, r.lda = 0;  // lda >= max(1, m) even when nothing is computed
  CHECK(reason(r) == "invalid lda");
  r = square(4096), r.null_scalars = true;
  CHECK(reason(r) == "invalid alpha or beta (NULL)");
  r = square(4096), r.entry = Entry::gemm_ex, r.algo_valid = false;
  CHECK(reason(r) == "invalid algo");
  // before the rules that would pass it for another reason, after variant off and reentrant
  r = square(4096), r.ta = '?', r.fp32_types = false;
  CHECK(reason(r) == "invalid transa");
  r.reentrant = true;
  CHECK(reason(r) == "reentrant");
}

TEST_CASE("a log that cannot be written is said once on stderr, and the calls go on", "[hook]") {
  const std::string missing_dir =
      (std::filesystem::temp_directory_path() / ("tcsolve-no-such-dir-" + std::to_string(::getpid())))
          .string();
  REQUIRE_FALSE(std::filesystem::exists(missing_dir));
  CallRecord call;
  call.function = "cublasSgemm_v2";
  StderrCapture capture;
  {
    Journal full(
        from({{"TCSOLVE_HOOK_LOG", "/dev/full"}, {"TCSOLVE_HOOK_REPORT", "1"}}));  // open works, writes fail
    for (int i = 0; i < 3; ++i) full.record(call);
    CHECK(full.report().find("0 calls intercepted") != std::string::npos);  // still counted
    CHECK(full.report().find("3 passed through") != std::string::npos);
  }
  {
    Journal absent(from({{"TCSOLVE_HOOK_LOG", missing_dir + "/log.jsonl"}}));  // open fails
    absent.record(call);
  }
  const std::string err = capture.text();
  INFO(err);
  CHECK(occurrences(err, "tcsolve hook: cannot write log /dev/full: No space left on device") == 1);
  CHECK(occurrences(err, "tcsolve hook: cannot write log " + missing_dir +
                             "/log.jsonl: No such file or directory") == 1);
  CHECK(occurrences(err, "cannot write log") == 2);
}

TEST_CASE("small, thin and few-tile products pass through at the thresholds, which can be lowered",
          "[hook]") {
  Settings s;
  s.min_flops = 2.0 * 512 * 512 * 512;
  s.min_dim = 64;
  s.min_tiles = 0;
  s.min_speedup = 0;  // the cost model off: the thresholds alone
  CHECK(decide(square(512), s).intercept);
  CHECK(decide(square(511), s).reason == "below min flops");
  Request thin = square(8192);
  thin.k = 63;
  CHECK(decide(thin, s).reason == "below min dim");
  // the flops threshold counts the whole call (a batch runs as one launch): 1000 products of
  // 256^3 are 3.4e10 flops, above it, though each is below
  Request batch = square(256);
  batch.batch = 1000;
  CHECK(decide(batch, s).intercept);
  batch.batch = 7;  // 7 x 2 x 256^3 = 2.3e8 < 2 x 512^3
  CHECK(decide(batch, s).reason == "below min flops");
  // work units: 128 x 128 output tiles x k ranges; 12 x 12 = 144 at 1536 (and 1409), 11 x 12 =
  // 132 at 1408 x 1536, which k splitting leaves whole (132 tiles >= tcsolve::kSplitKTiles = 128)
  s.min_tiles = 144;
  CHECK(decide(square(1536), s).intercept);
  CHECK(decide(square(1409), s).intercept);
  Request few = square(1536);
  few.m = 1408;
  CHECK(work_units(few) == 132);
  CHECK(decide(few, s).reason == "few output tiles");
  // one tile and a long k: k is split into 256 ranges of 4096, 256 units
  Request long_k = square(128);
  long_k.k = long_k.lda = long_k.ldb = 1 << 20;
  CHECK(tcsolve::ec_k_split(128, 128, 1 << 20, 1, 0).count == 256);
  CHECK(work_units(long_k) == 256);
  CHECK(decide(long_k, s).intercept);
  s.min_tiles = 257;
  CHECK(decide(long_k, s).reason == "few output tiles");
  s.min_flops = 0, s.min_dim = 0, s.min_tiles = 0;
  CHECK(decide(square(1), s).intercept);
  CHECK(decide(few, s).intercept);
}

TEST_CASE("the default policy on batched and few-tile calls, which run as one launch", "[hook]") {
  const Settings s;
  REQUIRE(s.min_flops == 0);  // the cost model decides small calls
  // 64 products of 512^3 (torch.bmm, CuPy's batched matmul): 1.7e10 flops, 64 x 16 = 1024
  // units, predicted 1.16x (measured 1.30x): taken through every batched entry point
  const double per_512 = 2.0 * 512 * 512 * 512;
  for (Entry e : {Entry::sgemm_strided_batched, Entry::sgemm_batched, Entry::gemm_batched_ex,
                  Entry::gemm_strided_batched_ex}) {
    const Request r = batched(e, "NN", 64, 512, 512, 512);
    CHECK(flops(r) == 64 * per_512);
    CHECK(work_units(r) == 1024);
    CHECK(decide(r, s).intercept);
  }
  // fewer members: the fixed cost weighs more; 15 x 512^3 is predicted below 1.1x
  CHECK(decide(batched(Entry::sgemm_strided_batched, "NN", 15, 512, 512, 512), s).reason ==
        "predicted slower");
  // BERT-base's attention (torch.bmm of QK^T and PV, sequence 128, head 64): batches of 384 of
  // 128 x 128 x 64 and 128 x 64 x 128, 384 units each, but measured 0.49x and 0.31x (the split
  // pass's traffic and the fixed cost): they stay with cuBLAS
  const Request qk = batched(Entry::sgemm_strided_batched, "TN", 384, 128, 128, 64);
  const Request pv = batched(Entry::sgemm_strided_batched, "NN", 384, 128, 64, 128);
  for (const Request& r : {qk, pv}) {
    CHECK(flops(r) == 805306368.0);
    CHECK(work_units(r) == 384);
    CHECK(decide(r, s).reason == "predicted slower");
  }
  // docs/BENCHMARKS.md's layer (8 x 16 heads of 2048 tokens): QK^T (k = 64, C large) taken,
  // PV (64 x 2048 x 2048 per head: reading P dominates) not
  CHECK(decide(batched(Entry::sgemm_strided_batched, "TN", 128, 2048, 2048, 64), s).intercept);
  CHECK(decide(batched(Entry::sgemm_strided_batched, "NN", 128, 64, 2048, 2048), s).reason ==
        "predicted slower");
  // long k, few tiles, split into ranges: the weight gradient 1024 x 1024 x 16384 (64 tiles, 4
  // ranges, 256 units) is taken; 8192 x 128 x 16384 (also 256 units) reads 17x more operand
  // than it computes on and is not
  const Request grad = batched(Entry::sgemm, "NT", 1, 1024, 1024, 16384);
  const Request narrow = batched(Entry::sgemm, "NN", 1, 8192, 128, 16384);
  for (const Request& r : {grad, narrow}) {
    CHECK(tcsolve::ec_k_split(r.m, r.n, r.k, 1, 0).count == 4);
    CHECK(work_units(r) == 256);
  }
  CHECK(decide(grad, s).intercept);
  CHECK(decide(narrow, s).reason == "predicted slower");
  // 128 tiles is not split and is enough units (min_tiles 128); 127 tiles of a short k is not
  const Request tall = batched(Entry::sgemm, "NN", 1, 16384, 128, 4096);
  CHECK(work_units(tall) == 128);
  CHECK(decide(tall, s).reason != "few output tiles");
  CHECK(decide(batched(Entry::sgemm, "NN", 1, 16256, 128, 256), s).reason == "few output tiles");
  // min_dim still holds member by member: a batch of thin products passes however large
  CHECK(decide(batched(Entry::sgemm_batched, "NN", 100000, 512, 512, 32), s).reason == "below min dim");
  // a batch count beyond int (the _64 forms) passes
  Request huge = batched(Entry::gemm_strided_batched_ex, "NN", 3000000000LL, 512, 512, 512);
  huge.is64 = true;
  CHECK(decide(huge, s).reason == "size beyond int");
  CHECK(work_units(huge) == 3000000000.0 * 16);
}

TEST_CASE("the cost model sorts the measured shapes as the measurement does", "[hook]") {
  // docs/BENCHMARKS.md session 22 (H200, tcsolve_batched_bench, ec-fp16 against cuBLAS
  // SGEMM): batch, m, n, k, the measured speedup. Every shape measured at 1.3x or more must be
  // predicted at 1.1x or more (taken), every one at 0.9x or less below 1.1x (passed through);
  // the model is conservative: never above the measurement by more than 0.2.
  struct Measured {
    std::int64_t batch, m, n, k;
    double speedup;
  };
  const Measured table[] = {
      {384, 128, 128, 64, 0.49},    {384, 64, 128, 128, 0.31},    {128, 2048, 2048, 64, 1.52},
      {128, 64, 2048, 2048, 0.48},  {64, 512, 512, 512, 1.30},    {32, 1024, 1024, 1024, 2.12},
      {1, 1024, 1024, 16384, 2.07}, {1, 2048, 128, 16384, 0.79},  {1, 256, 256, 65536, 0.55},
      {1, 16384, 128, 16384, 1.06}, {1, 4096, 1024, 4096, 2.84},  {1, 4096, 768, 768, 1.65},
      {1, 4096, 3072, 768, 2.93},   {1, 4096, 768, 3072, 2.32},   {1, 16384, 4096, 1024, 3.76},
      {1, 16384, 1024, 4096, 3.30}, {1, 16384, 1024, 1024, 2.72}, {1, 8192, 8192, 8192, 4.44},
      {1, 4096, 4096, 4096, 3.88},  {1, 2048, 2048, 2048, 2.48}};
  const Settings s;
  for (const Measured& t : table) {
    const Request r = batched(Entry::sgemm_strided_batched, "NN", t.batch, t.m, t.n, t.k);
    const double predicted = predicted_speedup(r);
    INFO(t.batch << " x " << t.m << " x " << t.n << " x " << t.k << ": measured " << t.speedup
                 << ", predicted " << predicted);
    if (t.speedup >= 1.3) CHECK(predicted >= s.min_speedup);
    if (t.speedup <= 0.9) CHECK(predicted < s.min_speedup);
    CHECK(predicted <= t.speedup + 0.2);
  }
}

TEST_CASE("variant off passes everything, before any other rule", "[hook]") {
  Settings s;
  s.variant = HookVariant::off;
  Request r = square(4096);
  r.fp32_types = false;
  CHECK(decide(r, s).reason == "variant off");
  CHECK(decide(square(4096), s).reason == "variant off");
}

TEST_CASE("TCSOLVE_HOOK_* settings parse, and a bad value keeps the default and is named", "[hook]") {
  const Config defaults = from({});
  CHECK(defaults.policy.variant == HookVariant::auto_);
  CHECK_FALSE(defaults.policy.tf32_replace);
  CHECK(defaults.policy.min_flops == 0);
  CHECK(defaults.policy.min_speedup == 1.1);
  CHECK(defaults.log_path.empty());
  CHECK_FALSE(defaults.report);
  CHECK(defaults.problems.empty());

  const Config c = from({{"TCSOLVE_HOOK_VARIANT", "ec-tf32"},
                         {"TCSOLVE_HOOK_TF32", "replace"},
                         {"TCSOLVE_HOOK_MIN_FLOPS", "1e6"},
                         {"TCSOLVE_HOOK_MIN_DIM", "0"},
                         {"TCSOLVE_HOOK_MIN_TILES", "7"},
                         {"TCSOLVE_HOOK_MIN_SPEEDUP", "0.5"},
                         {"TCSOLVE_HOOK_LOG", "/tmp/x.jsonl"},
                         {"TCSOLVE_HOOK_REPORT", "1"},
                         {"TCSOLVE_HOOK_GRAPHS", "0"}});
  CHECK(c.policy.variant == HookVariant::ec_tf32);
  CHECK(c.policy.tf32_replace);
  CHECK(c.policy.min_flops == 1e6);
  CHECK(c.policy.min_dim == 0);
  CHECK(c.policy.min_tiles == 7);
  CHECK(c.policy.min_speedup == 0.5);
  CHECK(c.log_path == "/tmp/x.jsonl");
  CHECK(c.report);
  CHECK(defaults.graphs);
  CHECK_FALSE(c.graphs);
  CHECK(c.problems.empty());

  for (const auto& [name, value] : std::map<std::string, std::string>{{"TCSOLVE_HOOK_VARIANT", "ec_fp16"},
                                                                      {"TCSOLVE_HOOK_TF32", "yes"},
                                                                      {"TCSOLVE_HOOK_MIN_FLOPS", "-1"},
                                                                      {"TCSOLVE_HOOK_MIN_DIM", "2.5"},
                                                                      {"TCSOLVE_HOOK_MIN_TILES", "x"},
                                                                      {"TCSOLVE_HOOK_MIN_SPEEDUP", "fast"},
                                                                      {"TCSOLVE_HOOK_REPORT", "on"},
                                                                      {"TCSOLVE_HOOK_GRAPHS", "yes"}}) {
    const Config bad = from({{name, value}});
    REQUIRE(bad.problems.size() == 1);
    CHECK(bad.problems[0].find(name + "='" + value + "'") != std::string::npos);
    CHECK(bad.policy.variant == defaults.policy.variant);
    CHECK(bad.policy.min_flops == defaults.policy.min_flops);
    CHECK(bad.policy.min_dim == defaults.policy.min_dim);
    CHECK(bad.policy.min_tiles == defaults.policy.min_tiles);
    CHECK(bad.policy.min_speedup == defaults.policy.min_speedup);
    CHECK(bad.graphs == defaults.graphs);
  }
}

TEST_CASE("a log line is one JSON object with the call, the action and the variant or the reason", "[hook]") {
  CallRecord r;
  r.function = entry_name(Entry::sgemm_strided_batched, true);
  r.ta = 'T', r.tb = 'N';
  r.m = 7, r.n = 61, r.k = 68, r.batch = 16;
  r.flops = 2.0 * 7 * 61 * 68 * 16;
  r.intercepted = true;
  r.variant = "auto";
  r.units = 16;
  CHECK(
      json_line(r) ==
      "{\"function\":\"cublasSgemmStridedBatched_64\",\"ops\":\"TN\",\"m\":7,\"n\":61,\"k\":68,\"batch\":16,"
      "\"flops\":929152,\"action\":\"intercept\",\"variant\":\"auto\",\"graph\":false,\"units\":16}");
  r.intercepted = false;
  r.reason = "error: say \"no\"\n";
  CHECK(json_line(r).find(",\"action\":\"pass\",\"reason\":\"error: say \\\"no\\\" \",\"units\":16}") !=
        std::string::npos);
}

TEST_CASE("every entry point is logged by the name cuBLAS exports it under", "[hook]") {
  const std::map<Entry, std::string> names = {{Entry::sgemm, "cublasSgemm_v2"},
                                              {Entry::sgemm_strided_batched, "cublasSgemmStridedBatched"},
                                              {Entry::sgemm_batched, "cublasSgemmBatched"},
                                              {Entry::gemm_ex, "cublasGemmEx"},
                                              {Entry::gemm_batched_ex, "cublasGemmBatchedEx"},
                                              {Entry::gemm_strided_batched_ex, "cublasGemmStridedBatchedEx"},
                                              {Entry::lt_matmul, "cublasLtMatmul"}};
  for (const auto& [entry, name] : names) {
    CHECK(entry_name(entry, false) == name);
    CHECK(entry_name(entry, true) == name + "_64");
  }
}

TEST_CASE("the report lists the pass-throughs by reason and by shape, the most GFLOP first", "[hook]") {
  StderrCapture capture;  // the journal prints its report at destruction too
  Journal journal(from({{"TCSOLVE_HOOK_REPORT", "1"}}));
  const Request qk = batched(Entry::sgemm_strided_batched, "TN", 384, 128, 128, 64);
  const Request pv = batched(Entry::sgemm_strided_batched, "NN", 384, 128, 64, 128);
  const Request tall = batched(Entry::sgemm, "NN", 1, 16384, 128, 16384);
  for (int i = 0; i < 3; ++i) journal.record(passed(qk, "below min flops"));
  journal.record(passed(pv, "below min flops"));
  journal.record(passed(tall, "few output tiles"));
  CallRecord taken = passed(square(4096), "");
  taken.intercepted = true, taken.variant = "auto", taken.graph = true;
  journal.record(taken);
  // 2 x 4096^3 = 137.4 GFLOP taken; passed 4 x 0.81 + 68.7 = 71.9 GFLOP; 137.4 / 209.4 = 65.6%
  CHECK(journal.report() ==
        "tcsolve hook: 1 calls intercepted (137.4 GFLOP, 65.6% of the GEMM flops), 5 passed through (71.9 "
        "GFLOP)\n"
        "tcsolve hook:   intercepted, replayed from cached graphs: 1 calls\n"
        "tcsolve hook:   passed, few output tiles: 1 calls, 68.7 GFLOP\n"
        "tcsolve hook:     16384 x 128 x 16384, batch 1, NN: 1 calls, 68.7 GFLOP\n"
        "tcsolve hook:   passed, below min flops: 4 calls, 3.2 GFLOP\n"
        "tcsolve hook:     128 x 128 x 64, batch 384, TN: 3 calls, 2.4 GFLOP\n"
        "tcsolve hook:     128 x 64 x 128, batch 384, NN: 1 calls, 0.8 GFLOP\n");
  // beyond kReportShapes shapes a reason, the rest in one line; beyond kTrackedShapes (reason,
  // shape) pairs in all, new shapes are counted there without being kept
  const std::size_t shapes = Journal::kTrackedShapes + 10;  // 3 pairs kept already: 13 not kept
  for (std::size_t i = 0; i < shapes; ++i) {
    Request r = square(64);
    r.n = 64 + static_cast<std::int64_t>(i);  // the largest last: listed first
    journal.record(passed(r, "below min dim"));
  }
  const std::string report = journal.report();
  INFO(report);
  CHECK(report.find("tcsolve hook:   passed, below min dim: " + std::to_string(shapes) + " calls") !=
        std::string::npos);
  CHECK(report.find("tcsolve hook:     64 x " + std::to_string(64 + Journal::kTrackedShapes - 4) +
                    " x 64, batch 1, NN") != std::string::npos);  // the largest kept
  CHECK(report.find("tcsolve hook:     other shapes: " + std::to_string(shapes - Journal::kReportShapes) +
                    " calls") != std::string::npos);
  CHECK(occurrences(report, "tcsolve hook:     ") == 1 + 2 + Journal::kReportShapes + 1);  // shape lines
}

TEST_CASE("the epilogues' ReLU and tanh GELU are cuBLASLt's formulas in FP32", "[hook]") {
  // GELU(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) evaluated in double as the
  // reference. The FP32 evaluation rounds about ten times (the cube, the sum, the scaling, tanhf's
  // own error of a few ulps, 1 + t, the two products), each adding at most u = 2^-24 relative to
  // |x| (tanh's slope times its argument is below 1): 16 u |x| holds with room.
  constexpr double kGeluTolerance = 16 * 0x1p-24;
  auto reference = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::acos(-1.0)) * (x + 0.044715 * x * x * x)));
  };
  for (int i = -800; i <= 800; ++i) {
    const float x = static_cast<float>(i) / 100.0f;
    INFO("x = " << x);
    CHECK(std::fabs(activate(Activation::gelu, x) - reference(x)) <= kGeluTolerance * std::fabs(x));
  }
  CHECK(std::fabs(gelu_tanh(1.0f) - 0.8411919906082768) <= kGeluTolerance);  // GELU's tabulated value
  CHECK(std::fabs(gelu_tanh(-1.0f) + 0.15880800939172324) <= kGeluTolerance);
  CHECK(gelu_tanh(0.0f) == 0.0f);
  CHECK(gelu_tanh(1e20f) == 1e20f);  // x^3 overflows to inf, tanh to 1: x itself
  CHECK(gelu_tanh(-1e20f) == 0.0f);
  // ReLU as max(x, 0); a NaN gives 0, as cuBLASLt's RELU epilogue does (activation.hpp)
  CHECK(activate(Activation::relu, -2.5f) == 0.0f);
  CHECK(activate(Activation::relu, 3.0f) == 3.0f);
  CHECK(activate(Activation::relu, std::numeric_limits<float>::quiet_NaN()) == 0.0f);
  CHECK(activate(Activation::none, -2.5f) == -2.5f);
}

TEST_CASE("the drop-in guide's table of variables names every one the hook reads, with its true default",
          "[hook]") {
  std::ifstream in(tcsolve::test::test_data_path("docs/guide/drop-in.md"));
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string page = text.str();
  // rows "| `TCSOLVE_HOOK_X` | default | meaning |"
  const std::regex row(R"(\| `(TCSOLVE_HOOK_[A-Z_0-9]+)` \| ([^|]+?) \|)");
  std::set<std::string> documented;
  const Config defaults = from({});
  for (auto it = std::sregex_iterator(page.begin(), page.end(), row); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[1], value = (*it)[2];
    INFO(name << " = " << value);
    documented.insert(name);
    if (value == "(none)") continue;  // unset by default (the log file)
    const Config c = from({{name, value}});
    CHECK(c.problems.empty());
    CHECK(c.policy.variant == defaults.policy.variant);
    CHECK(c.policy.tf32_replace == defaults.policy.tf32_replace);
    CHECK(c.policy.min_flops == defaults.policy.min_flops);
    CHECK(c.policy.min_tiles == defaults.policy.min_tiles);
    CHECK(c.policy.min_dim == defaults.policy.min_dim);
    CHECK(c.report == defaults.report);
  }
  CHECK(documented == std::set<std::string>(kVariables.begin(), kVariables.end()));
  // and every listed variable is really read: a value it cannot take is named as a problem
  for (const char* name : kVariables) {
    if (std::string(name) == "TCSOLVE_HOOK_LOG") {
      CHECK(from({{name, "/tmp/hook.jsonl"}}).log_path == "/tmp/hook.jsonl");
      continue;
    }
    INFO(name);
    CHECK(from({{name, "?"}}).problems.size() == 1);
  }
}
