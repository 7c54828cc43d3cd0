// The system on the device and its residual check (device_system.hpp).
#include "device_system.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <future>
#include <string>

#include "../input_checks.hpp"
#include "kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

DeviceSystem upload(const DeviceRun& run, const LinearSystem& sys, EqualRows rows) {
  DeviceSystem d;
  d.n = sys.n();
  d.nrhs = sys.nrhs();
  // The search first: it reads the host A beside the copies (3.4 ms at n = 2048 on a build
  // machine's core, where the copy takes 4.6 ms and the FP64 LU 5.5: started after the copy, the
  // solve waited for it)
  const Eigen::MatrixXd* a = &sys.A;  // the caller's: it outlives the solve
  if (rows == EqualRows::search)
    d.singular = std::async(std::launch::async, [a] { return detail::exact_singularity(*a); }).share();
  d.a = DeviceBuffer<double>(elements(d.n, d.n));
  d.b = DeviceBuffer<double>(elements(d.n, d.nrhs));
  copy_to_device(d.a.data(), sys.A.data(), d.a.size() * sizeof(double), run.stream);  // Eigen: column-major
  copy_to_device(d.b.data(), sys.b.data(), d.b.size() * sizeof(double), run.stream);
  for (Eigen::Index j = 0; j < sys.b.cols(); ++j) d.b_norm.push_back(sys.b.col(j).lpNorm<Eigen::Infinity>());
  return d;
}

ThreadStream::ThreadStream(int device) {
  TCSOLVE_CUDA_CHECK(cudaSetDevice(device));
  TCSOLVE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

ThreadStream::~ThreadStream() {
  if (stream_) cudaStreamDestroy(stream_);
}

void ThreadStream::after(CUevent_st* event) { TCSOLVE_CUDA_CHECK(cudaStreamWaitEvent(stream_, event, 0)); }

std::pair<std::vector<double>, std::vector<double>> ThreadStream::halves(const double* first, std::size_t count) {
  std::pair<std::vector<double>, std::vector<double>> out{std::vector<double>(count), std::vector<double>(count)};
  TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(out.first.data(), first, count * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  TCSOLVE_CUDA_CHECK(
      cudaMemcpyAsync(out.second.data(), first + count, count * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return out;
}

namespace {

/// The search for rows and columns of the device A equal up to sign and a power of two, on a
/// host thread: the sampled entries gathered on run's stream (after A's copy and checks), then
/// read back by the thread on a stream of its own once they are there, and whole lines fetched
/// the same way for the groups whose samples agree (rare). The thread holds the gathered
/// samples; A outlives it (DeviceSystem::singular is destroyed first and waits for it).
/// The most bytes of A the search reads back whole for its groups (see search_on_device).
constexpr double kWholeSearchBytes = 256.0 * 1024 * 1024;

std::shared_future<std::optional<std::string>> search_on_device(const DeviceRun& run, const DeviceSystem& d) {
  const int n = d.n;
  const std::vector<int> positions = detail::sample_positions(n);
  const int c = static_cast<int>(positions.size());
  struct Gathered {
    DeviceBuffer<int> positions;
    DeviceBuffer<double> samples;  ///< rows (c n), then columns (c n)
    cudaEvent_t ready = nullptr;
    ~Gathered() {
      if (ready) cudaEventDestroy(ready);
    }
  };
  auto g = std::make_shared<Gathered>();
  g->positions = DeviceBuffer<int>(positions.size());
  g->positions.upload(positions, run.stream);
  g->samples = DeviceBuffer<double>(2 * elements(n, c));
  kernels::gather_samples(run.stream, d.a.data(), n, g->positions.data(), c, g->samples.data(),
                          g->samples.data() + elements(n, c));
  TCSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&g->ready, cudaEventDisableTiming));
  TCSOLVE_CUDA_CHECK(cudaEventRecord(g->ready, run.stream));
  const double* a = d.a.data();
  const int device = run.ctx.device();
  return std::async(
             std::launch::async,
             [g, a, n, c, device]() -> std::optional<std::string> {
               ThreadStream thread_stream(device);
               thread_stream.after(g->ready);
               cudaStream_t own = thread_stream.get();
               const auto [rows, columns] = thread_stream.halves(g->samples.data(), elements(n, c));
               const std::size_t ld = static_cast<std::size_t>(n) * sizeof(double);
               // groups whose samples agree (a sparse A's, mostly): A read back whole when it is
               // at most kWholeSearchBytes, else line by line
               std::vector<double> copy;
               const detail::WholeMatrix whole = [&]() -> const double* {
                 if (static_cast<double>(ld) * n > kWholeSearchBytes) return nullptr;
                 copy.resize(elements(n, n));
                 TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(copy.data(), a, ld * static_cast<std::size_t>(n),
                                                    cudaMemcpyDeviceToHost, own));
                 TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(own));
                 return copy.data();
               };
               return detail::exact_singularity(
                   n, rows, columns, [&](bool row, int line, std::vector<double>& out) {
                     out.resize(static_cast<std::size_t>(n));
                     if (row)  // a(line, :): one double every n
                       TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(out.data(), sizeof(double), a + line, ld,
                                                            sizeof(double), static_cast<std::size_t>(n),
                                                            cudaMemcpyDeviceToHost, own));
                     else
                       TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(out.data(), a + static_cast<std::size_t>(line) * n,
                                                          ld, cudaMemcpyDeviceToHost, own));
                     TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(own));
                   },
                   whole);
             })
      .share();
}

}  // namespace

DeviceSystem upload(const DeviceRun& run, const DeviceSystemView& v, EqualRows search) {
  DeviceSystem d;
  d.n = v.n;
  d.nrhs = v.nrhs;
  const int n = v.n, k = v.nrhs;
  d.a = DeviceBuffer<double>(elements(n, n));
  d.b = DeviceBuffer<double>(elements(n, k));
  const double one = 1.0, zero = 0.0;
  if (v.row_major) {  // the stored data is A^T (B^T): transposed into column-major copies
    cublasHandle_t h = run.blas();
    TCSOLVE_CUBLAS_CHECK(cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, &one, v.A, v.lda, &zero, d.a.data(), n,
                                     d.a.data(), n));
    TCSOLVE_CUBLAS_CHECK(cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, n, k, &one, v.B, v.ldb, &zero, d.b.data(), n,
                                     d.b.data(), n));
  } else {
    const std::size_t width = static_cast<std::size_t>(n) * sizeof(double);
    TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(d.a.data(), width, v.A, static_cast<std::size_t>(v.lda) * sizeof(double),
                                         width, static_cast<std::size_t>(n), cudaMemcpyDeviceToDevice, run.stream));
    TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(d.b.data(), width, v.B, static_cast<std::size_t>(v.ldb) * sizeof(double),
                                         width, static_cast<std::size_t>(k), cudaMemcpyDeviceToDevice, run.stream));
  }
  // detail::check_system's checks, in its order, from n + n + nrhs numbers read back.
  DeviceBuffer<double> col_max(static_cast<std::size_t>(n)), b_max(static_cast<std::size_t>(k));
  DeviceBuffer<int> row_nonzero(static_cast<std::size_t>(n));
  kernels::column_max_abs(run.stream, d.a.data(), n, n, n, nullptr, col_max.data(), nullptr);
  kernels::column_max_abs(run.stream, d.b.data(), n, n, k, nullptr, b_max.data(), nullptr);
  kernels::mark_nonzero_rows(run.stream, d.a.data(), n, n, row_nonzero.data());
  const std::vector<double> cols = col_max.download(run.stream);
  d.b_norm = b_max.download(run.stream);
  const std::vector<int> rows = row_nonzero.download(run.stream);
  auto finite = [](const std::vector<double>& v) {
    for (const double x : v)
      if (!std::isfinite(x)) return false;
    return true;
  };
  if (!finite(cols) || !finite(d.b_norm)) throw InvalidInput("A or b has NaN or infinite entries");
  for (int j = 0; j < n; ++j)
    if (cols[static_cast<std::size_t>(j)] == 0)
      throw InvalidInput("matrix is exactly singular: column " + std::to_string(j + 1) + " (1-based) is zero");
  for (int i = 0; i < n; ++i)
    if (rows[static_cast<std::size_t>(i)] == 0)
      throw InvalidInput("matrix is exactly singular: row " + std::to_string(i + 1) + " (1-based) is zero");
  if (search == EqualRows::search) d.singular = search_on_device(run, d);
  return d;
}

detail::ScaledNorm safe_norm(double sum, const HostMatrix& A, bool rows) {
  if (std::isfinite(sum) && sum >= 0x1p-900 && sum <= 0x1p900) return detail::scaled_norm(sum);
  return rows ? detail::norm_inf(A()) : detail::norm_1(A());
}

detail::ScaledNorm norm_inf(const DeviceRun& run, const DeviceSystem& s, const HostMatrix& A) {
  DeviceBuffer<double> workspace(kernels::equilibrate_workspace_doubles(s.n));
  DeviceBuffer<double> norm(1);
  kernels::norm_inf(run.stream, s.a.data(), s.n, norm.data(), workspace.data());
  return safe_norm(norm.download(run.stream)[0], A, true);
}

detail::ScaledNorm norm_1(const DeviceRun& run, const DeviceBuffer<double>& col_sum, const HostMatrix& A) {
  return norm_1(run, col_sum.data(), static_cast<int>(col_sum.size()), A);
}

detail::ScaledNorm norm_1(const DeviceRun& run, const double* col_sum, int n, const HostMatrix& A) {
  std::vector<double> sums(static_cast<std::size_t>(n));
  copy_to_host(sums.data(), col_sum, sums.size() * sizeof(double), run.stream);
  double largest = 0;
  for (const double v : sums) largest = std::isnan(v) || v > largest ? v : largest;
  return safe_norm(largest, A, false);
}

static_assert(kernels::kSmallResidualMaxN == kResidualKernelMaxN, "residuals = kernel serves what small_residual takes");
static_assert(kernels::kSmallResidualMaxRhs == kResidualKernelMaxRhs, "and as many right-hand sides");

std::size_t DeviceChecker::residual_scratch_doubles(int n, int nrhs) {
  const bool served = n >= 1 && n <= kResidualKernelMaxN && nrhs >= 1 && nrhs <= kResidualKernelMaxRhs;
  return served ? kernels::small_residual_scratch_doubles(n, nrhs) : 0;
}

void DeviceChecker::enqueue(const double* x) {
  const int n = s_.n, k = s_.nrhs;
  if (residuals_for(run_.plan, n, k) == CudaLuPlan::Residuals::kernel) {
    if (scratch_ == nullptr) {
      own_scratch_ = DeviceBuffer<double>(residual_scratch_doubles(n, k));
      scratch_ = own_scratch_.data();
    }
    kernels::small_residual(run_.stream, s_.a.data(), n, s_.b.data(), x, r_, norms_, k, scratch_);
    return;
  }
  copy_device_to_device(r_, s_.b.data(), elements(n, k) * sizeof(double), run_.stream);
  const double minus_one = -1.0, one = 1.0;
  cublasHandle_t h = run_.blas();
  if (k == 1)
    TCSOLVE_CUBLAS_CHECK(cublasDgemv(h, CUBLAS_OP_N, n, n, &minus_one, s_.a.data(), n, x, 1, &one, r_, 1));
  else
    TCSOLVE_CUBLAS_CHECK(
        cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, k, n, &minus_one, s_.a.data(), n, x, n, &one, r_, n));
  kernels::column_max_abs(run_.stream, r_, n, n, k, nullptr, norms_, nullptr);
  kernels::column_max_abs(run_.stream, x, n, n, k, nullptr, norms_ + k, nullptr);
}

detail::Assessment DeviceChecker::assessment(const double* norms) const {
  const std::size_t k = static_cast<std::size_t>(s_.nrhs);
  const std::vector<double> r_norm(norms, norms + k), x_norm(norms + k, norms + 2 * k);
  return detail::assess_columns(r_norm, x_norm, s_.b_norm, norm_a_, s_.n);
}

detail::Assessment DeviceChecker::assess(const double* x) {
  enqueue(x);
  std::vector<double> norms(2 * static_cast<std::size_t>(s_.nrhs));
  copy_to_host(norms.data(), norms_, norms.size() * sizeof(double), run_.stream);
  return assessment(norms.data());
}

}  // namespace tcsolve::cuda
