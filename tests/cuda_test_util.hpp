// Helpers of the [gpu] tests that work with streams (test_context_cuda.cpp, test_capi_cuda.cpp):
// the skip without a device, and a non-blocking stream owned by a scope. CUDA builds only.
#pragma once

#include <cuda_runtime.h>

#include <catch2/catch.hpp>

#include "tcsolve/gemm/gemm.hpp"

/// Returns from the test case with a warning when there is no usable CUDA device.
#define TCSOLVE_SKIP_WITHOUT_GPU(what)                                                  \
  if (!tcsolve::cuda::device_available()) {                                             \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                             \
  }

namespace tcsolve::test {

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

}  // namespace tcsolve::test
