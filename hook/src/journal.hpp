// What the drop-in did, for the user who asks "did my program use it?":
//   - TCSOLVE_HOOK_LOG=FILE: one JSON object per call, appended with one write() (whole lines
//     even from several threads or processes):
//       {"function":"cublasSgemm_v2","ops":"NN","m":8192,"n":8192,"k":8192,"batch":1,
//        "flops":1.0995e+12,"action":"intercept","variant":"auto","units":4096}
//       {..., "action":"pass","reason":"tf32 math mode","units":4096}
//     ("units": the work units the policy compares with min_tiles, policy.hpp's work_units;
//     fields are only ever added, at the end, so that older readers keep working.)
//     A call the hook took but could not run (a CUDA error) is forwarded to cuBLAS and logged
//     as a pass with reason "error: <message>".
//   - TCSOLVE_HOOK_REPORT=1: at exit, on stderr, the calls and GFLOP intercepted and passed
//     through; the passed ones by reason, and under each reason by shape (m x n x k, batch,
//     ops), the most GFLOP first, so that a user sees what was left to cuBLAS and why:
//       tcsolve hook: 36 calls intercepted (2473.9 GFLOP, 97.3% of the GEMM flops), 84 passed ...
//       tcsolve hook:   passed, below min flops: 84 calls, 67.6 GFLOP
//       tcsolve hook:     128 x 128 x 64, batch 384, TN: 42 calls, 33.8 GFLOP
//       tcsolve hook:     128 x 64 x 128, batch 384, NN: 42 calls, 33.8 GFLOP
//     At most kReportShapes shapes are listed per reason (the rest in one "other shapes" line),
//     and at most kTrackedShapes (reason, shape) pairs are kept in all (later ones are counted
//     as other shapes), so that a program of ever new shapes cannot grow the hook's memory.
// A log that cannot be written (open fails, a write fails or is short, close fails) is said once
// on stderr ("tcsolve hook: cannot write log FILE: reason"); the log stops there and the program
// goes on.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "policy.hpp"
#include "settings.hpp"

namespace tcsolve::hook {

struct CallRecord {
  std::string function;
  char ta = 'N', tb = 'N';
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  double flops = 0;
  double units = 0;  ///< policy.hpp's work_units
  bool intercepted = false;
  std::string variant;  ///< intercepted: the variant that ran
  bool graph = false;   ///< intercepted: its kernels ran as a cached graph (TCSOLVE_HOOK_GRAPHS)
  std::string reason;   ///< passed: why
};

/// One JSON line (no newline) for `r`.
std::string json_line(const CallRecord& r);

class Journal {
 public:
  static constexpr std::size_t kReportShapes = 8;      ///< shapes listed per reason
  static constexpr std::size_t kTrackedShapes = 4096;  ///< (reason, shape) pairs kept
  explicit Journal(const Config& config);
  ~Journal();  ///< prints the report when asked for
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void record(const CallRecord& r);
  /// The report's text (also what the destructor prints).
  std::string report() const;
  /// A problem worth saying once on stderr (a bad setting, a log that cannot be opened).
  static void warn(const std::string& message);

 private:
  struct Tally {
    std::uint64_t calls = 0;
    double flops = 0;
    void add(double f) { calls += 1, flops += f; }
  };
  /// A pass-through's shape: m x n x k, batch, ops.
  struct Shape {
    std::int64_t m = 0, n = 0, k = 0, batch = 1;
    char ta = 'N', tb = 'N';
    bool operator<(const Shape& o) const {
      return std::tie(m, n, k, batch, ta, tb) < std::tie(o.m, o.n, o.k, o.batch, o.ta, o.tb);
    }
  };
  /// The calls passed for one reason: in all, by shape, and those of shapes beyond kTrackedShapes.
  struct Passed {
    Tally all;
    std::map<Shape, Tally> shapes;
    Tally untracked;
  };
  /// Says once that the log cannot be written (`reason`: strerror or what went wrong) and stops it.
  void log_failed(const std::string& reason);

  std::string log_path_;
  int log_fd_ = -1;
  std::atomic<bool> log_broken_{false};  ///< a write failed: no more lines (said once)
  bool report_ = false;
  mutable std::mutex mutex_;
  Tally intercepted_;
  std::int64_t from_graphs_ = 0;  ///< intercepted calls replayed from a cached graph
  std::map<std::string, Passed> passed_;  ///< by reason
  std::size_t tracked_shapes_ = 0;        ///< (reason, shape) pairs in passed_
};

}  // namespace tcsolve::hook
