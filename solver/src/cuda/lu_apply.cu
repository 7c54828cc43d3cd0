// The FP64 LU's solve in one launch (kernels::lu_apply): x = C A_s^-1 R b with dgetrf's factors
// of the equilibrated A_s, for DeviceFp64Lu::apply (the FP64 path of small systems, whose solve
// cuSOLVER does in five launches: a column maximum, a scaling, dgetrs's interchanges and two
// triangular solves, then a scaling: 73 us at n = 200 on an H200, 18% of dgetrf's time).
//
// One thread block per right-hand side holds the vector in shared memory:
//   scale     the block's maximum of |R b| (NaN kept), its frexp exponent k, and w = ldexp(b,
//             log2 R - k) (EquilibratedInverse's scaling, bitwise scale_pow2's);
//   permute   dgetrf's pivots are staged in shared memory (in w's place), and one thread composes
//             them into a permutation while the others reduce the maximum and the worker warps
//             load L's first tile; then w is gathered through it;
//   L, U      by blocks of 32 rows, the warps specialised: warp 0 solves each diagonal block by
//             substitution, a lane per row, its 32 x 32 block read from a shared-memory tile, by
//             groups of 4 rows: one round of shuffles brings a group's values to every lane,
//             which solves the group's small triangle itself (triangular.cu's way), so the
//             chain waits on one shuffle latency per 4 rows. Meanwhile the other warps load the
//             next block's tile (stored after the barrier; U's with its diagonal's reciprocals,
//             triangular.cu's way) and, into registers, their share of the next block's columns
//             for the rows beyond it (the first kPrefetch passes of 88 rows); after the barrier
//             they update the rows beyond this block with the entries loaded the step before,
//             four lanes a row, each summing 8 columns in order, the four sums added by two
//             shuffles in a fixed tree;
//   unscale   x = ldexp(w, log2 C + k).
// So a block's step costs the substitution's chain, two barriers and the update's arithmetic,
// not the latency of its loads (about 2000 cycles a round trip in an instrumented run). Measured
// on an H200 (session 35, docs/BENCHMARKS.md "Small systems"): 41 us at n = 200 against dgetrs's
// 72, 119 against 150 at 512; one block's update falls behind dgetrs's whole-GPU kernels from
// n = 768 (209 against 211; 336 against 269 at 1024).
// Every step's order is fixed by the indices alone: the result is bitwise cpu/lu_apply.hpp's
// lu_apply_reference. Accuracy: each triangular solve is a substitution over at most n + 2
// roundings per entry (a reciprocal and a product for U's diagonal), backward stable with
// gamma_{n+2} (Higham, Thm 8.5), as dgetrs's.
#include <cuda_runtime.h>

#include <cfloat>
#include <cstddef>
#include <string>

#include "../cpu/lu_apply.hpp"
#include "interchanges.hpp"
#include "kernels.hpp"
#include "nan_max.cuh"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = 384;  ///< 168 registers a thread: the update's entries a step ahead without spills
constexpr int kWarps = kThreads / 32;
constexpr int kBlock = cpu::kLuApplyBlock;  ///< rows of a diagonal block: one warp's lanes
constexpr int kParts = cpu::kLuApplyParts;  ///< lanes (partial sums) per row of an update
constexpr int kPartCols = kBlock / kParts;
constexpr int kRowsPerWarp = 32 / kParts;
constexpr int kWorkers = kWarps - 1;                 ///< warps 1.. : tiles and updates
constexpr int kRowsPerPass = kWorkers * kRowsPerWarp;  ///< rows the workers update at once
constexpr int kPrefetch = 2;  ///< passes whose entries a worker loads while the chain runs
constexpr int kTileLoaders = kBlock / 8;  ///< worker warps that load a tile, 8 columns each
constexpr int kTile = kBlock * kBlock;    ///< a tile's doubles (column-major: lane-contiguous)
constexpr int kGroup = 4;  ///< diagonal rows solved per round of shuffles
constexpr unsigned kFull = 0xffffffffu;
static_assert(kBlock % kGroup == 0, "whole groups");
static_assert(kWorkers >= kTileLoaders, "the tile's loaders are workers");
static_assert(kBlock == 32 && kParts == 4, "a diagonal block is one warp; a row's update four lanes");

__device__ __forceinline__ double at(const double* lu, int n, int i, int j) {
  return lu[i + static_cast<std::size_t>(j) * n];
}

/// Every thread of the block, in warp-specialised code (the warps take different branches but
/// each warp stays whole, so a counted barrier is well defined).
__device__ __forceinline__ void barrier() { asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory"); }

/// A loader warp's share of the diagonal block from row r0 (8 columns, a lane per row) as it lies
/// in the factors, from clamped addresses (always inside the matrix), so that the loads stay in
/// flight across barriers until store_tile() uses them.
__device__ __forceinline__ void fetch_tile(const double* lu, int n, int r0, int worker, int lane, double (&v)[8]) {
  if (worker >= kTileLoaders) return;
  const int r = min(max(r0 + lane, 0), n - 1);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = at(lu, n, r, min(max(r0 + worker * 8 + j, 0), n - 1));
}
/// The tile of the diagonal block [r0, r1) (column-major) from fetch_tile()'s values: L's entries
/// left of the diagonal, or U's right of it with 1 / u_rr on it; 0 elsewhere.
template <bool kLower>
__device__ __forceinline__ void store_tile(const double (&v)[8], int r0, int r1, int worker, int lane, double* tile) {
  if (worker >= kTileLoaders) return;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int c = worker * 8 + j;
    double value = 0;
    if (r0 + lane < r1 && r0 + c < r1) {
      if (kLower ? c < lane : c > lane) value = v[j];
      else if (!kLower && c == lane) value = __ddiv_rn(1.0, v[j]);
    }
    tile[c * kBlock + lane] = value;
  }
}

/// fetch_tile() and store_tile() at once (a sweep's first tile).
template <bool kLower>
__device__ __forceinline__ void load_tile(const double* lu, int n, int r0, int worker, int lane, double* tile) {
  double v[8];
  fetch_tile(lu, n, r0, worker, lane, v);
  store_tile<kLower>(v, r0, min(n, r0 + kBlock), worker, lane, tile);
}

/// A worker's entries of the columns [c0, c1) for pass q of the rows from i0 (to i1).
struct Pass {
  int row, part;
  __device__ Pass(int i0, int q, int worker, int lane)
      : row(i0 + q * kRowsPerPass + worker * kRowsPerWarp + lane / kParts), part(lane % kParts) {}
  /// From clamped addresses (apply() uses only the entries inside the rows and columns).
  __device__ void load(const double* lu, int n, int c0, double (&e)[kPartCols]) const {
    const int r = min(row, n - 1);
#pragma unroll
    for (int j = 0; j < kPartCols; ++j) e[j] = at(lu, n, r, min(c0 + part * kPartCols + j, n - 1));
  }
  /// w_row -= the product of the entries with w[c0, c1) (cpu/lu_apply.cpp's block_product).
  __device__ void apply(const double (&e)[kPartCols], int c0, int c1, int i1, double* w) const {
    double s = 0;
#pragma unroll
    for (int j = 0; j < kPartCols; ++j) {
      const int c = c0 + part * kPartCols + j;
      if (row < i1 && c < c1) s = fma(e[j], w[c], s);
    }
    s = __dadd_rn(s, __shfl_xor_sync(kFull, s, 1));  // (s0 + s1), (s2 + s3)
    s = __dadd_rn(s, __shfl_xor_sync(kFull, s, 2));  // their sum
    if (row < i1 && part == 0) w[row] = __dsub_rn(w[row], s);
  }
};

/// The worker warps' side of a sweep over the blocks (L: top down, the rows below each block; U:
/// bottom up, the rows above it), in step with chain() by its barriers. The update's entries are
/// loaded a step ahead (during block j those of block j + 1), so that no step waits for its own
/// loads (session 35, an instrumented run: a load's round trip took about 2000 cycles, more than
/// the diagonal block's chain); the next block's tile is loaded at a step's start and stored
/// after its first barrier. The first block's tile is loaded here unless the caller did
/// (first_loaded).
template <bool kLower>
__device__ void work(const double* lu, int n, double* w, double* tiles, int worker, int lane, bool first_loaded) {
  const int blocks = ceil_div(n, kBlock);
  auto start = [&](int j) { return (kLower ? j : blocks - 1 - j) * kBlock; };  // block j's first row
  double e[kPrefetch][kPartCols];
  if (!first_loaded) load_tile<kLower>(lu, n, start(0), worker, lane, tiles);
#pragma unroll
  for (int q = 0; q < kPrefetch; ++q) Pass(kLower ? min(n, kBlock) : 0, q, worker, lane).load(lu, n, start(0), e[q]);
  barrier();
  for (int j = 0; j < blocks; ++j) {
    const int r0 = start(j), r1 = min(n, r0 + kBlock);
    const int i0 = kLower ? r1 : 0, i1 = kLower ? n : r0;  // the rows this block updates
    double en[kPrefetch][kPartCols], v[8];
    if (j + 1 < blocks) {
      const int n0 = start(j + 1);
#pragma unroll
      for (int q = 0; q < kPrefetch; ++q) Pass(kLower ? min(n, n0 + kBlock) : 0, q, worker, lane).load(lu, n, n0, en[q]);
      fetch_tile(lu, n, n0, worker, lane, v);
    }
    barrier();  // the block's solution is in w
    if (j + 1 < blocks) store_tile<kLower>(v, start(j + 1), min(n, start(j + 1) + kBlock), worker, lane,
                                           tiles + ((j + 1) % 2) * kTile);
#pragma unroll
    for (int q = 0; q < kPrefetch; ++q) Pass(i0, q, worker, lane).apply(e[q], r0, r1, i1, w);
    for (int q = kPrefetch; i0 + q * kRowsPerPass < i1; ++q) {
      const Pass p(i0, q, worker, lane);
      double f[kPartCols];
      p.load(lu, n, r0, f);
      p.apply(f, r0, r1, i1, w);
    }
    barrier();  // the rows are updated
#pragma unroll
    for (int q = 0; q < kPrefetch; ++q)
#pragma unroll
      for (int k = 0; k < kPartCols; ++k) e[q][k] = en[q][k];
  }
}

/// Warp 0's side: each diagonal block solved by substitution from its tile.
template <bool kLower>
__device__ void chain(int n, double* w, const double* tiles, int lane) {
  const int blocks = ceil_div(n, kBlock);
  barrier();  // the first tile
  for (int j = 0; j < blocks; ++j) {
    const int q0 = kLower ? j : blocks - 1 - j;
    const int r0 = q0 * kBlock, r1 = min(n, r0 + kBlock);
    const double* tile = tiles + (j % 2) * kTile;
    const double* t = tile + lane;  // t[c kBlock]: the lane's row, column c
    double v = r0 + lane < r1 ? w[r0 + lane] : 0.0;
    // by groups of kGroup rows: the group's values gathered by one round of shuffles, its small
    // triangle solved by every lane (the same operations in the same order as one lane would:
    // bitwise the column-by-column substitution), then each lane's row updated by the group's
    // columns in order
    if (kLower) {
#pragma unroll
      for (int a = 0; a < kBlock; a += kGroup) {
        double x[kGroup];
#pragma unroll
        for (int k = 0; k < kGroup; ++k) x[k] = __shfl_sync(kFull, v, a + k);
#pragma unroll
        for (int k = 1; k < kGroup; ++k)
#pragma unroll
          for (int c = 0; c < k; ++c) x[k] = fma(-tile[(a + c) * kBlock + a + k], x[c], x[k]);
        if (lane >= a + kGroup) {
#pragma unroll
          for (int c = 0; c < kGroup; ++c) v = fma(-t[(a + c) * kBlock], x[c], v);
        }
#pragma unroll
        for (int k = 0; k < kGroup; ++k)
          if (lane == a + k) v = x[k];
      }
    } else {
#pragma unroll
      for (int a = kBlock - kGroup; a >= 0; a -= kGroup) {
        double x[kGroup];
#pragma unroll
        for (int k = 0; k < kGroup; ++k) x[k] = __shfl_sync(kFull, v, a + k);
#pragma unroll
        for (int k = kGroup - 1; k >= 0; --k) {
#pragma unroll
          for (int c = kGroup - 1; c > k; --c) x[k] = fma(-tile[(a + c) * kBlock + a + k], x[c], x[k]);
          x[k] = __dmul_rn(x[k], tile[(a + k) * kBlock + a + k]);  // 1 / u
        }
        if (lane < a) {
#pragma unroll
          for (int c = kGroup - 1; c >= 0; --c) v = fma(-t[(a + c) * kBlock], x[c], v);
        }
#pragma unroll
        for (int k = 0; k < kGroup; ++k)
          if (lane == a + k) v = x[k];
      }
    }
    if (r0 + lane < r1) w[r0 + lane] = v;
    barrier();  // the solution for the workers
    barrier();  // their update of the rows beyond
  }
}

__global__ void __launch_bounds__(kThreads)
    lu_apply_kernel(const double* __restrict__ lu, int n, const int* __restrict__ ipiv,
                    const double* __restrict__ row_scale, const double* __restrict__ col_scale, const double* rhs,
                    int cols, double* out, double* __restrict__ diagonal, const int* __restrict__ info) {
  extern __shared__ double shared[];
  double* w = shared;                             // n
  double* tiles = shared + n;                     // two tiles
  int* staged = reinterpret_cast<int*>(w);        // the pivots, then the permutation, before w is formed
  int* perm = staged + n;
  __shared__ double partial[kWarps];
  __shared__ int exponent;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  if (diagonal != nullptr && blockIdx.x == 0) {  // U's diagonal and info for the caller's read-back
    for (int i = tid; i < n; i += kThreads) diagonal[i] = at(lu, n, i, i);
    if (tid == 0) *reinterpret_cast<int*>(diagonal + n) = *info;
  }
  for (int col = blockIdx.x; col < cols; col += gridDim.x) {
    const double* b = rhs + static_cast<std::size_t>(col) * n;
    if (warp > 0) load_tile<true>(lu, n, 0, warp - 1, lane, tiles);  // L's first tile, early
    // scale and permute: thread 0 composes the interchanges; the others find max |R b|
    for (int i = tid; i < n; i += kThreads) {
      staged[i] = ipiv[i] - 1;
      perm[i] = i;
    }
    __syncthreads();
    double m = 0;
    if (tid == 0) {
      interchanges::compose_pivots(staged, n, perm);
    } else {
      for (int i = tid - 1; i < n; i += kThreads - 1) m = nan_max(m, fabs(__dmul_rn(row_scale[i], b[i])));
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) m = nan_max(m, __shfl_xor_sync(kFull, m, o));
    if (lane == 0) partial[warp] = m;
    __syncthreads();
    if (tid == 0) {
      double s = partial[0];
      for (int q = 1; q < kWarps; ++q) s = nan_max(s, partial[q]);
      int e = 0;
      if (s > 0 && s <= DBL_MAX) frexp(s, &e);
      exponent = e;
    }
    __syncthreads();
    const int k = exponent;
    double gathered[(kLuApplyMaxN + kThreads - 1) / kThreads];
#pragma unroll
    for (int q = 0; q < (kLuApplyMaxN + kThreads - 1) / kThreads; ++q) {  // read perm before w overwrites staged
      const int i = tid + q * kThreads;
      if (i < n) {
        const int p = perm[i];
        gathered[q] = ldexp(b[p], ilogb(row_scale[p]) - k);
      }
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < (kLuApplyMaxN + kThreads - 1) / kThreads; ++q)
      if (tid + q * kThreads < n) w[tid + q * kThreads] = gathered[q];
    __syncthreads();

    if (warp == 0) chain<true>(n, w, tiles, lane);  // L (unit lower), top down
    else work<true>(lu, n, w, tiles, warp - 1, lane, true);
    if (warp == 0) chain<false>(n, w, tiles, lane);  // U (upper), bottom up
    else work<false>(lu, n, w, tiles, warp - 1, lane, false);

    double* x = out + static_cast<std::size_t>(col) * n;
    for (int i = tid; i < n; i += kThreads) x[i] = ldexp(w[i], ilogb(col_scale[i]) + k);
    __syncthreads();  // w and the tiles are the next column's
  }
}

/// The dynamic shared memory: the vector w (the pivots and the permutation there first) and two
/// tiles.
std::size_t shared_bytes(int n) { return static_cast<std::size_t>(n) * sizeof(double) + 2 * kTile * sizeof(double); }

}  // namespace

void lu_apply(CUstream_st* stream, const double* lu, int n, const int* ipiv, const double* row_scale,
              const double* col_scale, const double* rhs, int cols, double* out, double* diagonal, const int* info) {
  if (n < 1 || n > kLuApplyMaxN) throw InvalidInput("lu_apply: n = " + std::to_string(n) + " outside 1.." +
                                                    std::to_string(kLuApplyMaxN));
  if (cols < 1) return;
  const unsigned grid = static_cast<unsigned>(cols < 65535 ? cols : 65535);
  lu_apply_kernel<<<grid, kThreads, shared_bytes(n), stream>>>(lu, n, ipiv, row_scale, col_scale, rhs,
                                                                         cols, out, diagonal, info);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
