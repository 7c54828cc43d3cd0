// The leaf of the LU without pivoting (the rbt pivoting's factorization; blocked_lu.cpp's
// recursive panels end in it): columns c0..c0+w-1 (w <= 32), rows c0..n-1 of the ROW-MAJOR
// FP32 A_r, in two launches:
//   diagonal_kernel  one CTA of 32 x 32 threads factors the w x w diagonal block in shared
//                    memory (right-looking, as the cpu's unblocked LU: l = a / pivot, then
//                    the rank-1 update) and reports the first pivot not above `tiny` (or not
//                    finite) as its 1-based global column;
//   below_kernel     a warp per row below it: l U11 = a (U11 the factored block, in shared memory),
//                    lane j holding column c0 + j, 32 steps of a shuffle and an FMA.
// No step searches or exchanges anything: the rows are independent, so the leaf is a pass over
// the panel's rows (about 4 us at 16384 rows) instead of a chain of w pivot reductions.
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
constexpr int kBelowWarps = 8;

__global__ void __launch_bounds__(kW* kW)
    diagonal_kernel(float* __restrict__ a, int ld, int c0, int w, float tiny, int* __restrict__ info) {
  __shared__ float d[kW][kW + 1];
  const int i = threadIdx.y, j = threadIdx.x;
  float* row = a + static_cast<std::size_t>(c0 + i) * ld + c0;
  if (i < w && j < w) d[i][j] = row[j];
  __syncthreads();
  for (int k = 0; k < w; ++k) {
    const float pivot = d[k][k];
    if (i == 0 && j == 0 && !(fabsf(pivot) > tiny)) atomicCAS(info, 0, c0 + k + 1);
    float l = 0;
    if (i > k && i < w) l = d[i][k] / pivot;
    __syncthreads();  // every thread has read column k and the pivot row
    if (i > k && i < w) {
      if (j == k) d[i][k] = l;
      else if (j > k && j < w) d[i][j] = fmaf(-l, d[k][j], d[i][j]);
    }
    __syncthreads();
  }
  if (i < w && j < w) row[j] = d[i][j];
}

__global__ void __launch_bounds__(kW* kBelowWarps)
    below_kernel(float* __restrict__ a, int ld, int n, int c0, int w) {
  __shared__ float u[kW][kW + 1];
  const int lane = threadIdx.x, warp = threadIdx.y;
  for (int r = warp; r < w; r += kBelowWarps)
    if (lane < w) u[r][lane] = a[static_cast<std::size_t>(c0 + r) * ld + c0 + lane];
  __syncthreads();
  const int first = c0 + w;
  for (int i = first + blockIdx.x * kBelowWarps + warp; i < n; i += gridDim.x * kBelowWarps) {
    float* row = a + static_cast<std::size_t>(i) * ld + c0;
    float x = lane < w ? row[lane] : 0.0f;
    for (int k = 0; k < w; ++k) {
      const float l = __shfl_sync(0xffffffffu, x, k) / u[k][k];
      if (lane == k) x = l;
      else if (lane > k) x = fmaf(-l, u[k][lane], x);
    }
    if (lane < w) row[lane] = x;
  }
}

}  // namespace

void factor_leaf_nopivot(CUstream_st* stream, float* a, int ld, int n, int c0, int w, float tiny, int* info) {
  if (w < 1 || w > kW || c0 + w > n) throw InvalidInput("factor_leaf_nopivot: a leaf of 1..32 columns inside n");
  diagonal_kernel<<<1, dim3(kW, kW), 0, stream>>>(a, ld, c0, w, tiny, info);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  const int rows = n - c0 - w;
  if (rows <= 0) return;
  const int blocks = std::min(ceil_div(rows, kBelowWarps), 1024);
  below_kernel<<<blocks, dim3(kW, kBelowWarps), 0, stream>>>(a, ld, n, c0, w);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
