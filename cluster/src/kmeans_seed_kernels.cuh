// The kernels and state of k-means++ on the device that the single-GPU seeding
// (kmeans_seed_cuda.cu) and the group's seeding (kmeans_seed_group_cuda.cu) share: SeedState,
// the host's FP64 squared distance and draws, and
//   distance_kernel   D(x)^2 against the new centroid (thread per point, the host's skip);
//   block_sum_kernel  a changed block's sub-block sums and sum (a warp per block);
//   between_kernel    ||c_j - c_t||^2 for j < t;
//   init_kernel       D^2 = inf, no nearest centroid, the sums 0.
// Everything is in an unnamed namespace: each .cu file that includes this compiles its own copy
// (kernels of whole-program CUDA compilation live in the file that launches them). Nothing but
// those two files includes this.
#pragma once

#include <cuda_runtime.h>
#include <math_constants.h>

#include <cstddef>

namespace tcsolve::cluster::detail {
namespace {

constexpr int kThreads = 256;

struct SeedState {
  const float* X;
  int points, dim, k, blocks, block_points, sub_points, subs;  // subs: sub-blocks per block
  float* C;                         // dim x k, column-major
  double* dist;                     // D(x)^2
  int* nearest;                     // its centroid, -1: none yet
  double* between;                  // ||c_j - c_t||^2
  double* block_sum;                // per block of block_points points
  double* sub_sum;                  // per sub-block of sub_points points (block b's at b subs)
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

/// One warp per changed block of points: lane u sums sub-block u in point order, lane 0 then
/// the sub-blocks' sums in order (the host's two levels: the same operations, the same bits).
__global__ void __launch_bounds__(32) block_sum_kernel(SeedState s) {
  const int b = blockIdx.x, u = threadIdx.x;
  if (!s.block_changed[b]) return;  // the same for the whole warp
  const int first = b * s.block_points, end = min(s.points, first + s.block_points);
  const int i0 = first + u * s.sub_points;
  if (i0 < end) {
    double sub = 0;
    const int i1 = min(end, i0 + s.sub_points);
#pragma unroll 8
    for (int i = i0; i < i1; ++i) sub = __dadd_rn(sub, s.dist[i]);
    s.sub_sum[static_cast<std::size_t>(b) * s.subs + u] = sub;
  }
  __syncwarp();
  if (u != 0) return;
  double sum = 0;
  for (int v = 0, j0 = first; j0 < end; ++v, j0 += s.sub_points)
    sum = __dadd_rn(sum, s.sub_sum[static_cast<std::size_t>(b) * s.subs + v]);
  s.block_sum[b] = sum;
  s.block_changed[b] = 0;
}

__global__ void init_kernel(SeedState s) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < s.points) s.dist[i] = CUDART_INF, s.nearest[i] = -1;
  if (i < s.blocks) s.block_changed[i] = 0, s.block_sum[i] = 0;
  if (i < s.blocks * s.subs) s.sub_sum[i] = 0;
}

}  // namespace
}  // namespace tcsolve::cluster::detail
