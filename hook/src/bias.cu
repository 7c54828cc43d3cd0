// cuBLASLt's bias epilogue for the drop-in: D(i, j) += bias[i] (FP32, after the product, as
// CUBLASLT_EPILOGUE_BIAS broadcasts the bias over the columns).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "product.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::hook {
namespace {

constexpr int kThreads = 256;

/// One thread per row, columns looped over gridDim.y.
__global__ void add_bias_kernel(int m, int n, const float* __restrict__ bias, float* __restrict__ d, int ldd) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= m) return;
  const float b = bias[i];
  for (int j = blockIdx.y; j < n; j += gridDim.y) {
    float& v = d[i + static_cast<std::size_t>(j) * ldd];
    v = __fadd_rn(v, b);
  }
}

}  // namespace

void add_bias(CUstream_st* stream, int m, int n, const float* bias, float* D, int ldd) {
  const dim3 grid(static_cast<unsigned>(ceil_div(m, kThreads)), static_cast<unsigned>(std::min(n, 65535)));
  add_bias_kernel<<<grid, kThreads, 0, stream>>>(m, n, bias, D, ldd);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::hook
