// cuda backend: C = beta C on the device (cuda::scale_matrix, cuda.hpp), BLAS's product with
// k = 0 or alpha = 0 (the C API and the hook), on the context's stream.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device_guard.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {
namespace {

constexpr int kThreads = 256;

/// C(i, j) = beta C(i, j) (beta == 0: 0, C not read), one thread per row, columns looped;
/// beta is *d_beta when that is not null (device pointer mode).
__global__ void scale_kernel(int m, int n, float beta, const float* d_beta, float* __restrict__ c, int ldc) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= m) return;
  if (d_beta != nullptr) beta = *d_beta;
  for (int j = blockIdx.y; j < n; j += gridDim.y) {
    float& v = c[i + static_cast<std::size_t>(j) * ldc];
    v = beta == 0.0f ? 0.0f : __fmul_rn(beta, v);
  }
}

void launch_scale(Context& ctx, int m, int n, float beta, const float* d_beta, float* d_C, int ldc) {
  if (m < 0 || n < 0 || ldc < std::max(1, m))
    throw InvalidInput("scale_matrix: m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                       ", ldc = " + std::to_string(ldc));
  if (m == 0 || n == 0 || (d_beta == nullptr && beta == 1.0f)) return;
  const tcsolve::detail::DeviceGuard on_device(ctx.device());
  const dim3 grid(static_cast<unsigned>(ceil_div(m, kThreads)), static_cast<unsigned>(std::min(n, 65535)));
  scale_kernel<<<grid, kThreads, 0, ctx.stream()>>>(m, n, beta, d_beta, d_C, ldc);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void scale_matrix(Context& ctx, int m, int n, float beta, float* d_C, int ldc) {
  launch_scale(ctx, m, n, beta, nullptr, d_C, ldc);
}

void scale_matrix(Context& ctx, int m, int n, const float* d_beta, float* d_C, int ldc) {
  if (d_beta == nullptr) throw InvalidInput("scale_matrix: the device beta is null");
  launch_scale(ctx, m, n, 1.0f, d_beta, d_C, ldc);
}

}  // namespace tcsolve::cuda
