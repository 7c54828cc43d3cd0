// The end of every solve (refinement_rules.hpp): the forward error, a non-finite x, the warnings.
#include "refinement_rules.hpp"

#include <cmath>
#include <cstdio>

#include "input_checks.hpp"

namespace tcsolve::detail {

std::string brief(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", v);
  return text;
}

bool decide_condition_estimate(const SolveOptions& options, SolveResult& res, std::int64_t n, double span,
                               const SingularitySearch& search) {
  return decide_condition_estimate(options, res, n, [span] { return span; }, search);
}

bool decide_condition_estimate(const SolveOptions& options, SolveResult& res, std::int64_t n,
                               const std::function<double()>& pivot_span, const SingularitySearch& search) {
  const auto decide = [&res](bool run, const std::string& why) {
    res.condition_estimate_reason = why;
    return run;
  };
  if (options.condition_estimate == ConditionEstimate::never) return decide(false, "never");
  if (search)
    if (const std::optional<std::string> why = search()) throw InvalidInput(*why);
  if (options.condition_estimate == ConditionEstimate::always) return decide(true, "always");
  if (!res.converged) return decide(true, "automatic: the refinement did not converge");
  if (res.fallback_used) return decide(true, "automatic: the FP64 fallback ran");
  if (res.gmres_from >= 0 || options.refinement == Refinement::gmres || res.modifications > 0)
    return decide(true,
                  "automatic: GMRES-IR made the corrections (its convergence does not bound cond_1(A))");
  const double span = pivot_span();
  if (std::isnan(span)) return decide(true, "automatic: the LU's pivots are not gathered on this path");
  if (!(span <= kDoubtPivotSpan))
    return decide(true, "automatic: U's diagonal spans " + brief(span) + " (more than 2^20)");
  const std::string pivots = "U's diagonal spans " + brief(span) + ", at most 2^20";
  const double level = kDoubtLevel * std::sqrt(static_cast<double>(n)) * kEps64;
  for (std::size_t k = 1; k < res.history.size(); ++k) {
    const double before = res.history[k - 1], after = res.history[k];
    if (before > level && !(after <= kDoubtContraction * before))
      return decide(true, "automatic: refinement step " + std::to_string(k) +
                              " contracted the backward error by " + brief(before / after) +
                              "x only (less than 10x)");
  }
  if (!search)
    return decide(true,
                  "automatic: A is in device memory only (the estimate's FP64 LU looks for equal rows)");
  const char* refinement = res.fp64_lu ? "the FP64 LU's refinement" : "classical refinement";
  return decide(false, std::string("automatic: not needed (") + refinement +
                           " converged, every step contracting at least 10x; " + pivots + ")");
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
      w += ": likely causes: ill-conditioning (cond_1(A) estimate " +
           (cond ? brief(*cond) : "not computed: ask for the estimate to tell them apart") + "), or " +
           transposed;
    res.warnings.push_back(w);
  }
}

}  // namespace tcsolve::detail
