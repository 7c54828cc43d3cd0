// Per-device caches for the CUDA backend: facts and kernel attributes that hold for one device
// (cudaFuncSetAttribute is per device; compute capability and the kernels a build carries are
// facts of a device), kept per device id instead of once per process. A process-wide static
// configured on the device current at the first call leaves a second GPU unconfigured: a kernel
// launched there with more dynamic shared memory than the default fails (issue #32).
//
//   PerDeviceOnce      runs a configuration once per device (the caller's current device);
//   PerDevice<T>       computes a value once per device and returns it after.
//
// Both are thread-safe with a lock per device id: the work runs under its device's lock, so a
// second thread on the same device waits for the first, and a thread on another device never
// does. (The work is typically cudaFuncSetAttribute, whose first call for a kernel loads its
// module, and CUDA's lazy loading waits for the device's queued work: with one process-wide
// lock, GPU members on threads of one process hung, one member loading while its queue held a
// broadcast that waited for the other member, the other waiting for the lock: session 28.)
// They index by cudaGetDevice's id; when the configuration throws, nothing is recorded and the
// next call tries again. PerDeviceMap<K, V>: a value per (device, key). Only for code built
// with CUDA.
#pragma once

#if defined(TCSOLVE_HAVE_CUDA)

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tcsolve/runtime/device.hpp"

namespace tcsolve::detail {

/// Values of type V by key K, per device id, each computed on its first use on that device,
/// under that device's lock only.
template <typename K, typename V>
class PerDeviceMap {
 public:
  /// The value of `key` for the current device: compute() the first time (on that device), then
  /// cached.
  template <typename Compute>
  V get(const K& key, Compute compute) {
    Slot& s = slot(static_cast<std::size_t>(cuda::current_device()));
    const std::lock_guard<std::mutex> lock(s.mutex);
    const auto found = s.values.find(key);
    if (found != s.values.end()) return found->second;
    V v = compute();
    s.values.emplace(key, v);
    return v;
  }

 private:
  struct Slot {
    std::mutex mutex;
    std::map<K, V> values;
  };
  Slot& slot(std::size_t device) {
    const std::lock_guard<std::mutex> lock(slots_mutex_);  // held only to find the slot
    while (slots_.size() <= device) slots_.push_back(std::make_unique<Slot>());
    return *slots_[device];
  }
  std::mutex slots_mutex_;
  std::vector<std::unique_ptr<Slot>> slots_;  ///< by device id (stable addresses)
};

/// A value of type T per device id, computed by `compute` on its first use on that device.
template <typename T>
class PerDevice {
 public:
  /// The value for the current device: compute() the first time (on that device), then cached.
  template <typename Compute>
  T get(Compute compute) {
    return values_.get(0, compute);
  }

 private:
  PerDeviceMap<int, T> values_;
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
