// The cuBLAS drop-in's policy, settings and log format (hook/src/policy.hpp, settings.hpp,
// journal.hpp) on the CPU: which products it intercepts and which it passes through, with the
// reason the log names. [hook]
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "journal.hpp"
#include "policy.hpp"
#include "settings.hpp"
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
      (std::filesystem::temp_directory_path() / ("tcsolve-no-such-dir-" + std::to_string(::getpid()))).string();
  REQUIRE_FALSE(std::filesystem::exists(missing_dir));
  CallRecord call;
  call.function = "cublasSgemm_v2";
  StderrCapture capture;
  {
    Journal full(from({{"TCSOLVE_HOOK_LOG", "/dev/full"}, {"TCSOLVE_HOOK_REPORT", "1"}}));  // open works, writes fail
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
  CHECK(occurrences(err, "tcsolve hook: cannot write log " + missing_dir + "/log.jsonl: No such file or directory") ==
        1);
  CHECK(occurrences(err, "cannot write log") == 2);
}

TEST_CASE("small, thin and few-tile products pass through at the thresholds, which can be lowered", "[hook]") {
  Settings s;
  s.min_flops = 2.0 * 512 * 512 * 512;
  s.min_dim = 64;
  s.min_tiles = 0;
  CHECK(decide(square(512), s).intercept);
  CHECK(decide(square(511), s).reason == "below min flops");
  Request thin = square(8192);
  thin.k = 63;
  CHECK(decide(thin, s).reason == "below min dim");
  // the flops threshold is per matrix: a batch of small products stays with cuBLAS
  Request batched = square(256);
  batched.batch = 1000;
  CHECK(decide(batched, s).reason == "below min flops");
  // output tiles of 128 x 128: 12 x 12 = 144 at 1536 (and 1409), 11 x 12 at 1408 x 1536
  s.min_tiles = 144;
  CHECK(decide(square(1536), s).intercept);
  CHECK(decide(square(1409), s).intercept);
  Request few = square(1536);
  few.m = 1408;
  CHECK(decide(few, s).reason == "few output tiles");
  Request long_k = square(128);  // one tile, a long k: many flops, one multiprocessor
  long_k.k = long_k.lda = long_k.ldb = 1 << 20;
  CHECK(decide(long_k, s).reason == "few output tiles");
  s.min_flops = 0, s.min_dim = 0, s.min_tiles = 0;
  CHECK(decide(square(1), s).intercept);
  CHECK(decide(batched, s).intercept);
  CHECK(decide(long_k, s).intercept);
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
  CHECK(defaults.policy.min_flops > 0);
  CHECK(defaults.log_path.empty());
  CHECK_FALSE(defaults.report);
  CHECK(defaults.problems.empty());

  const Config c = from({{"TCSOLVE_HOOK_VARIANT", "ec-tf32"},
                         {"TCSOLVE_HOOK_TF32", "replace"},
                         {"TCSOLVE_HOOK_MIN_FLOPS", "1e6"},
                         {"TCSOLVE_HOOK_MIN_DIM", "0"},
                         {"TCSOLVE_HOOK_MIN_TILES", "7"},
                         {"TCSOLVE_HOOK_LOG", "/tmp/x.jsonl"},
                         {"TCSOLVE_HOOK_REPORT", "1"}});
  CHECK(c.policy.variant == HookVariant::ec_tf32);
  CHECK(c.policy.tf32_replace);
  CHECK(c.policy.min_flops == 1e6);
  CHECK(c.policy.min_dim == 0);
  CHECK(c.policy.min_tiles == 7);
  CHECK(c.log_path == "/tmp/x.jsonl");
  CHECK(c.report);
  CHECK(c.problems.empty());

  for (const auto& [name, value] : std::map<std::string, std::string>{{"TCSOLVE_HOOK_VARIANT", "ec_fp16"},
                                                                        {"TCSOLVE_HOOK_TF32", "yes"},
                                                                        {"TCSOLVE_HOOK_MIN_FLOPS", "-1"},
                                                                        {"TCSOLVE_HOOK_MIN_DIM", "2.5"},
                                                                        {"TCSOLVE_HOOK_MIN_TILES", "x"},
                                                                        {"TCSOLVE_HOOK_REPORT", "on"}}) {
    const Config bad = from({{name, value}});
    REQUIRE(bad.problems.size() == 1);
    CHECK(bad.problems[0].find(name + "='" + value + "'") != std::string::npos);
    CHECK(bad.policy.variant == defaults.policy.variant);
    CHECK(bad.policy.min_flops == defaults.policy.min_flops);
    CHECK(bad.policy.min_dim == defaults.policy.min_dim);
    CHECK(bad.policy.min_tiles == defaults.policy.min_tiles);
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
  CHECK(json_line(r) ==
        "{\"function\":\"cublasSgemmStridedBatched_64\",\"ops\":\"TN\",\"m\":7,\"n\":61,\"k\":68,\"batch\":16,"
        "\"flops\":929152,\"action\":\"intercept\",\"variant\":\"auto\"}");
  r.intercepted = false;
  r.reason = "error: say \"no\"\n";
  CHECK(json_line(r).find(",\"action\":\"pass\",\"reason\":\"error: say \\\"no\\\" \"}") != std::string::npos);
  CHECK(entry_name(Entry::lt_matmul, false) == "cublasLtMatmul");
  CHECK(entry_name(Entry::sgemm, false) == "cublasSgemm_v2");
}

TEST_CASE("README's table of the drop-in's variables names every one the hook reads, with its true default",
          "[hook]") {
  std::ifstream in(tcsolve::test::test_data_path("README.md"));
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  // rows "| `TCSOLVE_HOOK_X` | default | meaning |"
  const std::regex row(R"(\| `(TCSOLVE_HOOK_[A-Z_0-9]+)` \| ([^|]+?) \|)");
  std::set<std::string> documented;
  const Config defaults = from({});
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row); it != std::sregex_iterator(); ++it) {
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
