// The leaf of rbt's LU (blocked_lu.cpp's recursive panels end in it; cpu/blocked_lu.cpp's
// factorize_rbt_lu is the reference): columns c0..c0+w-1 (w <= 32), rows c0..n-1 of the
// ROW-MAJOR FP32 A_r, in two launches:
//   window_kernel  one CTA factors the window, rows [c0, c0 + m) with m = min(window, n - c0)
//                  (window 0: m = w, no pivoting), a thread per row holding it in registers:
//                  per column the first largest magnitude of the rows k..m-1, the exchange of
//                  two rows, l = a / pivot and the rank-1 update (as the cpu's unblocked LU);
//                  the window's permutation goes out as (dst, src) pairs for
//                  apply_row_pairs_in_block, the first pivot not above `tiny` (or not finite)
//                  to info;
//   below_kernel   a thread per row below the window: l U11 = a by substitution in registers
//                  (U11 in shared memory, read as broadcasts), the rows loaded and stored a warp
//                  per row through a shared tile. A warp per row (lane j holding column j,
//                  shuffles, half the lanes idle) was issue-bound on the panel's 16 SMs; l = a
//                  U11^-1 through an explicit inverse cost the solve an iteration at n = 16384.
// No reduction spans more than the window: the leaf is one CTA's chain plus a pass over the
// panel's rows, instead of partial pivoting's chain of w reductions over the whole column.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "kernels.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kW = kMaxLeafWidth;  // 32
constexpr int kBelowThreads = 128;

/// The better of two candidates (v, i): the larger magnitude, the smaller row on a tie (the
/// first largest, as Eigen's maxCoeff and LAPACK's isamax take it); no candidate: i = rows. A
/// lexicographic maximum: associative and commutative, so a butterfly gives every lane the same.
__device__ __forceinline__ void better(float& v, int& i, float ov, int oi) {
  if (ov > v || (ov == v && oi < i)) {
    v = ov;
    i = oi;
  }
}

/// Thread t holds row c0 + t of the window in registers (v[0..32)); per column k: the argmax
/// (warp butterflies, then the warps' candidates through shared memory), the pivot row and row
/// k through shared memory (the two threads exchange their rows), the elimination of the rows
/// below k in registers. The column being factored is always v[0]: every step rotates the
/// registers by one, so that the step's code is one loop body (a fully unrolled version ran
/// its 100 KB of straight-line code once per launch and stalled on instruction fetch half the
/// time, 50 us a leaf). Two barriers a column (one without pivoting); shared buffers alternate by
/// the column's parity, so that column k + 1's writes never meet column k's reads.
__global__ void __launch_bounds__(kMaxRbtWindow, 1)
    window_kernel(float* __restrict__ a, int ld, int c0, int w, int rows, bool pivot, float tiny,
                  int* __restrict__ pairs, int* __restrict__ info) {
  __shared__ float cand_v[2][kMaxRbtWindow / 32];
  __shared__ int cand_i[2][kMaxRbtWindow / 32];
  __shared__ float prow[2][kW], krow[2][kW];
  __shared__ int porig[2], korig[2];
  __shared__ int moved;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
  const bool mine = t < rows;
  if (t == 0) moved = 0;
  float v[kW];
  int orig = t;
#pragma unroll
  for (int c = 0; c < kW; ++c) v[c] = (mine && c < w) ? a[static_cast<std::size_t>(c0 + t) * ld + c0 + c] : 0.0f;
#pragma unroll 1
  for (int k = 0; k < w; ++k) {
    const int b = k & 1;
    int p = k;
    if (pivot) {
      float cv = (mine && t >= k) ? fabsf(v[0]) : -1.0f;
      int ci = (mine && t >= k) ? t : rows;
#pragma unroll
      for (int o = 16; o > 0; o /= 2)
        better(cv, ci, __shfl_xor_sync(0xffffffffu, cv, o), __shfl_xor_sync(0xffffffffu, ci, o));
      if (lane == 0) {
        cand_v[b][warp] = cv;
        cand_i[b][warp] = ci;
      }
      __syncthreads();
      cv = cand_v[b][0];
      ci = cand_i[b][0];
      for (int q = 1; q < warps; ++q) better(cv, ci, cand_v[b][q], cand_i[b][q]);
      p = ci < rows ? ci : k;  // every candidate NaN: row k (the tiny test stops it)
    }
    if (t == p) {
#pragma unroll
      for (int c = 0; c < kW; ++c) prow[b][c] = v[c];
      porig[b] = orig;
    }
    if (t == k && p != k) {
#pragma unroll
      for (int c = 0; c < kW; ++c) krow[b][c] = v[c];
      korig[b] = orig;
    }
    __syncthreads();
    if (t == 0 && !(fabsf(prow[b][0]) > tiny)) atomicCAS(info, 0, c0 + k + 1);
    if (p != k && (t == k || t == p)) {
      const float* from = t == k ? prow[b] : krow[b];
#pragma unroll
      for (int c = 0; c < kW; ++c) v[c] = from[c];
      orig = t == k ? porig[b] : korig[b];
    }
    if (mine && t > k) {
      const float l = v[0] / prow[b][0];
      v[0] = l;
      const int active = w - k;  // v[1..active) are the leaf's columns right of k
#pragma unroll
      for (int c = 1; c < kW; ++c)
        if (c < active) v[c] = fmaf(-l, prow[b][c], v[c]);
    }
    const float done = v[0];  // rotate: column k + 1 to v[0], column k to the end
#pragma unroll
    for (int c = 0; c + 1 < kW; ++c) v[c] = v[c + 1];
    v[kW - 1] = done;
  }
  if (mine)  // after w rotations column c sits at v[(c - w) mod 32]
#pragma unroll
    for (int q = 0; q < kW; ++q) {
      const int c = (q + w) & (kW - 1);
      if (c < w) a[static_cast<std::size_t>(c0 + t) * ld + c0 + c] = v[q];
    }
  if (pivot && mine && orig != t) {  // the window's permutation as (dst, src) pairs, in any order
    const int m = atomicAdd(&moved, 1);
    pairs[1 + m] = c0 + t;
    pairs[1 + 2 * w + m] = c0 + orig;
  }
  __syncthreads();
  if (pivot && t == 0) pairs[0] = moved;
}

__global__ void __launch_bounds__(kBelowThreads)
    below_kernel(float* __restrict__ a, int ld, int n, int c0, int w, int first) {
  __shared__ float u[kW][kW + 1];                // U11, read as broadcasts
  __shared__ float tile[kBelowThreads][kW + 1];  // the CTA's rows, loaded and stored a warp per row
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  for (int r = warp; r < kW; r += kBelowThreads / 32)
    u[r][lane] = (r < w && lane < w) ? a[static_cast<std::size_t>(c0 + r) * ld + c0 + lane] : (r == lane ? 1.0f : 0.0f);
  const int r0 = first + blockIdx.x * kBelowThreads;
  for (int r = warp; r < kBelowThreads; r += kBelowThreads / 32) {
    const int i = r0 + r;
    tile[r][lane] = (i < n && lane < w) ? a[static_cast<std::size_t>(i) * ld + c0 + lane] : 0.0f;
  }
  __syncthreads();
  float l[kW];
#pragma unroll
  for (int c = 0; c < kW; ++c) {  // l U11 = a: l_c = (a_c - sum_{k < c} l_k u_kc) / u_cc
    float acc = tile[t][c];
#pragma unroll
    for (int k = 0; k < c; ++k) acc = fmaf(-l[k], u[k][c], acc);
    l[c] = acc / u[c][c];
    tile[t][c] = l[c];
  }
  __syncthreads();
  for (int r = warp; r < kBelowThreads; r += kBelowThreads / 32) {
    const int i = r0 + r;
    if (i < n && lane < w) a[static_cast<std::size_t>(i) * ld + c0 + lane] = tile[r][lane];
  }
}

}  // namespace

int rbt_window_rows(int n, int c0, int w, int window) { return window == 0 ? w : std::min(window, n - c0); }

void factor_rbt_window(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int window, float tiny, int* pairs,
                       int* info) {
  if (w < 1 || w > kW || c0 + w > n) throw InvalidInput("factor_rbt_window: a leaf of 1..32 columns inside n");
  if (window != 0 && (window <= w || window > kMaxRbtWindow))
    throw InvalidInput("factor_rbt_window: window 0 or w < window <= kMaxRbtWindow");
  const int rows = rbt_window_rows(n, c0, w, window);
  window_kernel<<<1, ceil_div(rows, 32) * 32, 0, stream>>>(a, ld, c0, w, rows, window != 0, tiny, pairs, info);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void factor_rbt_below(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int window) {
  const int first = c0 + rbt_window_rows(n, c0, w, window);
  if (first >= n) return;
  below_kernel<<<ceil_div(n - first, kBelowThreads), kBelowThreads, 0, stream>>>(a, ld, n, c0, w, first);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
