// The names of CudaLuPlan's values and the plan as text fields (solver.hpp): what the JSON
// prints and what the app's environment switches and tests set.
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve {
namespace {

template <typename E, std::size_t N>
E parse_value(std::string_view field, std::string_view value, const E (&values)[N]) {
  std::string accepted;
  for (E v : values) {
    if (value == to_string(v)) return v;
    accepted += (accepted.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw InvalidInput("CUDA LU plan: " + std::string(field) + " '" + std::string(value) + "' is not one of " +
                     accepted);
}

bool parse_bool(std::string_view field, std::string_view value) {
  if (value == "on" || value == "true" || value == "1") return true;
  if (value == "off" || value == "false" || value == "0") return false;
  throw InvalidInput("CUDA LU plan: " + std::string(field) + " '" + std::string(value) + "' is not on or off");
}

int parse_choice(std::string_view field, std::string_view value, std::initializer_list<int> allowed) {
  std::string accepted;
  for (int a : allowed) {
    if (value == std::to_string(a)) return a;
    accepted += (accepted.empty() ? "" : ", ") + std::to_string(a);
  }
  throw InvalidInput("CUDA LU plan: " + std::string(field) + " '" + std::string(value) + "' is not one of " +
                     accepted);
}

std::string on_off(bool b) { return b ? "on" : "off"; }

}  // namespace

std::string_view to_string(CudaLuPlan::Leaf v) {
  switch (v) {
    case CudaLuPlan::Leaf::cluster: return "cluster";
    case CudaLuPlan::Leaf::cusolver: return "cusolver";
    case CudaLuPlan::Leaf::tournament: return "tournament";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::Trsm v) {
  switch (v) {
    case CudaLuPlan::Trsm::mixed: return "mixed";
    case CudaLuPlan::Trsm::kernel: return "kernel";
    case CudaLuPlan::Trsm::cublas: return "cublas";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::Joins v) {
  switch (v) {
    case CudaLuPlan::Joins::automatic: return "automatic";
    case CudaLuPlan::Joins::sgemm: return "sgemm";
    case CudaLuPlan::Joins::variant: return "variant";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::Trsv v) {
  switch (v) {
    case CudaLuPlan::Trsv::lu_solve: return "lu_solve";
    case CudaLuPlan::Trsv::inverse: return "inverse";
    case CudaLuPlan::Trsv::cublas: return "cublas";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::AutoPaths v) {
  switch (v) {
    case CudaLuPlan::AutoPaths::fp16_first: return "fp16_first";
    case CudaLuPlan::AutoPaths::both: return "both";
    case CudaLuPlan::AutoPaths::retry: return "retry";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::PanelProducts v) {
  switch (v) {
    case CudaLuPlan::PanelProducts::automatic: return "automatic";
    case CudaLuPlan::PanelProducts::budget: return "budget";
    case CudaLuPlan::PanelProducts::tiles: return "tiles";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::MemberSweeps v) {
  switch (v) {
    case CudaLuPlan::MemberSweeps::fan_in: return "fan_in";
    case CudaLuPlan::MemberSweeps::broadcast: return "broadcast";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::Fp64Solves v) {
  switch (v) {
    case CudaLuPlan::Fp64Solves::automatic: return "automatic";
    case CudaLuPlan::Fp64Solves::kernel: return "kernel";
    case CudaLuPlan::Fp64Solves::dgetrs: return "dgetrs";
    case CudaLuPlan::Fp64Solves::trsm: return "trsm";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::TrsmLeaves v) {
  switch (v) {
    case CudaLuPlan::TrsmLeaves::automatic: return "automatic";
    case CudaLuPlan::TrsmLeaves::kernel: return "kernel";
    case CudaLuPlan::TrsmLeaves::cublas: return "cublas";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::Residuals v) {
  switch (v) {
    case CudaLuPlan::Residuals::automatic: return "automatic";
    case CudaLuPlan::Residuals::kernel: return "kernel";
    case CudaLuPlan::Residuals::cublas: return "cublas";
  }
  return "?";
}

CudaLuPlan::Residuals residuals_for(const CudaLuPlan& plan, int n, int nrhs) {
  using R = CudaLuPlan::Residuals;
  if (n < 1 || n > kResidualKernelMaxN || nrhs < 1 || nrhs > kResidualKernelMaxRhs) return R::cublas;
  if (plan.residuals != R::automatic) return plan.residuals;
  return n < kResidualKernelBelow ? R::kernel : R::cublas;
}

std::string_view to_string(CudaLuPlan::Equilibration v) {
  switch (v) {
    case CudaLuPlan::Equilibration::automatic: return "automatic";
    case CudaLuPlan::Equilibration::cluster: return "cluster";
    case CudaLuPlan::Equilibration::cooperative: return "cooperative";
    case CudaLuPlan::Equilibration::kernels: return "kernels";
  }
  return "?";
}

CudaLuPlan::Equilibration equilibration_for(const CudaLuPlan& plan, int n) {
  using E = CudaLuPlan::Equilibration;
  if (n >= kEquilibrationOneLaunchBelow) return E::kernels;
  if (plan.equilibration != E::automatic) return plan.equilibration;
  return n < kEquilibrationClusterBelow ? E::cluster : E::cooperative;
}

CudaLuPlan::Fp64Solves fp64_solves_for(const CudaLuPlan& plan, int n) {
  using F = CudaLuPlan::Fp64Solves;
  switch (plan.fp64_solves) {
    case F::kernel: return n <= kFp64SolveKernelMaxN ? F::kernel : F::dgetrs;
    case F::trsm: return n <= kFp64SolveTrsmMaxN ? F::trsm : F::dgetrs;
    case F::dgetrs: return F::dgetrs;
    case F::automatic: break;
  }
  return n < kFp64SolveKernelBelow ? F::kernel : n <= kFp64SolveTrsmMaxN ? F::trsm : F::dgetrs;
}

std::string_view to_string(CudaLuPlan::LeafCopies v) {
  switch (v) {
    case CudaLuPlan::LeafCopies::automatic: return "automatic";
    case CudaLuPlan::LeafCopies::bulk: return "bulk";
    case CudaLuPlan::LeafCopies::threads: return "threads";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::LeafWidth v) {
  switch (v) {
    case CudaLuPlan::LeafWidth::block: return "block";
    case CudaLuPlan::LeafWidth::order: return "order";
  }
  return "?";
}

std::string_view to_string(CudaLuPlan::Phases v) {
  switch (v) {
    case CudaLuPlan::Phases::blocks: return "blocks";
    case CudaLuPlan::Phases::detail: return "detail";
    case CudaLuPlan::Phases::off: return "off";
  }
  return "?";
}

std::vector<std::pair<std::string, std::string>> plan_fields(const CudaLuPlan& p) {
  return {{"leaf", std::string(to_string(p.leaf))},
          {"leaf_chunk", std::to_string(p.leaf_chunk)},
          {"leaf_ahead", on_off(p.leaf_ahead)},
          {"leaf_width", std::string(to_string(p.leaf_width))},
          {"leaf_copies", std::string(to_string(p.leaf_copies))},
          {"lookahead", on_off(p.lookahead)},
          {"panel_sms", p.panel_sms == 0 ? std::string("auto") : std::to_string(p.panel_sms)},
          {"member_share", std::to_string(p.member_share)},
          {"panel_products", std::string(to_string(p.panel_products))},
          {"trsm", std::string(to_string(p.trsm))},
          {"joins", std::string(to_string(p.joins))},
          {"trsm_products", std::string(to_string(p.trsm_products))},
          {"trsm_leaves", std::string(to_string(p.trsm_leaves))},
          {"trsv", std::string(to_string(p.trsv))},
          {"member_sweeps", std::string(to_string(p.member_sweeps))},
          {"fp64_solves", std::string(to_string(p.fp64_solves))},
          {"residuals", std::string(to_string(p.residuals))},
          {"equilibration", std::string(to_string(p.equilibration))},
          {"auto_paths", std::string(to_string(p.auto_paths))},
          {"phases", std::string(to_string(p.phases))},
          {"host_times", on_off(p.host_times)}};
}

void set_plan_field(CudaLuPlan& p, std::string_view name, std::string_view value) {
  using P = CudaLuPlan;
  if (name == "leaf") p.leaf = parse_value(name, value, {P::Leaf::cluster, P::Leaf::cusolver, P::Leaf::tournament});
  else if (name == "leaf_chunk") p.leaf_chunk = parse_choice(name, value, {2, 8, 4, 1});
  else if (name == "leaf_ahead") p.leaf_ahead = parse_bool(name, value);
  else if (name == "leaf_width") p.leaf_width = parse_value(name, value, {P::LeafWidth::block, P::LeafWidth::order});
  else if (name == "leaf_copies")
    p.leaf_copies = parse_value(name, value, {P::LeafCopies::automatic, P::LeafCopies::bulk, P::LeafCopies::threads});
  else if (name == "lookahead") p.lookahead = parse_bool(name, value);
  else if (name == "panel_sms") p.panel_sms = value == "auto" ? 0 : parse_choice(name, value, {16, 24, 32, 40, 48, 64});
  else if (name == "member_share") p.member_share = parse_choice(name, value, {0, 10, 20, 30, 40, 50});
  else if (name == "panel_products")
    p.panel_products = parse_value(name, value, {P::PanelProducts::automatic, P::PanelProducts::budget, P::PanelProducts::tiles});
  else if (name == "trsm") p.trsm = parse_value(name, value, {P::Trsm::mixed, P::Trsm::kernel, P::Trsm::cublas});
  else if (name == "joins")
    p.joins = parse_value(name, value, {P::Joins::automatic, P::Joins::sgemm, P::Joins::variant});
  else if (name == "trsm_products")
    p.trsm_products = parse_value(name, value, {P::Joins::automatic, P::Joins::sgemm, P::Joins::variant});
  else if (name == "trsm_leaves")
    p.trsm_leaves = parse_value(name, value, {P::TrsmLeaves::automatic, P::TrsmLeaves::kernel, P::TrsmLeaves::cublas});
  else if (name == "trsv") p.trsv = parse_value(name, value, {P::Trsv::lu_solve, P::Trsv::inverse, P::Trsv::cublas});
  else if (name == "member_sweeps")
    p.member_sweeps = parse_value(name, value, {P::MemberSweeps::fan_in, P::MemberSweeps::broadcast});
  else if (name == "fp64_solves")
    p.fp64_solves = parse_value(name, value, {P::Fp64Solves::automatic, P::Fp64Solves::kernel, P::Fp64Solves::dgetrs,
                                              P::Fp64Solves::trsm});
  else if (name == "residuals")
    p.residuals = parse_value(name, value, {P::Residuals::automatic, P::Residuals::kernel, P::Residuals::cublas});
  else if (name == "equilibration")
    p.equilibration = parse_value(name, value, {P::Equilibration::automatic, P::Equilibration::cluster,
                                                P::Equilibration::cooperative, P::Equilibration::kernels});
  else if (name == "auto_paths")
    p.auto_paths = parse_value(name, value, {P::AutoPaths::fp16_first, P::AutoPaths::both, P::AutoPaths::retry});
  else if (name == "phases") p.phases = parse_value(name, value, {P::Phases::blocks, P::Phases::detail, P::Phases::off});
  else if (name == "host_times") p.host_times = parse_bool(name, value);
  else
    throw InvalidInput("CUDA LU plan: no field '" + std::string(name) +
                       "' (leaf, leaf_chunk, leaf_ahead, leaf_width, leaf_copies, lookahead, panel_sms, member_share, panel_products, trsm, joins, trsm_products, trsm_leaves, trsv, member_sweeps, fp64_solves, residuals, equilibration, auto_paths, "
                       "phases, host_times)");
}

void set_plan_fields(CudaLuPlan& plan, std::string_view text) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, end - start);
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw InvalidInput("'" + std::string(part) + "' is not FIELD=VALUE");
    set_plan_field(plan, part.substr(0, eq), part.substr(eq + 1));
    start = end + 1;
  }
}

}  // namespace tcsolve
