// The condition estimate of the distributed solve (refine_ops.hpp), as the single-process cpu
// solve makes it (cpu/solver_cpu.cpp, estimate_condition; the estimator and the resolution check
// are condition.hpp's, shared): cond_1(A) ~= ||A||_1 est(||A^-1||_1) with A^-1 = C U^-1 L^-1 P R
// from the distributed FP32 factors and the check along the estimate's vector by the distributed
// product with A; where those factors do not resolve A^-1, or when the fallback made it, through
// the distributed FP64 LU of A_s. Then, where needs_equilibrated_estimate, cond_1(A_s) the same
// way with ||A_s||_1 from the distributed A. The estimator's vectors are replicated: every rank
// takes the same branches and calls the same solves.
#include <Eigen/Dense>

#include "refine_ops.hpp"

namespace tcsolve::distributed {

void estimate_condition(GridComms& g, const PieceA& A, const Scales& s,
                        const detail::EquilibratedInverse& fp32, bool fp64_made,
                        const std::function<detail::EquilibratedInverse()>& fp64, SolveResult& res) {
  estimate_condition(
      norm_1(g, A), [&](Eigen::MatrixXd& y) { y = product(g, A, y); },
      [&] { return equilibrated_norm_1(g, A, s); }, fp32, fp64_made, fp64, res);
}

void estimate_condition(const detail::ScaledNorm& norm1, const detail::VectorMap& times_a,
                        const std::function<detail::ScaledNorm()>& norm1_s_of,
                        const detail::EquilibratedInverse& fp32, bool fp64_made,
                        const std::function<detail::EquilibratedInverse()>& fp64, SolveResult& res) {
  std::optional<detail::EquilibratedInverse> lu64;
  auto inverse64 = [&]() -> const detail::EquilibratedInverse& {
    if (!lu64) lu64.emplace(fp64());
    return *lu64;
  };
  if (!fp64_made) {
    const detail::ConditionEstimate c = detail::estimate_condition(norm1, fp32, times_a);
    if (c.resolved)
      res.condition_estimate = c.estimate;
    else
      res.note += "; condition estimate from an FP64 LU (the FP32 factors do not resolve A^-1)";
  }
  if (!res.condition_estimate)
    res.condition_estimate = detail::estimate_condition(norm1, inverse64()).estimate;
  if (!detail::needs_equilibrated_estimate(res.condition_estimate, fp32)) return;
  const detail::ScaledNorm norm1_s = norm1_s_of();
  if (!fp64_made) {
    const detail::ConditionEstimate c =
        detail::estimate_condition(norm1_s, fp32.equilibrated(), fp32.equilibrated_product(times_a));
    if (c.resolved) res.condition_estimate_equilibrated = c.estimate;
  }
  if (!res.condition_estimate_equilibrated)
    res.condition_estimate_equilibrated =
        detail::estimate_condition(norm1_s, inverse64().equilibrated()).estimate;
}

}  // namespace tcsolve::distributed
