// The cuda randsvd generator (generate.hpp, Backend::cuda): A = U diag(sigma) V^T formed on the
// device in FP64, the O(n^3) part of `tcsolve generate` for large n.
//
//   gaussians  G_U and G_V, n x n standard normal: Philox4x32-10 + Box-Muller
//              (random_kernels.cu, tcsolve/solver/philox.hpp), streams 0 and 1 under the seed;
//   QR         per factor: cusolverDnDgeqrf in place, diag(R) copied out (cublasDcopy with
//              stride n + 1), cusolverDnDorgqr forms Q in place;
//   Haar       U = Q_U S_U, V = Q_V S_V with S = diag(sign(diag(R))), sign(0) = +1 (Mezzadri
//              2007; the cpu path's rule), folded with sigma into one diagonal on the host:
//              A = Q_U diag(s_U sigma s_V) Q_V^T (the signs are exact);
//   product    cublasDdgmm (Q_U times that diagonal), then cublasDgemm (N, T) in FP64;
//   copy back  A to the host (column-major, Eigen's layout).
// Device memory: 3 n^2 doubles (G_U, G_V, the scaled Q_U; the product overwrites G_U) plus the
// cuSOLVER workspace: 6 GiB at n = 16384. Deterministic in the seed on one device model and
// library version (cuSOLVER's default deterministic mode; cuBLAS on one stream).
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "../solver_cuda.hpp"
#include "distributed_kernels.hpp"
#include "kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"

namespace tcsolve::cuda {
namespace {

std::size_t elements(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

/// Throws CudaError for a negative cuSOLVER info (an invalid argument); a positive one does not
/// occur in geqrf / orgqr.
void check_info(int info, const char* what) {
  if (info != 0)
    throw CudaError(std::string(what) + ": info = " + std::to_string(info) + " (argument " +
                    std::to_string(-info) + " invalid)");
}

}  // namespace

Eigen::MatrixXd randsvd_matrix(const Eigen::VectorXd& sigma, std::uint64_t seed) {
  require_device("the cuda randsvd generator");
  const int n = static_cast<int>(sigma.size());
  if (n < 1) throw InvalidInput("randsvd_matrix: empty sigma");
  const std::size_t nn = elements(n, n);
  Context ctx;  // for this call: handles made and destroyed here, work on the default stream
  const cudaStream_t stream = ctx.stream();
  SolverLibraries& libraries = SolverLibraries::of(ctx);
  cusolverDnHandle_t solver = libraries.dense(stream);
  cublasHandle_t h = libraries.blas(stream);

  DeviceBuffer<double> g(2 * nn);  // G_U then G_V, each n x n with leading dimension n
  DeviceBuffer<double> scaled(nn);
  double* q[2] = {g.data(), g.data() + nn};
  kernels::gaussian_fill(stream, q[0], nn, seed, 0);
  kernels::gaussian_fill(stream, q[1], nn, seed, 1);

  DeviceBuffer<double> tau(static_cast<std::size_t>(n));
  int lwork_qr = 0, lwork_q = 0;
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgeqrf_bufferSize(solver, n, n, q[0], n, &lwork_qr));
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDorgqr_bufferSize(solver, n, n, n, q[0], n, tau.data(), &lwork_q));
  const int lwork = std::max({lwork_qr, lwork_q, 1});
  DeviceBuffer<double> work(static_cast<std::size_t>(lwork));
  DeviceBuffer<int> info(4);  // geqrf and orgqr for U, then for V
  device_memset(info.data(), 0, info.size() * sizeof(int));
  DeviceBuffer<double> diag(2 * static_cast<std::size_t>(n));  // diag(R_U), diag(R_V)

  for (int f = 0; f < 2; ++f) {
    TCSOLVE_CUSOLVER_CHECK(
        cusolverDnDgeqrf(solver, n, n, q[f], n, tau.data(), work.data(), lwork, info.data() + 2 * f));
    // diag(R) before orgqr overwrites it: entries (j, j) are q[f][j (n + 1)].
    TCSOLVE_CUBLAS_CHECK(cublasDcopy(h, n, q[f], n + 1, diag.data() + elements(n, f), 1));
    TCSOLVE_CUSOLVER_CHECK(
        cusolverDnDorgqr(solver, n, n, n, q[f], n, tau.data(), work.data(), lwork, info.data() + 2 * f + 1));
  }
  const std::vector<int> infos = info.download();  // waits for the factorizations
  const char* names[4] = {"cusolverDnDgeqrf (U)", "cusolverDnDorgqr (U)", "cusolverDnDgeqrf (V)",
                          "cusolverDnDorgqr (V)"};
  for (int i = 0; i < 4; ++i) check_info(infos[static_cast<std::size_t>(i)], names[i]);

  // A = (Q_U S_U) diag(sigma) (Q_V S_V)^T = Q_U diag(s_U sigma s_V) Q_V^T.
  const std::vector<double> d = diag.download();
  std::vector<double> factor(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    const double su = d[static_cast<std::size_t>(j)] < 0 ? -1.0 : 1.0;
    const double sv = d[static_cast<std::size_t>(n + j)] < 0 ? -1.0 : 1.0;
    factor[static_cast<std::size_t>(j)] = su * sigma[j] * sv;
  }
  const DeviceBuffer<double> factor_d(factor);
  TCSOLVE_CUBLAS_CHECK(
      cublasDdgmm(h, CUBLAS_SIDE_RIGHT, n, n, q[0], n, factor_d.data(), 1, scaled.data(), n));  // Q_U diag
  const double one = 1.0, zero = 0.0;
  TCSOLVE_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, scaled.data(), n, q[1], n, &zero,
                                   q[0], n));  // A = (Q_U diag) Q_V^T, into G_U's storage
  Eigen::MatrixXd A(n, n);
  copy_to_host(A.data(), q[0], nn * sizeof(double));  // waits for the product
  return A;
}

}  // namespace tcsolve::cuda

namespace tcsolve {

void generate_random_device(int n, std::uint64_t seed, double* A, int lda, double* b, cuda::Context& context) {
  if (n < 1 || lda < n) throw InvalidInput("generate_random_device: n = " + std::to_string(n) + ", lda = " +
                                           std::to_string(lda));
  const Eigen::MatrixXd x = random_x_true(n, 1, seed);
  cuda::DeviceBuffer<double> xd(static_cast<std::size_t>(n));
  cuda::copy_to_device(xd.data(), x.data(), static_cast<std::size_t>(n) * sizeof(double), context.stream());
  cuda::kernels::random_columns(context.stream(), seed, n, n, 0, 1, n, A, lda);
  cuda::kernels::random_rhs(context.stream(), seed, n, xd.data(), b);
  context.synchronize();
}

}  // namespace tcsolve
