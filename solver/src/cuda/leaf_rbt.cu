// The leaf of rbt's LU (blocked_lu.cpp's recursive panels end in it; cpu/blocked_lu.cpp's
// factorize_rbt_lu is the reference): columns c0..c0+w-1 (w <= 32), rows c0..n-1 of the
// ROW-MAJOR FP32 A_r, in two launches:
//   window_kernel  one CTA factors the window, rows [c0, c0 + m) with m = min(window, n - c0)
//                  (window 0: m = w, no pivoting), a thread per row holding it in registers:
//                  per column the first largest magnitude of the rows k..m-1, the exchange of
//                  two rows, l = a / pivot and the rank-1 update (as the cpu's unblocked LU);
//                  the window's permutation goes out as (dst, src) pairs for
//                  apply_row_pairs_in_block, the first pivot not above `tiny` (or not finite)
//                  to info, and X = U11^-1 (forward substitution, a thread per row of X) to
//                  `inverse`. A first version in shared memory (a thread per element, five
//                  barriers and integer divisions per column) took about 45 us a leaf;
//   below_kernel   a thread per row below the window: l = a X (X in shared memory, read as
//                  broadcasts; 528 FMAs in registers), the rows loaded and stored a warp per row
//                  through a shared tile (a thread reading its own row touched 32 lines a load). A warp per row solving l U11 = a by
//                  substitution (shuffles and divisions, half the lanes idle) took 86 us a leaf
//                  at 16384 rows on the panel's 16 SMs: it was issue-bound.
// No reduction spans more than the window: the leaf is one CTA's chain plus a pass over the
// panel's rows, instead of partial pivoting's chain of w reductions over the whole column.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "kernels.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda_check.hpp"
#include "tcsolve/gemm/error.hpp"

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
/// below k in registers. Two barriers a column (one without pivoting); shared buffers alternate
/// by the column's parity, so that column k + 1's writes never meet column k's reads.
__global__ void __launch_bounds__(kMaxRbtWindow, 1)
    window_kernel(float* __restrict__ a, int ld, int c0, int w, int rows, bool pivot, float tiny,
                  int* __restrict__ pairs, int* __restrict__ info, float* __restrict__ inverse) {
  __shared__ float cand_v[2][kMaxRbtWindow / 32];
  __shared__ int cand_i[2][kMaxRbtWindow / 32];
  __shared__ float prow[2][kW], krow[2][kW];
  __shared__ int porig[2], korig[2];
  __shared__ float u[kW][kW + 1];
  __shared__ int moved;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
  const bool mine = t < rows;
  if (t == 0) moved = 0;
  float v[kW];
  int orig = t;
#pragma unroll
  for (int c = 0; c < kW; ++c) v[c] = (mine && c < w) ? a[static_cast<std::size_t>(c0 + t) * ld + c0 + c] : 0.0f;
#pragma unroll
  for (int k = 0; k < kW; ++k) {
    if (k >= w) break;
    const int b = k & 1;
    int p = k;
    if (pivot) {
      float cv = (mine && t >= k) ? fabsf(v[k]) : -1.0f;
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
    if (t == 0 && !(fabsf(prow[b][k]) > tiny)) atomicCAS(info, 0, c0 + k + 1);
    if (p != k && (t == k || t == p)) {
      const float* from = t == k ? prow[b] : krow[b];
#pragma unroll
      for (int c = 0; c < kW; ++c) v[c] = from[c];
      orig = t == k ? porig[b] : korig[b];
    }
    if (mine && t > k) {
      const float l = v[k] / prow[b][k];
      v[k] = l;
#pragma unroll
      for (int c = k + 1; c < kW; ++c) v[c] = fmaf(-l, prow[b][c], v[c]);
    }
  }
  if (mine)
#pragma unroll
    for (int c = 0; c < kW; ++c)
      if (c < w) a[static_cast<std::size_t>(c0 + t) * ld + c0 + c] = v[c];
  if (pivot && mine && orig != t) {  // the window's permutation as (dst, src) pairs, in any order
    const int m = atomicAdd(&moved, 1);
    pairs[1 + m] = c0 + t;
    pairs[1 + 2 * w + m] = c0 + orig;
  }
  if (t < w)
#pragma unroll
    for (int c = 0; c < kW; ++c) u[t][c] = v[c];
  __syncthreads();
  if (pivot && t == 0) pairs[0] = moved;
  // X = U11^-1 for the rows below the window (below_kernel): row t of X by forward substitution
  // (x U = e_t), U read as broadcasts; zero outside w x w.
  if (inverse != nullptr && t < kW) {
    float x[kW];
#pragma unroll
    for (int c = 0; c < kW; ++c) {
      float acc = c == t ? 1.0f : 0.0f;
#pragma unroll
      for (int k = 0; k < c; ++k) acc = fmaf(-x[k], u[k][c], acc);
      x[c] = (t < w && c < w) ? acc / u[c][c] : 0.0f;
    }
#pragma unroll
    for (int c = 0; c < kW; ++c) inverse[t * kW + c] = x[c];
  }
}

__global__ void __launch_bounds__(kBelowThreads)
    below_kernel(float* __restrict__ a, int ld, int n, int c0, int w, int first, const float* __restrict__ inverse) {
  __shared__ float x[kW][kW];                   // X = U11^-1 (upper triangular), read as broadcasts
  __shared__ float tile[kBelowThreads][kW + 1];  // the CTA's rows, loaded and stored a warp per row
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  for (int l = t; l < kW * kW; l += kBelowThreads) x[l / kW][l % kW] = inverse[l];
  const int r0 = first + blockIdx.x * kBelowThreads;
  for (int r = warp; r < kBelowThreads; r += kBelowThreads / 32) {
    const int i = r0 + r;
    tile[r][lane] = (i < n && lane < w) ? a[static_cast<std::size_t>(i) * ld + c0 + lane] : 0.0f;
  }
  __syncthreads();
  float v[kW];
#pragma unroll
  for (int c = 0; c < kW; ++c) v[c] = tile[t][c];
#pragma unroll
  for (int c = 0; c < kW; ++c) {  // l = v X: l_c = sum_{k <= c} v_k x_kc
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k <= c; ++k) acc = fmaf(v[k], x[k][c], acc);
    tile[t][c] = acc;
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
                       int* info, float* inverse) {
  if (w < 1 || w > kW || c0 + w > n) throw InvalidInput("factor_rbt_window: a leaf of 1..32 columns inside n");
  if (window != 0 && (window <= w || window > kMaxRbtWindow))
    throw InvalidInput("factor_rbt_window: window 0 or w < window <= kMaxRbtWindow");
  const int rows = rbt_window_rows(n, c0, w, window);
  window_kernel<<<1, ceil_div(rows, 32) * 32, 0, stream>>>(a, ld, c0, w, rows, window != 0, tiny, pairs, info,
                                                           n - c0 - rows > 0 ? inverse : nullptr);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void factor_rbt_below(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int window, const float* inverse) {
  const int first = c0 + rbt_window_rows(n, c0, w, window);
  if (first >= n) return;
  below_kernel<<<ceil_div(n - first, kBelowThreads), kBelowThreads, 0, stream>>>(a, ld, n, c0, w, first, inverse);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
