// FP64 LUs on the device (fp64_lu.hpp): fp64_lu_solve and DeviceFp64Lu (its arrays carved out of
// one store: its own allocation, or the small systems' SolveStore).
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
#include "solve_store.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

static_assert(kernels::kLuApplyMaxN == kFp64SolveKernelMaxN, "fp64_solves = kernel serves what lu_apply takes");
static_assert(kernels::kMaxPermutationN == kFp64SolveTrsmMaxN, "fp64_solves = trsm serves what the permutation takes");

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

namespace {

/// The store's arrays for order n, `cols` right-hand sides and dgetrf's lwork (Carver's order).
struct Fp64LuLayout {
  double *lu, *work, *diagonal, *rhs, *norms;
  int *ipiv, *info, *exponents, *perm;
  Fp64LuLayout(Carver& c, int n, int cols, int lwork) {
    const std::size_t m = static_cast<std::size_t>(n), k = static_cast<std::size_t>(cols);
    info = c.take<int>(1);  // first, then lu: DeviceFp64Lu::info_of, factors_of
    lu = c.take<double>(m * m);
    work = c.take<double>(static_cast<std::size_t>(std::max(lwork, 1)));
    diagonal = c.take<double>(m + 1);
    rhs = c.take<double>(m * k);
    norms = c.take<double>(k);
    ipiv = c.take<int>(m);
    exponents = c.take<int>(k);
    perm = c.take<int>(m);
  }
};

int getrf_lwork(const DeviceRun& run, const DeviceSystem& s) {
  int lwork = 0;
  TCSOLVE_CUSOLVER_CHECK(
      cusolverDnDgetrf_bufferSize(run.dense(), s.n, s.n, const_cast<double*>(s.a.data()), s.n, &lwork));
  return lwork;
}

int store_columns(const DeviceSystem& s) { return std::max(s.nrhs, 2); }

}  // namespace

int* DeviceFp64Lu::info_of(void* store) { return static_cast<int*>(store); }

double* DeviceFp64Lu::factors_of(void* store) {
  Carver c(store);
  (void)c.take<int>(1);
  return c.take<double>(0);
}

int DeviceFp64Lu::workspace_size(const DeviceRun& run, const DeviceSystem& s) { return getrf_lwork(run, s); }

std::size_t DeviceFp64Lu::store_bytes(const DeviceSystem& s, int lwork) {
  Carver count;
  Fp64LuLayout(count, s.n, store_columns(s), lwork);
  return count.bytes();
}

DeviceFp64Lu::DeviceFp64Lu(const DeviceRun& run, const HostMatrix& A, const DeviceSystem& s, DeviceScales scales,
                           Search search, Placement placement)
    : run_(run), s_(s), a_(A), search_(search), n_(s.n), scales_(scales), store_cols_(store_columns(s)) {
  if (search == Search::first)  // the upload's search where it started one (a device A is then never read back)
    if (const auto why = searched(s, A)) throw InvalidInput(*why);
  const int lwork = placement.lwork >= 0 ? placement.lwork : getrf_lwork(run, s);
  if (placement.store == nullptr) {
    own_ = DeviceBuffer<char>(store_bytes(s, lwork));
    placement.store = own_.data();
  }
  Carver carve(placement.store);
  const Fp64LuLayout at(carve, n_, store_cols_, lwork);
  lu_ = at.lu;
  work_ = at.work;
  diagonal_ = placement.diagonal != nullptr ? placement.diagonal : at.diagonal;
  rhs_ = at.rhs;
  norms_ = at.norms;
  ipiv_ = at.ipiv;
  info_ = at.info;
  exponents_ = at.exponents;
  perm_ = at.perm;
  const std::size_t n = static_cast<std::size_t>(n_);
  solves_ = fp64_solves_for(run.plan, n_);
  if (!placement.prepared) {
    kernels::scale_copy(run.stream, s.a.data(), n_, scales.row, scales.col, lu_);
    device_memset(info_, 0, sizeof(int), run.stream);
  }
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf(run.dense(), n_, n_, lu_, n_, work_, ipiv_, info_));
  if (solves_ == CudaLuPlan::Fp64Solves::trsm) kernels::pivots_to_permutation(run.stream, ipiv_, n_, perm_);
  // The diagonal of U (stride n + 1) and info after it, read back at once: a zero pivot (info >
  // 0), or a non-finite one (growth past DBL_MAX), is an exactly singular A to FP64. Deferred
  // with the kernel's solves, the first apply() writes them (one launch fewer).
  if (placement.deferred && solves_ == CudaLuPlan::Fp64Solves::kernel) {
    diagonal_owed_ = true;
    return;
  }
  TCSOLVE_CUBLAS_CHECK(cublasDcopy(run.blas(), n_, lu_, n_ + 1, diagonal_, 1));
  copy_device_to_device(diagonal_ + n, info_, sizeof(int), run.stream);
  if (placement.deferred) return;
  std::vector<double> d(n + 1);
  copy_to_host(d.data(), diagonal_, (n + 1) * sizeof(double), run.stream);
  check_pivots(d.data());
}

void DeviceFp64Lu::check_pivots(const double* d) {
  const std::size_t n = static_cast<std::size_t>(n_);
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
    if (search_ == Search::on_failure)
      if (const auto why = searched(s_, a_)) throw InvalidInput(*why);
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

void DeviceFp64Lu::apply(const double* rhs, double* out, int cols) {
  if (solves_ == CudaLuPlan::Fp64Solves::kernel) {
    kernels::lu_apply(run_.stream, lu_, n_, ipiv_, scales_.row, scales_.col, rhs, cols, out,
                      diagonal_owed_ ? diagonal_ : nullptr, info_);
    diagonal_owed_ = false;
    return;
  }
  if (cols > store_cols_) throw InvalidInput("DeviceFp64Lu::apply: more columns than the solve's");
  // k per column: ||R rhs||_inf = g 2^k, g in [1/2, 1) (0 for a zero or non-finite column)
  kernels::column_max_abs(run_.stream, rhs, n_, n_, cols, scales_.row, norms_, exponents_);
  if (solves_ == CudaLuPlan::Fp64Solves::trsm) {  // P (R rhs) 2^-k, then L and U by cuBLAS
    kernels::scale_pow2_permuted(run_.stream, rhs, n_, cols, scales_.row, perm_, exponents_, -1, rhs_);
    const double one = 1;
    TCSOLVE_CUBLAS_CHECK(cublasDtrsm(run_.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_UNIT, n_, cols, &one, lu_, n_, rhs_, n_));
    TCSOLVE_CUBLAS_CHECK(cublasDtrsm(run_.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_NON_UNIT, n_, cols, &one, lu_, n_, rhs_, n_));
    kernels::scale_pow2(run_.stream, rhs_, n_, cols, scales_.col, exponents_, 1, out);
    return;
  }
  kernels::scale_pow2(run_.stream, rhs, n_, cols, scales_.row, exponents_, -1, rhs_);
  TCSOLVE_CUSOLVER_CHECK(
      cusolverDnDgetrs(run_.dense(), CUBLAS_OP_N, n_, cols, lu_, n_, ipiv_, rhs_, n_, info_));
  kernels::scale_pow2(run_.stream, rhs_, n_, cols, scales_.col, exponents_, 1, out);
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
