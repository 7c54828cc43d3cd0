// The LU reconstruction check and dsgesv's test, shared by the cpu ([solver]) and cuda ([gpu])
// solver tests.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <catch2/catch.hpp>
#include <cstddef>
#include <utility>
#include <vector>

#include "tcsolve/solver/solver.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve::test {

/// dsgesv's test for every column, ||r_j||_inf <= sqrt(n) ||x_j||_inf ||A||_inf eps64 (eps64 =
/// 2^-53, LAPACK dlamch('E')), recomputed here independently of the solver.
inline bool dsgesv_criterion(const LinearSystem& sys, const Eigen::MatrixXd& x) {
  constexpr double eps64 = 0x1p-53;
  const double norm_a = sys.A.cwiseAbs().rowwise().sum().maxCoeff();
  const Eigen::MatrixXd r = sys.b - sys.A * x;
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    if (!(r.col(j).lpNorm<Eigen::Infinity>() <=
          std::sqrt(static_cast<double>(sys.n())) * x.col(j).lpNorm<Eigen::Infinity>() * norm_a * eps64))
      return false;
  return true;
}

/// SolveOptions for rbt pivoting on `backend` with `variant` and block size nb.
inline SolveOptions rbt_options(Backend backend, Variant variant, int nb) {
  SolveOptions o;
  o.variant = variant;
  o.backend = backend;
  o.block_size = nb;
  o.pivoting = Pivoting::rbt;
  return o;
}

/// The system A x = b with x_true = ones, b = A x_true.
inline LinearSystem with_ones(Eigen::MatrixXd A) {
  LinearSystem sys;
  sys.x_true = Eigen::MatrixXd::Ones(A.rows(), 1);
  sys.b = A * *sys.x_true;
  sys.A = std::move(A);
  return sys;
}

struct LuResidual {
  double residual;  ///< ||P R A C - L U||_F
  double bound;     ///< u32 ||R A C||_F + 2 gamma_n(u32) || |L| |U| ||_F
};

/// Checks the structure of the factorization of A (perm a permutation; L unit lower with
/// |l_ij| <= max_multiplier: 1 for partial pivoting) and returns the reconstruction error and
/// its bound. Higham
/// (Thm 9.3): the computed factors of LU with partial pivoting satisfy |P A_s - L U| <= gamma_n
/// |L||U|, gamma_n = n u / (1 - n u), when every operation is rounded to u = u32; the conversion
/// of A_s to FP32 adds u |A_s|. The split variants' trailing updates carry up to two such errors
/// per product (inside and outside the tensor core), hence the factor 2.
inline LuResidual lu_reconstruction(const LuFactorization& f, const Eigen::MatrixXd& A, double max_multiplier = 1.0) {
  constexpr double kU32 = 0x1p-24;
  const int n = static_cast<int>(A.rows());
  std::vector<int> sorted = f.perm;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < n; ++i) REQUIRE(sorted[static_cast<std::size_t>(i)] == i);
  const Eigen::MatrixXd lu = f.lu.cast<double>();
  Eigen::MatrixXd L = lu.triangularView<Eigen::StrictlyLower>();
  L.diagonal().setOnes();
  const Eigen::MatrixXd U = lu.triangularView<Eigen::Upper>();
  CHECK(L.cwiseAbs().maxCoeff() <= max_multiplier);
  const Eigen::MatrixXd As = f.row_scale.asDiagonal() * A * f.col_scale.asDiagonal();
  Eigen::MatrixXd PAs(n, n);
  for (int i = 0; i < n; ++i) PAs.row(i) = As.row(f.perm[static_cast<std::size_t>(i)]);
  const double gamma_n = n * kU32 / (1 - n * kU32);
  return {(PAs - L * U).norm(), kU32 * As.norm() + 2 * gamma_n * (L.cwiseAbs() * U.cwiseAbs()).norm()};
}

/// The elementwise form of lu_reconstruction's bound, |P A_s - L U| <= u32 |A_s| + 2 gamma_n |L||U|
/// (Higham, Thm 9.3, the same factor 2), probed with `probes` vectors x of +-1 in O(n^2) each
/// (for n where the dense L U of lu_reconstruction is too slow): returns the largest
/// |(P A_s x - L (U x))_i| over (u32 |A_s| |x| + 2 gamma_n |L| (|U| |x|))_i, at most 1 when the bound holds.
inline double lu_probe_ratio(const LuFactorization& f, const Eigen::MatrixXd& A, int probes) {
  constexpr double kU32 = 0x1p-24;
  const Eigen::Index n = A.rows();
  const double gamma_n = static_cast<double>(n) * kU32 / (1 - static_cast<double>(n) * kU32);
  std::vector<int> sorted = f.perm;
  std::sort(sorted.begin(), sorted.end());
  for (Eigen::Index i = 0; i < n; ++i) REQUIRE(sorted[static_cast<std::size_t>(i)] == i);
  double worst = 0;
  for (int p = 0; p < probes; ++p) {
    Eigen::VectorXd x(n);
    for (Eigen::Index j = 0; j < n; ++j) x(j) = ((j * 7 + p * 13) % 5) < 2 ? -1.0 : 1.0;
    Eigen::VectorXd ux = Eigen::VectorXd::Zero(n), uabs = Eigen::VectorXd::Zero(n);
    Eigen::VectorXd lux = Eigen::VectorXd::Zero(n), luabs = Eigen::VectorXd::Zero(n);
    Eigen::VectorXd pax = Eigen::VectorXd::Zero(n), aabs = Eigen::VectorXd::Zero(n);
    for (Eigen::Index j = 0; j < n; ++j)  // U x, |U| |x| (column-major: column j)
      for (Eigen::Index i = 0; i <= j; ++i) {
        const double u = f.lu(i, j);
        ux(i) += u * x(j);
        uabs(i) += std::abs(u);
      }
    lux = ux, luabs = uabs;  // the unit diagonal of L
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = j + 1; i < n; ++i) {
        const double l = f.lu(i, j);
        lux(i) += l * ux(j);
        luabs(i) += std::abs(l) * uabs(j);
      }
    for (Eigen::Index j = 0; j < n; ++j) {
      const double c = f.col_scale(j);
      for (Eigen::Index i = 0; i < n; ++i) {
        const Eigen::Index src = f.perm[static_cast<std::size_t>(i)];
        const double a = f.row_scale(src) * A(src, j) * c;
        pax(i) += a * x(j);
        aabs(i) += std::abs(a);
      }
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      const double bound = kU32 * aabs(i) + 2 * gamma_n * luabs(i);
      worst = std::max(worst, std::abs(pax(i) - lux(i)) / bound);
    }
  }
  return worst;
}

}  // namespace tcsolve::test
