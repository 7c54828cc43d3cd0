// Generated test systems (docs/architecture.md, "Test inputs"): randsvd matrices with a prescribed
// 2-norm condition number and U(-1, 1) matrices; see generate.hpp for the definitions.
//
// randsvd (Higham's gallery('randsvd'), LAPACK xLATMS modes): A = U diag(sigma) V^T. U and V
// are Haar-distributed orthogonal matrices: Q of the QR factorization G = Q R of an n x n
// standard Gaussian matrix G, with the signs fixed, Q * diag(sign(diag(R))) (without the fix
// Q is not Haar: Householder QR makes diag(R) of one sign; Mezzadri, Notices AMS 54, 2007).
// The singular values of A are sigma exactly up to rounding in forming the product, so
// cond_2(A) = sigma_1 / sigma_n = cond to a relative error of order n u cond.
//
// Random mode: the whole-matrix stream here (n <= kWholeMatrixRandomOrder), the block stream in
// generate_blocks.cpp.
//
// Backends: cpu here (Eigen; the two factorizations on two threads and the product by column
// blocks on several, without changing a bit), cuda in cuda/generate_cuda.cpp (the matrix only;
// x_true and b = A x_true are formed here for both).
#include "tcsolve/solver/generate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "solver_cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/sampling.hpp"

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

/// Orders from which the cpu generator runs its two factorizations on two threads, and the
/// fewest columns of one block of the threaded product (well above Eigen's thresholds for its
/// coefficient-based and matrix-vector paths, so that every block is the same blocked GEMM).
constexpr int kThreadedOrder = 256;
constexpr int kMinBlockColumns = 128;

/// A Haar-distributed orthogonal matrix from the n x n Gaussian matrix G (consumed: factored in
/// place): Q * diag(sign(diag(R))) of G = Q R, sign(0) taken as +1.
Eigen::MatrixXd haar_orthogonal(Eigen::MatrixXd G) {
  const Eigen::HouseholderQR<Eigen::Ref<Eigen::MatrixXd>> qr(G);  // in place: R and the reflectors in G
  Eigen::MatrixXd Q = qr.householderQ();
  for (Eigen::Index j = 0; j < G.cols(); ++j)
    if (G(j, j) < 0) Q.col(j) = -Q.col(j);  // R(j, j) is G's diagonal now
  return Q;
}

/// U and V from their Gaussian matrices, on two threads when n >= kThreadedOrder (each
/// factorization is the same single-threaded Eigen code either way).
void haar_pair(Eigen::MatrixXd gu, Eigen::MatrixXd gv, Eigen::MatrixXd& U, Eigen::MatrixXd& V) {
  if (gu.rows() < kThreadedOrder) {
    U = haar_orthogonal(std::move(gu));
    V = haar_orthogonal(std::move(gv));
    return;
  }
  std::exception_ptr failure;
  std::thread other([&] {
    try {
      V = haar_orthogonal(std::move(gv));
    } catch (...) {
      failure = std::current_exception();
    }
  });
  try {
    U = haar_orthogonal(std::move(gu));
  } catch (...) {
    other.join();
    throw;
  }
  other.join();
  if (failure) std::rethrow_exception(failure);
}

/// A = L R^T (n x n) by blocks of columns, A(:, J) = L R(J, :)^T, on up to hardware_concurrency()
/// threads. Each block is an ordinary Eigen product whose inner dimension (n), and so its
/// blocking over it and the order of every sum, is the whole product's: the same bits as
/// `A.noalias() = L * R.transpose()` on one thread (checked bit for bit at n = 1024 and 2048).
void product_transposed(const Eigen::MatrixXd& L, const Eigen::MatrixXd& R, Eigen::MatrixXd& A) {
  const int n = static_cast<int>(L.rows());
  A.resize(n, n);
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const int blocks = std::max(1, std::min(static_cast<int>(hardware), n / kMinBlockColumns));
  if (blocks == 1) {
    A.noalias() = L * R.transpose();
    return;
  }
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(blocks));
  for (int k = 0, j0 = 0; k < blocks; ++k) {
    const int width = n / blocks + (k < n % blocks ? 1 : 0);
    threads.emplace_back([&, k, j0, width] {
      try {
        A.middleCols(j0, width).noalias() = L * R.middleRows(j0, width).transpose();
      } catch (...) {
        failures[static_cast<std::size_t>(k)] = std::current_exception();
      }
    });
    j0 += width;
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& f : failures)
    if (f) std::rethrow_exception(f);
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

Eigen::VectorXd randsvd_singular_values(int n, double cond, SpectrumMode mode) {
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

LinearSystem generate_system(int n, double cond, SpectrumMode mode, std::uint64_t seed, int nrhs,
                             Backend backend) {
  if (n < 1 || n > kMaxGeneratedOrder)
    throw InvalidInput("generated system: n must be in 1.." + std::to_string(kMaxGeneratedOrder) + ", got " +
                       std::to_string(n));
  if (!std::isfinite(cond) || !(cond >= 1))
    throw InvalidInput("generated system: the condition number must be finite and at least 1, got " +
                       format_cond(cond));
  if (nrhs < 1) throw InvalidInput("generated system: nrhs must be at least 1, got " + std::to_string(nrhs));

  const bool on_cuda = resolve_backend(backend) == Backend::cuda;  // cuda without a device: Unavailable
  if (mode == SpectrumMode::random && n > kWholeMatrixRandomOrder)
    return generate_random_system(n, seed, nrhs);  // the block stream (generate_blocks.cpp)
  std::mt19937_64 rng(seed);
  LinearSystem sys;
  if (mode == SpectrumMode::random) {  // whole-matrix stream, the same on both backends: O(n^2) on the host
    sys.A.resize(n, n);
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i) sys.A(i, j) = detail::uniform_pm1(rng);
    sys.description = "random: A ~ U(-1,1), n " + std::to_string(n) + ", seed " + std::to_string(seed) +
                      "; x ~ U(-1,1), b = A x (tcsolve generate)";
  } else {
    const Eigen::VectorXd sigma = randsvd_singular_values(n, cond, mode);
    std::string generator;
    if (on_cuda) {
      sys.A = cuda::randsvd_matrix(sigma, seed);
      generator = "cuda: Philox4x32-10 Gaussians, cuSOLVER QR, cuBLAS product";
    } else {
      // One generator, in this order: U's Gaussian matrix, V's (a spare Box-Muller value of U's
      // last pair starts V's), then x_true below.
      detail::Gaussian gauss;
      Eigen::MatrixXd gu(n, n), gv(n, n);
      for (Eigen::MatrixXd* g : {&gu, &gv})
        for (Eigen::Index j = 0; j < n; ++j)
          for (Eigen::Index i = 0; i < n; ++i) (*g)(i, j) = gauss(rng);
      Eigen::MatrixXd U, V;
      haar_pair(std::move(gu), std::move(gv), U, V);
      U = U * sigma.asDiagonal();  // column scaling, exact per entry as in (U diag(sigma)) V^T
      product_transposed(U, V, sys.A);
      generator = "cpu: mt19937_64 Gaussians, Eigen QR";
    }
    sys.description = "randsvd: A = U diag(sigma) V^T, n " + std::to_string(n) + ", cond " +
                      format_cond(cond) + ", " + std::string(to_string(mode)) + " spectrum, seed " +
                      std::to_string(seed) + "; x ~ U(-1,1), b = A x (tcsolve generate, backend " +
                      generator + ")";
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
