// The TCSOLVE_* environment switches onto typed options (env_options.hpp).
#include "env_options.hpp"

#include <cstdlib>
#include <string>

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::app {
namespace {

struct Switch {
  const char* variable;
  const char* field;  ///< CudaLuPlan field (plan_fields' name)
};

constexpr Switch kPlanSwitches[] = {
    {"TCSOLVE_SOLVER_LEAF", "leaf"},           {"TCSOLVE_SOLVER_LEAF_CHUNK", "leaf_chunk"},
    {"TCSOLVE_SOLVER_LEAF_AHEAD", "leaf_ahead"}, {"TCSOLVE_SOLVER_LEAF_WIDTH", "leaf_width"},
    {"TCSOLVE_SOLVER_LEAF_COPIES", "leaf_copies"},
    {"TCSOLVE_SOLVER_LOOKAHEAD", "lookahead"},
    {"TCSOLVE_SOLVER_PANEL_SMS", "panel_sms"}, {"TCSOLVE_SOLVER_MEMBER_SHARE", "member_share"}, {"TCSOLVE_SOLVER_TRSM", "trsm"},
    {"TCSOLVE_SOLVER_JOINS", "joins"},         {"TCSOLVE_SOLVER_TRSM_PRODUCTS", "trsm_products"},
    {"TCSOLVE_SOLVER_TRSM_LEAVES", "trsm_leaves"},
    {"TCSOLVE_SOLVER_TRSV", "trsv"},           {"TCSOLVE_SOLVER_MEMBER_SWEEPS", "member_sweeps"},
    {"TCSOLVE_SOLVER_PANEL_PRODUCTS", "panel_products"},
    {"TCSOLVE_SOLVER_FP64_SOLVES", "fp64_solves"},
    {"TCSOLVE_SOLVER_RESIDUALS", "residuals"},
    {"TCSOLVE_SOLVER_EQUILIBRATION", "equilibration"},
    {"TCSOLVE_SOLVER_AUTO", "auto_paths"},
    {"TCSOLVE_SOLVER_PHASES", "phases"},       {"TCSOLVE_SOLVER_HOST_TIME", "host_times"},
};

}  // namespace

void apply_plan_environment(CudaLuPlan& plan) {
  for (const Switch& s : kPlanSwitches) {
    const char* value = std::getenv(s.variable);
    if (value == nullptr || *value == '\0') continue;
    try {
      set_plan_field(plan, s.field, value);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string(s.variable) + "=" + value + ": " + e.what());
    }
  }
}

void apply_gemm_environment(GemmOptions& options) {
  const char* value = std::getenv("TCSOLVE_GEMM_KERNEL");
  if (value == nullptr || *value == '\0') return;
  try {
    options.cuda_kernels = parse_cuda_kernels(value);
  } catch (const InvalidInput& e) {
    throw InvalidInput(std::string("TCSOLVE_GEMM_KERNEL=") + value + ": " + e.what());
  }
}

bool gemm_phases_requested() { return std::getenv("TCSOLVE_GEMM_PHASES") != nullptr; }

void apply_plan_text(CudaLuPlan& plan, const std::string& text) {
  try {
    set_plan_fields(plan, text);
  } catch (const InvalidInput& e) {
    throw InvalidInput("--cuda-plan: " + std::string(e.what()));
  }
}

}  // namespace tcsolve::app
