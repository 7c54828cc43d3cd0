// Devices and device memory of tcsolve::runtime, callable without CUDA headers: what the
// current device is (device_available, device_name, compute_capability, L2 size, free memory;
// each fact read once per device id, so asking on device 1 gives device 1's facts), the CUDA
// software versions, and device arrays (device_alloc and the copies behind DeviceBuffer, which
// records the device it was allocated on and frees there).
//
// Defined in runtime/src/cuda/device.cu; in a build without CUDA (runtime/src/cuda_stub/
// runtime_stub.cpp) there is no device: device_available() is false, device_name() says so,
// compute_capability() is 0, device_memory() and runtime_versions() are empty, device_free does
// nothing, and everything else throws tcsolve::Unavailable.
//
// All pointers named d_* are device memory. Work runs on the stream given (nullptr: the legacy
// default stream): copies to or from the host wait for their stream; device_synchronize waits
// for the whole (current) device.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/runtime/error.hpp"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace tcsolve::cuda {

// ---------------------------------------------------------------------------------------------
// Device facts (of the caller's current device)
// ---------------------------------------------------------------------------------------------

/// True when the build has CUDA and the current device has compute capability >= 7.0.
bool device_available();
/// "NVIDIA H100 80GB HBM3 (sm_90)" or "none".
std::string device_name();
/// Compute capability of the current device as 10 * major + minor (90 for sm_90); 0 when there
/// is no device. Never throws.
int compute_capability();
/// Size of the current device's L2 cache in bytes; throws CudaError when it cannot be read.
std::size_t l2_cache_bytes();
/// The caller's current CUDA device (cudaGetDevice); throws CudaError when there is none,
/// Unavailable without CUDA.
int current_device();
/// The device whose memory `p` points into (cudaPointerGetAttributes: device or managed memory),
/// or -1 for host memory (pageable or pinned) and nullptr; never throws (an unknown pointer is
/// -1). For the checks that a caller's device array lives on the device it is used on.
int pointer_device(const void* p) noexcept;

/// Versions of the CUDA software this process runs on ("13.0", "13.1.0.3"), each "none" when
/// the build has no CUDA or the library cannot tell (no driver).
struct RuntimeVersions {
  std::string runtime = "none", driver = "none", cublas = "none";
};
RuntimeVersions runtime_versions();
/// Free and total bytes of the current device's memory (cudaMemGetInfo); both 0 without a
/// usable device.
struct DeviceMemory {
  std::size_t free = 0, total = 0;
};
DeviceMemory device_memory();

// ---------------------------------------------------------------------------------------------
// Device memory
// ---------------------------------------------------------------------------------------------

/// cudaMalloc of `bytes` bytes on the current device (nullptr for 0); throws CudaError on failure.
void* device_alloc(std::size_t bytes);
/// cudaFree of d_ptr, allocated on `device`, which is made current for the call (then the
/// caller's again); nullptr is ignored. Never throws (errors are dropped: it runs in destructors).
void device_free(void* d_ptr, int device) noexcept;
/// Copies `bytes` bytes from host h_src to device d_dst, ordered on `stream`; returns when the
/// copy is done (h_src may then be reused).
void copy_to_device(void* d_dst, const void* h_src, std::size_t bytes, CUstream_st* stream = nullptr);
/// Copies `bytes` bytes from device d_src to host h_dst after the work enqueued on `stream`;
/// returns when the copy is done.
void copy_to_host(void* h_dst, const void* d_src, std::size_t bytes, CUstream_st* stream = nullptr);
/// Copies `bytes` bytes from device d_src to device d_dst, enqueued on `stream`.
void copy_device_to_device(void* d_dst, const void* d_src, std::size_t bytes, CUstream_st* stream = nullptr);
/// Sets `bytes` bytes of d_ptr to `value`, enqueued on `stream`.
void device_memset(void* d_ptr, int value, std::size_t bytes, CUstream_st* stream = nullptr);
/// Waits for all work on the current device; throws CudaError if a kernel failed.
void device_synchronize();

/// Owning, move-only array of `size()` elements of a trivially copyable T in device memory,
/// allocated on the device current when it was made (device()) and freed there.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Uninitialized device array of n elements on the current device.
  explicit DeviceBuffer(std::size_t n)
      : device_(n > 0 ? current_device() : 0), data_(static_cast<T*>(device_alloc(n * sizeof(T)))), size_(n) {}
  /// Device copy of the host vector.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { device_free(data_, device_); }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : device_(std::exchange(other.device_, 0)),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      device_free(data_, device_);
      device_ = std::exchange(other.device_, 0);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  /// The device the array lives on (0 for an empty buffer).
  int device() const { return device_; }

  /// Copies host[0..size()) to the device, ordered on `stream`; host.size() must equal size().
  void upload(const std::vector<T>& host, CUstream_st* stream = nullptr) {
    if (host.size() != size_) throw InvalidInput("DeviceBuffer::upload: size mismatch");
    copy_to_device(data_, host.data(), size_ * sizeof(T), stream);
  }
  /// Host copy of the whole array after the work enqueued on `stream`.
  std::vector<T> download(CUstream_st* stream = nullptr) const {
    std::vector<T> host(size_);
    copy_to_host(host.data(), data_, size_ * sizeof(T), stream);
    return host;
  }

 private:
  int device_ = 0;
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tcsolve::cuda
