// The device guard of the CUDA backend: a Context is bound to the device that was current when it
// was made (Context::device()); every entry point that takes a context makes that device current
// for its duration and restores the caller's after, so that a context of device 1 serves a
// caller whose current device is 0 (as PyTorch's c10::cuda::CUDAGuard does). The runtime's
// current device is per thread: threads a call starts take the device too (blocked_lu.cpp).
// Only for code built with CUDA.
#pragma once

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::detail {

/// Makes `device` current for the guard's scope (nothing when it already is), then the
/// caller's again. Throws CudaError when there is no device or it cannot be made current.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    TCSOLVE_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) {
      TCSOLVE_CUDA_CHECK(cudaSetDevice(device));
      switched_ = true;
    }
  }
  ~DeviceGuard() {
    if (switched_) cudaSetDevice(previous_);  // errors dropped: a destructor
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace tcsolve::detail

#endif  // TCSOLVE_HAVE_CUDA
