// FP64 LUs on the device (fp64_lu.hpp): fp64_lu_solve and DeviceFp64Lu.
#include "fp64_lu.hpp"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../host_clock.hpp"
#include "../input_checks.hpp"
#include "kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

Fp64Solve fp64_lu_solve(const DeviceRun& run, const DeviceSystem& s, double* x, bool timed) {
  const int n = s.n;
  cusolverDnHandle_t solver = run.dense();
  DeviceBuffer<double> lu(elements(n, n));
  copy_device_to_device(lu.data(), s.a.data(), lu.size() * sizeof(double), run.stream);
  int lwork = 0;
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(solver, n, n, lu.data(), n, &lwork));
  DeviceBuffer<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
  DeviceBuffer<int> ipiv(static_cast<std::size_t>(n));
  DeviceBuffer<int> info(2);
  device_memset(info.data(), 0, 2 * sizeof(int), run.stream);
  copy_device_to_device(x, s.b.data(), s.b.size() * sizeof(double), run.stream);
  Fp64Solve out;
  if (timed) run.synchronize();
  const auto t_start = Clock::now();
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf(solver, n, n, lu.data(), n, work.data(), ipiv.data(), info.data()));
  if (timed) run.synchronize();
  const auto t_factored = Clock::now();
  TCSOLVE_CUSOLVER_CHECK(
      cusolverDnDgetrs(solver, CUBLAS_OP_N, n, s.nrhs, lu.data(), n, ipiv.data(), x, n, info.data() + 1));
  const std::vector<int> infos = info.download(run.stream);  // waits for dgetrs
  const auto t_end = Clock::now();
  if (infos[0] < 0 || infos[1] < 0)
    throw CudaError("cusolverDnDgetrf/getrs: invalid argument " +
                    std::to_string(-std::min(infos[0], infos[1])));
  out.info = infos[0];
  if (timed) {
    out.factorization_s = seconds(t_start, t_factored);
    out.solve_s = seconds(t_factored, t_end);
  }
  return out;
}

DeviceFp64Lu::DeviceFp64Lu(const DeviceRun& run, const HostMatrix& A, const DeviceSystem& s, const DeviceLu& f)
    : run_(run), n_(s.n), lu_(elements(s.n, s.n)), ipiv_(static_cast<std::size_t>(s.n)), info_(1) {
  if (const auto why = detail::exact_singularity(A())) throw InvalidInput(*why);
  kernels::scale_copy(run.stream, s.a.data(), n_, f.row_scale.data(), f.col_scale.data(), lu_.data());
  cusolverDnHandle_t solver = run.dense();
  int lwork = 0;
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(solver, n_, n_, lu_.data(), n_, &lwork));
  DeviceBuffer<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
  device_memset(info_.data(), 0, sizeof(int), run.stream);
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf(solver, n_, n_, lu_.data(), n_, work.data(), ipiv_.data(), info_.data()));
  // The diagonal of U (stride n + 1), read back with the info: a zero pivot (info > 0), or a
  // non-finite one (growth past DBL_MAX), is an exactly singular A to FP64.
  DeviceBuffer<double> diagonal(static_cast<std::size_t>(n_));
  TCSOLVE_CUBLAS_CHECK(cublasDcopy(run.blas(), n_, lu_.data(), n_ + 1, diagonal.data(), 1));
  const int info = info_.download(run.stream)[0];
  if (info < 0) throw CudaError("cusolverDnDgetrf: invalid argument " + std::to_string(-info));
  if (info > 0) throw InvalidInput(detail::zero_pivot_message(info - 1));
  const std::vector<double> d = diagonal.download(run.stream);
  for (int i = 0; i < n_; ++i)
    if (!std::isfinite(d[static_cast<std::size_t>(i)]) || d[static_cast<std::size_t>(i)] == 0)
      throw InvalidInput(detail::zero_pivot_message(i));
}

void DeviceFp64Lu::solve(Eigen::MatrixXd& w, bool transpose) {
  const int k = static_cast<int>(w.cols());
  if (rhs_.size() < static_cast<std::size_t>(w.size()))
    rhs_ = DeviceBuffer<double>(static_cast<std::size_t>(w.size()));
  copy_to_device(rhs_.data(), w.data(), static_cast<std::size_t>(w.size()) * sizeof(double), run_.stream);
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrs(run_.dense(), transpose ? CUBLAS_OP_T : CUBLAS_OP_N, n_, k, lu_.data(),
                                          n_, ipiv_.data(), rhs_.data(), n_, info_.data()));
  copy_to_host(w.data(), rhs_.data(), static_cast<std::size_t>(w.size()) * sizeof(double), run_.stream);
}

}  // namespace tcsolve::cuda
