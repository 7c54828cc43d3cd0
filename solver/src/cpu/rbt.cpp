// The cpu rbt pivoting (rbt.hpp): the transformed LU without pivoting and its correction.
#include "rbt.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "../input_checks.hpp"
#include "../refinement_rules.hpp"
#include "blocked_lu.hpp"

namespace tcsolve::cpu {

RbtAttempt try_factorize_rbt(const Eigen::MatrixXd& A, Variant variant, int block_size, const GemmOptions& gemm,
                             std::uint64_t seed, int window, const BlockHook& after_block) {
  detail::check_lu_input(A, block_size);
  const int n = static_cast<int>(A.rows());
  RbtFactorization r{LuFactorization{}, detail::RandomButterfly(n, seed), detail::RandomButterfly(n, seed + 1)};
  LuFactorization& f = r.f;
  equilibrate(A, f.row_scale, f.col_scale);
  const Eigen::MatrixXd a_r =
      detail::butterfly_transform(f.row_scale.asDiagonal() * A * f.col_scale.asDiagonal(), r.u, r.v);
  const double a_max = a_r.cwiseAbs().maxCoeff();
  f.lu = a_r.cast<float>();
  const int p = static_cast<int>(a_r.rows());
  f.perm.resize(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) f.perm[static_cast<std::size_t>(i)] = i;
  f.resolved_variant = variant;
  RbtAttempt t;
  const int stopped = factorize_rbt_lu(f.lu, f.perm, window, variant, block_size, gemm, f.resolved_variant,
                                       static_cast<float>(detail::kRbtTinyPivot * a_max), after_block);
  const double growth = stopped >= 0 ? 0.0 : static_cast<double>(f.lu.cwiseAbs().maxCoeff()) / a_max;
  t.breakdown = detail::rbt_breakdown(stopped, growth);
  if (!t.breakdown.empty()) return t;
  t.factors = std::move(r);
  return t;
}

detail::EquilibratedInverse rbt_inverse(const RbtFactorization& r) {
  const int p = r.u.padded();
  const Eigen::Index n = r.f.row_scale.size();
  return detail::EquilibratedInverse(
      r.f.row_scale, r.f.col_scale,
      [&r, p, n](Eigen::MatrixXd& w) {
        Eigen::MatrixXd t = detail::pad_rows(w, p);
        r.u.apply_transpose(t);
        Eigen::MatrixXf y(p, t.cols());
        for (int i = 0; i < p; ++i) y.row(i) = t.row(r.f.perm[static_cast<std::size_t>(i)]).cast<float>();
        r.f.lu.triangularView<Eigen::UnitLower>().solveInPlace(y);
        r.f.lu.triangularView<Eigen::Upper>().solveInPlace(y);
        Eigen::MatrixXd z = y.cast<double>();
        r.v.apply(z);
        w = z.topRows(n);
      },
      [&r, p, n](Eigen::MatrixXd& w) {
        Eigen::MatrixXd t = detail::pad_rows(w, p);
        r.v.apply_transpose(t);
        Eigen::MatrixXf y = t.cast<float>();
        r.f.lu.triangularView<Eigen::Upper>().transpose().solveInPlace(y);
        r.f.lu.triangularView<Eigen::UnitLower>().transpose().solveInPlace(y);
        Eigen::MatrixXd z(p, y.cols());
        for (int i = 0; i < p; ++i) z.row(r.f.perm[static_cast<std::size_t>(i)]) = y.row(i).cast<double>();
        r.u.apply(z);
        w = z.topRows(n);
      });
}

Eigen::MatrixXd rbt_apply(const RbtFactorization& r, const Eigen::MatrixXd& rhs) {
  const LuFactorization& f = r.f;
  const Eigen::Index n = f.row_scale.size(), p = r.u.padded();
  // t = U^T R rhs (padded), each column scaled by a power of two to ||t||_inf in [1/2, 1) so
  // that the FP32 conversion neither overflows nor flushes a small residual to zero.
  Eigen::MatrixXd t = detail::pad_rows(f.row_scale.asDiagonal() * rhs, static_cast<int>(p));
  r.u.apply_transpose(t);
  std::vector<int> exponents(static_cast<std::size_t>(t.cols()), 0);
  Eigen::MatrixXf y(p, t.cols());
  for (Eigen::Index j = 0; j < t.cols(); ++j) {
    const double s = t.col(j).cwiseAbs().maxCoeff();
    int e = 0;
    if (std::isfinite(s) && s > 0) std::frexp(s, &e);
    exponents[static_cast<std::size_t>(j)] = e;
    for (Eigen::Index i = 0; i < p; ++i)
      y(i, j) = static_cast<float>(std::ldexp(t(f.perm[static_cast<std::size_t>(i)], j), -e));
  }
  f.lu.triangularView<Eigen::UnitLower>().solveInPlace(y);
  f.lu.triangularView<Eigen::Upper>().solveInPlace(y);
  Eigen::MatrixXd z = y.cast<double>();
  r.v.apply(z);
  Eigen::MatrixXd x = z.topRows(n);
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    x.col(j) = f.col_scale.cwiseProduct(x.col(j)) * std::ldexp(1.0, exponents[static_cast<std::size_t>(j)]);
  return x;
}

}  // namespace tcsolve::cpu
