// The C API's record of a handle's last solve (tcsolve.h, "the last solve"; last_solve.hpp):
// record_solve, called by tcsolveDgesv, and the tcsolveGetLastSolve* getters. A getter fails
// only on a bad argument (INVALID_VALUE, the message kept as for any call); reading an empty
// record is not a failure.
#include <algorithm>
#include <cstdint>
#include <string>

#include "arguments.hpp"
#include "context.hpp"
#include "last_solve.hpp"
#include "tcsolve.h"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::capi {

LastSolve record_solve(const SolveResult& result) {
  LastSolve r;
  r.history = result.history;
  r.factorization = result.time_s.factorization;
  r.refinement = result.time_s.refinement;
  r.total = result.time_s.total;
  r.phases = result.time_s.phases;
  r.note = result.note;
  r.warnings = result.warnings;
  r.block_size = result.block_size;
  r.pivoting = result.pivoting == Pivoting::rbt ? 1 : result.pivoting == Pivoting::beam ? 3 : 0;
  r.modifications = result.modifications;
  r.growth = result.growth;
  return r;
}

}  // namespace tcsolve::capi

using namespace tcsolve;
using namespace tcsolve::capi;

extern "C" {

tcsolveStatus_t tcsolveGetLastSolveHistory(tcsolveHandle_t handle, double* backward_errors, int64_t capacity,
                                           int64_t* length) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetLastSolveHistory")) return s;
  return guarded(handle, "tcsolveGetLastSolveHistory", [&] {
    not_null("length", length);
    nonnegative("capacity", capacity);
    if (capacity > 0) not_null("backward_errors", backward_errors);
    const std::vector<double>& history = handle->last_solve.history;
    const std::int64_t size = static_cast<std::int64_t>(history.size());
    std::copy_n(history.begin(), std::min(capacity, size), backward_errors);
    *length = size;
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolveGetLastSolveTimes(tcsolveHandle_t handle, tcsolveSolveTimes_t* times) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetLastSolveTimes")) return s;
  return guarded(handle, "tcsolveGetLastSolveTimes", [&] {
    not_null("times", times);
    const LastSolve& r = handle->last_solve;
    *times = tcsolveSolveTimes_t{r.factorization, r.refinement, r.total};
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolveGetLastSolvePhaseCount(tcsolveHandle_t handle, int64_t* count) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetLastSolvePhaseCount")) return s;
  return guarded(handle, "tcsolveGetLastSolvePhaseCount", [&] {
    not_null("count", count);
    *count = static_cast<int64_t>(handle->last_solve.phases.size());
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolveGetLastSolvePhase(tcsolveHandle_t handle, int64_t index, const char** name, double* seconds) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetLastSolvePhase")) return s;
  return guarded(handle, "tcsolveGetLastSolvePhase", [&] {
    not_null("name", name);
    not_null("seconds", seconds);
    const auto& phases = handle->last_solve.phases;
    if (index < 0 || index >= static_cast<std::int64_t>(phases.size()))
      throw InvalidInput("index: " + text(index) + " is not in [0, " + text(static_cast<std::int64_t>(phases.size())) +
                         ") (tcsolveGetLastSolvePhaseCount)");
    *name = phases[static_cast<std::size_t>(index)].first.c_str();
    *seconds = phases[static_cast<std::size_t>(index)].second;
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolveGetLastSolveBlockSize(tcsolveHandle_t handle, int* block_size) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetLastSolveBlockSize")) return s;
  return guarded(handle, "tcsolveGetLastSolveBlockSize", [&] {
    not_null("block_size", block_size);
    *block_size = handle->last_solve.block_size;
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolveGetLastSolvePivoting(tcsolveHandle_t handle, int* pivoting, int* modifications) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetLastSolvePivoting")) return s;
  return guarded(handle, "tcsolveGetLastSolvePivoting", [&] {
    not_null("pivoting", pivoting);
    not_null("modifications", modifications);
    *pivoting = handle->last_solve.pivoting;
    *modifications = handle->last_solve.modifications;
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolveGetLastSolveGrowth(tcsolveHandle_t handle, double* growth) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetLastSolveGrowth")) return s;
  return guarded(handle, "tcsolveGetLastSolveGrowth", [&] {
    not_null("growth", growth);
    *growth = handle->last_solve.growth;
    return TCSOLVE_STATUS_SUCCESS;
  });
}

const char* tcsolveGetLastSolveNote(tcsolveHandle_t handle) {
  return handle_live(handle) ? handle->last_solve.note.c_str() : "";
}

tcsolveStatus_t tcsolveGetLastSolveWarningCount(tcsolveHandle_t handle, int64_t* count) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetLastSolveWarningCount")) return s;
  return guarded(handle, "tcsolveGetLastSolveWarningCount", [&] {
    not_null("count", count);
    *count = static_cast<int64_t>(handle->last_solve.warnings.size());
    return TCSOLVE_STATUS_SUCCESS;
  });
}

const char* tcsolveGetLastSolveWarning(tcsolveHandle_t handle, int64_t index) {
  if (!handle_live(handle)) return nullptr;
  const auto& warnings = handle->last_solve.warnings;
  if (index < 0 || index >= static_cast<std::int64_t>(warnings.size())) return nullptr;
  return warnings[static_cast<std::size_t>(index)].c_str();
}

}  // extern "C"
