// The cpu solve's shared steps (solve_steps.hpp).
#include "solve_steps.hpp"

#include <string>
#include <vector>

#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"

namespace tcsolve::cpu {

using detail::kGmresCycle;
using detail::ScaledNorm;

/// The LU's hook (BlockHook): SolveOptions::interrupt, then progress("lu", done).
BlockHook lu_hook(const SolveOptions& options) {
  return [&options](double done) {
    detail::check_interrupt(options.interrupt);
    if (options.progress) options.progress("lu", done);
  };
}

/// The correction of the refinement methods through `m_inv` (x = A^-1 r by the factors):
/// classical d = m_inv(r), GMRES-IR per column with m_inv as the preconditioner, auto both;
/// inner_total counts GMRES's inner iterations.
void refine_with(const SolveOptions& options, const LinearSystem& sys, const Checker& checker,
                 const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>& m_inv, SolveResult& res) {
  const Correction classical = [&](const Eigen::MatrixXd& r, const std::vector<bool>&) { return m_inv(r); };
  long inner_total = 0;
  const Correction gmres_ir = [&](const Eigen::MatrixXd& r, const std::vector<bool>& done) {
    return detail::gmres_corrections(
        r, done,
        [&](const Eigen::VectorXd& rj, int& inner) {
          return gmres(sys.A, [&](const Eigen::VectorXd& v) -> Eigen::VectorXd { return m_inv(v); }, rj, kGmresCycle,
                       inner, options.interrupt);
        },
        inner_total);
  };
  const Eigen::MatrixXd x0 = m_inv(sys.b);
  switch (options.refinement) {
    case Refinement::classical: refine(options, checker, x0, res, classical); break;
    case Refinement::gmres: refine(options, checker, x0, res, gmres_ir); break;
    case Refinement::auto_: refine(options, checker, x0, res, classical, gmres_ir); break;
  }
  if (options.refinement == Refinement::gmres || res.gmres_from >= 0)
    res.note += "; GMRES inner iterations: " + std::to_string(inner_total);
}

/// cond_1(A) (SolveOptions::estimate_condition) through the FP32 factors' inverse `fp32`, or
/// through the FP64 LU `fp64` where those do not resolve A^-1 or when `fp64_made` (it exists
/// already: the fallback ran). The note says when the FP64 LU gave it. Then, where
/// needs_equilibrated_estimate, cond_1(A_s) the same way.
void estimate_condition(const LinearSystem& sys, const detail::EquilibratedInverse& fp32, bool fp64_made,
                        const std::function<detail::EquilibratedInverse()>& fp64, SolveResult& res) {
  const ScaledNorm norm1 = detail::norm_1(sys.A);
  const detail::VectorMap times_a = [&](Eigen::MatrixXd& y) { y = sys.A * y; };
  if (!fp64_made) {
    const detail::ConditionEstimate c = detail::estimate_condition(norm1, fp32, times_a);
    if (c.resolved)
      res.condition_estimate = c.estimate;
    else
      res.note += "; condition estimate from an FP64 LU (the FP32 factors do not resolve A^-1)";
  }
  if (!res.condition_estimate) res.condition_estimate = detail::estimate_condition(norm1, fp64()).estimate;
  if (!detail::needs_equilibrated_estimate(res.condition_estimate, fp32)) return;
  if (!fp64_made) {
    const detail::ConditionEstimate c = detail::estimate_condition_equilibrated(sys.A, fp32, times_a);
    if (c.resolved) res.condition_estimate_equilibrated = c.estimate;
  }
  if (!res.condition_estimate_equilibrated)
    res.condition_estimate_equilibrated = detail::estimate_condition_equilibrated(sys.A, fp64()).estimate;
}

}  // namespace tcsolve::cpu
