// The FP64 LU on GPU members and its triangular solves (distributed_lu64_cuda.hpp says what they
// do): the steps of one block on one member, the broadcasts over NCCL.
#include "distributed_lu64_cuda.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "distributed_kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda {
namespace {

int panel_workspace(DeviceRun& run, double* a, int n, int w) {
  int lwork = 0;
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(run.dense(), n, w, a, n, &lwork));
  return std::max(lwork, 1);
}

}  // namespace

std::size_t lu64_workspace_bytes(int n, int nb) {
  const std::size_t w = static_cast<std::size_t>(std::min(nb, n)), m = static_cast<std::size_t>(n);
  // the panel, the pivots and info, the diagonal read back, dgetrf's workspace (at most a panel)
  return m * w * sizeof(double) + (m + 2) * sizeof(int) + m * sizeof(double) + m * w * sizeof(double);
}

int distributed_lu64(DeviceRun& run, runtime::Communicator& comm, DeviceFactors64& f) {
  const int n = f.n, nb = f.nb, q = f.member, lc = f.local;
  const CyclicMap& cols = f.cols;
  double* a = f.a.data();
  const std::size_t ld = static_cast<std::size_t>(n);
  const int w_max = std::min(nb, n);
  DeviceBuffer<double> panel(ld * w_max), work(static_cast<std::size_t>(panel_workspace(run, a, n, w_max)));
  DeviceBuffer<int> pivots(ld), info(1);
  cublasHandle_t blas = run.blas();
  cusolverDnHandle_t solver = run.dense();
  const double one = 1, minus_one = -1;
  for (int j = 0; j < n; j += nb) {
    const int w = std::min(nb, n - j), m = n - j, owner = cols.owner(j);
    const bool mine = owner == q;
    const int l0 = mine ? cols.local(j) : 0;
    if (mine) {
      double* p = a + j + static_cast<std::size_t>(l0) * ld;
      TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf(solver, m, w, p, n, work.data(), pivots.data() + j, info.data()));
      TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(panel.data(), static_cast<std::size_t>(m) * sizeof(double), p,
                                           ld * sizeof(double), static_cast<std::size_t>(m) * sizeof(double),
                                           static_cast<std::size_t>(w), cudaMemcpyDeviceToDevice, run.stream));
    }
    comm.broadcast(panel.data(), static_cast<std::size_t>(m) * w * sizeof(double), owner, run.stream);
    comm.broadcast(pivots.data() + j, static_cast<std::size_t>(w) * sizeof(int), owner, run.stream);
    const kernels::Columns skip = mine ? kernels::Columns{l0, l0 + w} : kernels::Columns{};
    kernels::swap_rows(run.stream, a, n, lc, skip, pivots.data() + j, j, w);
    const int c0 = cols.first_at_or_after(j + w, q), k = lc - c0;
    if (k <= 0 || j + w >= n) continue;
    double* u12 = a + j + static_cast<std::size_t>(c0) * ld;
    TCSOLVE_CUBLAS_CHECK(cublasDtrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, w,
                                     k, &one, panel.data(), m, u12, n));
    TCSOLVE_CUBLAS_CHECK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m - w, k, w, &minus_one, panel.data() + w, m,
                                     u12, n, &one, u12 + w, n));
  }
  // The permutation from the pivots (LAPACK's order), and this member's diagonal entries.
  const std::vector<int> ipiv = pivots.download(run.stream);
  f.perm_host.resize(ld);
  for (int i = 0; i < n; ++i) f.perm_host[static_cast<std::size_t>(i)] = i;
  for (int j = 0; j < n; j += nb)
    for (int i = 0; i < std::min(nb, n - j); ++i)
      std::swap(f.perm_host[static_cast<std::size_t>(j + i)], f.perm_host[static_cast<std::size_t>(ipiv[static_cast<std::size_t>(j + i)] - 1 + j)]);
  DeviceBuffer<double> diagonal(std::max<std::size_t>(ld, 1));
  std::vector<int> diagonal_at;  // the global column of each entry read
  for (int j = 0; j < n; j += nb) {
    if (cols.owner(j) != q) continue;
    const int w = std::min(nb, n - j);
    TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(diagonal.data() + diagonal_at.size(), sizeof(double),
                                         a + j + static_cast<std::size_t>(cols.local(j)) * ld, (ld + 1) * sizeof(double),
                                         sizeof(double), static_cast<std::size_t>(w), cudaMemcpyDeviceToDevice,
                                         run.stream));
    for (int i = 0; i < w; ++i) diagonal_at.push_back(j + i);
  }
  const std::vector<double> d = diagonal.download(run.stream);
  int zero = -1;
  for (std::size_t i = 0; i < diagonal_at.size(); ++i)
    if (d[i] == 0 || !std::isfinite(d[i])) {
      zero = diagonal_at[i];
      break;
    }
  // The first over the members: agreed.
  const double worst = comm.max(zero >= 0 ? static_cast<double>(n - zero) : 0.0, run.stream);
  return worst > 0 ? n - static_cast<int>(worst) : -1;
}

void solve_lu64(DeviceRun& run, runtime::Communicator& comm, const DeviceFactors64& f, double* v, bool transpose) {
  const int n = f.n, nb = f.nb;
  const std::size_t ld = static_cast<std::size_t>(n);
  cublasHandle_t blas = run.blas();
  const double one = 1, minus_one = -1;
  auto broadcast = [&](int from, int count, int root) {
    if (count > 0) comm.broadcast(v + from, static_cast<std::size_t>(count) * sizeof(double), root, run.stream);
  };
  // block j: its width, owner, and (on the owner) the column-major diagonal block's address
  auto at = [&](int row, int j) { return f.a.data() + row + static_cast<std::size_t>(f.cols.local(j)) * ld; };
  const int last = (n - 1) / nb * nb;
  if (!transpose) {
    for (int j = 0; j < n; j += nb) {  // L y = v: forward
      const int w = std::min(nb, n - j), owner = f.cols.owner(j), rest = n - j - w;
      if (owner == f.member) {
        TCSOLVE_CUBLAS_CHECK(cublasDtrsv(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, w, at(j, j), n,
                                         v + j, 1));
        if (rest > 0)
          TCSOLVE_CUBLAS_CHECK(cublasDgemv(blas, CUBLAS_OP_N, rest, w, &minus_one, at(j + w, j), n, v + j, 1, &one,
                                           v + j + w, 1));
      }
      broadcast(j, n - j, owner);
    }
    for (int j = last; j >= 0; j -= nb) {  // U x = y: backward
      const int w = std::min(nb, n - j), owner = f.cols.owner(j);
      if (owner == f.member) {
        TCSOLVE_CUBLAS_CHECK(cublasDtrsv(blas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, w, at(j, j),
                                         n, v + j, 1));
        if (j > 0)
          TCSOLVE_CUBLAS_CHECK(cublasDgemv(blas, CUBLAS_OP_N, j, w, &minus_one, at(0, j), n, v + j, 1, &one, v, 1));
      }
      broadcast(0, j + w, owner);
    }
    return;
  }
  for (int j = 0; j < n; j += nb) {  // U^T z = v: forward, each block from the solved ones above
    const int w = std::min(nb, n - j), owner = f.cols.owner(j);
    if (owner == f.member) {
      if (j > 0)
        TCSOLVE_CUBLAS_CHECK(cublasDgemv(blas, CUBLAS_OP_T, j, w, &minus_one, at(0, j), n, v, 1, &one, v + j, 1));
      TCSOLVE_CUBLAS_CHECK(cublasDtrsv(blas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, w, at(j, j), n,
                                       v + j, 1));
    }
    broadcast(j, w, owner);
  }
  for (int j = last; j >= 0; j -= nb) {  // L^T v = z: backward, each block from the solved ones below
    const int w = std::min(nb, n - j), owner = f.cols.owner(j), rest = n - j - w;
    if (owner == f.member) {
      if (rest > 0)
        TCSOLVE_CUBLAS_CHECK(cublasDgemv(blas, CUBLAS_OP_T, rest, w, &minus_one, at(j + w, j), n, v + j + w, 1, &one,
                                         v + j, 1));
      TCSOLVE_CUBLAS_CHECK(cublasDtrsv(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, w, at(j, j), n,
                                       v + j, 1));
    }
    broadcast(j, w, owner);
  }
}

}  // namespace tcsolve::cuda
