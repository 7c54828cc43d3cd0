// PhaseClock and HostTimes (phase_clock.hpp).
#include "phase_clock.hpp"

#include <algorithm>

#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda {

PhaseClock::~PhaseClock() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  for (cudaEvent_t e : spare_) cudaEventDestroy(e);
}

void PhaseClock::reserve(std::size_t count) {
  if (!enabled_) return;
  while (spare_.size() < count) {
    cudaEvent_t e = nullptr;
    TCSOLVE_CUDA_CHECK(cudaEventCreate(&e));
    spare_.push_back(e);
  }
}

void PhaseClock::mark(const char* next) {
  if (!enabled_) return;
  cudaEvent_t e = nullptr;
  if (spare_.empty()) {
    TCSOLVE_CUDA_CHECK(cudaEventCreate(&e));
  } else {
    e = spare_.back();
    spare_.pop_back();
  }
  events_.push_back(e);
  TCSOLVE_CUDA_CHECK(cudaEventRecord(e, stream_));
  const std::size_t now = events_.size() - 1;
  if (open_ >= 0) segments_.push_back({open_name_, static_cast<std::size_t>(open_), now});
  open_ = next ? static_cast<long>(now) : -1;
  if (next) open_name_ = next;
}

std::vector<std::pair<std::string, double>> PhaseClock::totals() {
  if (open_ >= 0) mark(nullptr);
  std::vector<std::pair<std::string, double>> sums;
  auto add_to = [&](const std::string& name, double s) {
    auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& p) { return p.first == name; });
    if (it == sums.end()) it = sums.insert(sums.end(), {name, 0.0});
    it->second += s;
  };
  if (!events_.empty()) {
    TCSOLVE_CUDA_CHECK(cudaEventSynchronize(events_.back()));
    for (const Segment& s : segments_) {
      float ms = 0;
      TCSOLVE_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[s.from], events_[s.to]));
      add_to(s.name, 1e-3 * ms);
    }
  }
  for (const auto& [name, s] : added_) add_to(name, s);
  return sums;
}

void HostTimes::report(PhaseClock& clock, const std::string& prefix) const {
  if (!on_) return;
  static const char* const names[] = {"leaf", "swap", "join", "trsm", "update", "marks"};
  for (int k = 0; k < kinds; ++k) clock.add(prefix + names[k], seconds_[k]);
}

}  // namespace tcsolve::cuda
