// Progress lines on stderr (progress.hpp).
#include "progress.hpp"

#include <cstdio>
#include <iostream>

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::app {

void add_progress_option(po::options_description& options) {
  options.add_options()("progress", po::value<std::string>()->default_value("auto")->value_name("auto|always|never"),
                        "progress lines on stderr: auto (once a run has taken 2 s, also when piped), "
                        "always, never");
}

ProgressMode progress_mode(const po::variables_map& vm) {
  if (!vm.count("progress")) return ProgressMode::automatic;
  const std::string& name = vm["progress"].as<std::string>();
  if (name == "auto") return ProgressMode::automatic;
  if (name == "always") return ProgressMode::always;
  if (name == "never") return ProgressMode::never;
  throw InvalidInput("--progress must be auto, always or never, got '" + name + "'");
}

Progress::Progress(std::string command, ProgressMode mode)
    : command_(std::move(command)), mode_(mode), start_(Clock::now()), last_print_(start_) {
  printing_ = mode_ == ProgressMode::always;
  if (mode_ != ProgressMode::never) watcher_ = std::thread([this] { watch(); });
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

double Progress::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void Progress::print_locked(const std::string& text, bool still) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", elapsed());
  std::cerr << command_ << ": " << (still ? "still running: " : "") << text << " [" << seconds << " s]"
            << std::endl;
  last_print_ = Clock::now();
}

void Progress::detail(const std::string& text) {
  if (mode_ == ProgressMode::never) return;
  std::lock_guard<std::mutex> lock(mutex_);
  detail_ = text;
  if (mode_ == ProgressMode::always && !current_.empty()) print_locked(current_ + ": " + detail_, false);
}

void Progress::step(const std::string& text) {
  if (mode_ == ProgressMode::never) return;
  std::lock_guard<std::mutex> lock(mutex_);
  current_ = text;
  detail_.clear();
  current_printed_ = false;
  if (!printing_ && elapsed() >= kAutoAfterSeconds) printing_ = true;
  if (printing_) {
    print_locked(current_, false);
    current_printed_ = true;
  }
}

void Progress::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    // Wake at the auto threshold, then at each heartbeat.
    const auto next = printing_ ? last_print_ + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(kHeartbeatSeconds))
                                : start_ + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(kAutoAfterSeconds));
    wake_.wait_until(lock, next, [&] { return stop_; });
    if (stop_) break;
    if (Clock::now() < next) continue;
    if (!printing_) {
      printing_ = true;
      if (!current_.empty()) print_locked(current_, false);
      current_printed_ = true;
    } else if (!current_.empty()) {
      print_locked(detail_.empty() ? current_ : current_ + ": " + detail_, current_printed_);
      current_printed_ = true;
    } else {
      last_print_ = Clock::now();
    }
  }
}

namespace {

/// Seconds as "45 s", "6 min", "2.5 h".
std::string duration_text(double s) {
  char text[32];
  if (s < 90)
    std::snprintf(text, sizeof text, "%.0f s", s);
  else if (s < 5400)
    std::snprintf(text, sizeof text, "%.0f min", s / 60);
  else
    std::snprintf(text, sizeof text, "%.1f h", s / 3600);
  return text;
}

}  // namespace

std::function<void(std::string_view, double)> solve_progress(Progress& progress, std::string hint) {
  const auto start = std::chrono::steady_clock::now();
  const std::string suffix = hint.empty() ? "" : " (" + hint + ")";
  return [&progress, start, suffix](std::string_view stage, double done) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char text[96];
    if (stage == "lu") {
      const double left = done > 0 ? elapsed * (1 - done) / done : 0;
      std::snprintf(text, sizeof text, "LU %.0f%% done, about %s left", 100 * done, duration_text(left).c_str());
    } else {
      std::snprintf(text, sizeof text, "LU done, %s (%.0f%% of the iteration limit)", std::string(stage).c_str(),
                    100 * done);
    }
    progress.detail(text + suffix);
  };
}

}  // namespace tcsolve::app
