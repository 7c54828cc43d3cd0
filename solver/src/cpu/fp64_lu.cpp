// The cpu path's FP64 LU of A_s (fp64_lu.hpp).
#include "fp64_lu.hpp"

#include <cmath>

#include "../input_checks.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cpu {

using detail::zero_pivot_message;

int first_bad_pivot(const Eigen::PartialPivLU<Eigen::MatrixXd>& lu) {
  const Eigen::VectorXd d = lu.matrixLU().diagonal();
  for (Eigen::Index i = 0; i < d.size(); ++i)
    if (d[i] == 0.0 || !std::isfinite(d[i])) return static_cast<int>(i);
  return -1;
}

Fp64Lu fp64_equilibrated_lu(const Eigen::MatrixXd& A, const Eigen::VectorXd& row_scale,
                            const Eigen::VectorXd& col_scale) {
  if (const auto why = detail::exact_singularity(A)) throw InvalidInput(*why);
  Fp64Lu lu(row_scale.asDiagonal() * A * col_scale.asDiagonal());
  const int bad = first_bad_pivot(lu);
  if (bad >= 0) throw InvalidInput(zero_pivot_message(bad));
  return lu;
}

detail::EquilibratedInverse fp64_inverse(const Fp64Lu& lu, const LuFactorization& f) {
  return detail::EquilibratedInverse(
      f.row_scale, f.col_scale, [&lu](Eigen::MatrixXd& w) { w = lu.solve(w); },
      [&lu](Eigen::MatrixXd& w) { w = lu.transpose().solve(w); });
}

Eigen::MatrixXd solve_with(const detail::EquilibratedInverse& inverse, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd x = b;
  inverse.apply(x);
  return x;
}

}  // namespace tcsolve::cpu
