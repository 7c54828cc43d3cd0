// The drop-in's log and exit report (journal.hpp).
#include "journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

namespace tcsolve::hook {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
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
  if (r.intercepted)
    os << ",\"variant\":" << quoted(r.variant) << ",\"graph\":" << (r.graph ? "true" : "false");
  else
    os << ",\"reason\":" << quoted(r.reason);
  os << ",\"units\":" << r.units << "}";
  return os.str();
}

void Journal::warn(const std::string& message) {
  std::fprintf(stderr, "tcsolve hook: %s\n", message.c_str());
}

Journal::Journal(const Config& config) : log_path_(config.log_path), report_(config.report) {
  for (const std::string& p : config.problems) warn(p);
  if (!log_path_.empty()) {
    log_fd_ = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd_ < 0) log_failed(std::strerror(errno));
  }
}

Journal::~Journal() {
  if (report_) std::fputs(report().c_str(), stderr);
  if (log_fd_ >= 0 && ::close(log_fd_) != 0) log_failed(std::strerror(errno));  // NFS reports late
}

void Journal::log_failed(const std::string& reason) {
  if (log_broken_.exchange(true)) return;  // said already
  warn("cannot write log " + log_path_ + ": " + reason + " (TCSOLVE_HOOK_LOG; no more lines are logged)");
}

void Journal::record(const CallRecord& r) {
  if (log_fd_ >= 0 && !log_broken_.load()) {
    const std::string line = json_line(r) + "\n";
    const ssize_t written = ::write(log_fd_, line.data(), line.size());  // O_APPEND: one line, whole
    if (written < 0)
      log_failed(std::strerror(errno));
    else if (static_cast<std::size_t>(written) != line.size())
      log_failed("wrote " + std::to_string(written) + " of " + std::to_string(line.size()) +
                 " bytes of a line");
  }
  if (!report_) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (r.intercepted) {
    intercepted_.add(r.flops);
    from_graphs_ += r.graph ? 1 : 0;
    return;
  }
  Passed& p = passed_[r.reason];
  p.all.add(r.flops);
  const Shape shape{r.m, r.n, r.k, r.batch, r.ta, r.tb};
  auto it = p.shapes.find(shape);
  if (it == p.shapes.end() && tracked_shapes_ < kTrackedShapes) {
    it = p.shapes.emplace(shape, Tally{}).first;
    ++tracked_shapes_;
  }
  (it == p.shapes.end() ? p.untracked : it->second).add(r.flops);
}

namespace {

/// The entries of `items` (a map), the most GFLOP first, then the most calls; ties keep the
/// map's order. `tally` gives an entry's value's Tally.
template <typename Map, typename TallyOf>
std::vector<typename Map::const_pointer> largest_first(const Map& items, TallyOf tally) {
  std::vector<typename Map::const_pointer> sorted;
  for (const auto& item : items) sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(), [&](auto a, auto b) {
    const auto &x = tally(a->second), &y = tally(b->second);
    return x.flops != y.flops ? x.flops > y.flops : x.calls > y.calls;
  });
  return sorted;
}

}  // namespace

std::string Journal::report() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  Tally passed;
  for (const auto& [reason, p] : passed_) passed.calls += p.all.calls, passed.flops += p.all.flops;
  const double total = intercepted_.flops + passed.flops;
  os << "tcsolve hook: " << intercepted_.calls << " calls intercepted (" << intercepted_.flops * 1e-9
     << " GFLOP";
  if (total > 0) os << ", " << 100.0 * intercepted_.flops / total << "% of the GEMM flops";
  os << "), " << passed.calls << " passed through (" << passed.flops * 1e-9 << " GFLOP)\n";
  os << "tcsolve hook:   intercepted, replayed from cached graphs: " << from_graphs_ << " calls\n";
  auto line = [&](const Tally& t) { os << t.calls << " calls, " << t.flops * 1e-9 << " GFLOP\n"; };
  for (const auto* reason : largest_first(passed_, [](const Passed& p) -> const Tally& { return p.all; })) {
    const Passed& p = reason->second;
    os << "tcsolve hook:   passed, " << reason->first << ": ";
    line(p.all);
    const auto shapes = largest_first(p.shapes, [](const Tally& t) -> const Tally& { return t; });
    Tally rest = p.untracked;  // beyond kTrackedShapes, and below the kReportShapes listed
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const Tally& t = shapes[i]->second;
      if (i >= kReportShapes) {
        rest.calls += t.calls, rest.flops += t.flops;
        continue;
      }
      const Shape& s = shapes[i]->first;
      os << "tcsolve hook:     " << s.m << " x " << s.n << " x " << s.k << ", batch " << s.batch << ", "
         << s.ta << s.tb << ": ";
      line(t);
    }
    if (rest.calls > 0) {
      os << "tcsolve hook:     other shapes: ";
      line(rest);
    }
  }
  return os.str();
}

}  // namespace tcsolve::hook
