// Times of the cuda path's phases (SolveTimes.phases): PhaseClock, device times of named phases
// from CUDA events; HostTimes, the host's seconds spent enqueueing the LU's kinds of work
// (CudaLuPlan::host_times). Factorization and refinement as a whole are timed by the host
// clock around device-synchronized phases (host_clock.hpp, solver_cuda.cpp). Internal to
// tcsolve::solver; host code built with CUDA only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../host_clock.hpp"

namespace tcsolve::cuda {

/// Device times of named phases: mark("panel") records an event on its stream that
/// closes the open phase and opens "panel"; mark(nullptr) closes it. totals() waits for the
/// last event and sums the segments per name, in the order the names first appeared.
class PhaseClock {
 public:
  /// enabled false (CudaLuPlan::Phases::off): no events at all (to see what the marks cost the
  /// host); `stream`: where the marks go until set_stream().
  PhaseClock(bool enabled, cudaStream_t stream) : enabled_(enabled), stream_(stream) {}
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;
  ~PhaseClock();

  /// Creates `count` events ahead, outside the timed region: the LU marks three phases per
  /// 32-column leaf, and creating each event in mark() cost the host more than the GPU took
  /// for some leaves.
  void reserve(std::size_t count);

  void mark(const char* next);

  /// The stream of the following marks. A phase must open and close on the same stream:
  /// mark(nullptr) before switching.
  void set_stream(cudaStream_t stream) { stream_ = stream; }

  /// Whether marks record events (false: CudaLuPlan::Phases::off).
  bool enabled() const { return enabled_; }

  /// Adds `seconds` to the phase `name` of totals() (phases measured elsewhere).
  void add(const std::string& name, double seconds) { added_.emplace_back(name, seconds); }

  std::vector<std::pair<std::string, double>> totals();

 private:
  struct Segment {
    std::string name;
    std::size_t from, to;
  };
  bool enabled_;
  std::vector<cudaEvent_t> events_, spare_;
  std::vector<Segment> segments_;
  std::vector<std::pair<std::string, double>> added_;
  cudaStream_t stream_;
  long open_ = -1;
  std::string open_name_;
};

/// CudaLuPlan::host_times: host seconds spent enqueueing each kind of LU work, returned as phases
/// (to see whether the host or the device sets the pace).
class HostTimes {
 public:
  struct Scope {
    HostTimes& t;
    int k;
    Clock::time_point start = Clock::now();
    ~Scope() {
      if (t.on_) t.seconds_[k] += seconds(start, Clock::now());
    }
  };
  enum Kind { leaf, swap, join, trsm, update, marks, kinds };
  /// on: CudaLuPlan::host_times.
  explicit HostTimes(bool on) : on_(on) {}
  Scope time(Kind k) { return Scope{*this, k}; }
  /// Adds the times as phases "<prefix>leaf", ... (seconds) to `clock` (nothing when off).
  void report(PhaseClock& clock, const std::string& prefix) const;

 private:
  bool on_;
  double seconds_[kinds] = {};
};

}  // namespace tcsolve::cuda
