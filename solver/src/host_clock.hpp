// The host clock of the solver's times (SolveResult::time_s) on both paths: Clock and seconds().
// Internal to tcsolve::solver.
#pragma once

#include <chrono>

namespace tcsolve {

using Clock = std::chrono::steady_clock;

/// Seconds from `from` to `to`.
inline double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace tcsolve
