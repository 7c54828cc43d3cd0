// Times of the cuda path's phases (SolveTimes.phases): PhaseClock, device times of named phases
// from CUDA events; HostTimes, the host's seconds spent enqueueing the LU's kinds of work
// (TCSOLVE_SOLVER_HOST_TIME=on). Factorization and refinement as a whole are timed by the host
// clock around device-synchronized phases (host_clock.hpp, solver_cuda.cpp). Internal to
// tcsolve::solver; host code built with CUDA only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../host_clock.hpp"
#include "env.hpp"

namespace tcsolve::cuda {

/// Device times of named phases: mark("panel") records an event on the default stream that
/// closes the open phase and opens "panel"; mark(nullptr) closes it. totals() waits for the
/// last event and sums the segments per name, in the order the names first appeared.
class PhaseClock {
 public:
  PhaseClock() = default;
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;
  ~PhaseClock();

  /// Creates `count` events ahead, outside the timed region: the LU marks three phases per
  /// 32-column leaf, and creating each event in mark() cost the host more than the GPU took
  /// for some leaves.
  void reserve(std::size_t count);

  void mark(const char* next);

  /// The stream of the following marks (nullptr: the default stream). A phase must open and
  /// close on the same stream: mark(nullptr) before switching.
  void set_stream(cudaStream_t stream) { stream_ = stream; }

  /// Adds `seconds` to the phase `name` of totals() (phases measured elsewhere).
  void add(const std::string& name, double seconds) { added_.emplace_back(name, seconds); }

  std::vector<std::pair<std::string, double>> totals();

 private:
  struct Segment {
    std::string name;
    std::size_t from, to;
  };
  /// TCSOLVE_SOLVER_PHASES=off: no events at all (to see what the marks cost the host).
  bool enabled_ = !env_is("TCSOLVE_SOLVER_PHASES", "off");
  std::vector<cudaEvent_t> events_, spare_;
  std::vector<Segment> segments_;
  std::vector<std::pair<std::string, double>> added_;
  cudaStream_t stream_ = nullptr;
  long open_ = -1;
  std::string open_name_;
};

/// TCSOLVE_SOLVER_HOST_TIME=on: host seconds spent enqueueing each kind of LU work, printed to
/// stderr at the end of the LU (to see whether the host or the device sets the pace).
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
  Scope time(Kind k) { return Scope{*this, k}; }
  void print() const;

 private:
  bool on_ = env_is("TCSOLVE_SOLVER_HOST_TIME", "on");
  double seconds_[kinds] = {};
};

}  // namespace tcsolve::cuda
