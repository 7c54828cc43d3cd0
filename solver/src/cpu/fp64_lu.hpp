// The cpu path's FP64 LU (Eigen PartialPivLU) of the equilibrated A_s = R A C: for the fallback
// (solve_with) and the condition estimate (fp64_inverse), with the exact-singularity checks
// before and after it. Internal to tcsolve::solver.
#pragma once

#include <Eigen/Dense>

#include "../condition.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cpu {

/// Zero-based column of the first zero or non-finite diagonal entry of an FP64 LU's U, or -1.
int first_bad_pivot(const Eigen::PartialPivLU<Eigen::MatrixXd>& lu);

using Fp64Lu = Eigen::PartialPivLU<Eigen::MatrixXd>;

/// The FP64 LU of the equilibrated A_s = R A C (exact: powers of two), for the fallback and the
/// condition estimate. Throws InvalidInput when A is exactly singular: first the check of equal
/// rows and columns (detail::exact_singularity), then a zero or non-finite pivot.
Fp64Lu fp64_equilibrated_lu(const Eigen::MatrixXd& A, const Eigen::VectorXd& row_scale,
                            const Eigen::VectorXd& col_scale);

/// A^-1, A^-T through the FP64 LU of A_s.
detail::EquilibratedInverse fp64_inverse(const Fp64Lu& lu, const LuFactorization& f);

/// x = A^-1 b through an inverse (the fallback's solve).
Eigen::MatrixXd solve_with(const detail::EquilibratedInverse& inverse, const Eigen::MatrixXd& b);

}  // namespace tcsolve::cpu
