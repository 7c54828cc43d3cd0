// FP64 LUs on the device (fp64_lu.hpp): fp64_lu_solve and DeviceFp64Lu.
#include "fp64_lu.hpp"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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

namespace {

/// The search for rows and columns of A equal up to sign and a power of two: the upload's
/// (DeviceSystem::singular, running beside the solve; for a system given on the device it reads
/// back sampled entries only), else on the host A (for a device-made A, a download: 8 GiB at n =
/// 32768 took 9.9 s in the condition estimate of session 31's beam solve).
std::optional<std::string> searched(const DeviceSystem& s, const HostMatrix& A) {
  const detail::SingularitySearch upload = singularity_search(s);
  return upload ? upload() : detail::exact_singularity(A());
}

}  // namespace

DeviceFp64Lu::DeviceFp64Lu(const DeviceRun& run, const HostMatrix& A, const DeviceSystem& s,
                           const DeviceLu& f, Search search)
    : run_(run), n_(s.n), store_cols_(std::max(s.nrhs, 2)) {
  if (search == Search::first)  // the upload's search where it started one (a device A is then never read back)
    if (const auto why = searched(s, A)) throw InvalidInput(*why);
  cusolverDnHandle_t solver = run.dense();
  const std::size_t n = static_cast<std::size_t>(n_), k = static_cast<std::size_t>(store_cols_);
  // the store, in doubles: lu (n^2), work (lwork), the diagonal and info (n + 1), rhs (n k),
  // norms (k), then the ints: ipiv (n), info (1), exponents (k)
  int lwork = 0;
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(solver, n_, n_, const_cast<double*>(s.a.data()), n_, &lwork));
  const std::size_t work = static_cast<std::size_t>(std::max(lwork, 1)), ints = n + 1 + k;
  store_ = DeviceBuffer<double>(n * n + work + (n + 1) + n * k + k + (ints + 1) / 2);
  lu_ = store_.data();
  work_ = lu_ + n * n;
  diagonal_ = work_ + work;
  rhs_ = diagonal_ + n + 1;
  norms_ = rhs_ + n * k;
  ipiv_ = reinterpret_cast<int*>(norms_ + k);
  info_ = ipiv_ + n;
  exponents_ = info_ + 1;
  kernels::scale_copy(run.stream, s.a.data(), n_, f.row_scale.data(), f.col_scale.data(), lu_);
  device_memset(info_, 0, sizeof(int), run.stream);
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf(solver, n_, n_, lu_, n_, work_, ipiv_, info_));
  // The diagonal of U (stride n + 1) and info after it, read back at once: a zero pivot (info >
  // 0), or a non-finite one (growth past DBL_MAX), is an exactly singular A to FP64.
  TCSOLVE_CUBLAS_CHECK(cublasDcopy(run.blas(), n_, lu_, n_ + 1, diagonal_, 1));
  copy_device_to_device(diagonal_ + n, info_, sizeof(int), run.stream);
  std::vector<double> d(n + 1);
  copy_to_host(d.data(), diagonal_, (n + 1) * sizeof(double), run.stream);
  int info = 0;
  std::memcpy(&info, &d[n], sizeof info);
  if (info < 0) throw CudaError("cusolverDnDgetrf: invalid argument " + std::to_string(-info));
  int bad = info > 0 ? info - 1 : -1;
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = std::abs(d[i]);
    if (bad < 0 && (!std::isfinite(v) || v == 0)) bad = static_cast<int>(i);
    low = std::min(low, v);
    high = std::max(high, v);
  }
  if (bad >= 0) {
    if (search == Search::on_failure)
      if (const auto why = searched(s, A)) throw InvalidInput(*why);
    throw InvalidInput(detail::zero_pivot_message(bad));
  }
  pivot_span_ = n_ > 0 ? high / low : 1;
}

double* DeviceFp64Lu::rhs(int cols) {
  if (cols <= store_cols_) return rhs_;
  const std::size_t count = elements(n_, cols);
  if (extra_.size() < count) extra_ = DeviceBuffer<double>(count);
  return extra_.data();
}

void DeviceFp64Lu::apply(const DeviceLu& f, const double* rhs, double* out, int cols) {
  if (cols > store_cols_) throw InvalidInput("DeviceFp64Lu::apply: more columns than the solve's");
  // k per column: ||R rhs||_inf = g 2^k, g in [1/2, 1) (0 for a zero or non-finite column)
  kernels::column_max_abs(run_.stream, rhs, n_, n_, cols, f.row_scale.data(), norms_, exponents_);
  kernels::scale_pow2(run_.stream, rhs, n_, cols, f.row_scale.data(), exponents_, -1, rhs_);
  TCSOLVE_CUSOLVER_CHECK(
      cusolverDnDgetrs(run_.dense(), CUBLAS_OP_N, n_, cols, lu_, n_, ipiv_, rhs_, n_, info_));
  kernels::scale_pow2(run_.stream, rhs_, n_, cols, f.col_scale.data(), exponents_, 1, out);
}

void DeviceFp64Lu::solve(Eigen::MatrixXd& w, bool transpose) {
  const int k = static_cast<int>(w.cols());
  double* r = rhs(k);
  copy_to_device(r, w.data(), static_cast<std::size_t>(w.size()) * sizeof(double), run_.stream);
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrs(run_.dense(), transpose ? CUBLAS_OP_T : CUBLAS_OP_N, n_, k, lu_, n_,
                                          ipiv_, r, n_, info_));
  copy_to_host(w.data(), r, static_cast<std::size_t>(w.size()) * sizeof(double), run_.stream);
}

}  // namespace tcsolve::cuda
