// The leaf of rbt's LU (blocked_lu.cpp's recursive panels end in it; cpu/blocked_lu.cpp's
// factorize_rbt_lu is the reference): columns c0..c0+w-1 (w <= 32), rows c0..n-1 of the
// ROW-MAJOR FP32 A_r, in two launches:
//   window_kernel  one CTA factors the window, rows [c0, c0 + m) with m = min(window, n - c0)
//                  (window 0: m = w, no pivoting), in shared memory: per column the first
//                  largest magnitude of the rows k..m-1 (a warp shuffle and one pass over the
//                  8 warps' candidates), the exchange of two shared rows, l = a / pivot and the
//                  rank-1 update (as the cpu's unblocked LU); the exchanges go to ipiv in
//                  LAPACK's form, and the first pivot not above `tiny` (or not finite) to info;
//   below_kernel   a warp per row below the window: l U11 = a (U11 the factored top w x w, in
//                  shared memory), lane j holding column c0 + j, 32 steps of a shuffle and an FMA.
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
constexpr int kBelowWarps = 8;

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
                  int* __restrict__ ipiv, int* __restrict__ info) {
  __shared__ float s[kMaxRbtWindow][kW + 1];
  __shared__ float warp_v[kWarps];
  __shared__ int warp_i[kWarps];
  __shared__ int chosen;
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
}

__global__ void __launch_bounds__(kW* kBelowWarps)
    below_kernel(float* __restrict__ a, int ld, int n, int c0, int w, int first) {
  __shared__ float u[kW][kW + 1];
  const int lane = threadIdx.x, warp = threadIdx.y;
  for (int r = warp; r < w; r += kBelowWarps)
    if (lane < w) u[r][lane] = a[static_cast<std::size_t>(c0 + r) * ld + c0 + lane];
  __syncthreads();
  for (int i = first + blockIdx.x * kBelowWarps + warp; i < n; i += gridDim.x * kBelowWarps) {
    float* row = a + static_cast<std::size_t>(i) * ld + c0;
    float x = lane < w ? row[lane] : 0.0f;
    for (int k = 0; k < w; ++k) {
      const float l = __shfl_sync(0xffffffffu, x, k) / u[k][k];
      if (lane == k)
        x = l;
      else if (lane > k)
        x = fmaf(-l, u[k][lane], x);
    }
    if (lane < w) row[lane] = x;
  }
}

}  // namespace

void factor_leaf_rbt(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int window, float tiny, int* ipiv,
                     int* info) {
  if (w < 1 || w > kW || c0 + w > n) throw InvalidInput("factor_leaf_rbt: a leaf of 1..32 columns inside n");
  if (window != 0 && (window <= w || window > kMaxRbtWindow))
    throw InvalidInput("factor_leaf_rbt: window 0 or w < window <= kMaxRbtWindow");
  const int rows = window == 0 ? w : std::min(window, n - c0);
  window_kernel<<<1, kWindowThreads, 0, stream>>>(a, ld, c0, w, rows, window != 0, tiny, ipiv, info);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  const int below = n - c0 - rows;
  if (below <= 0) return;
  const int blocks = std::min(ceil_div(below, kBelowWarps), 1024);
  below_kernel<<<blocks, dim3(kW, kBelowWarps), 0, stream>>>(a, ld, n, c0, w, c0 + rows);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
