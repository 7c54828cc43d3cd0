// Progress lines on stderr for long runs (`--progress auto|always|never`, every subcommand):
// "<command>: <step> [<elapsed> s]". always: every step at once; never: none; auto (default):
// steps are held until the run has taken kAutoAfterSeconds, then the current one and every later
// one is printed, whether or not stderr is a terminal (a piped 9-minute run is not silent). In
// both printing modes a step that lasts longer than kHeartbeatSeconds is repeated with
// "still running" every kHeartbeatSeconds, by a watcher thread; a step's detail (detail(), e.g.
// a solve's "LU 34% done, about 6 min left" from solve_progress) shows on those repeated lines.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "cli_util.hpp"

namespace tcsolve::app {

enum class ProgressMode { automatic, always, never };

/// Adds `--progress auto|always|never` to `options`.
void add_progress_option(po::options_description& options);
/// The mode from the parsed options (automatic when absent); throws InvalidInput for a bad name.
ProgressMode progress_mode(const po::variables_map& vm);

class Progress {
 public:
  static constexpr double kAutoAfterSeconds = 2.0;
  static constexpr double kHeartbeatSeconds = 30.0;

  Progress(std::string command, ProgressMode mode);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  /// The run enters a new step ("[2/7] ec-fp16", "reading sys.h5").
  void step(const std::string& text);
  /// How far the current step has come ("LU 34% done, about 6 min left"): shown after the step's
  /// text on the heartbeat's "still running" lines (always: printed at once as well). A new step
  /// clears it.
  void detail(const std::string& text);

 private:
  using Clock = std::chrono::steady_clock;
  void watch();
  void print_locked(const std::string& text, bool still);  ///< mutex held
  double elapsed() const;

  std::string command_;
  ProgressMode mode_;
  Clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string current_;              ///< the latest step
  std::string detail_;               ///< the latest step's detail (may be empty)
  bool current_printed_ = true;      ///< the latest step is on stderr already (or there is none)
  bool printing_ = false;            ///< auto: the run has passed kAutoAfterSeconds
  Clock::time_point last_print_;     ///< for the heartbeat
  bool stop_ = false;
  std::thread watcher_;
};

/// A SolveOptions::progress callback that keeps progress.detail() current: "LU 34% done, about
/// 6 min left" (the LU's remaining time from its elapsed time and its share of flops done, counted
/// from this call), then "refinement, iteration 3"; `hint` (may be empty) follows in parentheses,
/// e.g. that the cpu emulates the variant and fp32-simt is its fast path.
std::function<void(std::string_view, double)> solve_progress(Progress& progress, std::string hint);

}  // namespace tcsolve::app
