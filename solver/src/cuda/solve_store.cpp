// The small systems' store of a context (solve_store.hpp).
#include "solve_store.hpp"

#include <cuda_runtime.h>

#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device.hpp"

namespace tcsolve::cuda {
namespace {
const char kStoreKey = 0;  ///< its address keys the attachment
}  // namespace

SolveStore& SolveStore::of(Context& ctx) {
  if (Context::Attachment* a = ctx.attachment(&kStoreKey)) return static_cast<SolveStore&>(*a);
  auto store = std::make_unique<SolveStore>();
  store->device_ = ctx.device();
  return static_cast<SolveStore&>(ctx.attach(&kStoreKey, std::move(store)));
}

SolveStore::~SolveStore() {  // errors dropped: a destructor
  device_free(device_data_, device_);
  if (host_data_ != nullptr) cudaFreeHost(host_data_);
}

void* SolveStore::device(std::size_t bytes) {
  if (bytes > device_bytes_) {
    device_free(device_data_, device_);  // waits for the device: only when growing
    device_data_ = nullptr;
    device_bytes_ = 0;
    device_data_ = device_alloc(bytes);
    device_bytes_ = bytes;
  }
  return device_data_;
}

void* SolveStore::host(std::size_t bytes) {
  if (bytes > host_bytes_) {
    if (host_data_ != nullptr) cudaFreeHost(host_data_);
    host_data_ = nullptr;
    host_bytes_ = 0;
    TCSOLVE_CUDA_CHECK(cudaMallocHost(&host_data_, bytes));
    host_bytes_ = bytes;
  }
  return host_data_;
}

void SolveStore::release_large() noexcept {
  if (device_bytes_ <= kSolveStoreKeepBytes) return;
  device_free(device_data_, device_);
  device_data_ = nullptr;
  device_bytes_ = 0;
}

}  // namespace tcsolve::cuda
