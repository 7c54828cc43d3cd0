// ||A||_inf and ||A||_1 of a host matrix without overflow or underflow (scaled_norm.hpp).
#include "scaled_norm.hpp"

namespace tcsolve::detail {
namespace {

/// max over lines of sum |a|, rows (lines = rows) or columns (scaled_norm.hpp: norm_inf).
ScaledNorm max_line_sum(const Eigen::MatrixXd& A, bool rows) {
  const double largest = A.cwiseAbs().maxCoeff();
  int e = 0;
  if (largest > 0) std::frexp(largest, &e);
  const bool scale = e > 900 || e < -900;
  const Eigen::MatrixXd scaled = scale ? Eigen::MatrixXd(A.unaryExpr([e](double v) { return std::ldexp(v, -e); }))
                                       : Eigen::MatrixXd();
  const Eigen::MatrixXd& m = scale ? scaled : A;
  const double sum = rows ? m.cwiseAbs().rowwise().sum().maxCoeff() : m.cwiseAbs().colwise().sum().maxCoeff();
  ScaledNorm out = scaled_norm(sum);
  if (scale && !out.zero()) out.e += e;
  return out;
}

}  // namespace

ScaledNorm norm_inf(const Eigen::MatrixXd& A) { return max_line_sum(A, true); }
ScaledNorm norm_1(const Eigen::MatrixXd& A) { return max_line_sum(A, false); }

}  // namespace tcsolve::detail
