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
// (distance_kernel, block_sum_kernel, between_kernel and the state are kmeans_seed_kernels.cuh's,
// shared with the group's seeding, kmeans_seed_group_cuda.cu.)
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
#include "kmeans_seed_kernels.cuh"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster::detail {
namespace {

__global__ void first_kernel(SeedState s) {
  *s.chosen = uniform_index(s.draws[0], s.points);
  *s.cursor = 1;
}

__global__ void copy_kernel(SeedState s, int t) {
  const float* x = s.X + static_cast<std::size_t>(*s.chosen) * s.dim;
  for (int d = threadIdx.x; d < s.dim; d += blockDim.x) s.C[static_cast<std::size_t>(t) * s.dim + d] = x[d];
}

constexpr int kScanThreads = 128;
constexpr int kMaxBlocksStaged = 4096;  ///< block sums staged in shared memory (32 KiB) by pick_kernel

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
