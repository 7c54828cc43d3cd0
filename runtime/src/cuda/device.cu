// tcsolve::runtime on CUDA: device discovery (device_available, device_name, compute_capability,
// probed once per device id; l2_cache_bytes, current_device), the CUDA/cuBLAS versions and free
// memory, and the device memory helpers behind DeviceBuffer (device.hpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device.hpp"

namespace tcsolve::cuda {

namespace {

/// What one device is. Never throws: no driver, no device or a failing call all read as "no
/// device".
struct DeviceProbe {
  bool present = false;  ///< the properties could be read
  bool usable = false;   ///< present and compute capability >= 7.0
  int capability = 0;    ///< 10 * major + minor; 0 when not present
  std::string name = "none";
};

DeviceProbe probe_device(int device) noexcept {
  DeviceProbe probe;
  try {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
      cudaGetLastError();  // clear the (non-sticky) error the query left behind
      return probe;
    }
    probe.present = true;
    probe.usable = prop.major >= 7;
    probe.capability = 10 * prop.major + prop.minor;
    probe.name = std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
                 std::to_string(prop.minor) + (probe.usable ? ")" : ", below sm_70: unusable)");
  } catch (...) {  // std::bad_alloc from the strings: report no device rather than throw
    probe = DeviceProbe{};
  }
  return probe;
}

/// The probe of the caller's current device, made once per device id (the ids a process sees
/// are fixed, so the table is sized once and its entries stay put). Never throws.
const DeviceProbe& device_probe() noexcept {
  static const DeviceProbe none;
  int count = 0, device = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0 || cudaGetDevice(&device) != cudaSuccess ||
      device < 0 || device >= count) {
    cudaGetLastError();
    return none;
  }
  static std::mutex mutex;
  static std::vector<std::optional<DeviceProbe>> probes;  // by device id
  const std::lock_guard<std::mutex> lock(mutex);
  try {
    if (probes.empty()) probes.resize(static_cast<std::size_t>(count));
  } catch (...) {  // std::bad_alloc
    return none;
  }
  std::optional<DeviceProbe>& probe = probes[static_cast<std::size_t>(device)];
  if (!probe) probe.emplace(probe_device(device));
  return *probe;
}

}  // namespace

bool device_available() { return device_probe().usable; }

std::string device_name() { return device_probe().name; }

namespace {
/// CUDA's integer version 1000 * major + 10 * minor as "major.minor".
std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

RuntimeVersions runtime_versions() {
  RuntimeVersions out;
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess && v > 0) out.runtime = cuda_version_text(v);
  v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0) out.driver = cuda_version_text(v);
  cudaGetLastError();  // a missing driver leaves a (non-sticky) error behind
  // cublasGetProperty needs no handle, hence no device.
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    out.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  return out;
}

DeviceMemory device_memory() {
  DeviceMemory out;
  if (!device_available()) return out;
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return out;
  }
  out.free = free;
  out.total = total;
  return out;
}

int compute_capability() { return device_probe().capability; }

std::size_t l2_cache_bytes() {
  int bytes = 0;
  TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, current_device()));
  return static_cast<std::size_t>(bytes < 0 ? 0 : bytes);
}

int current_device() {
  int device = 0;
  TCSOLVE_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

int pointer_device(const void* p) noexcept {
  if (p == nullptr) return -1;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it
    return -1;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
}

void* device_alloc(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  TCSOLVE_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void device_free(void* d_ptr, int device) noexcept {  // errors dropped: called from destructors
  if (d_ptr == nullptr) return;
  int previous = device;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = device;
  const bool switched = previous != device && cudaSetDevice(device) == cudaSuccess;
  cudaFree(d_ptr);
  if (switched) cudaSetDevice(previous);
}

void copy_to_device(void* d_dst, const void* h_src, std::size_t bytes, CUstream_st* stream) {
  if (bytes == 0) return;
  TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, stream));
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream));  // h_src may be reused on return
}

void copy_to_host(void* h_dst, const void* d_src, std::size_t bytes, CUstream_st* stream) {
  if (bytes == 0) return;
  TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, stream));
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void copy_device_to_device(void* d_dst, const void* d_src, std::size_t bytes, CUstream_st* stream) {
  if (bytes == 0) return;
  TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, stream));
}

void device_memset(void* d_ptr, int value, std::size_t bytes, CUstream_st* stream) {
  if (bytes == 0) return;
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(d_ptr, value, bytes, stream));
}

void device_synchronize() { TCSOLVE_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace tcsolve::cuda
