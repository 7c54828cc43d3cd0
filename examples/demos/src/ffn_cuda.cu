// cuda part of the FFN demo: the block's bias (+ GELU) kernel in FP32 and FP64, and the FP64
// product of the reference (cuBLAS DGEMM on an FP64 copy of the FP32 weights).
//
// bias_activation_kernel: one thread per row i (feature), looping over columns (tokens) j with
// a stride of gridDim.y, so the bias is read once per thread and each warp touches 32
// consecutive elements of a column (coalesced). The GELU is ffn.hpp's TCSOLVE_HOST_DEVICE
// function, the same code as the host loop.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "ffn_cuda.hpp"
#include "tcsolve/demos/ffn.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::demos::detail {
namespace {

constexpr int kBlock = 256;               ///< threads per block (rows per block of the bias kernel)
constexpr int kMaxGridY = 65535;          ///< CUDA's limit on gridDim.y; the column loop covers more
constexpr std::size_t kMaxBlocks = 8192;  ///< grid cap of the grid-stride widening kernel

template <typename T, bool kGelu>
__global__ void __launch_bounds__(kBlock)
    bias_activation_kernel(T* __restrict__ Z, const float* __restrict__ b, int rows, int cols) {
  const int i = blockIdx.x * kBlock + threadIdx.x;  // row (feature) of this thread
  if (i >= rows) return;
  const T bias = static_cast<T>(b[i]);
  for (int j = blockIdx.y; j < cols; j += gridDim.y) {  // columns (tokens)
    T& z = Z[static_cast<std::size_t>(j) * rows + i];
    if constexpr (kGelu)
      z = gelu(z + bias);
    else
      z = z + bias;
  }
}

__global__ void __launch_bounds__(kBlock)
    widen_kernel(const float* __restrict__ src, double* __restrict__ dst, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = static_cast<double>(src[i]);
}

template <typename T>
void launch_bias_activation(T* d_Z, const float* d_b, int rows, int cols, bool gelu) {
  if (rows <= 0 || cols <= 0) return;
  const dim3 grid(ceil_div(rows, kBlock), std::min(cols, kMaxGridY));
  if (gelu)
    bias_activation_kernel<T, true><<<grid, kBlock>>>(d_Z, d_b, rows, cols);
  else
    bias_activation_kernel<T, false><<<grid, kBlock>>>(d_Z, d_b, rows, cols);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

/// A cuBLAS handle for one call (the reference runs once per FfnBench).
class CublasHandle {
 public:
  CublasHandle() { TCSOLVE_CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace

void bias_activation(float* d_Z, const float* d_b, int rows, int cols, bool gelu) {
  launch_bias_activation(d_Z, d_b, rows, cols, gelu);
}

void bias_activation(double* d_Z, const float* d_b, int rows, int cols, bool gelu) {
  launch_bias_activation(d_Z, d_b, rows, cols, gelu);
}

void product_fp32_fp64(int m, int n, int k, const float* d_A, const double* d_B64, double* d_C64) {
  const std::size_t size_a = static_cast<std::size_t>(m) * k;
  cuda::DeviceBuffer<double> A64(size_a);
  const unsigned int blocks =
      static_cast<unsigned int>(std::min(ceil_div<std::size_t>(size_a, kBlock), kMaxBlocks));
  widen_kernel<<<blocks, kBlock>>>(d_A, A64.data(), size_a);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  const CublasHandle handle;  // default stream, so ordered after the widening kernel
  const double one = 1.0, zero = 0.0;
  TCSOLVE_CUBLAS_CHECK(cublasDgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A64.data(), m,
                                   d_B64, k, &zero, d_C64, m));
  cuda::device_synchronize();
}

}  // namespace tcsolve::demos::detail
