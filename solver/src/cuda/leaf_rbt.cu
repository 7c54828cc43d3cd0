// The leaf of rbt's LU (blocked_lu.cpp's recursive panels end in it; cpu/blocked_lu.cpp's
// factorize_rbt_lu is the reference): columns c0..c0+w-1 (w <= 32), rows c0..n-1 of the
// ROW-MAJOR FP32 A_r, in two launches:
//   window_kernel  one CTA factors the window, rows [c0, c0 + m) with m = min(window, n - c0)
//                  (window 0: m = w, no pivoting), in shared memory: per column the first
//                  largest magnitude of the rows k..m-1 (a warp shuffle and one pass over the
//                  8 warps' candidates), the exchange of two shared rows, l = a / pivot and the
//                  rank-1 update (as the cpu's unblocked LU); the exchanges go to ipiv in
//                  LAPACK's form, and the first pivot not above `tiny` (or not finite) to info;
//                  It ends with X = U11^-1 (32 threads, back substitution) in `inverse`;
//   below_kernel   a thread per row below the window: l = a X (X in shared memory, read as
//                  broadcasts; 528 FMAs in registers). A warp per row solving l U11 = a by
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
constexpr int kWindowThreads = 256, kWarps = kWindowThreads / 32;
constexpr int kBelowThreads = 128;

/// The better of two candidates (v, i): the larger magnitude, the smaller row on a tie (the
/// first largest, as Eigen's maxCoeff and LAPACK's isamax take it); no candidate: i = rows.
__device__ __forceinline__ void better(float& v, int& i, float ov, int oi) {
  if (ov > v || (ov == v && oi < i)) {
    v = ov;
    i = oi;
  }
}

__global__ void __launch_bounds__(kWindowThreads)
    window_kernel(float* __restrict__ a, int ld, int c0, int w, int rows, bool pivot, float tiny,
                  int* __restrict__ ipiv, int* __restrict__ info, float* __restrict__ inverse) {
  __shared__ float s[kMaxRbtWindow][kW + 1];
  __shared__ float warp_v[kWarps];
  __shared__ int warp_i[kWarps];
  __shared__ int chosen;
  __shared__ float x[kW][kW + 1];  // U11^-1, column c by thread c
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  for (int l = t; l < rows * kW; l += kWindowThreads) {
    const int r = l / kW, c = l % kW;
    if (c < w) s[r][c] = a[static_cast<std::size_t>(c0 + r) * ld + c0 + c];
  }
  __syncthreads();
  for (int k = 0; k < w; ++k) {
    if (pivot) {
      float v = -1.0f;
      int i = rows;
      for (int r = k + t; r < rows; r += kWindowThreads) better(v, i, fabsf(s[r][k]), r);
      for (int o = 16; o > 0; o /= 2)
        better(v, i, __shfl_down_sync(0xffffffffu, v, o), __shfl_down_sync(0xffffffffu, i, o));
      if (lane == 0) {
        warp_v[warp] = v;
        warp_i[warp] = i;
      }
      __syncthreads();
      if (t == 0) {
        for (int q = 1; q < kWarps; ++q) better(v, i, warp_v[q], warp_i[q]);
        const int p = i < rows ? i : k;  // every candidate NaN: keep row k (the tiny test stops it)
        chosen = p;
        ipiv[k] = p + 1;
        if (!(fabsf(s[p][k]) > tiny)) atomicCAS(info, 0, c0 + k + 1);
      }
      __syncthreads();
      const int p = chosen;
      if (p != k && t < w) {
        const float x = s[k][t];
        s[k][t] = s[p][t];
        s[p][t] = x;
      }
      __syncthreads();
    } else if (t == 0 && !(fabsf(s[k][k]) > tiny)) {
      atomicCAS(info, 0, c0 + k + 1);
    }
    const float piv = s[k][k];
    for (int r = k + 1 + t; r < rows; r += kWindowThreads) s[r][k] = s[r][k] / piv;
    __syncthreads();
    const int cols = w - k - 1;
    if (cols > 0)
      for (int l = t; l < (rows - k - 1) * cols; l += kWindowThreads) {
        const int r = k + 1 + l / cols, c = k + 1 + l % cols;
        s[r][c] = fmaf(-s[r][k], s[k][c], s[r][c]);
      }
    __syncthreads();
  }
  for (int l = t; l < rows * kW; l += kWindowThreads) {
    const int r = l / kW, c = l % kW;
    if (c < w) a[static_cast<std::size_t>(c0 + r) * ld + c0 + c] = s[r][c];
  }
  // X = U11^-1 for the rows below the window (below_kernel), w x w padded to 32 x 32 with
  // zeros: column c by back substitution, a thread per column.
  if (inverse != nullptr && t < kW) {
    const int c = t;
    for (int r = kW - 1; r >= 0; --r) {
      float v = 0.0f;
      if (c < w && r <= c) {
        float acc = r == c ? 1.0f : 0.0f;
        for (int k = r + 1; k <= c; ++k) acc = fmaf(-s[r][k], x[k][c], acc);
        v = acc / s[r][r];
      }
      x[r][c] = v;
    }
    for (int r = 0; r < kW; ++r) inverse[r * kW + c] = x[r][c];
  }
}

__global__ void __launch_bounds__(kBelowThreads)
    below_kernel(float* __restrict__ a, int ld, int n, int c0, int w, int first, const float* __restrict__ inverse) {
  __shared__ float x[kW][kW];  // X = U11^-1 (upper triangular), read as broadcasts
  for (int l = threadIdx.x; l < kW * kW; l += kBelowThreads) x[l / kW][l % kW] = inverse[l];
  __syncthreads();
  const int i = first + blockIdx.x * kBelowThreads + threadIdx.x;
  if (i >= n) return;
  float* row = a + static_cast<std::size_t>(i) * ld + c0;
  float v[kW], l[kW];
#pragma unroll
  for (int c = 0; c < kW; ++c) v[c] = c < w ? row[c] : 0.0f;
#pragma unroll
  for (int c = 0; c < kW; ++c) {  // l = v X: l_c = sum_{k <= c} v_k x_kc
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k <= c; ++k) acc = fmaf(v[k], x[k][c], acc);
    l[c] = acc;
  }
#pragma unroll
  for (int c = 0; c < kW; ++c)
    if (c < w) row[c] = l[c];
}

}  // namespace

void factor_leaf_rbt(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int window, float tiny, int* ipiv,
                     int* info, float* inverse) {
  if (w < 1 || w > kW || c0 + w > n) throw InvalidInput("factor_leaf_rbt: a leaf of 1..32 columns inside n");
  if (window != 0 && (window <= w || window > kMaxRbtWindow))
    throw InvalidInput("factor_leaf_rbt: window 0 or w < window <= kMaxRbtWindow");
  const int rows = window == 0 ? w : std::min(window, n - c0);
  const int below = n - c0 - rows;
  window_kernel<<<1, kWindowThreads, 0, stream>>>(a, ld, c0, w, rows, window != 0, tiny, ipiv, info,
                                                  below > 0 ? inverse : nullptr);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  if (below <= 0) return;
  below_kernel<<<ceil_div(below, kBelowThreads), kBelowThreads, 0, stream>>>(a, ld, n, c0, w, c0 + rows, inverse);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
