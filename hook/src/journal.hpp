// What the drop-in did, for the user who asks "did my program use it?":
//   - TCSOLVE_HOOK_LOG=FILE: one JSON object per call, appended with one write() (whole lines
//     even from several threads or processes):
//       {"function":"cublasSgemm_v2","ops":"NN","m":8192,"n":8192,"k":8192,"batch":1,
//        "flops":1.0995e+12,"action":"intercept","variant":"auto"}
//       {..., "action":"pass","reason":"tf32 math mode"}
//     A call the hook took but could not run (a CUDA error) is forwarded to cuBLAS and logged
//     as a pass with reason "error: <message>".
//   - TCSOLVE_HOOK_REPORT=1: at exit, on stderr, the calls and GFLOP intercepted and passed
//     through, by reason.
// A log that cannot be written (open fails, a write fails or is short, close fails) is said once
// on stderr ("tcsolve hook: cannot write log FILE: reason"); the log stops there and the program
// goes on.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "policy.hpp"
#include "settings.hpp"

namespace tcsolve::hook {

struct CallRecord {
  std::string function;
  char ta = 'N', tb = 'N';
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  double flops = 0;
  bool intercepted = false;
  std::string variant;  ///< intercepted: the variant that ran
  std::string reason;   ///< passed: why
};

/// One JSON line (no newline) for `r`.
std::string json_line(const CallRecord& r);

class Journal {
 public:
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
  };
  /// Says once that the log cannot be written (`reason`: strerror or what went wrong) and stops it.
  void log_failed(const std::string& reason);

  std::string log_path_;
  int log_fd_ = -1;
  std::atomic<bool> log_broken_{false};  ///< a write failed: no more lines (said once)
  bool report_ = false;
  mutable std::mutex mutex_;
  Tally intercepted_;
  std::map<std::string, Tally> passed_;  ///< by reason
};

}  // namespace tcsolve::hook
