// K-means on points in device memory (kmeans_cuda.hpp, KmeansOptions::points_memory): the scan
// for the largest magnitude and the first non-finite value, the per-coordinate sums of the tol
// scale, and the power-of-two scaling of the "Scale" rule -- what the host computes for host
// points, on the points where they are.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kmeans_cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device.hpp"

namespace tcsolve::cluster::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

/// A grid-stride pass: the largest |x| as the bits of a non-negative float (ordered as
/// unsigned ints) and the smallest index of a non-finite value.
__global__ void scan_kernel(const float* __restrict__ X, std::size_t n, unsigned int* max_bits,
                            unsigned long long* first_bad) {
  unsigned int best = 0;
  unsigned long long bad = ~0ull;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = X[i];
    if (!isfinite(v)) {
      if (i < bad) bad = i;
    } else {
      best = max(best, __float_as_uint(fabsf(v)));
    }
  }
  for (int o = 16; o > 0; o /= 2) {
    best = max(best, __shfl_down_sync(0xffffffffu, best, o));
    bad = min(bad, __shfl_down_sync(0xffffffffu, bad, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(max_bits, best);
    if (bad != ~0ull) atomicMin(first_bad, bad);
  }
}

/// Per coordinate: the sum over the block's points of x(d) (mean == nullptr) or (x(d) - mean(d))^2,
/// one FP64 atomic per (block, coordinate). Threads run over coordinates (coalesced rows).
__global__ void coordinate_kernel(const float* __restrict__ X, int points, int dim, const double* __restrict__ mean,
                                  int points_per_block, double* out) {
  const int i0 = blockIdx.x * points_per_block, i1 = min(points, i0 + points_per_block);
  for (int d = threadIdx.x; d < dim; d += blockDim.x) {
    double s = 0;
    const double m = mean ? mean[d] : 0.0;
    for (int i = i0; i < i1; ++i) {
      const double v = static_cast<double>(X[static_cast<std::size_t>(i) * dim + d]);
      s += mean ? (v - m) * (v - m) : v;
    }
    atomicAdd(out + d, s);
  }
}

__global__ void scale_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n, int e) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = ldexpf(in[i], e);
}

unsigned int blocks_for(std::size_t n) {
  return static_cast<unsigned int>(std::min<std::size_t>(kMaxBlocks, (n + kThreads - 1) / kThreads));
}

}  // namespace

PointScan kmeans_scan(const float* d_X, std::size_t values, CUstream_st* stream) {
  PointScan scan;
  if (values == 0) return scan;
  cuda::DeviceBuffer<unsigned long long> words(2);  // [0]: max bits (low 32), [1]: first bad index
  unsigned int* max_bits = reinterpret_cast<unsigned int*>(words.data());
  cuda::device_memset(words.data(), 0, sizeof(unsigned long long), stream);
  cuda::device_memset(words.data() + 1, 0xff, sizeof(unsigned long long), stream);
  scan_kernel<<<blocks_for(values), kThreads, 0, stream>>>(d_X, values, max_bits, words.data() + 1);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  const std::vector<unsigned long long> host = words.download(stream);
  const unsigned int bits = static_cast<unsigned int>(host[0] & 0xffffffffu);
  float m = 0;
  static_assert(sizeof m == sizeof bits, "float is 32 bits");
  std::memcpy(&m, &bits, sizeof m);
  scan.max_abs = m;
  scan.first_nonfinite = host[1] == ~0ull ? -1 : static_cast<long long>(host[1]);
  return scan;
}

std::vector<double> kmeans_coordinate_sums(const float* d_X, int points, int dim, const std::vector<double>* mean,
                                           CUstream_st* stream) {
  cuda::DeviceBuffer<double> out(static_cast<std::size_t>(dim));
  cuda::device_memset(out.data(), 0, out.size() * sizeof(double), stream);
  cuda::DeviceBuffer<double> d_mean;
  if (mean != nullptr) {
    d_mean = cuda::DeviceBuffer<double>(static_cast<std::size_t>(dim));
    d_mean.upload(*mean, stream);
  }
  constexpr int kPointsPerBlock = 256;
  const int blocks = (points + kPointsPerBlock - 1) / kPointsPerBlock;
  if (blocks > 0) {
    coordinate_kernel<<<blocks, std::min(dim, 256) < 32 ? 32 : std::min(dim, 256), 0, stream>>>(
        d_X, points, dim, mean ? d_mean.data() : nullptr, kPointsPerBlock, out.data());
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
  }
  return out.download(stream);
}

void kmeans_scale(const float* d_in, float* d_out, std::size_t n, int e, CUstream_st* stream) {
  if (n == 0) return;
  scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(d_in, d_out, n, e);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cluster::detail
