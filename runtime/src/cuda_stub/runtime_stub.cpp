// tcsolve::runtime in a build without CUDA (ginkgo-style stub): a Context can be made and set up
// but not synchronized, there is no device (device_available() false, compute_capability() 0,
// empty versions and memory), and everything that would touch a device throws
// tcsolve::Unavailable.
#include <cstddef>
#include <memory>
#include <string>

#include "context_impl.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

namespace {
[[noreturn]] void not_built() { throw Unavailable("tcsolve was built without CUDA"); }
}  // namespace

Context::Context(CUstream_st* stream) : impl_(std::make_unique<Impl>()) { impl_->stream = stream; }
Context::~Context() = default;
void Context::synchronize() const { not_built(); }

bool device_available() { return false; }

std::string device_name() { return "none (built without CUDA)"; }

int compute_capability() { return 0; }

std::size_t l2_cache_bytes() { not_built(); }

int current_device() { not_built(); }
int pointer_device(const void*) noexcept { return -1; }

RuntimeVersions runtime_versions() { return {}; }

DeviceMemory device_memory() { return {}; }

void* device_alloc(std::size_t) { not_built(); }

// Nothing can have been allocated without CUDA: freeing (nullptr, from a DeviceBuffer's
// destructor) is a no-op, as cudaFree(nullptr) is.
void device_free(void*, int) noexcept {}

void copy_to_device(void*, const void*, std::size_t, CUstream_st*) { not_built(); }

void copy_to_host(void*, const void*, std::size_t, CUstream_st*) { not_built(); }

void copy_device_to_device(void*, const void*, std::size_t, CUstream_st*) { not_built(); }

void device_memset(void*, int, std::size_t, CUstream_st*) { not_built(); }

void device_synchronize() { not_built(); }

}  // namespace tcsolve::cuda
