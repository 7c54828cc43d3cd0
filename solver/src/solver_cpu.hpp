// Internal to tcsolve::solver: the cpu path (the reference), called by the one dispatch in
// solver.cpp. Defined in cpu/solver_cpu.cpp (the story of a solve); the cpu's public entry points
// are defined beside it: lu_factorize(A, ...) and lu_apply() in cpu/blocked_lu.cpp,
// solve_fp64_baseline() in cpu/baselines_cpu.cpp.
#pragma once

#include "host_clock.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve::cpu {

/// solve() on the cpu. The caller has checked the system and the options and resolved the block
/// size; this checks the variant on cpu. `t_start`: when the solve began (the caller's checks
/// count toward time_s.factorization and time_s.total).
SolveResult solve(const LinearSystem& sys, const SolveOptions& options, Clock::time_point t_start);

}  // namespace tcsolve::cpu
