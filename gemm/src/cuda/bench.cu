// cuda backend: gemm-bench's device-side helpers (cuda.hpp): the CUDA-event stopwatch and the
// accuracy metrics of metrics.hpp computed by one reduction kernel, so that a 16384 x 16384
// result is compared with its FP64 reference without moving 3 GiB to the host.
// (reference_product_device lives in cublas_gemm.cu beside the FP64 DGEMM it shares.)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

// ---------------------------------------------------------------------------------------------
// EventTimer
// ---------------------------------------------------------------------------------------------

struct EventTimer::Impl {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {  // errors dropped: destructors do not throw
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
  }
};

EventTimer::EventTimer(CUstream_st* stream) : impl_(std::make_unique<Impl>()) {
  impl_->stream = stream;
  // impl_ is constructed before the body runs, so a failing second create still frees the first.
  TCSOLVE_CUDA_CHECK(cudaEventCreate(&impl_->start));
  TCSOLVE_CUDA_CHECK(cudaEventCreate(&impl_->stop));
}

EventTimer::~EventTimer() = default;
EventTimer::EventTimer(EventTimer&&) noexcept = default;
EventTimer& EventTimer::operator=(EventTimer&&) noexcept = default;

void EventTimer::start() {
  if (!impl_) throw Error("EventTimer::start on a moved-from timer");
  TCSOLVE_CUDA_CHECK(cudaEventRecord(impl_->start, impl_->stream));
}

float EventTimer::stop_ms() {
  stop();
  return elapsed_ms();
}

void EventTimer::stop() {
  if (!impl_) throw Error("EventTimer::stop on a moved-from timer");
  TCSOLVE_CUDA_CHECK(cudaEventRecord(impl_->stop, impl_->stream));
}

float EventTimer::elapsed_ms() {
  if (!impl_) throw Error("EventTimer::elapsed_ms on a moved-from timer");
  TCSOLVE_CUDA_CHECK(cudaEventSynchronize(impl_->stop));
  float ms = 0.0f;
  TCSOLVE_CUDA_CHECK(cudaEventElapsedTime(&ms, impl_->start, impl_->stop));
  return ms;
}

// ---------------------------------------------------------------------------------------------
// Accuracy metrics against the FP64 reference
// ---------------------------------------------------------------------------------------------

namespace {

constexpr int kThreads = 256;                ///< threads per block of the reduction
constexpr std::size_t kBlocks = 2048;        ///< grid cap; each block leaves one partial result
constexpr unsigned long long kNone = ~0ull;  ///< "no such entry" for the first_* indices

/// What one block saw of its share of the entries.
struct MetricPartial {
  double err2;                   ///< sum of (C - C64)^2
  double ref2;                   ///< sum of C64^2
  double max_rel;                ///< max |C - C64| / |C64| over C64 != 0 with a non-NaN difference
  unsigned long long first_nan;  ///< least column-major index with |C - C64| NaN, kNone if none
  unsigned long long first_inf;  ///< least index with C64 == 0 and C != C64 (not NaN), or kNone
};

/// Grid-stride over the m * n entries in column-major order (linear index = i + j * m, the
/// index into C64); (i, j) is advanced with the stride's quotient and remainder, no division
/// per entry. Each thread meets its indices in increasing order, so its first hit is its least.
__global__ void __launch_bounds__(kThreads)
    metrics_kernel(const float* __restrict__ C, int ldc, const double* __restrict__ C64, int m,
                   int n, MetricPartial* __restrict__ partials) {
  const std::size_t rows = static_cast<std::size_t>(m);
  const std::size_t total = rows * static_cast<std::size_t>(n);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  const std::size_t di = stride % rows, dj = stride / rows;
  std::size_t idx = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  std::size_t i = idx % rows, j = idx / rows;

  double err2 = 0, ref2 = 0, max_rel = 0;
  unsigned long long first_nan = kNone, first_inf = kNone;
  for (; idx < total; idx += stride) {
    const double ref = C64[idx];
    const double diff = static_cast<double>(C[i + j * static_cast<std::size_t>(ldc)]) - ref;
    const double d = fabs(diff);
    err2 += diff * diff;
    ref2 += ref * ref;
    if (isnan(d)) {
      if (first_nan == kNone) first_nan = idx;
    } else if (ref == 0) {
      if (d != 0 && first_inf == kNone) first_inf = idx;
    } else {
      max_rel = fmax(max_rel, d / fabs(ref));
    }
    i += di;
    j += dj;
    if (i >= rows) i -= rows, ++j;
  }

  __shared__ double s_err2[kThreads], s_ref2[kThreads], s_max[kThreads];
  __shared__ unsigned long long s_nan[kThreads], s_inf[kThreads];
  const int t = threadIdx.x;
  s_err2[t] = err2, s_ref2[t] = ref2, s_max[t] = max_rel, s_nan[t] = first_nan, s_inf[t] = first_inf;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (t < half) {
      s_err2[t] += s_err2[t + half];
      s_ref2[t] += s_ref2[t + half];
      s_max[t] = fmax(s_max[t], s_max[t + half]);
      s_nan[t] = min(s_nan[t], s_nan[t + half]);
      s_inf[t] = min(s_inf[t], s_inf[t + half]);
    }
    __syncthreads();
  }
  if (t == 0) partials[blockIdx.x] = MetricPartial{s_err2[0], s_ref2[0], s_max[0], s_nan[0], s_inf[0]};
}

}  // namespace

ErrorMetrics error_metrics_device(const float* d_C, int ldc, const double* d_C64, int m, int n,
                                  CUstream_st* stream) {
  if (m < 1 || n < 1 || ldc < m)
    throw InvalidInput("error_metrics_device: bad sizes m = " + std::to_string(m) + ", n = " +
                       std::to_string(n) + ", ldc = " + std::to_string(ldc));
  const std::size_t total = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  const std::size_t blocks = std::min(ceil_div<std::size_t>(total, kThreads), kBlocks);
  DeviceBuffer<MetricPartial> d_partials(blocks);
  metrics_kernel<<<static_cast<unsigned int>(blocks), kThreads, 0, stream>>>(d_C, ldc, d_C64, m, n,
                                                                              d_partials.data());
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  const std::vector<MetricPartial> partials = d_partials.download(stream);  // waits for the kernel

  double err2 = 0, ref2 = 0, max_rel = 0;
  unsigned long long first_nan = kNone, first_inf = kNone;
  for (const MetricPartial& p : partials) {
    err2 += p.err2;
    ref2 += p.ref2;
    max_rel = std::max(max_rel, p.max_rel);
    first_nan = std::min(first_nan, p.first_nan);
    first_inf = std::min(first_inf, p.first_inf);
  }
  ErrorMetrics r;
  r.relative_residual = std::sqrt(err2) / std::sqrt(ref2);
  // As max_relative_error() on the host, which stops at the first NaN or C64 == 0 != C entry.
  if (first_nan != kNone && first_nan < first_inf)
    r.max_relative_error = std::numeric_limits<double>::quiet_NaN();
  else if (first_inf != kNone)
    r.max_relative_error = std::numeric_limits<double>::infinity();
  else
    r.max_relative_error = max_rel;
  return r;
}

}  // namespace tcsolve::cuda
