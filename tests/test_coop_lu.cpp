// The reference of the one-launch FP64 LU (solver/src/cpu/coop_lu.hpp), which the cuda kernel
// matches bitwise (test_coop_lu_cuda.cpp), against Eigen's PartialPivLU.
//
// Bound. The factors of any right-looking LU whose entries are formed by the Doolittle sums in
// some order (here, panel by panel, with fused multiply-adds: fewer roundings) satisfy
// L U = P A + dA with |dA| <= gamma_n |L| |U| elementwise (Higham, Thm 9.3; gamma_n = n u /
// (1 - n u), u = 2^-53). A wrong swap, a missed update or a misplaced multiplier gives an error of
// order |L| |U|, far above gamma_n |L| |U| (1e-13 at n = 300). On U(-1,1) matrices the largest
// entry of a column is unique, so the pivots equal Eigen's.
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cpu/coop_lu.hpp"

namespace {

Eigen::MatrixXd uniform(int n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  Eigen::MatrixXd a(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = d(g);
  return a;
}

/// The row order of ipiv's swaps applied to 0..n-1 (row i of P A is row perm[i] of A).
std::vector<int> row_order(const std::vector<int>& ipiv) {
  std::vector<int> perm(ipiv.size());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  for (std::size_t j = 0; j < ipiv.size(); ++j) std::swap(perm[j], perm[ipiv[j] - 1]);
  return perm;
}

}  // namespace

TEST_CASE("coop_lu_reference: L U = P A within gamma_n |L| |U|, Eigen's pivots, any n and panel width", "[solver]") {
  for (int nb : {16, 32})
    for (int n : {1, 2, 15, 16, 17, 33, 100, 301}) {
      CAPTURE(n, nb);
      const Eigen::MatrixXd a = uniform(n, 7 + n);
      const int lda = n + 3;  // a leading dimension past n
      std::vector<double> store(static_cast<std::size_t>(lda) * n, 9.0);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) store[i + static_cast<std::size_t>(j) * lda] = a(i, j);
      std::vector<int> ipiv(n);
      REQUIRE(tcsolve::cpu::coop_lu_reference(store.data(), n, lda, nb, ipiv.data()) == 0);
      for (int j = 0; j < n; ++j)  // the padding untouched
        for (int i = n; i < lda; ++i) REQUIRE(store[i + static_cast<std::size_t>(j) * lda] == 9.0);
      Eigen::MatrixXd L = Eigen::MatrixXd::Identity(n, n), U = Eigen::MatrixXd::Zero(n, n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) (i > j ? L(i, j) : U(i, j)) = store[i + static_cast<std::size_t>(j) * lda];
      const std::vector<int> perm = row_order(ipiv);
      Eigen::MatrixXd pa(n, n);
      for (int i = 0; i < n; ++i) pa.row(i) = a.row(perm[i]);
      const double u = std::ldexp(1.0, -53), gamma = n * u / (1 - n * u);
      const Eigen::MatrixXd bound = gamma * (L.cwiseAbs() * U.cwiseAbs());
      const Eigen::MatrixXd err = (L * U - pa).cwiseAbs();
      // the check's own product L U adds at most gamma_n |L| |U| again
      REQUIRE((err - 2 * bound).maxCoeff() <= 0);
      REQUIRE(L.cwiseAbs().maxCoeff() <= 1);  // partial pivoting's multipliers
      const Eigen::PartialPivLU<Eigen::MatrixXd> eigen(a);
      const Eigen::VectorXi& eigen_perm = eigen.permutationP().indices();
      for (int i = 0; i < n; ++i) REQUIRE(eigen_perm[perm[i]] == i);
    }
}

TEST_CASE("coop_lu_reference: info is the first zero pivot's column, and the factorization goes on", "[solver]") {
  const int n = 40;
  Eigen::MatrixXd a = uniform(n, 3);
  a.col(20).setZero();  // column 21 has a zero pivot; column 30 then too (a copy of column 29)
  a.col(30) = a.col(29);
  std::vector<int> ipiv(n);
  Eigen::MatrixXd f = a;
  REQUIRE(tcsolve::cpu::coop_lu_reference(f.data(), n, n, 16, ipiv.data()) == 21);
  REQUIRE(ipiv[20] == 21);  // no swap under a zero column
  REQUIRE(f(20, 20) == 0);
  Eigen::MatrixXd z = Eigen::MatrixXd::Zero(5, 5);
  REQUIRE(tcsolve::cpu::coop_lu_reference(z.data(), 5, 5, 32, ipiv.data()) == 1);
  for (int j = 0; j < 5; ++j) REQUIRE(ipiv[j] == j + 1);
}
