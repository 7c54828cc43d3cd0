// The random mode's system made on the device (distributed_kernels.hpp: random_columns,
// random_rhs): A ~ U(-1, 1) and b = A x_true from the counter-based Philox of generate.hpp's
// block mode, so that a member makes its own columns, and every member all of b, with the bits
// the host generator writes to a file.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "distributed_kernels.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/solver/philox.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::uint32_t kStreamA = 2;  // generate_blocks.cpp's

__device__ double element(std::uint64_t seed, std::uint64_t index) {
  const philox::UniformPair u = philox::uniform_pair(seed, kStreamA, index / 2);
  return index % 2 == 0 ? u.first : u.second;
}

__global__ void columns_kernel(std::uint64_t seed, int n, int nb, int q, int q_count, int cols, double* a, int lda) {
  for (int l = blockIdx.y; l < cols; l += gridDim.y) {  // gridDim.y <= 65535: columns in strides
    const std::uint64_t g =
        static_cast<std::uint64_t>(l / nb) * q_count * nb + static_cast<std::uint64_t>(q) * nb + l % nb;
    for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads)
      a[static_cast<std::size_t>(l) * lda + i] = element(seed, static_cast<std::uint64_t>(i) * n + g);
  }
}

__global__ void rhs_kernel(std::uint64_t seed, int n, const double* __restrict__ x, double* b) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  const std::uint64_t row = static_cast<std::uint64_t>(i) * n;
  double sum = 0;
  int j = 0;
  if (row % 2 == 1) {  // the row starts with the second of a pair
    sum = __dadd_rn(sum, __dmul_rn(philox::uniform_pair(seed, kStreamA, row / 2).second, x[0]));
    j = 1;
  }
  for (; j + 1 < n; j += 2) {
    const philox::UniformPair u = philox::uniform_pair(seed, kStreamA, (row + j) / 2);
    sum = __dadd_rn(sum, __dmul_rn(u.first, x[j]));
    sum = __dadd_rn(sum, __dmul_rn(u.second, x[j + 1]));
  }
  if (j < n) sum = __dadd_rn(sum, __dmul_rn(philox::uniform_pair(seed, kStreamA, (row + j) / 2).first, x[j]));
  b[i] = sum;
}

}  // namespace

void random_columns(CUstream_st* stream, std::uint64_t seed, int n, int nb, int q, int q_count, int cols, double* a,
                    int lda) {
  if (cols < 1 || n < 1) return;
  const dim3 grid(std::min(64, (n + kThreads - 1) / kThreads), static_cast<unsigned>(std::min(cols, 65535)));
  columns_kernel<<<grid, kThreads, 0, stream>>>(seed, n, nb, q, q_count, cols, a, lda);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void random_rhs(CUstream_st* stream, std::uint64_t seed, int n, const double* x, double* b) {
  rhs_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(seed, n, x, b);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
