// Generated test systems (ARCHITECTURE.md, "Test inputs"): randsvd matrices with a prescribed
// 2-norm condition number and U(-1, 1) matrices; see generate.hpp for the definitions.
//
// randsvd (Higham's gallery('randsvd'), LAPACK xLATMS modes): A = U diag(sigma) V^T. U and V
// are Haar-distributed orthogonal matrices: Q of the QR factorization G = Q R of an n x n
// standard Gaussian matrix G, with the signs fixed, Q * diag(sign(diag(R))) (without the fix
// Q is not Haar: Householder QR makes diag(R) of one sign; Mezzadri, Notices AMS 54, 2007).
// The singular values of A are sigma exactly up to rounding in forming the product, so
// cond_2(A) = sigma_1 / sigma_n = cond to a relative error of order n u cond.
#include "tcsolve/solver/generate.hpp"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "sampling.hpp"
#include "tcsolve/gemm/error.hpp"

namespace tcsolve {
namespace {

struct ModeName {
  SpectrumMode mode;
  std::string_view name;
};
constexpr ModeName kModes[] = {{SpectrumMode::geometric, "geometric"},
                               {SpectrumMode::arithmetic, "arithmetic"},
                               {SpectrumMode::clustered, "clustered"},
                               {SpectrumMode::random, "random"}};

/// A Haar-distributed n x n orthogonal matrix from the Gaussians `gauss` draws from `rng`
/// (G filled column by column).
Eigen::MatrixXd haar_orthogonal(int n, std::mt19937_64& rng, detail::Gaussian& gauss) {
  Eigen::MatrixXd G(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) G(i, j) = gauss(rng);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
  Eigen::MatrixXd Q = qr.householderQ();
  const Eigen::MatrixXd& R = qr.matrixQR();  // R is its upper triangle
  for (Eigen::Index j = 0; j < n; ++j)
    if (R(j, j) < 0) Q.col(j) = -Q.col(j);  // Q * diag(sign(diag(R))); sign(0) taken as +1
  return Q;
}

/// sigma_1 = 1 >= ... >= sigma_n = 1/cond for the randsvd modes (generate.hpp).
Eigen::VectorXd singular_values(int n, double cond, SpectrumMode mode) {
  Eigen::VectorXd sigma = Eigen::VectorXd::Ones(n);
  if (n == 1) return sigma;
  for (int i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / (n - 1);  // (i - 1) / (n - 1) with 1-based i
    switch (mode) {
      case SpectrumMode::geometric:
        sigma(i) = std::pow(cond, -t);
        break;
      case SpectrumMode::arithmetic:
        sigma(i) = 1.0 - t * (1.0 - 1.0 / cond);
        break;
      case SpectrumMode::clustered:
        sigma(i) = 1.0;
        break;
      case SpectrumMode::random:
        break;
    }
  }
  sigma(n - 1) = 1.0 / cond;  // exactly, whatever pow and the subtraction rounded to
  return sigma;
}

std::string format_cond(double cond) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", cond);
  return buf;
}

}  // namespace

SpectrumMode parse_spectrum_mode(std::string_view name) {
  for (const ModeName& m : kModes)
    if (m.name == name) return m.mode;
  throw InvalidInput("unknown spectrum mode '" + std::string(name) +
                     "' (geometric, arithmetic, clustered or random)");
}

std::string_view to_string(SpectrumMode mode) {
  for (const ModeName& m : kModes)
    if (m.mode == mode) return m.name;
  return "unknown";
}

LinearSystem generate_system(int n, double cond, SpectrumMode mode, std::uint64_t seed, int nrhs) {
  if (n < 1 || n > kMaxGeneratedOrder)
    throw InvalidInput("generated system: n must be in 1.." + std::to_string(kMaxGeneratedOrder) + ", got " +
                       std::to_string(n));
  if (!std::isfinite(cond) || !(cond >= 1))
    throw InvalidInput("generated system: the condition number must be finite and at least 1, got " +
                       format_cond(cond));
  if (nrhs < 1) throw InvalidInput("generated system: nrhs must be at least 1, got " + std::to_string(nrhs));

  std::mt19937_64 rng(seed);
  LinearSystem sys;
  if (mode == SpectrumMode::random) {
    sys.A.resize(n, n);
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i) sys.A(i, j) = detail::uniform_pm1(rng);
    sys.description = "random: A ~ U(-1,1), n " + std::to_string(n) + ", seed " + std::to_string(seed) +
                      "; x ~ U(-1,1), b = A x (tcsolve generate)";
  } else {
    detail::Gaussian gauss;
    const Eigen::MatrixXd U = haar_orthogonal(n, rng, gauss);
    const Eigen::MatrixXd V = haar_orthogonal(n, rng, gauss);
    sys.A.noalias() = (U * singular_values(n, cond, mode).asDiagonal()) * V.transpose();
    sys.description = "randsvd: A = U diag(sigma) V^T, n " + std::to_string(n) + ", cond " +
                      format_cond(cond) + ", " + std::string(to_string(mode)) + " spectrum, seed " +
                      std::to_string(seed) + "; x ~ U(-1,1), b = A x (tcsolve generate)";
  }
  Eigen::MatrixXd x(n, nrhs);
  for (Eigen::Index j = 0; j < nrhs; ++j)
    for (Eigen::Index i = 0; i < n; ++i) x(i, j) = detail::uniform_pm1(rng);
  sys.b.noalias() = sys.A * x;
  sys.x_true = std::move(x);
  sys.b_is_vector = nrhs == 1;
  return sys;
}

}  // namespace tcsolve
