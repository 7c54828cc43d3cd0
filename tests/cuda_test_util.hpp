// Helpers of the [gpu] tests that work with streams (test_context_cuda.cpp, test_capi_cuda.cpp, the
// kernels' tests): the skip without a device, a non-blocking stream owned by a scope, random
// FP32 inputs, and the median device time of a launch (printed by tests, never asserted). CUDA
// builds only.
#pragma once

#include <cuda_runtime.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"

/// Returns from the test case with a warning when there is no usable CUDA device.
#define TCSOLVE_SKIP_WITHOUT_GPU(what)                                                  \
  if (!tcsolve::cuda::device_available()) {                                             \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                             \
  }

namespace tcsolve::test {

/// `count` floats uniform in [-1, 1) from std::mt19937(seed): a kernel test's inputs.
inline std::vector<float> random_floats(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

/// A non-blocking stream, destroyed at the end of the scope.
class Stream {
 public:
  Stream() { REQUIRE(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking) == cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// The median of `samples` device times (ms) of launch() on the default stream, each between two
/// events, after one untimed run; with `queue_first`, another launch() is queued before each
/// timed one, so that the events time the device and not the host's enqueueing.
template <class Launch>
double median_device_ms(Launch&& launch, int samples, bool queue_first) {
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  launch();
  std::vector<float> ms;
  for (int r = 0; r < samples; ++r) {
    if (queue_first) launch();
    cudaEventRecord(start, nullptr);
    launch();
    cudaEventRecord(stop, nullptr);
    cudaEventSynchronize(stop);
    float e = 0;
    cudaEventElapsedTime(&e, start, stop);
    ms.push_back(e);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace tcsolve::test
