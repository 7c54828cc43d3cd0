// The TCSOLVE_* environment switches: an app-level convenience that maps onto the libraries'
// typed options (the libraries read no environment). docs/guide/solver.md, "Code paths", lists them.
#pragma once

#include <string>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::app {

/// TCSOLVE_SOLVER_<FIELD>=value onto plan fields (LEAF, LEAF_CHUNK, LEAF_AHEAD, LOOKAHEAD,
/// PANEL_SMS, TRSM, TRSV, AUTO -> auto_paths, PHASES, HOST_TIME -> host_times), with
/// set_plan_field's values ("off" for the booleans). Throws InvalidInput naming the variable.
void apply_plan_environment(CudaLuPlan& plan);

/// TCSOLVE_GEMM_KERNEL=automatic|wgmma|mma onto options.cuda_kernels.
void apply_gemm_environment(GemmOptions& options);

/// Whether TCSOLVE_GEMM_PHASES is set (gemm-bench then times the production GEMM's phases).
bool gemm_phases_requested();

/// "FIELD=VALUE[,FIELD=VALUE...]" (the --cuda-plan option) onto plan fields; InvalidInput
/// naming the bad part.
void apply_plan_text(CudaLuPlan& plan, const std::string& text);

}  // namespace tcsolve::app
