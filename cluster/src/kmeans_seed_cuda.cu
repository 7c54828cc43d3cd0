// k-means++ seeding on the device (kmeans.hpp, kmeans_plus_plus with Backend::cuda): bitwise the
// host reference's centroids for a seed. Every number the host computes is computed here with
// the same operations in the same order (explicitly rounded FP64 operations, no contraction):
//   distance_kernel   D(x)^2 against the new centroid, thread per point, the host's four chains
//                     over d mod 4 and its triangle-inequality skip; marks the changed blocks
//                     of kSeedBlock points;
//   block_sum_kernel  a changed block's sum: a warp per block, lane u sums sub-block u (128
//                     points) in point order, lane 0 the sub-blocks' sums in order;
//   pick_kernel       the total over blocks in order, the draw, then the host's walks: over the
//                     block sums (staged in shared memory), over the block's sub-block sums,
//                     and over the sub-block's distances (staged) to the point whose running
//                     sum passes what is left of u * total;
//   between_kernel    ||c_j - c_t||^2 for j < t (the skip test's distances).
// The draws are the host's: mt19937_64(seed)'s raw outputs, consumed in the host's order (one
// per step, two when every distance is 0), uploaded once. Per step the points are read once:
// at 1e6 x 128 about 0.15 ms of memory traffic; the sequential chains are at most 128 adds (a
// sub-block) plus 32 (a block's sub-blocks) plus one per block.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kmeans_cuda.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

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

constexpr int kScanThreads = 128;
constexpr int kMaxBlocksStaged = 4096;  ///< block sums staged in shared memory (32 KiB) by pick_kernel

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

/// The last index <= from with dist > 0, else the first after it (the host's nearest_positive).
__device__ int nearest_positive(const SeedState& s, int from) {
  for (int i = from; i >= 0; --i)
    if (s.dist[i] > 0) return i;
  for (int i = from + 1; i < s.points; ++i)
    if (s.dist[i] > 0) return i;
  return -1;
}

/// The draw: thread 0 walks the block sums (staged in shared memory), then the sub-block sums;
/// the sub-block's distances are staged and thread 0 walks them (the host's three walks).
__global__ void __launch_bounds__(kScanThreads) pick_kernel(SeedState s) {
  __shared__ double staged[kMaxBlocksStaged];
  __shared__ int s_first, s_len;
  __shared__ double s_local;
  const bool few = s.blocks <= kMaxBlocksStaged;
  if (few) {
    for (int q = threadIdx.x; q < s.blocks; q += blockDim.x) staged[q] = s.block_sum[q];
    __syncthreads();
  }
  const double* sums = few ? staged : s.block_sum;
  if (threadIdx.x == 0) {
    double total = 0;
#pragma unroll 8
    for (int b = 0; b < s.blocks; ++b) total = __dadd_rn(total, sums[b]);
    int cursor = *s.cursor;
    const double u = uniform01(s.draws[cursor++]);
    s_first = -1;
    if (!(total > 0) || isinf(total) || isnan(total)) {  // every point is a centroid already
      *s.chosen = uniform_index(s.draws[cursor++], s.points);
    } else {
      const double target = __dmul_rn(u, total);
      double before = 0;
      int b = 0;
      while (b + 1 < s.blocks && __dadd_rn(before, sums[b]) <= target) before = __dadd_rn(before, sums[b++]);
      const double local = __dsub_rn(target, before);
      const int block_end = min(s.points, (b + 1) * s.block_points);
      const int subs = (block_end - b * s.block_points + s.sub_points - 1) / s.sub_points;
      const double* sub = s.sub_sum + static_cast<std::size_t>(b) * s.subs;
      double before_sub = 0;
      int v = 0;
      while (v + 1 < subs && __dadd_rn(before_sub, sub[v]) <= local) before_sub = __dadd_rn(before_sub, sub[v++]);
      s_local = __dsub_rn(local, before_sub);
      s_first = b * s.block_points + v * s.sub_points;
      s_len = min(block_end, s_first + s.sub_points) - s_first;
    }
    *s.cursor = cursor;
  }
  __syncthreads();  // s_first is set; staged (the block sums) may be overwritten
  const int first = s_first, len = s_len;
  if (first < 0) return;
  for (int q = threadIdx.x; q < len; q += blockDim.x) staged[q] = s.dist[first + q];
  __syncthreads();
  if (threadIdx.x != 0) return;
  const double local = s_local;
  double run = 0;
  int chosen = -1;
  for (int q = 0; q < len; ++q) {
    const double d = staged[q];
    if (d <= 0) continue;
    run = __dadd_rn(run, d);
    if (run > local) {
      chosen = first + q;
      break;
    }
  }
  // rounding left the target past the sub-block's end: the host's rule
  *s.chosen = chosen >= 0 ? chosen : nearest_positive(s, first + len - 1);
}

__global__ void init_kernel(SeedState s) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < s.points) s.dist[i] = CUDART_INF, s.nearest[i] = -1;
  if (i < s.blocks) s.block_changed[i] = 0, s.block_sum[i] = 0;
  if (i < s.blocks * s.subs) s.sub_sum[i] = 0;
}

}  // namespace

std::vector<float> kmeans_plus_plus_device(const float* d_X, int points, int dim, int k, std::uint64_t seed,
                                           int block_points, int sub_points, CUstream_st* stream) {
  if (sub_points < 1 || block_points % sub_points != 0 || block_points / sub_points > 32)
    throw InvalidInput("kmeans++ on the device: blocks of at most 32 sub-blocks, got " + std::to_string(block_points) +
                       " and " + std::to_string(sub_points) + " points");
  const int subs = block_points / sub_points;
  std::mt19937_64 rng(seed);
  std::vector<unsigned long long> draws(2 * static_cast<std::size_t>(k) + 1);
  for (auto& r : draws) r = rng();  // at most 1 + 2 (k - 1) are used
  cuda::DeviceBuffer<unsigned long long> d_draws(draws.size());
  d_draws.upload(draws, stream);
  const int blocks = ceil_div(points, block_points);
  cuda::DeviceBuffer<float> C(static_cast<std::size_t>(k) * dim);
  cuda::DeviceBuffer<double> dist(static_cast<std::size_t>(points)), between(static_cast<std::size_t>(k)),
      block_sum(static_cast<std::size_t>(blocks)), sub_sum(static_cast<std::size_t>(blocks) * subs);
  cuda::DeviceBuffer<int> nearest(static_cast<std::size_t>(points)), changed(static_cast<std::size_t>(blocks)),
      scalars(2);
  const SeedState s{d_X,           points,         dim,         k,
                    blocks,        block_points,   sub_points,  subs,
                    C.data(),      dist.data(),    nearest.data(), between.data(),
                    block_sum.data(), sub_sum.data(), changed.data(), scalars.data(),
                    scalars.data() + 1, d_draws.data()};
  const int grid = ceil_div(std::max(points, blocks * subs), kThreads);
  init_kernel<<<grid, kThreads, 0, stream>>>(s);
  first_kernel<<<1, 1, 0, stream>>>(s);
  for (int t = 0;; ++t) {
    copy_kernel<<<1, 128, 0, stream>>>(s, t);
    if (t + 1 == k) break;
    if (t > 0) between_kernel<<<ceil_div(t, 128), 128, 0, stream>>>(s, t);
    distance_kernel<<<ceil_div(points, kThreads), kThreads, 0, stream>>>(s, t);
    block_sum_kernel<<<blocks, 32, 0, stream>>>(s);
    pick_kernel<<<1, kScanThreads, 0, stream>>>(s);
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
  }
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  return C.download(stream);  // waits for the stream only
}

}  // namespace tcsolve::cluster::detail
