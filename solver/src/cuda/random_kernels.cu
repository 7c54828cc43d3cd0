// Standard normal matrices on the device for the cuda randsvd generator (generate_cuda.cpp):
// element 2p and 2p + 1 of the array are philox::gaussian_pair(seed, stream, p), the Philox4x32-10
// counter-based generator with the Box-Muller transform (tcsolve/solver/philox.hpp, shared with
// the host tests). One thread per pair in a grid-stride loop with 64-bit indices: the numbers do
// not depend on the launch shape.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/solver/philox.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 65535u * 4u;  ///< enough to fill an H100 many times over

__global__ void __launch_bounds__(kThreads)
    gaussian_kernel(double* __restrict__ x, std::uint64_t count, std::uint64_t seed, std::uint32_t stream) {
  const std::uint64_t pairs = (count + 1) / 2;
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * kThreads;
  for (std::uint64_t p = static_cast<std::uint64_t>(blockIdx.x) * kThreads + threadIdx.x; p < pairs; p += step) {
    const philox::GaussianPair g = philox::gaussian_pair(seed, stream, p);
    x[2 * p] = g.first;
    if (2 * p + 1 < count) x[2 * p + 1] = g.second;  // an odd count drops the last second
  }
}

}  // namespace

void gaussian_fill(CUstream_st* on, double* x, std::size_t count, std::uint64_t seed, std::uint32_t stream) {
  if (count == 0) return;
  const std::uint64_t pairs = (static_cast<std::uint64_t>(count) + 1) / 2;
  const unsigned blocks =
      static_cast<unsigned>(std::min<std::uint64_t>(ceil_div<std::uint64_t>(pairs, kThreads), kMaxBlocks));
  gaussian_kernel<<<blocks, kThreads, 0, on>>>(x, count, seed, stream);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
