// Per-device caches for the CUDA backend: facts and kernel attributes that hold for one device
// (cudaFuncSetAttribute is per device; compute capability and the kernels a build carries are
// facts of a device), kept per device id instead of once per process. A process-wide static
// configured on the device current at the first call leaves a second GPU unconfigured: a kernel
// launched there with more dynamic shared memory than the default fails (issue #32).
//
//   PerDeviceOnce      runs a configuration once per device (the caller's current device);
//   PerDevice<T>       computes a value once per device and returns it after.
//
// Both are thread-safe (a mutex per object; the work runs under it, so a second thread on the
// same device waits for the first) and index by cudaGetDevice's id; when the configuration
// throws, nothing is recorded and the next call tries again. Only for code built with CUDA.
#pragma once

#if defined(TCSOLVE_HAVE_CUDA)

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include "tcsolve/runtime/device.hpp"

namespace tcsolve::detail {

/// A value of type T per device id, computed by `compute` on its first use on that device.
template <typename T>
class PerDevice {
 public:
  /// The value for the current device: compute() the first time (on that device), then cached.
  template <typename Compute>
  T get(Compute compute) {
    const std::size_t device = static_cast<std::size_t>(cuda::current_device());
    const std::lock_guard<std::mutex> lock(mutex_);
    if (device >= values_.size()) values_.resize(device + 1);
    if (!values_[device]) values_[device] = compute();
    return *values_[device];
  }

 private:
  std::mutex mutex_;
  std::vector<std::optional<T>> values_;  ///< by device id
};

/// A configuration (kernel attributes) run once per device id.
class PerDeviceOnce {
 public:
  /// Runs configure() unless it already ran for the current device.
  template <typename Configure>
  void operator()(Configure configure) {
    done_.get([&] {
      configure();
      return true;
    });
  }

 private:
  PerDevice<bool> done_;
};

}  // namespace tcsolve::detail

#endif  // TCSOLVE_HAVE_CUDA
