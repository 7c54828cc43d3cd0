// cuda part of the K-means demo (kmeans.hpp): the kernels around the distance GEMM of Lloyd's
// algorithm. The GEMM itself is tcsolve::gemm(Backend::cuda, ...) called from kmeans.cpp.
//
//   assign_kernel      argmin_j (||c_j||^2 - 2 G(i, j)) in FP64 per point; block = 32 points x
//                      8 slices of j: a warp reads 32 consecutive entries of one column of G
//                      (coalesced), each slice keeps its own minimum, slice 0 merges them.
//   accumulate_kernel  cluster sums in FP64 and counts by atomics: block = 32 coordinates x 8
//                      points, a warp reads 32 consecutive coordinates of one point (the
//                      unfused path's update, kept to compare).
//   histogram, scan, scatter, segment_sum
//                      the same sums without atomics contention: the points ordered by label
//                      (a counting sort), then each block sums runs of equal labels of 256
//                      ordered points in registers and adds a run once.
//   finalize_kernel    means, movement and norms, one thread per centroid, coordinates in order
//                      with explicitly rounded FP64 operations (no FMA contraction), so the
//                      results are bitwise those of the host loop.
//   inertia_kernel     sum of squared distances in FP64: per-thread sums, a block reduction,
//                      one FP64 atomic per block.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <algorithm>
#include <climits>
#include <cstddef>

#include "kmeans_cuda.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/cuda_check.hpp"

namespace tcsolve::demos::detail {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;  ///< threadIdx.y extent of every kernel below
constexpr int kThreads = kWarp * kRowsPerBlock;
constexpr int kMaxGrid = 65535;  ///< blocks of the grid-stride kernels
constexpr int kFinalizeThreads = 128;

__global__ void __launch_bounds__(kThreads)
    assign_kernel(const float* __restrict__ G, int ldg, int rows, int k, const double* __restrict__ cnorm,
                  int* __restrict__ labels, unsigned long long* __restrict__ changed) {
  __shared__ double s_best[kRowsPerBlock][kWarp];
  __shared__ int s_index[kRowsPerBlock][kWarp];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.x * kWarp + tx;  // point (row of G) of this thread
  double best = CUDART_INF;
  int best_j = INT_MAX;  // none yet: NaN and +inf scores never win
  if (i < rows) {
    const float* g = G + i;
#pragma unroll 4
    for (int j = ty; j < k; j += kRowsPerBlock) {  // slice ty: j = ty, ty + 8, ...
      // 2 g is exact, so the fused or unfused form rounds once, as on the host.
      const double s = cnorm[j] - 2.0 * static_cast<double>(g[static_cast<std::size_t>(j) * ldg]);
      if (s < best) {
        best = s;
        best_j = j;
      }
    }
  }
  s_best[ty][tx] = best;
  s_index[ty][tx] = best_j;
  __syncthreads();
  if (ty != 0) return;  // warp 0 merges the slices (lexicographic minimum of (score, j))
  for (int y = 1; y < kRowsPerBlock; ++y) {
    const double s = s_best[y][tx];
    const int j = s_index[y][tx];
    if (s < best || (s == best && j < best_j)) {
      best = s;
      best_j = j;
    }
  }
  bool moved = false;
  if (i < rows) {
    const int label = best_j == INT_MAX ? 0 : best_j;
    moved = labels[i] != label;
    labels[i] = label;
  }
  const unsigned ballot = __ballot_sync(0xffffffffu, moved);  // one atomic per warp
  if (tx == 0 && ballot != 0) atomicAdd(changed, static_cast<unsigned long long>(__popc(ballot)));
}

__global__ void __launch_bounds__(kThreads)
    accumulate_kernel(const float* __restrict__ X, const int* __restrict__ labels, int points, int dim,
                      double* __restrict__ sums, int* __restrict__ counts) {
  for (int i = blockIdx.x * kRowsPerBlock + threadIdx.y; i < points; i += gridDim.x * kRowsPerBlock) {
    const int l = labels[i];
    const float* x = X + static_cast<std::size_t>(i) * dim;
    double* s = sums + static_cast<std::size_t>(l) * dim;
    for (int d = threadIdx.x; d < dim; d += kWarp) atomicAdd(s + d, static_cast<double>(x[d]));
    if (threadIdx.x == 0) atomicAdd(counts + l, 1);
  }
}

// ---- the update without atomics contention: the points ordered by label, then segment sums ----

constexpr int kHistThreads = 256;
constexpr int kSharedHistogram = 8192;  ///< k up to this: per-block histograms in shared memory
constexpr int kScanThreads = 1024;
constexpr int kSegment = 256;           ///< ordered points per block of the segment sums

__global__ void __launch_bounds__(kHistThreads)
    histogram_kernel(const int* __restrict__ labels, int points, int k, int* __restrict__ counts) {
  __shared__ int hist[kSharedHistogram];
  const bool shared = k <= kSharedHistogram;
  if (shared)
    for (int j = threadIdx.x; j < k; j += kHistThreads) hist[j] = 0;
  __syncthreads();
  for (int i = blockIdx.x * kHistThreads + threadIdx.x; i < points; i += gridDim.x * kHistThreads) {
    if (shared) atomicAdd(hist + labels[i], 1);
    else atomicAdd(counts + labels[i], 1);
  }
  __syncthreads();
  if (shared)
    for (int j = threadIdx.x; j < k; j += kHistThreads)
      if (hist[j] != 0) atomicAdd(counts + j, hist[j]);
}

/// offsets[j] = counts[0] + ... + counts[j - 1] (j <= k) and cursor[j] = offsets[j]; one block.
__global__ void __launch_bounds__(kScanThreads)
    scan_kernel(const int* __restrict__ counts, int k, int* __restrict__ offsets, int* __restrict__ cursor) {
  __shared__ int warp_sums[kScanThreads / kWarp];
  __shared__ int carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int j0 = 0; j0 < k; j0 += kScanThreads) {
    const int j = j0 + threadIdx.x;
    const int v = j < k ? counts[j] : 0;
    int x = v;  // inclusive scan in the warp
    for (int off = 1; off < kWarp; off *= 2) {
      const int y = __shfl_up_sync(0xffffffffu, x, off);
      if (lane >= off) x += y;
    }
    if (lane == kWarp - 1) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
      int w = warp_sums[lane];
      for (int off = 1; off < kWarp; off *= 2) {
        const int y = __shfl_up_sync(0xffffffffu, w, off);
        if (lane >= off) w += y;
      }
      warp_sums[lane] = w;  // inclusive over warps
    }
    __syncthreads();
    const int before = carry + (warp > 0 ? warp_sums[warp - 1] : 0) + x - v;
    if (j < k) offsets[j] = cursor[j] = before;
    __syncthreads();
    if (threadIdx.x == kScanThreads - 1) carry = before + v;
    __syncthreads();
  }
  if (threadIdx.x == 0) offsets[k] = carry;
}

/// order[cursor[label]++] = i: one atomic per distinct label of a warp (__match_any_sync).
__global__ void __launch_bounds__(kHistThreads)
    scatter_kernel(const int* __restrict__ labels, int points, int* __restrict__ cursor, int* __restrict__ order) {
  const int i = blockIdx.x * kHistThreads + threadIdx.x;
  const unsigned active = __ballot_sync(0xffffffffu, i < points);
  if (i >= points) return;
  const int l = labels[i];
  const unsigned peers = __match_any_sync(active, l);
  const int leader = __ffs(peers) - 1, lane = threadIdx.x % kWarp;
  int base = 0;
  if (lane == leader) base = atomicAdd(cursor + l, __popc(peers));
  base = __shfl_sync(peers, base, leader);
  order[base + __popc(peers & ((1u << lane) - 1u))] = i;
}

/// Sums of the points in ordered positions [kSegment b, kSegment (b + 1)): a run of equal labels
/// is summed in registers (thread d: coordinate d) and added to sums once per run; a cluster
/// spans about count / kSegment + 1 blocks, so each sum sees a few atomics only.
__global__ void segment_sum_kernel(const float* __restrict__ X, const int* __restrict__ labels,
                                   const int* __restrict__ order, int points, int dim, double* __restrict__ sums) {
  __shared__ int s_point[kSegment], s_label[kSegment];
  const int p0 = blockIdx.x * kSegment, len = min(kSegment, points - p0);
  for (int q = threadIdx.x; q < len; q += blockDim.x) {
    const int i = order[p0 + q];
    s_point[q] = i;
    s_label[q] = labels[i];
  }
  __syncthreads();
  for (int d = threadIdx.x; d < dim; d += blockDim.x) {
    int current = s_label[0];
    double sum = 0;
    for (int q = 0; q < len; ++q) {
      if (s_label[q] != current) {
        atomicAdd(sums + static_cast<std::size_t>(current) * dim + d, sum);
        current = s_label[q];
        sum = 0;
      }
      sum += static_cast<double>(X[static_cast<std::size_t>(s_point[q]) * dim + d]);
    }
    atomicAdd(sums + static_cast<std::size_t>(current) * dim + d, sum);
  }
}

__global__ void __launch_bounds__(kFinalizeThreads)
    finalize_kernel(const double* __restrict__ sums, const int* __restrict__ counts, float* __restrict__ C,
                    double* __restrict__ cnorm, double* __restrict__ shift2, int k, int dim) {
  const int j = blockIdx.x * kFinalizeThreads + threadIdx.x;  // centroid
  if (j >= k) return;
  const int n = counts[j];
  float* c = C + static_cast<std::size_t>(j) * dim;
  const double* s = sums + static_cast<std::size_t>(j) * dim;
  double shift = 0, norm = 0;
  for (int d = 0; d < dim; ++d) {
    const float old = c[d];
    const float v = n > 0 ? static_cast<float>(__ddiv_rn(s[d], static_cast<double>(n))) : old;  // empty: kept
    c[d] = v;
    const double diff = __dsub_rn(static_cast<double>(v), static_cast<double>(old));
    shift = __dadd_rn(shift, __dmul_rn(diff, diff));
    norm = __dadd_rn(norm, __dmul_rn(static_cast<double>(v), static_cast<double>(v)));
  }
  shift2[j] = shift;
  cnorm[j] = norm;
}

__global__ void __launch_bounds__(kFinalizeThreads)
    norms_kernel(const float* __restrict__ C, int k, int dim, double* __restrict__ cnorm) {
  const int j = blockIdx.x * kFinalizeThreads + threadIdx.x;
  if (j >= k) return;
  const float* c = C + static_cast<std::size_t>(j) * dim;
  double norm = 0;
  for (int d = 0; d < dim; ++d)
    norm = __dadd_rn(norm, __dmul_rn(static_cast<double>(c[d]), static_cast<double>(c[d])));
  cnorm[j] = norm;
}

__global__ void __launch_bounds__(kThreads)
    inertia_kernel(const float* __restrict__ X, const int* __restrict__ labels, const float* __restrict__ C,
                   int points, int dim, double* __restrict__ total) {
  __shared__ double partial[kThreads];
  double sum = 0;
  for (int i = blockIdx.x * kRowsPerBlock + threadIdx.y; i < points; i += gridDim.x * kRowsPerBlock) {
    const float* x = X + static_cast<std::size_t>(i) * dim;
    const float* c = C + static_cast<std::size_t>(labels[i]) * dim;
    for (int d = threadIdx.x; d < dim; d += kWarp) {
      const double diff = static_cast<double>(x[d]) - static_cast<double>(c[d]);
      sum += diff * diff;
    }
  }
  const int t = threadIdx.y * kWarp + threadIdx.x;
  partial[t] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {  // tree reduction in shared memory
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) atomicAdd(total, partial[0]);
}

int grid_for(int points) { return std::min(ceil_div(points, kRowsPerBlock), kMaxGrid); }

}  // namespace

void kmeans_assign(const float* d_G, int ldg, int rows, int k, const double* d_cnorm, int* d_labels,
                   unsigned long long* d_changed) {
  if (rows <= 0 || k <= 0) return;
  const dim3 block(kWarp, kRowsPerBlock);
  assign_kernel<<<ceil_div(rows, kWarp), block>>>(d_G, ldg, rows, k, d_cnorm, d_labels, d_changed);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void kmeans_accumulate(const float* d_X, const int* d_labels, int points, int dim, double* d_sums,
                       int* d_counts) {
  if (points <= 0 || dim <= 0) return;
  accumulate_kernel<<<grid_for(points), dim3(kWarp, kRowsPerBlock)>>>(d_X, d_labels, points, dim, d_sums,
                                                                      d_counts);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void kmeans_accumulate_ordered(const float* d_X, const int* d_labels, int points, int dim, int k, double* d_sums,
                               int* d_counts, int* d_order, int* d_offsets, int* d_cursor) {
  if (points <= 0 || dim <= 0 || k <= 0) return;
  const int blocks = std::min(ceil_div(points, kHistThreads), kMaxGrid);
  histogram_kernel<<<std::min(blocks, 1024), kHistThreads>>>(d_labels, points, k, d_counts);
  scan_kernel<<<1, kScanThreads>>>(d_counts, k, d_offsets, d_cursor);
  scatter_kernel<<<ceil_div(points, kHistThreads), kHistThreads>>>(d_labels, points, d_cursor, d_order);
  const int threads = std::min(256, ceil_div(dim, kWarp) * kWarp);
  segment_sum_kernel<<<ceil_div(points, kSegment), threads>>>(d_X, d_labels, d_order, points, dim, d_sums);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void kmeans_finalize(const double* d_sums, const int* d_counts, float* d_C, double* d_cnorm, double* d_shift2,
                     int k, int dim) {
  if (k <= 0) return;
  finalize_kernel<<<ceil_div(k, kFinalizeThreads), kFinalizeThreads>>>(d_sums, d_counts, d_C, d_cnorm,
                                                                       d_shift2, k, dim);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void kmeans_centroid_norms(const float* d_C, int k, int dim, double* d_cnorm) {
  if (k <= 0) return;
  norms_kernel<<<ceil_div(k, kFinalizeThreads), kFinalizeThreads>>>(d_C, k, dim, d_cnorm);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

double kmeans_inertia(const float* d_X, const int* d_labels, const float* d_C, int points, int dim) {
  cuda::DeviceBuffer<double> total(1);
  cuda::device_memset(total.data(), 0, sizeof(double));
  if (points > 0 && dim > 0) {
    inertia_kernel<<<grid_for(points), dim3(kWarp, kRowsPerBlock)>>>(d_X, d_labels, d_C, points, dim,
                                                                     total.data());
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
  }
  return total.download()[0];
}

}  // namespace tcsolve::demos::detail
