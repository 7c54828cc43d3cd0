// The drop-in's log and exit report (journal.hpp).
#include "journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>

namespace tcsolve::hook {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out + "\"";
}

}  // namespace

std::string json_line(const CallRecord& r) {
  std::ostringstream os;
  os.precision(15);  // flops exact up to 10^15
  os << "{\"function\":" << quoted(r.function) << ",\"ops\":\"" << r.ta << r.tb << "\",\"m\":" << r.m
     << ",\"n\":" << r.n << ",\"k\":" << r.k << ",\"batch\":" << r.batch << ",\"flops\":" << r.flops
     << ",\"action\":\"" << (r.intercepted ? "intercept" : "pass") << "\"";
  if (r.intercepted) os << ",\"variant\":" << quoted(r.variant);
  else os << ",\"reason\":" << quoted(r.reason);
  os << "}";
  return os.str();
}

void Journal::warn(const std::string& message) { std::fprintf(stderr, "tcsolve hook: %s\n", message.c_str()); }

Journal::Journal(const Config& config) : report_(config.report) {
  for (const std::string& p : config.problems) warn(p);
  if (!config.log_path.empty()) {
    log_fd_ = ::open(config.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd_ < 0) warn("cannot open TCSOLVE_HOOK_LOG file " + config.log_path + "; no log is written");
  }
}

Journal::~Journal() {
  if (report_) std::fputs(report().c_str(), stderr);
  if (log_fd_ >= 0) ::close(log_fd_);
}

void Journal::record(const CallRecord& r) {
  if (log_fd_ >= 0) {
    const std::string line = json_line(r) + "\n";
    [[maybe_unused]] const ssize_t written = ::write(log_fd_, line.data(), line.size());  // O_APPEND
  }
  if (!report_) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  Tally& t = r.intercepted ? intercepted_ : passed_[r.reason];
  t.calls += 1;
  t.flops += r.flops;
}

std::string Journal::report() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  Tally passed;
  for (const auto& [reason, t] : passed_) passed.calls += t.calls, passed.flops += t.flops;
  const double total = intercepted_.flops + passed.flops;
  os << "tcsolve hook: " << intercepted_.calls << " calls intercepted (" << intercepted_.flops * 1e-9 << " GFLOP";
  if (total > 0) os << ", " << 100.0 * intercepted_.flops / total << "% of the GEMM flops";
  os << "), " << passed.calls << " passed through (" << passed.flops * 1e-9 << " GFLOP)\n";
  for (const auto& [reason, t] : passed_)
    os << "tcsolve hook:   passed, " << reason << ": " << t.calls << " calls, " << t.flops * 1e-9 << " GFLOP\n";
  return os.str();
}

}  // namespace tcsolve::hook
