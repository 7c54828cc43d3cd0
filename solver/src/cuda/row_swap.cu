// Row interchanges: of the LU on the row-major FP32 matrix, and (permutation_kernel) dgetrf's
// composed for the FP64 LU's solves:
//   compose_kernel   one block: the w sequential exchanges that cuSOLVER's sgetrf reports for a
//                    panel (LAPACK's ipiv) composed into at most 2w (dst, src) pairs, "row dst
//                    receives the old row src" (interchanges.hpp explains the composition); the
//                    leaf kernel (panel.cu) writes its pairs in the same format directly;
//   pairs_kernel     applies a leaf's pairs to a range of columns outside the leaf: each thread
//                    owns one column, reads all src rows of it into registers, then writes the
//                    dst rows, so every moved row moves once; the rows are contiguous in memory,
//                    so a warp reads and writes 128 bytes of one row at a time. One extra block
//                    applies the same pairs to an index vector (the permutation, or the block's
//                    `origin`). The LU applies each leaf's pairs inside its block only and
//                    composes them in `origin` (origin[i]: the row, at the block's start, that
//                    row i holds now);
//   compact_kernel   one block: the rows i with origin[i] != i listed as (dst, src) = (i,
//                    origin[i]), and the permutation vector permuted by them;
//   move_kernel      the block's composed permutation applied once to the columns outside the
//                    block: each block of threads owns a slice of columns, loads the slice of
//                    every src row into shared memory, then writes the dst rows (each moved row
//                    read and written once). Its shared memory is sized on the host for the
//                    most rows partial pivoting can move, min(2w, n - j), as the count stays on
//                    the device; a larger count (not from pivoting) goes a few columns at a
//                    time (move_columns_slowly). Where the slices of min(2w, n - j) rows cannot
//                    fit in shared memory, gather_scatter_kernel moves them through a temporary
//                    device buffer instead (two launches).
//   permutation_kernel  one block: dgetrf's n sequential exchanges (LAPACK's ipiv over the whole
//                    matrix) composed into the permutation perm (row i of P A is row perm[i] of
//                    A), for the FP64 LU's solves by cublasDtrsm (DeviceFp64Lu::apply): the
//                    pivots staged in shared memory by every thread, composed by one, written
//                    out by every thread.
// Every launcher enqueues on the stream it is given and never synchronizes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "interchanges.hpp"
#include "kernels.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/per_device.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kComposeThreads = 256;
constexpr int kPairsThreads = 128;
constexpr int kMaxLeafPairs = 2 * kMaxLeafWidth;
static_assert(kMaxLeafPairs <= kPairsThreads, "the permutation block moves one pair per thread");

/// pairs = [count, dst[0..2w), src[0..2w)].
__global__ void __launch_bounds__(kComposeThreads)
    compose_kernel(const int* __restrict__ ipiv, int j, int w, int n, int* __restrict__ pairs) {
  extern __shared__ int shared[];
  int* p = shared;    // target row of step i
  int* prev = p + w;  // previous step with the same target below the block, or -1
  int* last = prev + w;
  int* cont = last + w;
  int* out = cont + w;
  for (int i = threadIdx.x; i < w; i += kComposeThreads) p[i] = interchanges::target_row(ipiv[i], i, j, n);
  __syncthreads();
  for (int i = threadIdx.x; i < w; i += kComposeThreads) {
    int pv = -1;
    bool is_last = true;
    if (p[i] >= j + w) is_last = interchanges::previous_same_target(p, w, i, pv);
    prev[i] = pv;
    last[i] = is_last ? 1 : 0;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int* dst = pairs + 1;
    int* src = dst + 2 * w;
    pairs[0] = interchanges::compose(p, prev, last, j, w, cont, out, dst, src);
  }
}

/// The pairs of the leaf [c0, c0 + w) applied to the columns [lo, hi) outside it, and to the
/// index vector `index` (index[dst] = old index[src]) by the last block.
__global__ void __launch_bounds__(kPairsThreads)
    pairs_kernel(float* __restrict__ a, int ld, int lo, int hi, int c0, int w, const int* __restrict__ pairs,
                 int* __restrict__ index) {
  const int count = pairs[0];
  const int* dst = pairs + 1;
  const int* src = dst + 2 * w;
  if (blockIdx.x == gridDim.x - 1) {  // the index vector: count <= 2w <= kPairsThreads
    const int t = static_cast<int>(threadIdx.x);
    const int moved = t < count ? index[src[t]] : 0;
    __syncthreads();
    if (t < count) index[dst[t]] = moved;
    return;
  }
  int col = lo + static_cast<int>(blockIdx.x * kPairsThreads + threadIdx.x);
  if (col >= c0) col += w;
  if (col >= hi) return;
  float values[kMaxLeafPairs];
#pragma unroll
  for (int t = 0; t < kMaxLeafPairs; ++t)
    if (t < count) values[t] = a[static_cast<std::size_t>(src[t]) * ld + col];
#pragma unroll
  for (int t = 0; t < kMaxLeafPairs; ++t)
    if (t < count) a[static_cast<std::size_t>(dst[t]) * ld + col] = values[t];
}

__global__ void reset_origin_kernel(int* __restrict__ origin, int j, int n) {
  const int i = j + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) origin[i] = i;
}

constexpr int kCompactThreads = 1024;
constexpr int kCompactRows = 16;  ///< consecutive rows per thread: 16384 rows per pass

/// scratch = [count, dst[0..n), src[0..n), saved[0..n)]: the rows i in [j, n) with origin[i] !=
/// i, in increasing order, with src = origin[i]; perm[dst] = old perm[src]. Each thread reads
/// kCompactRows consecutive rows at once, and one block-wide scan of the counts places them.
__global__ void __launch_bounds__(kCompactThreads)
    compact_kernel(const int* __restrict__ origin, int j, int n, int* __restrict__ perm,
                   int* __restrict__ scratch) {
  __shared__ int warp_sums[kCompactThreads / 32];
  __shared__ int base;
  int* dst = scratch + 1;
  int* src = dst + n;
  int* saved = src + n;
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  if (tid == 0) base = 0;
  for (int start = j; start < n; start += kCompactThreads * kCompactRows) {
    const int first = start + tid * kCompactRows;
    int o[kCompactRows];
    int moved = 0;
#pragma unroll
    for (int r = 0; r < kCompactRows; ++r) {
      o[r] = first + r < n ? origin[first + r] : first + r;
      moved += o[r] != first + r ? 1 : 0;
    }
    // exclusive scan of `moved` over the block
    int inclusive = moved;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int v = __shfl_up_sync(0xffffffffu, inclusive, d);
      if (lane >= d) inclusive += v;
    }
    __syncthreads();  // base and warp_sums of the previous pass are read
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
      int w = warp_sums[lane];
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int v = __shfl_up_sync(0xffffffffu, w, d);
        if (lane >= d) w += v;
      }
      warp_sums[lane] = w;  // inclusive over warps
    }
    __syncthreads();
    int offset = base + inclusive - moved + (warp > 0 ? warp_sums[warp - 1] : 0);
#pragma unroll
    for (int r = 0; r < kCompactRows; ++r)
      if (o[r] != first + r) {
        dst[offset] = first + r;
        src[offset] = o[r];
        ++offset;
      }
    __syncthreads();
    if (tid == 0) base += warp_sums[kCompactThreads / 32 - 1];
  }
  __syncthreads();
  const int count = base;
  for (int t = tid; t < count; t += kCompactThreads) saved[t] = perm[src[t]];
  __syncthreads();
  for (int t = tid; t < count; t += kCompactThreads) perm[dst[t]] = saved[t];
  if (tid == 0) scratch[0] = count;
}

constexpr int kMoveThreads = 512;
constexpr int kMoveBatch = 8;  ///< loads in flight per thread

/// The column of the `oc`-th column outside the block [j, j + w).
__device__ __forceinline__ int outside_column(int oc, int j, int w) { return oc < j ? oc : oc + w; }

/// move_kernel's path for more than `bound` moved rows (which partial pivoting never gives: at
/// most 2w rows move): the block's columns a few at a time, as many as the bound (S + 2) floats
/// of shared memory hold for all count rows, the rows read from the scratch. Traps where not even
/// one column fits (count > bound (S + 2)): an error at the next synchronization, not wrong bits.
template <int S>
__device__ void move_columns_slowly(float* __restrict__ a, int ld, int n, int j, int w, int bound, int count,
                                    const int* __restrict__ scratch, float* __restrict__ slice, int oc_lo,
                                    int oc_hi) {
  const int capacity = bound * (S + 2), oc0 = oc_lo + static_cast<int>(blockIdx.x) * S, outside = oc_hi;
  const int step = min(S, capacity / count);
  if (step < 1) __trap();
  const int* dst = scratch + 1;
  const int* src = dst + n;
  const int tid = static_cast<int>(threadIdx.x);
  for (int c = 0; c < S; c += step) {
    const int width = min(step, S - c), total = count * width;
    for (int e = tid; e < total; e += kMoveThreads) {
      const int oc = oc0 + c + e % width;
      if (oc < outside)
        slice[e] = a[static_cast<std::size_t>(src[e / width]) * ld + outside_column(oc, j, w)];
    }
    __syncthreads();
    for (int e = tid; e < total; e += kMoveThreads) {
      const int oc = oc0 + c + e % width;
      if (oc < outside)
        a[static_cast<std::size_t>(dst[e / width]) * ld + outside_column(oc, j, w)] = slice[e];
    }
    __syncthreads();
  }
}

/// Block b: the outside columns [oc_lo + b S, oc_lo + b S + S) (below oc_hi) of every moved
/// row, through shared memory (count x S floats, then the count src and dst rows; the launch
/// sized it for `bound` rows). Each thread has kMoveBatch loads in flight: the moves are
/// latency-bound otherwise.
template <int S>
__global__ void __launch_bounds__(kMoveThreads)
    move_kernel(float* __restrict__ a, int ld, int n, int j, int w, int bound,
                const int* __restrict__ scratch, int oc_lo, int oc_hi) {
  extern __shared__ float slice[];
  const int count = scratch[0];
  if (count > bound) {
    move_columns_slowly<S>(a, ld, n, j, w, bound, count, scratch, slice, oc_lo, oc_hi);
    return;
  }
  int* rows = reinterpret_cast<int*>(slice + static_cast<std::size_t>(count) * S);  // src, then dst
  const int tid = static_cast<int>(threadIdx.x);
  for (int t = tid; t < count; t += kMoveThreads) {
    rows[t] = scratch[1 + n + t];
    rows[count + t] = scratch[1 + t];
  }
  __syncthreads();
  const int oc0 = oc_lo + static_cast<int>(blockIdx.x) * S, outside = oc_hi, total = count * S;
  for (int e0 = tid; e0 < total; e0 += kMoveThreads * kMoveBatch) {
    float v[kMoveBatch] = {};
#pragma unroll
    for (int u = 0; u < kMoveBatch; ++u) {
      const int e = e0 + u * kMoveThreads, oc = oc0 + e % S;
      if (e < total && oc < outside)
        v[u] = a[static_cast<std::size_t>(rows[e / S]) * ld + outside_column(oc, j, w)];
    }
#pragma unroll
    for (int u = 0; u < kMoveBatch; ++u) {
      const int e = e0 + u * kMoveThreads;
      if (e < total) slice[e] = v[u];
    }
  }
  __syncthreads();
  for (int e0 = tid; e0 < total; e0 += kMoveThreads * kMoveBatch) {
#pragma unroll
    for (int u = 0; u < kMoveBatch; ++u) {
      const int e = e0 + u * kMoveThreads, oc = oc0 + e % S;
      if (e < total && oc < outside)
        a[static_cast<std::size_t>(rows[count + e / S]) * ld + outside_column(oc, j, w)] = slice[e];
    }
  }
}

/// The two-pass move of the outside columns [oc_lo, oc_hi) through tmp (bound x (oc_hi - oc_lo)
/// floats): gather (to_tmp) or scatter. Traps beyond `bound` moved rows (which partial pivoting
/// never gives).
__global__ void gather_scatter_kernel(float* __restrict__ a, int ld, int n, int j, int w, int bound,
                                      const int* __restrict__ scratch, float* __restrict__ tmp, bool to_tmp,
                                      int oc_lo, int oc_hi) {
  const int count = scratch[0];
  if (count > bound) __trap();
  const int* rows = scratch + 1 + (to_tmp ? n : 0);  // src to gather, dst to scatter
  const int width = oc_hi - oc_lo;
  for (int r = static_cast<int>(blockIdx.y); r < count; r += static_cast<int>(gridDim.y))
    for (int q = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); q < width;
         q += static_cast<int>(gridDim.x * blockDim.x)) {
      float* t = tmp + static_cast<std::size_t>(r) * width + q;
      float* x = a + static_cast<std::size_t>(rows[r]) * ld + outside_column(oc_lo + q, j, w);
      if (to_tmp)
        *t = *x;
      else
        *x = *t;
    }
}

}  // namespace

void compose_interchanges(CUstream_st* stream, const int* ipiv, int j, int w, int n, int* pairs) {
  if (w < 1 || w > kMaxLeafWidth || j < 0 || j + w > n)
    throw InvalidInput("compose_interchanges: panel j = " + std::to_string(j) + ", w = " + std::to_string(w) +
                       " outside n = " + std::to_string(n) + " or wider than " +
                       std::to_string(kMaxLeafWidth));
  compose_kernel<<<1, kComposeThreads, 5 * static_cast<std::size_t>(w) * sizeof(int), stream>>>(
      ipiv, j, w, n, pairs);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void apply_row_pairs(CUstream_st* stream, float* a, int ld, int n, int c0, int w, const int* pairs, int* perm) {
  if (w < 1 || w > kMaxLeafWidth || c0 < 0 || c0 + w > n)
    throw InvalidInput("apply_row_pairs: block c0 = " + std::to_string(c0) + ", w = " + std::to_string(w) +
                       " outside n = " + std::to_string(n) + " or wider than " +
                       std::to_string(kMaxLeafWidth));
  const int columns = n - w;
  const unsigned blocks = static_cast<unsigned>((columns + kPairsThreads - 1) / kPairsThreads) + 1;
  pairs_kernel<<<blocks, kPairsThreads, 0, stream>>>(a, ld, 0, n, c0, w, pairs, perm);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void apply_row_pairs_in_block(CUstream_st* stream, float* a, int ld, int c0, int w, int block_lo, int block_hi, const int* pairs,
                              int* origin) {
  if (w < 1 || w > kMaxLeafWidth || block_lo < 0 || c0 < block_lo || c0 + w > block_hi)
    throw InvalidInput("apply_row_pairs_in_block: leaf c0 = " + std::to_string(c0) +
                       ", w = " + std::to_string(w) + " not inside the block [" + std::to_string(block_lo) +
                       ", " + std::to_string(block_hi) + ") or wider than " + std::to_string(kMaxLeafWidth));
  const int columns = block_hi - block_lo - w;
  const unsigned blocks = static_cast<unsigned>((columns + kPairsThreads - 1) / kPairsThreads) + 1;
  pairs_kernel<<<blocks, kPairsThreads, 0, stream>>>(a, ld, block_lo, block_hi, c0, w, pairs,
                                                              origin);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void reset_origin(CUstream_st* stream, int* origin, int j, int n) {
  if (j < 0 || j > n)
    throw InvalidInput("reset_origin: j = " + std::to_string(j) + " outside n = " + std::to_string(n));
  if (j == n) return;  // no row
  constexpr int threads = 256;
  reset_origin_kernel<<<static_cast<unsigned>((n - j + threads - 1) / threads), threads, 0,
                        stream>>>(origin, j, n);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

std::size_t block_permutation_scratch_ints(int n) { return 1 + 3 * static_cast<std::size_t>(std::max(n, 0)); }

namespace {

template <int S>
bool move_through_shared(cudaStream_t stream, float* a, int ld, int n, int j, int w, int max_moved, const int* scratch, int oc_lo,
                         int oc_hi) {
  constexpr std::size_t kBudget = 96 * 1024;  // two blocks per SM
  const std::size_t bytes = static_cast<std::size_t>(max_moved) * (S * sizeof(float) + 2 * sizeof(int));
  if (bytes > kBudget) return false;
  // Once per instantiation and device (the LU's two host threads may get here together).
  static tcsolve::detail::PerDeviceOnce configured;
  configured([] {
    TCSOLVE_CUDA_CHECK(cudaFuncSetAttribute(move_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(kBudget)));
  });
  const unsigned blocks = static_cast<unsigned>((oc_hi - oc_lo + S - 1) / S);
  move_kernel<S><<<blocks, kMoveThreads, bytes, stream>>>(a, ld, n, j, w, max_moved, scratch, oc_lo,
                                                                    oc_hi);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  return true;
}

/// The moves of the compacted rows (scratch) in the outside columns [oc_lo, oc_hi).
void move_outside_columns(cudaStream_t stream, float* a, int ld, int n, int j, int w, const int* scratch, int oc_lo, int oc_hi) {
  if (oc_hi <= oc_lo) return;
  // Partial pivoting moves at most 2w rows: each of the w steps exchanges two.
  const int max_moved = std::min(2 * w, n - j);
  if (move_through_shared<16>(stream, a, ld, n, j, w, max_moved, scratch, oc_lo, oc_hi) ||
      move_through_shared<8>(stream, a, ld, n, j, w, max_moved, scratch, oc_lo, oc_hi) ||
      move_through_shared<4>(stream, a, ld, n, j, w, max_moved, scratch, oc_lo, oc_hi))
    return;
  const int width = oc_hi - oc_lo;
  float* tmp = nullptr;
  TCSOLVE_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&tmp),
                                     static_cast<std::size_t>(max_moved) * width * sizeof(float), stream));
  const dim3 grid(static_cast<unsigned>(std::min((width + 255) / 256, 64)),
                  static_cast<unsigned>(std::min(max_moved, 1024)));
  gather_scatter_kernel<<<grid, 256, 0, stream>>>(a, ld, n, j, w, max_moved, scratch, tmp, true, oc_lo, oc_hi);
  gather_scatter_kernel<<<grid, 256, 0, stream>>>(a, ld, n, j, w, max_moved, scratch, tmp, false, oc_lo, oc_hi);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  TCSOLVE_CUDA_CHECK(cudaFreeAsync(tmp, stream));
}

void check_block(const char* who, int ld, int n, int j, int w) {
  if (j < 0 || w < 1 || j + w > n || ld < n)
    throw InvalidInput(std::string(who) + ": block j = " + std::to_string(j) + ", w = " + std::to_string(w) +
                       " outside n = " + std::to_string(n));
}

}  // namespace

void apply_block_permutation(CUstream_st* stream, float* a, int ld, int n, int j, int w, const int* origin, int* perm, int* scratch,
                             bool right_only, int right_end) {
  check_block("apply_block_permutation", ld, n, j, w);
  if (right_end < 0) right_end = n;
  if (right_end < j + w || right_end > n)
    throw InvalidInput("apply_block_permutation: right_end = " + std::to_string(right_end) + " outside [" +
                       std::to_string(j + w) + ", " + std::to_string(n) + "]");
  compact_kernel<<<1, kCompactThreads, 0, stream>>>(origin, j, n, perm, scratch);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  // outside column oc: column oc for oc < j (left of the block), oc + w from j on (right of it)
  move_outside_columns(stream, a, ld, n, j, w, scratch, right_only ? j : 0, right_end - w);
}

void move_block_permutation_columns(CUstream_st* stream, float* a, int ld, int n, int j, int w, const int* scratch, int c0, int c1) {
  check_block("move_block_permutation_columns", ld, n, j, w);
  const bool left = 0 <= c0 && c1 <= j, right = j + w <= c0 && c1 <= n;
  if (c0 > c1 || !(left || right))
    throw InvalidInput("move_block_permutation_columns: columns [" + std::to_string(c0) + ", " +
                       std::to_string(c1) + ") not all outside the block [" + std::to_string(j) + ", " +
                       std::to_string(j + w) + ") of n = " + std::to_string(n));
  move_outside_columns(stream, a, ld, n, j, w, scratch, left ? c0 : c0 - w, left ? c1 : c1 - w);
}

void move_block_permutation_left(CUstream_st* stream, float* a, int ld, int n, int j, int w, const int* scratch) {
  move_block_permutation_columns(stream, a, ld, n, j, w, scratch, 0, j);
}

namespace {

constexpr int kPermutationThreads = 512;

__global__ void __launch_bounds__(kPermutationThreads)
    permutation_kernel(const int* __restrict__ ipiv, int n, int* __restrict__ perm) {
  extern __shared__ int staged[];  // the pivots (0-based), then the permutation
  int* p = staged + n;
  for (int i = threadIdx.x; i < n; i += kPermutationThreads) {
    staged[i] = ipiv[i] - 1;
    p[i] = i;
  }
  __syncthreads();
  if (threadIdx.x == 0) interchanges::compose_pivots(staged, n, p);
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += kPermutationThreads) perm[i] = p[i];
}

}  // namespace

void pivots_to_permutation(CUstream_st* stream, const int* ipiv, int n, int* perm) {
  if (n < 1 || n > kMaxPermutationN)
    throw InvalidInput("pivots_to_permutation: n = " + std::to_string(n) + " outside [1, " +
                       std::to_string(kMaxPermutationN) + "]");
  permutation_kernel<<<1, kPermutationThreads, 2 * static_cast<std::size_t>(n) * sizeof(int), stream>>>(ipiv, n, perm);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
