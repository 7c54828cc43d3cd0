// Checks of the randsvd property shared by the cpu ([io]) and cuda ([gpu]) generator tests: the
// singular values of the generated A are the requested sigma, and cond_2(A) = cond.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "tcsolve/solver/generate.hpp"

namespace tcsolve::test {

/// Allowed |sv_i(A) - sigma_i| / (n^(3/2) u sigma_1), u = 2^-53. Forming A = U diag(sigma) V^T
/// in FP64 moves every singular value by at most ||E||_2 (Weyl), E from (1) the computed U, V:
/// Householder QR gives ||Q_computed - Q||_F <= sqrt(n) gamma_{cn} (Higham, ASNA 2nd ed., Thm
/// 19.4), an n^(3/2) u term; (2) the product's rounding, gamma_n |U| diag(sigma) |V^T|, of norm
/// <= n gamma_n sigma_1 in the worst case but ~ n u in practice; (3) the SVD measuring them,
/// O(n u ||A||). Measured on the cpu generator (n = 64, 129, 257; cond 1e2..1e8; all three
/// modes): at most 0.84 n^(3/2) u (the clustered spectrum, where the n - 1 unit singular values
/// expose the loss of orthogonality directly), 0.3 for geometric and arithmetic. 8 leaves room
/// for cuSOLVER's QR and cuBLAS's product; a wrong spectrum is off by ~1/n, far above it.
inline constexpr double kRandsvdSpectrumFactor = 8.0;

struct SpectrumCheck {
  double max_error = 0;   ///< max_i |sv_i - sigma_i| / sigma_1
  double bound = 0;       ///< kRandsvdSpectrumFactor n^(3/2) u
  double cond2 = 0;       ///< sv_1 / sv_n
  double cond_error = 0;  ///< |cond2 - cond| / cond
  /// First-order bound on cond_error from the one on the singular values: sv_n is off by at
  /// most bound sigma_1 = bound, relative bound cond, and sv_1 by bound; twice that with margin.
  double cond_bound = 0;
};

/// The singular values of A (Eigen JacobiSVD, descending) against randsvd_singular_values.
inline SpectrumCheck check_randsvd_spectrum(const Eigen::MatrixXd& A, double cond, SpectrumMode mode) {
  const int n = static_cast<int>(A.rows());
  const Eigen::VectorXd sigma = randsvd_singular_values(n, cond, mode);
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(A).singularValues();
  SpectrumCheck c;
  c.max_error = (sv - sigma).cwiseAbs().maxCoeff() / sigma(0);
  c.bound = kRandsvdSpectrumFactor * n * std::sqrt(static_cast<double>(n)) * 0x1p-53;
  c.cond2 = sv(0) / sv(n - 1);
  c.cond_error = std::abs(c.cond2 - cond) / cond;
  c.cond_bound = 2 * (c.bound * cond + c.bound);
  return c;
}

}  // namespace tcsolve::test
