// tcsolve::cuda::Context of a build with CUDA (context.hpp, context_impl.hpp): the handles, the
// workspaces, the SM count of the context's device and the stream sync; the settings and
// attachments are in ../context.cpp.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "tcsolve/runtime/context_impl.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda {

Scratch::~Scratch() {
  if (data_ != nullptr) cudaFree(data_);  // errors dropped: a destructor
}

void* Scratch::get(std::size_t bytes) {
  if (bytes > capacity_) {
    if (data_ != nullptr) TCSOLVE_CUDA_CHECK(cudaFree(data_));
    data_ = nullptr;
    capacity_ = 0;
    TCSOLVE_CUDA_CHECK(cudaMalloc(&data_, bytes));
    capacity_ = bytes;
  }
  return data_;
}

void* Context::Impl::take(Scratch& cached, std::size_t bytes) {
  if (workspaces == Context::Workspaces::cached) return cached.get(bytes);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  TCSOLVE_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  void* data = nullptr;
  call_workspaces_.reserve(call_workspaces_.size() + 1);  // no throw after the allocation
  if (pool != nullptr && capture == cudaStreamCaptureStatusNone)
    TCSOLVE_CUDA_CHECK(cudaMallocFromPoolAsync(&data, bytes, pool, stream));
  else  // a capture takes the graph's own memory from the current pool
    TCSOLVE_CUDA_CHECK(cudaMallocAsync(&data, bytes, stream));
  call_workspaces_.push_back(data);
  return data;
}

void Context::Impl::end_call() noexcept {
  for (void* data : call_workspaces_) cudaFreeAsync(data, stream);  // errors dropped: cleanup
  call_workspaces_.clear();
}

cublasHandle_t Context::Impl::blas() {
  if (blas_ == nullptr) {
    TCSOLVE_CUBLAS_CHECK(cublasCreate(&blas_));
    TCSOLVE_CUBLAS_CHECK(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
    TCSOLVE_CUBLAS_CHECK(cublasSetPointerMode(blas_, CUBLAS_POINTER_MODE_HOST));
    TCSOLVE_CUBLAS_CHECK(cublasSetStream(blas_, stream));
    blas_stream_ = stream;
  } else if (blas_stream_ != stream) {
    TCSOLVE_CUBLAS_CHECK(cublasSetStream(blas_, stream));
    blas_stream_ = stream;
  }
  return blas_;
}

int Context::Impl::sm_count() {
  if (sm_count_ == 0)
    TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
  return sm_count_;
}

Context::Impl::~Impl() {
  end_call();
  attachments.clear();  // they may use the handle below
  if (blas_ != nullptr) cublasDestroy(blas_);
}

Context::Context(CUstream_st* stream) : impl_(std::make_unique<Impl>()) {
  impl_->stream = stream;
  if (cudaGetDevice(&impl_->device) != cudaSuccess) {  // no device: 0, and no error left behind
    impl_->device = 0;
    cudaGetLastError();
  }
}
Context::~Context() = default;

void Context::synchronize() const { TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(impl_->stream)); }

}  // namespace tcsolve::cuda
