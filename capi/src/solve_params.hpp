// The C solve parameters and results, shared by tcsolveDgesv, tcsolveDgetrf, tcsolveDgetrs
// (tcsolve_capi.cpp) and tcsolvePdgesv (tcsolve_mpi.cpp): the versioned params read by their size
// (read_params), params -> SolveOptions (each bad field named), a SolveResult
// -> tcsolveSolveInfo_t and the status (NOT_CONVERGED with the message).
#pragma once

#include "context.hpp"
#include "tcsolve.h"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::capi {

/// The caller's parameters as this library's struct: the defaults (params NULL), or the fields
/// that lie within params->size copied over them (tcsolve.h: a size that is no layout's end,
/// InvalidInput naming params->size); the result's size is this library's.
tcsolveSolveParams_t read_params(const tcsolveSolveParams_t* params);
/// The solver's options from the C parameters (InvalidInput naming a bad field).
SolveOptions solve_options(const tcsolveSolveParams_t& p, Backend backend);
/// *info from r (info NULL: nothing).
void fill_info(const SolveResult& r, tcsolveSolveInfo_t* info);
/// SUCCESS when r converged, else NOT_CONVERGED with the backward error and note kept for h.
tcsolveStatus_t solve_status(tcsolveContext* h, const char* function, const SolveResult& r);

}  // namespace tcsolve::capi
