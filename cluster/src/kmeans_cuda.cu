// cuda part of the K-means demo (kmeans.hpp): the kernels around the distance GEMM of Lloyd's
// algorithm. The GEMM itself is tcsolve::gemm(Backend::cuda, ...) called from kmeans.cpp.
//
//   assign_kernel      argmin_j (||c_j||^2 - 2 G(i, j)) in FP64 per point; block = 32 points x
//                      8 slices of j: a warp reads 32 consecutive entries of one column of G
//                      (coalesced), each slice keeps its own minimum, slice 0 merges them.
//   histogram, scan, cub's stable radix sort, cluster_sum
//                      the same sums without atomics: the points ordered by label (stable, so
//                      ascending inside a cluster), then a block per cluster sums its points in
//                      point order in FP64: bitwise the host's sums, the same on every run.
//                      Weighted: w_i x_i (rounded product) summed the same way, and thread 0
//                      sums the cluster's weights in point order (the host's weighted update).
//   finalize_kernel    means, movement and norms, one thread per centroid, coordinates in order
//                      with explicitly rounded FP64 operations (no FMA contraction), so the
//                      results are bitwise those of the host loop.
//   inertia_kernel     sum of squared distances in FP64: per-thread sums, a block reduction,
//                      the blocks' sums added on the host in block order (the same bits on
//                      every run; one FP64 atomic per block, as before, varied in the last bits).
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>
#include <math_constants.h>

#include <algorithm>
#include <climits>
#include <cstddef>

#include "kmeans_cuda.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cluster::detail {
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

// ---- the update without atomics: the points sorted by label, then a block per cluster ----

constexpr int kHistThreads = 256;
constexpr int kSharedHistogram = 8192;  ///< k up to this: per-block histograms in shared memory
constexpr int kScanThreads = 1024;

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

/// offsets[j] = counts[0] + ... + counts[j - 1] (j <= k); one block.
__global__ void __launch_bounds__(kScanThreads)
    scan_kernel(const int* __restrict__ counts, int k, int* __restrict__ offsets) {
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
    if (j < k) offsets[j] = before;
    __syncthreads();
    if (threadIdx.x == kScanThreads - 1) carry = before + v;
    __syncthreads();
  }
  if (threadIdx.x == 0) offsets[k] = carry;
}

__global__ void iota_kernel(int* __restrict__ v, int n) {
  const int i = blockIdx.x * kHistThreads + threadIdx.x;
  if (i < n) v[i] = i;
}

/// One block per cluster j: thread d sums coordinate d of the cluster's points in point order
/// (order[offsets[j] .. offsets[j + 1]) holds them ascending: the sort is stable), from 0, in
/// FP64: the host's loop, so the sums are bitwise the host's.
constexpr int kBatch = 16;

__global__ void cluster_sum_kernel(const float* __restrict__ X, const int* __restrict__ order,
                                   const int* __restrict__ offsets, int dim, double* __restrict__ sums,
                                   const double* __restrict__ weights, double* __restrict__ weight_sums) {
  const int j = blockIdx.x;
  const int p0 = offsets[j], p1 = offsets[j + 1];
  if (weights != nullptr) {  // weighted: sum w_i x_i (the product rounded, then added) in point order
    for (int d = threadIdx.x; d < dim; d += blockDim.x) {
      double sum = 0;
      for (int p = p0; p < p1; ++p) {
        const int row = order[p];
        sum = __dadd_rn(sum, __dmul_rn(weights[row], static_cast<double>(X[static_cast<std::size_t>(row) * dim + d])));
      }
      sums[static_cast<std::size_t>(j) * dim + d] = sum;
    }
    if (threadIdx.x == 0) {  // the cluster's weight, in point order
      double w = 0;
      for (int p = p0; p < p1; ++p) w = __dadd_rn(w, weights[order[p]]);
      weight_sums[j] = w;
    }
    return;
  }
  for (int d = threadIdx.x; d < dim; d += blockDim.x) {
    double sum = 0;
    int p = p0;
    // kBatch loads in flight per thread, the adds in order: the gathers are latency-bound (with 4
    // in flight, Little's law at about 1 us of latency allows about 2 TB/s)
    for (; p + kBatch <= p1; p += kBatch) {
      int row[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) row[u] = order[p + u];
      float x[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) x[u] = X[static_cast<std::size_t>(row[u]) * dim + d];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) sum = __dadd_rn(sum, static_cast<double>(x[u]));
    }
    for (; p < p1; ++p) sum = __dadd_rn(sum, static_cast<double>(X[static_cast<std::size_t>(order[p]) * dim + d]));
    sums[static_cast<std::size_t>(j) * dim + d] = sum;
  }
}

int label_bits(int k) {
  int bits = 1;
  while ((1LL << bits) < k) ++bits;
  return bits;
}

__global__ void __launch_bounds__(kFinalizeThreads)
    finalize_kernel(const double* __restrict__ sums, const int* __restrict__ counts, float* __restrict__ C,
                    double* __restrict__ cnorm, double* __restrict__ shift2, int k, int dim,
                    const double* __restrict__ weight_sums) {
  const int j = blockIdx.x * kFinalizeThreads + threadIdx.x;  // centroid
  if (j >= k) return;
  const int n = counts[j];
  // the divisor: the count, or (weighted) the cluster's weight; empty when it is 0
  const double divisor = weight_sums != nullptr ? weight_sums[j] : static_cast<double>(n);
  const bool filled = weight_sums != nullptr ? divisor > 0 : n > 0;
  float* c = C + static_cast<std::size_t>(j) * dim;
  const double* s = sums + static_cast<std::size_t>(j) * dim;
  double shift = 0, norm = 0;
  for (int d = 0; d < dim; ++d) {
    const float old = c[d];
    const float v = filled ? static_cast<float>(__ddiv_rn(s[d], divisor)) : old;  // empty: kept
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
                   int points, int dim, const double* __restrict__ weights, double* __restrict__ block_sums) {
  __shared__ double partial[kThreads];
  double sum = 0;
  for (int i = blockIdx.x * kRowsPerBlock + threadIdx.y; i < points; i += gridDim.x * kRowsPerBlock) {
    const float* x = X + static_cast<std::size_t>(i) * dim;
    const float* c = C + static_cast<std::size_t>(labels[i]) * dim;
    if (weights == nullptr) {
      for (int d = threadIdx.x; d < dim; d += kWarp) {
        const double diff = static_cast<double>(x[d]) - static_cast<double>(c[d]);
        sum += diff * diff;
      }
    } else {  // w_i (x_i(d) - c(d))^2, summed as the unweighted terms
      const double w = weights[i];
      for (int d = threadIdx.x; d < dim; d += kWarp) {
        const double diff = static_cast<double>(x[d]) - static_cast<double>(c[d]);
        sum += w * (diff * diff);
      }
    }
  }
  const int t = threadIdx.y * kWarp + threadIdx.x;
  partial[t] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {  // tree reduction in shared memory
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) block_sums[blockIdx.x] = partial[0];  // summed on the host in block order
}

int grid_for(int points) { return std::min(ceil_div(points, kRowsPerBlock), kMaxGrid); }

}  // namespace

void kmeans_assign(const float* d_G, int ldg, int rows, int k, const double* d_cnorm, int* d_labels,
                   unsigned long long* d_changed, CUstream_st* stream) {
  if (rows <= 0 || k <= 0) return;
  const dim3 block(kWarp, kRowsPerBlock);
  assign_kernel<<<ceil_div(rows, kWarp), block, 0, stream>>>(d_G, ldg, rows, k, d_cnorm, d_labels, d_changed);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void kmeans_order_init(int* d_indices, int points, CUstream_st* stream) {
  if (points <= 0) return;
  iota_kernel<<<ceil_div(points, kHistThreads), kHistThreads, 0, stream>>>(d_indices, points);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

std::size_t kmeans_order_bytes(int points, int k) {
  std::size_t temp = 0;
  TCSOLVE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, static_cast<const int*>(nullptr),
                                                     static_cast<int*>(nullptr), static_cast<const int*>(nullptr),
                                                     static_cast<int*>(nullptr), points, 0, label_bits(k)));
  return temp;
}

void kmeans_accumulate_ordered(const float* d_X, const int* d_labels, int points, int dim, int k, double* d_sums,
                               int* d_counts, const OrderScratch& scratch, CUstream_st* stream,
                               const double* d_weights, double* d_weight_sums) {
  if (points <= 0 || dim <= 0 || k <= 0) return;
  const int blocks = std::min(ceil_div(points, kHistThreads), kMaxGrid);
  histogram_kernel<<<std::min(blocks, 1024), kHistThreads, 0, stream>>>(d_labels, points, k, d_counts);
  scan_kernel<<<1, kScanThreads, 0, stream>>>(d_counts, k, scratch.offsets);
  std::size_t temp = scratch.temp_bytes;
  TCSOLVE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.temp, temp, d_labels, scratch.keys, scratch.indices,
                                                     scratch.order, points, 0, label_bits(k), stream));
  const int threads = std::min(256, ceil_div(dim, kWarp) * kWarp);
  cluster_sum_kernel<<<k, threads, 0, stream>>>(d_X, scratch.order, scratch.offsets, dim, d_sums, d_weights,
                                                 d_weight_sums);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void kmeans_finalize(const double* d_sums, const int* d_counts, float* d_C, double* d_cnorm, double* d_shift2,
                     int k, int dim, CUstream_st* stream, const double* d_weight_sums) {
  if (k <= 0) return;
  finalize_kernel<<<ceil_div(k, kFinalizeThreads), kFinalizeThreads, 0, stream>>>(d_sums, d_counts, d_C, d_cnorm,
                                                                                  d_shift2, k, dim, d_weight_sums);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void kmeans_centroid_norms(const float* d_C, int k, int dim, double* d_cnorm, CUstream_st* stream) {
  if (k <= 0) return;
  norms_kernel<<<ceil_div(k, kFinalizeThreads), kFinalizeThreads, 0, stream>>>(d_C, k, dim, d_cnorm);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

double kmeans_inertia(const float* d_X, const int* d_labels, const float* d_C, int points, int dim,
                      CUstream_st* stream, const double* d_weights) {
  if (points <= 0 || dim <= 0) return 0;
  const int grid = grid_for(points);
  cuda::DeviceBuffer<double> block_sums(static_cast<std::size_t>(grid));
  inertia_kernel<<<grid, dim3(kWarp, kRowsPerBlock), 0, stream>>>(d_X, d_labels, d_C, points, dim, d_weights,
                                                                  block_sums.data());
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  double total = 0;
  for (double s : block_sums.download(stream)) total += s;  // waits for the stream only; fixed order
  return total;
}

}  // namespace tcsolve::cluster::detail
