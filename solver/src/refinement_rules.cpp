// The end of every solve (refinement_rules.hpp): the forward error, a non-finite x, the warnings.
#include "refinement_rules.hpp"

#include <cstdio>

namespace tcsolve::detail {

std::string brief(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", v);
  return text;
}

std::optional<double> forward_error(const LinearSystem& sys, const Eigen::MatrixXd& x) {
  if (!sys.x_true) return std::nullopt;
  double worst = 0;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const double tn = sys.x_true->col(j).lpNorm<Eigen::Infinity>();
    const double en = (x.col(j) - sys.x_true->col(j)).lpNorm<Eigen::Infinity>();
    double e = quotient(scaled_norm(en), scaled_norm(tn));
    if (!std::isfinite(e)) e = std::numeric_limits<double>::infinity();
    worst = std::max(worst, e);
  }
  return worst;
}

void finish_result(const LinearSystem& sys, SolveResult& res) {
  res.forward_error = forward_error(sys, res.x);
  if (!res.x.allFinite()) {
    res.converged = false;
    res.backward_error = std::numeric_limits<double>::infinity();
    res.note += std::string(res.note.empty() ? "" : "; ") + "no finite solution: x has NaN or infinite entries";
  }
  const std::optional<double> cond = res.condition_estimate, cond_s = res.condition_estimate_equilibrated;
  const bool badly_scaled = cond && !(*cond * kEps64 < kConditionWarning) && cond_s && *cond_s * kEps64 < kConditionWarning;
  if (badly_scaled)
    res.note += "; A is badly scaled, not ill-conditioned: cond_1(A) estimate " + brief(*cond) +
                ", but its exact power-of-two equilibration R A C, which the solver factors, has cond_1 estimate " +
                brief(*cond_s);
  else if (cond && !(*cond * kEps64 < kConditionWarning))
    res.warnings.push_back("A is ill-conditioned: cond_1(A) estimate " + brief(*cond) +
                           ", so the forward error may be as large as cond * eps64 = " + brief(*cond * kEps64) +
                           " and cannot be trusted");
  if (res.forward_error && res.converged && *res.forward_error > kForwardWarning) {
    const double fe = *res.forward_error, eta = res.backward_error;
    // To first order the forward error is at most cond_inf(A) eta (Higham, ASNA Thm 7.2), and
    // cond_inf(A) <= n cond_1(A).
    const double bound = cond ? sys.n() * *cond * std::max(eta, kEps64) : 0;
    std::string w = "forward error " + brief(fe) + " against the system's x although the backward error is " +
                    brief(eta);
    const std::string transposed =
        "a file written column-major (MATLAB, Fortran, Julia) read as row-major, i.e. A transposed";
    if (cond && fe > 10 * bound)
      w += ": ill-conditioning does not explain it (cond_1(A) estimate " + brief(*cond) + " bounds it by about " +
           brief(bound) + "); likely " + transposed + ", or an x that does not solve the system";
    else
      w += ": likely causes: ill-conditioning (cond_1(A) estimate " + (cond ? brief(*cond) : "not computed") +
           "), or " + transposed;
    res.warnings.push_back(w);
  }
}

}  // namespace tcsolve::detail
