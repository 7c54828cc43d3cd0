// Exact power-of-two prescaling of systems near FP64's underflow threshold (prescale.hpp).
#include "prescale.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "refinement_rules.hpp"

namespace tcsolve::detail {

namespace {

/// k >= 0 with 2^k m in [1, 2) for 0 < m < kPrescaleBelow, else 0.
int exponent_up(double m) {
  if (!(m > 0) || !(m < kPrescaleBelow)) return 0;
  int e = 0;
  std::frexp(m, &e);  // m in [2^(e-1), 2^e)
  return 1 - e;
}

/// 2^k v for every entry (ldexp per entry: 2^k alone may overflow for the subnormal range).
void scale_by(Eigen::Ref<Eigen::MatrixXd> m, int k) {
  if (k == 0) return;
  m = m.unaryExpr([k](double v) { return std::ldexp(v, k); });
}

}  // namespace

bool Prescale::any() const {
  if (a != 0) return true;
  for (int t : b)
    if (t != 0) return true;
  return false;
}

Prescale prescale_for(const LinearSystem& sys, double max_abs_a) {
  Prescale p;
  p.a = exponent_up(max_abs_a);
  p.b.resize(static_cast<std::size_t>(sys.b.cols()));
  for (Eigen::Index j = 0; j < sys.b.cols(); ++j)
    p.b[static_cast<std::size_t>(j)] = exponent_up(sys.b.col(j).cwiseAbs().maxCoeff());
  return p;
}

LinearSystem prescaled(const LinearSystem& sys, const Prescale& p) {
  LinearSystem s;
  s.A = sys.A;
  scale_by(s.A, p.a);
  s.b = sys.b;
  for (Eigen::Index j = 0; j < s.b.cols(); ++j) scale_by(s.b.col(j), p.b[static_cast<std::size_t>(j)]);
  if (sys.x_true) {
    s.x_true = *sys.x_true;
    for (Eigen::Index j = 0; j < s.x_true->cols(); ++j)
      scale_by(s.x_true->col(j), p.b[static_cast<std::size_t>(j)] - p.a);
  }
  s.b_is_vector = sys.b_is_vector;
  s.description = sys.description;
  return s;
}

void unscale(SolveResult& res, const Prescale& p, const LinearSystem& original) {
  for (Eigen::Index j = 0; j < res.x.cols(); ++j) scale_by(res.x.col(j), p.a - p.b[static_cast<std::size_t>(j)]);
  res.forward_error = forward_error(original, res.x);
  int b_max = 0;
  for (int t : p.b) b_max = std::max(b_max, t);
  res.note += "; solved as the exactly scaled system 2^" + std::to_string(p.a) + " A x = 2^t b (t up to " +
              std::to_string(b_max) + "): A or b lie below 2^-511, where the residual would lose precision";
}

}  // namespace tcsolve::detail
