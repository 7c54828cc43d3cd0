// k-means++ seeding on the device (kmeans.hpp, kmeans_plus_plus with Backend::cuda): bitwise the
// host reference's centroids for a seed. Every number the host computes is computed here with
// the same operations in the same order (explicitly rounded FP64 operations, no contraction):
//   distance_kernel   D(x)^2 against the new centroid, thread per point, the host's four chains
//                     over d mod 4 and its triangle-inequality skip; marks the changed blocks
//                     of kSeedBlock points;
//   block_sum_kernel  a changed block's sum in point order: a thread block per block of points
//                     stages its distances in shared memory, one thread adds them in order;
//   pick_kernel       the total over blocks in order, the draw, the block then the point whose
//                     running sum passes u * total (the host's search, the block's distances
//                     staged in shared memory);
//   between_kernel    ||c_j - c_t||^2 for j < t (the skip test's distances).
// The draws are the host's: mt19937_64(seed)'s raw outputs, consumed in the host's order (one
// per step, two when every distance is 0), uploaded once. Per step the points are read once:
// at 1e6 x 128 about 0.15 ms of memory traffic, plus two short sequential passes of ~4096 adds.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kmeans_cuda.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/cuda_check.hpp"
#include "tcsolve/gemm/error.hpp"

namespace tcsolve::demos::detail {
namespace {

constexpr int kThreads = 256;

struct SeedState {
  const float* X;
  int points, dim, k, blocks, block_points;
  float* C;                         // dim x k, column-major
  double* dist;                     // D(x)^2
  int* nearest;                     // its centroid, -1: none yet
  double* between;                  // ||c_j - c_t||^2
  double* block_sum;                // per block of block_points points
  int* block_changed;
  int* chosen;                      // the point drawn
  int* cursor;                      // next unused draw
  const unsigned long long* draws;  // the host generator's outputs
};

__device__ __forceinline__ double uniform01(unsigned long long r) { return static_cast<double>(r >> 11) * 0x1p-53; }

__device__ __forceinline__ int uniform_index(unsigned long long r, int n) {
  return min(n - 1, static_cast<int>(__dmul_rn(uniform01(r), static_cast<double>(n))));
}

__device__ __forceinline__ void chain(double& s, float x, float c) {
  const double diff = __dsub_rn(static_cast<double>(x), static_cast<double>(c));
  s = __dadd_rn(s, __dmul_rn(diff, diff));
}

/// The host's squared_distance: four chains over d = 0, 1, 2, 3 mod 4, then the tail (rows of
/// a multiple of 4 floats are 16-byte aligned: one float4 load feeds the four chains).
__device__ double squared_distance(const float* x, const float* c, int dim) {
  double s[4] = {0, 0, 0, 0};
  int d = 0;
  if (dim % 4 == 0) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* c4 = reinterpret_cast<const float4*>(c);
    for (; d + 4 <= dim; d += 4) {
      const float4 a = __ldg(x4 + d / 4), b = c4[d / 4];
      chain(s[0], a.x, b.x), chain(s[1], a.y, b.y), chain(s[2], a.z, b.z), chain(s[3], a.w, b.w);
    }
  }
  for (; d + 4 <= dim; d += 4)
#pragma unroll
    for (int q = 0; q < 4; ++q) chain(s[q], x[d + q], c[d + q]);
  double total = __dadd_rn(__dadd_rn(s[0], s[1]), __dadd_rn(s[2], s[3]));
  for (; d < dim; ++d) {
    const double diff = __dsub_rn(static_cast<double>(x[d]), static_cast<double>(c[d]));
    total = __dadd_rn(total, __dmul_rn(diff, diff));
  }
  return total;
}

__global__ void first_kernel(SeedState s) {
  *s.chosen = uniform_index(s.draws[0], s.points);
  *s.cursor = 1;
}

__global__ void copy_kernel(SeedState s, int t) {
  const float* x = s.X + static_cast<std::size_t>(*s.chosen) * s.dim;
  for (int d = threadIdx.x; d < s.dim; d += blockDim.x) s.C[static_cast<std::size_t>(t) * s.dim + d] = x[d];
}

__global__ void between_kernel(SeedState s, int t) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < t)
    s.between[j] = squared_distance(s.C + static_cast<std::size_t>(j) * s.dim, s.C + static_cast<std::size_t>(t) * s.dim, s.dim);
}

__global__ void __launch_bounds__(kThreads) distance_kernel(SeedState s, int t) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= s.points) return;
  const double d = s.dist[i];
  const int a = s.nearest[i];
  // the host's skip: ||c_a - c_t|| >= 2 ||x - c_a|| (with its 2^-20 margin)
  if (a >= 0 && s.between[a] >= __dmul_rn(__dmul_rn(4.0, d), 1.0 + 0x1p-20)) return;
  const double e = squared_distance(s.X + static_cast<std::size_t>(i) * s.dim, s.C + static_cast<std::size_t>(t) * s.dim, s.dim);
  if (e < d) {
    s.dist[i] = e;
    s.nearest[i] = t;
    s.block_changed[i / s.block_points] = 1;
  }
}

constexpr int kScanThreads = 512;
constexpr int kMaxBlockPoints = 4096;  ///< points of a block staged in shared memory (32 KiB)

/// Copies dist[first, first + len) into shared memory (coalesced); the block's threads all call it.
__device__ __forceinline__ void stage(const double* dist, int first, int len, double* staged) {
  for (int q = threadIdx.x; q < len; q += blockDim.x) staged[q] = dist[first + q];
  __syncthreads();
}

/// One thread block per changed block of points: staged in shared memory, then summed in point
/// order by one thread (a chain of FP64 adds from shared memory, not from L2).
__global__ void __launch_bounds__(kScanThreads) block_sum_kernel(SeedState s) {
  __shared__ double staged[kMaxBlockPoints];
  const int b = blockIdx.x;
  if (!s.block_changed[b]) return;  // the same for every thread of the block
  const int first = b * s.block_points, len = min(s.points, first + s.block_points) - first;
  stage(s.dist, first, len, staged);
  if (threadIdx.x != 0) return;
  s.block_changed[b] = 0;
  double sum = 0;
#pragma unroll 8
  for (int q = 0; q < len; ++q) sum = __dadd_rn(sum, staged[q]);
  s.block_sum[b] = sum;
}

/// One thread block: thread 0 finds the block (the host's walk over the block sums), the block
/// stages its distances, thread 0 walks them.
__global__ void __launch_bounds__(kScanThreads) pick_kernel(SeedState s) {
  __shared__ double staged[kMaxBlockPoints];
  __shared__ int s_block;
  __shared__ double s_local;
  // the block sums staged too (kMaxBlockPoints of them at a time), then walked by thread 0
  const bool few = s.blocks <= kMaxBlockPoints;
  if (few) stage(s.block_sum, 0, s.blocks, staged);
  const double* sums = few ? staged : s.block_sum;
  if (threadIdx.x == 0) {
    double total = 0;
#pragma unroll 8
    for (int b = 0; b < s.blocks; ++b) total = __dadd_rn(total, sums[b]);
    int cursor = *s.cursor;
    const double u = uniform01(s.draws[cursor++]);
    s_block = -1;
    if (!(total > 0) || isinf(total) || isnan(total)) {  // every point is a centroid already
      *s.chosen = uniform_index(s.draws[cursor++], s.points);
    } else {
      const double target = __dmul_rn(u, total);
      double before = 0;
      int b = 0;
      while (b + 1 < s.blocks && __dadd_rn(before, sums[b]) <= target) before = __dadd_rn(before, sums[b++]);
      s_block = b;
      s_local = __dsub_rn(target, before);
    }
    *s.cursor = cursor;
  }
  __syncthreads();  // s_block is set, and staged (the block sums) may be overwritten
  const int b = s_block;
  if (b < 0) return;
  const int first = b * s.block_points, len = min(s.points, first + s.block_points) - first;
  stage(s.dist, first, len, staged);
  if (threadIdx.x != 0) return;
  const double local = s_local;
  double run = 0;
  int chosen = -1, last_positive = -1;
  for (int q = 0; q < len; ++q) {
    const double d = staged[q];
    if (d <= 0) continue;
    last_positive = q;
    run = __dadd_rn(run, d);
    if (run > local) {
      chosen = q;
      break;
    }
  }
  *s.chosen = first + (chosen < 0 ? last_positive : chosen);
}

__global__ void init_kernel(SeedState s) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < s.points) s.dist[i] = CUDART_INF, s.nearest[i] = -1;
  if (i < s.blocks) s.block_changed[i] = 0, s.block_sum[i] = 0;
}

}  // namespace

std::vector<float> kmeans_plus_plus_device(const float* d_X, int points, int dim, int k, std::uint64_t seed,
                                           int block_points) {
  if (block_points < 1 || block_points > kMaxBlockPoints)
    throw InvalidInput("kmeans++ on the device: blocks of 1.." + std::to_string(kMaxBlockPoints) + " points, got " +
                       std::to_string(block_points));
  std::mt19937_64 rng(seed);
  std::vector<unsigned long long> draws(2 * static_cast<std::size_t>(k) + 1);
  for (auto& r : draws) r = rng();  // at most 1 + 2 (k - 1) are used
  cuda::DeviceBuffer<unsigned long long> d_draws(draws);
  const int blocks = ceil_div(points, block_points);
  cuda::DeviceBuffer<float> C(static_cast<std::size_t>(k) * dim);
  cuda::DeviceBuffer<double> dist(static_cast<std::size_t>(points)), between(static_cast<std::size_t>(k)),
      block_sum(static_cast<std::size_t>(blocks));
  cuda::DeviceBuffer<int> nearest(static_cast<std::size_t>(points)), changed(static_cast<std::size_t>(blocks)),
      scalars(2);
  const SeedState s{d_X,          points,         dim,          k,
                    blocks,       block_points,   C.data(),     dist.data(),
                    nearest.data(), between.data(), block_sum.data(), changed.data(),
                    scalars.data(), scalars.data() + 1, d_draws.data()};
  const int grid = ceil_div(std::max(points, blocks), kThreads);
  init_kernel<<<grid, kThreads>>>(s);
  first_kernel<<<1, 1>>>(s);
  for (int t = 0;; ++t) {
    copy_kernel<<<1, 128>>>(s, t);
    if (t + 1 == k) break;
    if (t > 0) between_kernel<<<ceil_div(t, 128), 128>>>(s, t);
    distance_kernel<<<ceil_div(points, kThreads), kThreads>>>(s, t);
    block_sum_kernel<<<blocks, kScanThreads>>>(s);
    pick_kernel<<<1, kScanThreads>>>(s);
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
  }
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  return C.download();
}

}  // namespace tcsolve::demos::detail
