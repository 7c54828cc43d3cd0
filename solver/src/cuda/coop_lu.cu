// The one-launch FP64 LU of small systems (kernels::coop_lu, kernels.hpp): dgetrf's contract
// (L \ U in place, LAPACK's 1-based ipiv, info) in one cooperative launch, its factors, pivots
// and info bitwise cpu/coop_lu.hpp's coop_lu_reference.
//
// Why: cuSOLVER's dgetrf takes 1.6-2.2 us per column at n = 200-1024 (docs/BENCHMARKS.md, "Small
// systems"): a dependent pivot step per column across kernels. Here block 0 factors each panel of
// nb columns (all its rows) in shared memory, a column's step between one barrier and the next of
// one block (factor_panel), and the other blocks update the rest of the matrix between grid-wide
// barriers (cooperative groups): one grid barrier per panel.
//
// Status (session 33, H200, tcsolve_small_lu_bench --coop): correct, bitwise its reference, but no
// faster than dgetrf (0.97-1.3x its time from n = 64 to 768), so the solver does not use it yet.
// Nsight Compute at n = 32 on one block: a column costs about 1.7 us, one warp's chain of some 260
// instructions (two pivot reductions by shuffles, the division, the row's update from shared
// memory) issued every 14 cycles. Next: the panel in registers (docs/design.md, session 33).
//
//   phase 0        block 0 factors panel 0;                                        grid barrier
//   phase k        block 0: panel k's swaps, block row and update on panel k + 1's columns
//                  (look-ahead), then factors panel k + 1;
//                  the other blocks: panel k's swaps on the columns left of it, and swaps,
//                  block row and update on the columns right of panel k + 1, 16 at a time;  grid barrier
//
// With one block, block 0 also takes the others' share. Every entry's operations and their order
// do not depend on the grid (coop_lu.hpp states them): any grid gives the same bits. Reads of what
// other blocks wrote go through L2 (__ldcg), after the grid barrier's fence.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>

#include "kernels.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kCols = 16;  ///< columns per update task (a warp each in the block row's substitution)
/// (move, column) pairs per thread in a task's row moves: at most 2 x 32 moves of kCols columns.
constexpr int kPairs = (2 * 32 * kCols + kThreads - 1) / kThreads;

/// The shared memory of one block (dynamic; the panel first): the panel, n x NB column-major with
/// leading dimension n; the current panel's unit-lower block L11 (NB x NB); a task's block row
/// (NB x kCols); the row moves of the panel's swaps; the pivot search's partial results.
template <int NB>
struct Layout {
  __host__ __device__ static std::size_t panel_doubles(int n) { return static_cast<std::size_t>(n) * NB; }
  static std::size_t bytes(int n) {
    return (panel_doubles(n) + NB * NB + NB * kCols + 2 * kWarps) * sizeof(double) +
           (static_cast<std::size_t>(n) + 5 * NB + 2 * kWarps + 4) * sizeof(int);
  }
};

struct Shared {
  double *panel, *l11, *u, *part_v;
  int *perm, *move_dst, *move_src, *piv, *part_i, *scalars;  // scalars: move count, info
};

template <int NB>
__device__ Shared carve(unsigned char* base, int n) {
  Shared s;
  double* d = reinterpret_cast<double*>(base);
  s.panel = d;
  s.l11 = s.panel + Layout<NB>::panel_doubles(n);
  s.u = s.l11 + NB * NB;
  s.part_v = s.u + NB * kCols;
  int* i = reinterpret_cast<int*>(s.part_v + 2 * kWarps);
  s.perm = i;
  s.move_dst = s.perm + n;
  s.move_src = s.move_dst + 2 * NB;
  s.piv = s.move_src + 2 * NB;
  s.part_i = s.piv + NB;
  s.scalars = s.part_i + 2 * kWarps;
  return s;
}

__device__ __forceinline__ std::size_t idx(int i, int j, int ld) { return i + static_cast<std::size_t>(j) * ld; }

/// (v, i) better than (bv, bi): larger, or equal and earlier (NaN never better).
__device__ __forceinline__ bool better(double v, int i, double bv, int bi) { return v > bv || (v == bv && i < bi); }

__device__ __forceinline__ void warp_best(double& v, int& i) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const double ov = __shfl_xor_sync(0xffffffffu, v, o);
    const int oi = __shfl_xor_sync(0xffffffffu, i, o);
    if (better(ov, oi, v, i)) v = ov, i = oi;
  }
}

/// Rows of the panel per thread: n <= kMaxRows kThreads (the panel of 16 columns fits to 1726).
constexpr int kMaxRows = 7;

/// Block 0: factors the panel of columns [j0, j0 + w), rows [j0, n), loaded from A into shared
/// memory and stored back; ipiv (global, 1-based) for its columns; info (scalars[1]) kept.
///
/// The rows stay where they were loaded (thread t owns rows t, t + kThreads, ...) and each keeps
/// its logical position (dgetrf's order after the swaps so far) in a register: the pivot row is
/// not moved, so nothing writes it while the others read it, and a column costs one barrier. Its
/// search is over (|a|, position) — the first in dgetrf's order among the largest, as the
/// reference; NaN counts as -1, below every number, so that a column of NaN keeps its row (the
/// reference's "none found") — with the row's place carried beside the position (16 bits each).
/// The store puts each row at its position.
template <int NB>
__device__ void factor_panel(double* a, int n, int lda, int j0, int w, int* ipiv, const Shared& s) {
  const int m = n - j0, t = threadIdx.x, lane = t & 31, warp = t >> 5;
  double* P = s.panel;  // P(r, c) = P[r + c n], r in [0, m): rows as loaded
  for (int e = t; e < m * w; e += kThreads) {
    const int r = e % m, c = e / m;
    P[idx(r, c, n)] = __ldcg(&a[idx(j0 + r, j0 + c, lda)]);
  }
  int pos[kMaxRows];
  double bv = -2;  // below NaN's -1: no candidate
  int bk = INT_MAX;
#pragma unroll
  for (int h = 0; h < kMaxRows; ++h) pos[h] = t + h * kThreads;
  __syncthreads();
#pragma unroll
  for (int h = 0; h < kMaxRows; ++h) {
    const int r = t + h * kThreads;
    if (r < m) {
      const double x = fabs(P[idx(r, 0, n)]);
      const double v = x == x ? x : -1;
      const int key = (r << 16) | r;
      if (better(v, key, bv, bk)) bv = v, bk = key;
    }
  }
  for (int jj = 0; jj < w; ++jj) {
    double* part_v = s.part_v + (jj & 1) * kWarps;  // two sets: a column needs one barrier
    int* part_i = s.part_i + (jj & 1) * kWarps;
    warp_best(bv, bk);
    if (lane == 0) part_v[warp] = bv, part_i[warp] = bk;
    __syncthreads();
    double pv = lane < kWarps ? part_v[lane] : -2;
    int key = lane < kWarps ? part_i[lane] : INT_MAX;
    warp_best(pv, key);
    const int p = key >> 16, q = key & 0xffff;  // the pivot's position and its row
    if (t == 0) ipiv[j0 + jj] = j0 + p + 1;
    const double pivot = P[idx(q, jj, n)];
    if (t == 0 && pivot == 0 && s.scalars[1] == 0) s.scalars[1] = j0 + jj + 1;
    bv = -2, bk = INT_MAX;
#pragma unroll
    for (int h = 0; h < kMaxRows; ++h) {
      const int r = t + h * kThreads;
      if (r >= m) continue;
      if (pos[h] == jj) pos[h] = p;  // the row at jj goes to the pivot's place, the pivot to jj
      if (r == q) pos[h] = jj;
      if (pos[h] <= jj) continue;  // a pivot row
      double l = P[idx(r, jj, n)];
      if (pivot != 0) l = __ddiv_rn(l, pivot);
      P[idx(r, jj, n)] = l;
      // the row's entries right of jj, 8 at a time (a chunk's loads before its stores)
      double next = 0;
#pragma unroll
      for (int c0 = 0; c0 < NB; c0 += 8) {
        if (c0 + 8 <= jj + 1 || c0 >= w) continue;
        double x[8], u[8];
#pragma unroll
        for (int e = 0; e < 8; ++e)
          if (c0 + e > jj && c0 + e < w) x[e] = P[idx(r, c0 + e, n)], u[e] = P[idx(q, c0 + e, n)];
#pragma unroll
        for (int e = 0; e < 8; ++e)
          if (c0 + e > jj && c0 + e < w) {
            x[e] = __fma_rn(-l, u[e], x[e]);
            P[idx(r, c0 + e, n)] = x[e];
            if (c0 + e == jj + 1) next = x[e];
          }
      }
      if (jj + 1 < w) {
        const double y = fabs(next);
        const double v = y == y ? y : -1;
        const int k = (pos[h] << 16) | r;
        if (better(v, k, bv, bk)) bv = v, bk = k;
      }
    }
  }
  __syncthreads();
#pragma unroll
  for (int h = 0; h < kMaxRows; ++h) {
    const int r = t + h * kThreads;
    if (r < m)
      for (int c = 0; c < w; ++c) a[idx(j0 + pos[h], j0 + c, lda)] = P[idx(r, c, n)];
  }
  __syncthreads();
}

/// Every block taking part in phase k: the row moves of panel [j0, j0 + w)'s swaps (rows whose
/// content changes, each with the row it comes from) and the panel's L11.
template <int NB>
__device__ void prepare(const double* a, int n, int lda, int j0, int w, const int* ipiv, const Shared& s) {
  const int m = n - j0, t = threadIdx.x;
  for (int r = t; r < m; r += kThreads) s.perm[r] = r;
  if (t == 0) s.scalars[0] = 0;
  for (int e = t; e < w * w; e += kThreads) {
    const int i = e % w, k = e / w;
    s.l11[i + k * NB] = __ldcg(&a[idx(j0 + i, j0 + k, lda)]);
  }
  __syncthreads();
  if (t < w) s.piv[t] = __ldcg(&ipiv[j0 + t]) - 1 - j0;  // local rows
  __syncthreads();
  if (t == 0)
    for (int jj = 0; jj < w; ++jj) {
      const int p = s.piv[jj];
      const int x = s.perm[jj];
      s.perm[jj] = s.perm[p];
      s.perm[p] = x;
    }
  __syncthreads();
  // the rows that can change: [0, w) and each pivot row (its first occurrence)
  if (t < w) {
    const int p = s.piv[t];
    if (s.perm[t] != t) {
      const int e = atomicAdd(&s.scalars[0], 1);
      s.move_dst[e] = t, s.move_src[e] = s.perm[t];
    }
    bool first = p >= w;
    for (int q = 0; q < t && first; ++q) first = s.piv[q] != p;
    if (first && s.perm[p] != p) {
      const int e = atomicAdd(&s.scalars[0], 1);
      s.move_dst[e] = p, s.move_src[e] = s.perm[p];
    }
  }
  __syncthreads();
}

/// Columns [c0, c1) (at most kCols) in phase k: the panel's row moves; right of the panel also the
/// block row (unit-lower substitution with L11, a warp per column) and the rows below.
template <int NB>
__device__ void update_columns(double* a, int n, int lda, int j0, int w, int c0, int c1, const Shared& s) {
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, cols = c1 - c0;
  const int moves = s.scalars[0], pairs = moves * cols;
  double v[kPairs];  // every (move, column) pair's value loaded before any is stored
#pragma unroll
  for (int h = 0; h < kPairs; ++h) {
    const int e = t + h * kThreads;
    if (e < pairs) v[h] = __ldcg(&a[idx(j0 + s.move_src[e % moves], c0 + e / moves, lda)]);
  }
  __syncthreads();
#pragma unroll
  for (int h = 0; h < kPairs; ++h) {
    const int e = t + h * kThreads;
    if (e < pairs) a[idx(j0 + s.move_dst[e % moves], c0 + e / moves, lda)] = v[h];
  }
  __syncthreads();
  if (c0 < j0 + w) return;  // left of the panel: the swaps only
  for (int q = warp; q < cols; q += kWarps) {
    const int c = c0 + q;
    double x = lane < w ? __ldcg(&a[idx(j0 + lane, c, lda)]) : 0;
    for (int k = 0; k + 1 < w; ++k) {
      const double xk = __shfl_sync(0xffffffffu, x, k);
      if (lane > k && lane < w) x = __fma_rn(-s.l11[lane + k * NB], xk, x);
    }
    if (lane < w) {
      s.u[lane + q * NB] = x;
      a[idx(j0 + lane, c, lda)] = x;
    }
  }
  __syncthreads();
  for (int r = j0 + w + t; r < n; r += kThreads) {
    double l[NB];
#pragma unroll
    for (int k = 0; k < NB; ++k) l[k] = k < w ? __ldcg(&a[idx(r, j0 + k, lda)]) : 0;
    for (int q0 = 0; q0 < cols; q0 += 4) {  // 4 columns' sums at once
      double acc[4];
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (q0 + q < cols) acc[q] = __ldcg(&a[idx(r, c0 + q0 + q, lda)]);
#pragma unroll
      for (int k = 0; k < NB; ++k)
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (k < w && q0 + q < cols) acc[q] = __fma_rn(-l[k], s.u[k + (q0 + q) * NB], acc[q]);
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (q0 + q < cols) a[idx(r, c0 + q0 + q, lda)] = acc[q];
    }
  }
  __syncthreads();
}

template <int NB>
__global__ void __launch_bounds__(kThreads, 1) coop_lu_kernel(double* a, int n, int lda, int* ipiv, int* info) {
  extern __shared__ __align__(16) unsigned char smem[];
  const Shared s = carve<NB>(smem, n);
  cg::grid_group grid = cg::this_grid();
  const bool first = blockIdx.x == 0;
  const int workers = gridDim.x > 1 ? gridDim.x - 1 : 1, worker = gridDim.x > 1 ? blockIdx.x - 1 : 0;
  const bool works = gridDim.x == 1 || !first;
  if (threadIdx.x == 0) s.scalars[1] = 0;
  __syncthreads();
  if (first) factor_panel<NB>(a, n, lda, 0, min(NB, n), ipiv, s);
  grid.sync();
  for (int j0 = 0; j0 < n; j0 += NB) {
    const int w = min(NB, n - j0), next = j0 + w, wn = min(NB, n - next);  // wn: panel k + 1's width
    const bool ahead = first && wn > 0;
    if (ahead || works) prepare<NB>(a, n, lda, j0, w, ipiv, s);
    if (ahead) {
      for (int c0 = next; c0 < next + wn; c0 += kCols) update_columns<NB>(a, n, lda, j0, w, c0, min(next + wn, c0 + kCols), s);
      factor_panel<NB>(a, n, lda, next, wn, ipiv, s);
    }
    if (works) {
      const int right0 = next + wn;
      const int right_tasks = (n - right0 + kCols - 1) / kCols, left_tasks = (j0 + kCols - 1) / kCols;
      for (int task = worker; task < right_tasks + left_tasks; task += workers) {
        const int c0 = task < right_tasks ? right0 + task * kCols : (task - right_tasks) * kCols;
        const int c1 = min(task < right_tasks ? n : j0, c0 + kCols);
        update_columns<NB>(a, n, lda, j0, w, c0, c1, s);
      }
    }
    grid.sync();
  }
  if (first && threadIdx.x == 0) *info = s.scalars[1];
}

/// Blocks that can run at once (one per SM: a block's 256 threads may take the whole register
/// file), 0 where the device has no cooperative launch or n's panel does not fit.
template <int NB>
int max_blocks(int n) {
  const std::size_t bytes = Layout<NB>::bytes(n);
  int dev = 0, sms = 0, optin = 0, coop = 0;
  TCSOLVE_CUDA_CHECK(cudaGetDevice(&dev));
  TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  if (coop == 0 || bytes > static_cast<std::size_t>(optin)) return 0;
  TCSOLVE_CUDA_CHECK(cudaFuncSetAttribute(coop_lu_kernel<NB>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(bytes)));
  return sms;
}

template <int NB>
void launch(CUstream_st* stream, double* a, int n, int lda, int* ipiv, int* info, int blocks) {
  const int room = n <= kMaxRows * kThreads ? max_blocks<NB>(n) : 0;
  if (room < 1) throw Unavailable("coop_lu: n = " + std::to_string(n) + " does not fit one block's shared memory");
  // enough blocks for the widest phase's tasks (16 columns each), and block 0
  const int tasks = (n + kCols - 1) / kCols;
  int grid = blocks > 0 ? blocks : 1 + tasks;
  grid = std::max(1, std::min(grid, room));
  const std::size_t bytes = Layout<NB>::bytes(n);
  void* args[] = {&a, &n, &lda, &ipiv, &info};
  TCSOLVE_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(coop_lu_kernel<NB>), dim3(grid),
                                                 dim3(kThreads), args, bytes, stream));
}

}  // namespace

int coop_lu_max_n(int nb) {
  int dev = 0, optin = 0, coop = 0;
  TCSOLVE_CUDA_CHECK(cudaGetDevice(&dev));
  TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  if (coop == 0) return 0;
  int n = 0;
  auto fits = [&](int m) {
    return (nb == 32 ? Layout<32>::bytes(m) : Layout<16>::bytes(m)) <= static_cast<std::size_t>(optin);
  };
  while (n < kMaxRows * kThreads && fits(n + 1)) ++n;  // a few thousand steps of arithmetic
  return n;
}

void coop_lu(CUstream_st* stream, double* a, int n, int lda, int nb, int* ipiv, int* info, int blocks) {
  if (n < 1 || lda < n) throw InvalidInput("coop_lu: n must be positive and lda >= n");
  if (nb == 32)
    launch<32>(stream, a, n, lda, ipiv, info, blocks);
  else if (nb == 16)
    launch<16>(stream, a, n, lda, ipiv, info, blocks);
  else
    throw InvalidInput("coop_lu: panel width " + std::to_string(nb) + " (16 or 32)");
}

}  // namespace tcsolve::cuda::kernels
