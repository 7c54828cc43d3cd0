// The environment switches of the cuda path (README's table): every TCSOLVE_SOLVER_* read of the
// library goes through env_is(), called where the switch applies (phase_clock.hpp, blocked_lu.cpp,
// refinement_cuda.hpp). Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <cstdlib>
#include <string>

namespace tcsolve::cuda {

/// Whether the environment variable `name` is set to `value` (the switches that select a code
/// path for comparison: README's table).
inline bool env_is(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e && std::string(e) == value;
}

}  // namespace tcsolve::cuda
