// The random butterfly transform (butterfly.hpp).
#include "butterfly.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "refinement_rules.hpp"

namespace tcsolve::detail {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;

/// Which of B, B^T, B^-1, B^-T.
enum class Form { plain, transpose, inverse, inverse_transpose };

/// One butterfly of size m = 2h on rows o..o+m of x; r holds R0 (h entries) then R1 (h).
void butterfly(Eigen::MatrixXd& x, int o, int h, const double* r, Form form) {
  for (Eigen::Index c = 0; c < x.cols(); ++c)
    for (int i = 0; i < h; ++i) {
      const double a = x(o + i, c), b = x(o + h + i, c), r0 = r[i], r1 = r[h + i];
      switch (form) {
        case Form::plain:  // (1/sqrt2) [R0 R1; R0 -R1]
          x(o + i, c) = kInvSqrt2 * (r0 * a + r1 * b);
          x(o + h + i, c) = kInvSqrt2 * (r0 * a - r1 * b);
          break;
        case Form::transpose:  // (1/sqrt2) [R0 R0; R1 -R1]
          x(o + i, c) = kInvSqrt2 * r0 * (a + b);
          x(o + h + i, c) = kInvSqrt2 * r1 * (a - b);
          break;
        case Form::inverse:  // diag(R0^-1, R1^-1) (1/sqrt2) [I I; I -I]
          x(o + i, c) = kInvSqrt2 * (a + b) / r0;
          x(o + h + i, c) = kInvSqrt2 * (a - b) / r1;
          break;
        case Form::inverse_transpose:  // (1/sqrt2) [I I; I -I] diag(R0^-1, R1^-1)
          x(o + i, c) = kInvSqrt2 * (a / r0 + b / r1);
          x(o + h + i, c) = kInvSqrt2 * (a / r0 - b / r1);
          break;
      }
    }
}

}  // namespace

std::string rbt_description(int window) {
  if (window == 0) return "rbt: LU without pivoting of U^T A V";
  return "rbt: LU of U^T A V with pivoting in windows of " + std::to_string(window) + " rows";
}

std::string rbt_breakdown(int tiny_column, double growth) {
  if (tiny_column >= 0)
    return "a tiny pivot in column " + std::to_string(tiny_column + 1) + " of the LU without pivoting";
  if (!(growth <= kRbtGrowth)) return "growth " + brief(growth) + " of the factors without pivoting";
  return {};
}

RandomButterfly::RandomButterfly(int n, std::uint64_t seed) : n_(n), p_((n + 3) / 4 * 4) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  outer_.resize(static_cast<std::size_t>(p_));
  inner_.resize(static_cast<std::size_t>(p_));
  for (double& r : outer_) r = std::exp(u(gen) / 10);
  for (double& r : inner_) r = std::exp(u(gen) / 10);
}

void RandomButterfly::apply(Eigen::MatrixXd& x) const {
  const int h = p_ / 2, q = p_ / 4;
  butterfly(x, 0, h, outer_.data(), Form::plain);
  butterfly(x, 0, q, inner_.data(), Form::plain);
  butterfly(x, h, q, inner_.data() + h, Form::plain);
}

void RandomButterfly::apply_transpose(Eigen::MatrixXd& x) const {
  const int h = p_ / 2, q = p_ / 4;
  butterfly(x, 0, q, inner_.data(), Form::transpose);
  butterfly(x, h, q, inner_.data() + h, Form::transpose);
  butterfly(x, 0, h, outer_.data(), Form::transpose);
}

void RandomButterfly::apply_inverse(Eigen::MatrixXd& x) const {
  const int h = p_ / 2, q = p_ / 4;
  butterfly(x, 0, q, inner_.data(), Form::inverse);
  butterfly(x, h, q, inner_.data() + h, Form::inverse);
  butterfly(x, 0, h, outer_.data(), Form::inverse);
}

void RandomButterfly::apply_inverse_transpose(Eigen::MatrixXd& x) const {
  const int h = p_ / 2, q = p_ / 4;
  butterfly(x, 0, h, outer_.data(), Form::inverse_transpose);
  butterfly(x, 0, q, inner_.data(), Form::inverse_transpose);
  butterfly(x, h, q, inner_.data() + h, Form::inverse_transpose);
}

Eigen::MatrixXd butterfly_transform(const Eigen::MatrixXd& A, const RandomButterfly& u, const RandomButterfly& v) {
  const int n = static_cast<int>(A.rows()), p = u.padded();
  Eigen::MatrixXd m = Eigen::MatrixXd::Identity(p, p);
  m.topLeftCorner(n, n) = A;
  u.apply_transpose(m);         // U^T M
  Eigen::MatrixXd t = m.transpose();
  v.apply_transpose(t);         // (M V)^T = V^T M^T
  return t.transpose();
}

Eigen::MatrixXd pad_rows(const Eigen::MatrixXd& x, int p) {
  Eigen::MatrixXd y = Eigen::MatrixXd::Zero(p, x.cols());
  const Eigen::Index rows = std::min<Eigen::Index>(p, x.rows());
  y.topRows(rows) = x.topRows(rows);
  return y;
}

}  // namespace tcsolve::detail
