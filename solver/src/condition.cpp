// A^-1 and A^-T through the equilibrated factors, Hager's 1-norm estimator, cond_1(A) from them
// (condition.hpp states the algorithms).
#include "condition.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>

#include "equilibration.hpp"
#include "refinement_rules.hpp"

namespace tcsolve::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// log2 of a power of two (exact).
int log2_exact(double power_of_two) { return std::ilogb(power_of_two); }

/// frexp's exponent of a finite non-zero v (v = m 2^e, |m| in [1/2, 1)), from the bits where v
/// is normal.
int frexp_exponent(double v) {
  std::uint64_t u = 0;
  std::memcpy(&u, &v, sizeof u);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  if (biased != 0) return biased - 1022;
  int e = 0;
  std::frexp(v, &e);
  return e;
}

/// v 2^e, rounded once (as ldexp): a product by the exact power of two where 2^e is a normal
/// number, ldexp beyond.
double times_pow2(double v, int e) { return e >= -1022 && e <= 1023 ? v * pow2(e) : std::ldexp(v, e); }

/// The exponent k with max_i |v_i| 2^add_i in [2^(k-1), 2^k) over the finite non-zero v_i, and
/// whether there is one.
template <typename Vector>
bool max_exponent(const Vector& v, const std::vector<int>& add, int& k) {
  bool any = false;
  k = std::numeric_limits<int>::min();
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]) || v[i] == 0) continue;
    k = std::max(k, frexp_exponent(v[i]) + (add.empty() ? 0 : add[static_cast<std::size_t>(i)]));
    any = true;
  }
  return any;
}

/// Per column: w_i = v_i 2^(in_i - k) with k from max_exponent (||w||_inf in [1/2, 1)); one
/// solve of all the columns; v_i = w_i 2^(out_i + k + shift). A zero column stays zero; a
/// non-finite entry propagates through the solve.
void scaled_solve(Eigen::MatrixXd& v, const std::vector<int>& in, const std::vector<int>& out, int shift,
                  const VectorMap& solve) {
  std::vector<int> ks(static_cast<std::size_t>(v.cols()), 0);
  for (Eigen::Index c = 0; c < v.cols(); ++c) {
    int k = 0;
    if (!max_exponent(v.col(c), in, k)) k = 0;
    ks[static_cast<std::size_t>(c)] = k;
    for (Eigen::Index i = 0; i < v.rows(); ++i)
      v(i, c) = times_pow2(v(i, c), in[static_cast<std::size_t>(i)] - k);
  }
  solve(v);
  for (Eigen::Index c = 0; c < v.cols(); ++c)
    for (Eigen::Index i = 0; i < v.rows(); ++i)
      v(i, c) =
          times_pow2(v(i, c), out[static_cast<std::size_t>(i)] + ks[static_cast<std::size_t>(c)] + shift);
}

/// sum |v_i| (inf when it overflows or v is not finite).
template <typename Vector>
double norm1(const Vector& v) {
  const double s = v.template lpNorm<1>();
  return std::isnan(s) ? kInf : s;
}

/// +1 for x_i >= 0, -1 otherwise (dlacn2's ISGN).
Eigen::VectorXd signs(const Eigen::VectorXd& x) {
  Eigen::VectorXd s(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) s[i] = x[i] >= 0 ? 1.0 : -1.0;
  return s;
}

}  // namespace

EquilibratedInverse::EquilibratedInverse(const Eigen::VectorXd& row_scale, const Eigen::VectorXd& col_scale,
                                         VectorMap solve, VectorMap solve_transpose)
    : row_exp_(static_cast<std::size_t>(row_scale.size())),
      col_exp_(static_cast<std::size_t>(col_scale.size())),
      solve_(std::move(solve)),
      solve_transpose_(std::move(solve_transpose)) {
  for (Eigen::Index i = 0; i < row_scale.size(); ++i)
    row_exp_[static_cast<std::size_t>(i)] = log2_exact(row_scale[i]);
  for (Eigen::Index i = 0; i < col_scale.size(); ++i)
    col_exp_[static_cast<std::size_t>(i)] = log2_exact(col_scale[i]);
}

void EquilibratedInverse::apply(Eigen::MatrixXd& v, int shift) const {
  scaled_solve(v, row_exp_, col_exp_, shift, solve_);
}

void EquilibratedInverse::apply_transpose(Eigen::MatrixXd& v, int shift) const {
  scaled_solve(v, col_exp_, row_exp_, shift, solve_transpose_);
}

bool EquilibratedInverse::nonuniform() const {
  auto varies = [](const std::vector<int>& e) { return std::adjacent_find(e.begin(), e.end(), std::not_equal_to<>()) != e.end(); };
  return varies(row_exp_) || varies(col_exp_);
}

EquilibratedInverse EquilibratedInverse::equilibrated() const {
  EquilibratedInverse e = *this;
  std::fill(e.row_exp_.begin(), e.row_exp_.end(), 0);
  std::fill(e.col_exp_.begin(), e.col_exp_.end(), 0);
  return e;
}

VectorMap EquilibratedInverse::equilibrated_product(VectorMap times_a) const {
  return [this, times_a = std::move(times_a)](Eigen::MatrixXd& y) {
    for (Eigen::Index c = 0; c < y.cols(); ++c)
      for (Eigen::Index i = 0; i < y.rows(); ++i) y(i, c) = times_pow2(y(i, c), col_exp_[static_cast<std::size_t>(i)]);
    times_a(y);
    for (Eigen::Index c = 0; c < y.cols(); ++c)
      for (Eigen::Index i = 0; i < y.rows(); ++i) y(i, c) = times_pow2(y(i, c), row_exp_[static_cast<std::size_t>(i)]);
  };
}

ScaledNorm EquilibratedInverse::equilibrated_norm1(const Eigen::MatrixXd& A) const {
  double best = 0;
  for (Eigen::Index j = 0; j < A.cols(); ++j) {
    double sum = 0;  // |a_s(i, j)| <= 1 after the equilibration: no overflow
    for (Eigen::Index i = 0; i < A.rows(); ++i)
      sum += std::abs(times_pow2(A(i, j), row_exp_[static_cast<std::size_t>(i)] + col_exp_[static_cast<std::size_t>(j)]));
    best = std::max(best, sum);
  }
  return scaled_norm(best);
}

Norm1Estimate estimate_norm1(int n, const VectorMap& times_b, const VectorMap& times_bt) {
  constexpr int kMaxIterations = 5;  // dlacn2's ITMAX
  Norm1Estimate out;
  auto product = [&](const VectorMap& m, Eigen::MatrixXd& x) {
    m(x);
    ++out.products;
  };
  // Keeps (v, B v) when it gives a larger ||B v||_1 / ||v||_1.
  auto offer = [&](const Eigen::VectorXd& v, const Eigen::VectorXd& bv, double value) {
    if (!(value <= out.estimate) || out.v.size() == 0) {  // NaN and inf win: they must be seen
      out.estimate = value;
      out.v = v;
      out.bv = bv;
    }
  };

  // B e/n and, beside it, B of the alternative vector (Higham 1988, Alg. 4.1's last step;
  // dlacn2's altsgn), offered at the end as dlacn2 does.
  const int first = n == 1 ? 1 : 2;
  Eigen::MatrixXd start(n, first);
  start.col(0).setConstant(1.0 / n);
  if (n > 1)
    for (Eigen::Index i = 0; i < n; ++i)
      start(i, 1) = (i % 2 == 0 ? 1.0 : -1.0) * (1.0 + static_cast<double>(i) / static_cast<double>(n - 1));
  Eigen::MatrixXd x = start;
  product(times_b, x);
  offer(start.col(0), x.col(0), norm1(x.col(0)));
  if (n == 1 || !std::isfinite(out.estimate)) return out;
  const Eigen::VectorXd alt_v = start.col(1), alt_bv = x.col(1);

  Eigen::VectorXd xi = signs(x.col(0));
  Eigen::MatrixXd z = xi;
  product(times_bt, z);
  if (!z.allFinite()) {
    out.estimate = kInf;
    return out;
  }
  Eigen::Index j = 0;
  z.col(0).cwiseAbs().maxCoeff(&j);
  for (int iteration = 2;; ++iteration) {
    const Eigen::VectorXd v = Eigen::VectorXd::Unit(n, j);
    Eigen::MatrixXd y = v;
    product(times_b, y);
    const double previous = out.estimate, value = norm1(y.col(0));
    offer(v, y.col(0), value);
    if (!std::isfinite(value)) return out;
    const Eigen::VectorXd new_xi = signs(y.col(0));
    if (new_xi == xi || value <= previous) break;  // repeated sign vector, or no growth
    xi = new_xi;
    z = xi;
    product(times_bt, z);
    if (!z.allFinite()) {
      out.estimate = kInf;
      return out;
    }
    const Eigen::Index last = j;
    const double top = z.col(0).cwiseAbs().maxCoeff(&j);
    if (!(std::abs(z(last, 0)) < top) || iteration >= kMaxIterations) break;
  }
  offer(alt_v, alt_bv, 2.0 * norm1(alt_bv) / (3.0 * n));
  return out;
}

ConditionEstimate estimate_condition(ScaledNorm norm1_a, const EquilibratedInverse& inverse,
                                     const VectorMap& times_a) {
  ConditionEstimate c;
  const int n = inverse.n();
  if (!norm1_a.finite() || norm1_a.zero()) {  // check_system rules these out
    c.estimate = kInf;
    c.resolved = false;
    return c;
  }
  // B = 2^e A^-1 with ||A||_1 = m_a 2^e: cond_1(A) = m_a 2^e ||A^-1||_1 = m_a ||B||_1, m_a in [1/2, 1)
  const int shift = norm1_a.e;
  const Norm1Estimate e = estimate_norm1(
      n, [&](Eigen::MatrixXd& y) { inverse.apply(y, shift); },
      [&](Eigen::MatrixXd& y) { inverse.apply_transpose(y, shift); });
  c.products = e.products;
  if (!std::isfinite(e.estimate)) {
    c.estimate = kInf;
    c.resolved = false;
    return c;
  }
  double estimate = e.estimate;
  if (times_a) {
    // Refinement of x = B v: the residual of B^-1 x = v is s = v - 2^-shift A x, formed as A
    // times x scaled to ||.||_inf in [1/2, 1) and scaled back exactly.
    c.resolved = false;
    Eigen::VectorXd x = e.bv, previous = e.bv;
    const double v_norm = norm1(e.v);
    for (int step = 1; step <= kResolutionSteps; ++step) {
      int k = 0;
      if (!max_exponent(x, {}, k)) break;  // x = 0: nothing to resolve against
      Eigen::MatrixXd ax(n, 1);
      for (Eigen::Index i = 0; i < n; ++i) ax(i, 0) = times_pow2(x[i], -k);
      times_a(ax);
      Eigen::MatrixXd d(n, 1);
      for (Eigen::Index i = 0; i < n; ++i) d(i, 0) = e.v[i] - times_pow2(ax(i, 0), k - shift);
      inverse.apply(d, shift);
      ++c.products;
      const double q = norm1(d.col(0)) / norm1(previous);
      x += d.col(0);
      previous = d.col(0);
      if (q <= kResolutionContraction) {
        c.resolved = true;
        estimate = norm1(x) / v_norm;
        break;
      }
    }
  }
  c.estimate = std::isfinite(estimate) ? estimate * norm1_a.m : kInf;
  return c;
}

bool needs_equilibrated_estimate(const std::optional<double>& cond_a, const EquilibratedInverse& inverse) {
  return cond_a && !(*cond_a * kEps64 < kConditionWarning) && inverse.nonuniform();
}

ConditionEstimate estimate_condition_equilibrated(const Eigen::MatrixXd& A, const EquilibratedInverse& inverse,
                                                  const VectorMap& times_a) {
  return estimate_condition(inverse.equilibrated_norm1(A), inverse.equilibrated(),
                            times_a ? inverse.equilibrated_product(times_a) : VectorMap{});
}

}  // namespace tcsolve::detail
