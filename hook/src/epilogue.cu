// cuBLASLt's epilogues for the drop-in, after the product: D = activation(D + bias) on every
// member of the batch in one kernel (BIAS broadcasts the bias over the columns, as
// CUBLASLT_EPILOGUE_BIAS does; the activations are activation.hpp's).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "activation.hpp"
#include "product.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::hook {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGridYZ = 65535;  // CUDA's bound on gridDim.y and gridDim.z

struct EpilogueParams {
  int m = 0, n = 0, batch = 0;
  float* d = nullptr;  ///< member b's output: d + b stride_d, or d_array[b]
  int ldd = 0;
  long long stride_d = 0;
  float* const* d_array = nullptr;
  const float* bias = nullptr;  ///< member b's: bias + b stride_bias; nullptr: none
  long long stride_bias = 0;
  Activation activation = Activation::none;
};

constexpr int kColumns = 8;  ///< columns per thread: their loads in flight together

/// One thread per row i (blockIdx.x) and group of kColumns columns (blockIdx.y, looped over
/// gridDim.y), the members looped over gridDim.z. A thread issues its group's loads before
/// its first store (one column per block was bound by the blocks' launch rate: 20 us for 768
/// x 4096 on an H200, session 30).
__global__ void epilogue_kernel(EpilogueParams p) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= p.m) return;
  const int groups = ceil_div(p.n, kColumns);
  for (int b = blockIdx.z; b < p.batch; b += gridDim.z) {
    float* d = p.d_array != nullptr ? p.d_array[b] : p.d + b * p.stride_d;
    const float bias = p.bias != nullptr ? p.bias[i + b * p.stride_bias] : 0.0f;
    for (int group = blockIdx.y; group < groups; group += gridDim.y) {
      const int j0 = group * kColumns, count = min(kColumns, p.n - j0);
      float v[kColumns];
#pragma unroll
      for (int c = 0; c < kColumns; ++c)
        if (c < count) v[c] = d[i + static_cast<std::size_t>(j0 + c) * p.ldd];
#pragma unroll
      for (int c = 0; c < kColumns; ++c)
        if (c < count)
          d[i + static_cast<std::size_t>(j0 + c) * p.ldd] =
              activate(p.activation, p.bias != nullptr ? __fadd_rn(v[c], bias) : v[c]);
    }
  }
}

}  // namespace

void apply_epilogue(CUstream_st* stream, const Operands& o) {
  EpilogueParams p;
  p.m = o.m, p.n = o.n, p.batch = o.batch;
  p.d = o.C, p.ldd = o.ldc, p.stride_d = o.stride_c, p.d_array = o.c_array;
  p.bias = o.bias, p.stride_bias = o.stride_bias;
  p.activation = o.activation;
  const dim3 grid(static_cast<unsigned>(ceil_div(o.m, kThreads)),
                  static_cast<unsigned>(std::min(ceil_div(o.n, kColumns), kMaxGridYZ)),
                  static_cast<unsigned>(std::min(o.batch, kMaxGridYZ)));
  epilogue_kernel<<<grid, kThreads, 0, stream>>>(p);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::hook
