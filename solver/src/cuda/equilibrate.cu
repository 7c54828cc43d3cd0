// Power-of-two equilibration on the device (LAPACK dgeequ with powers of two; cpu/blocked_lu.cpp's
// equilibrate()): A_s = R A C in FP32 from the FP64 A, with R and C bitwise the cpu's because
// both call detail::equilibration_exponent (equilibration.hpp) on the same maxima, and the
// products by powers of two are exact.
//
//   row_partial_kernel   per (row, chunk of columns): max |a_ij| and sum |a_ij| over the chunk
//                        (threads over rows: coalesced reads of the column-major A);
//   row_finish_kernel    per row: max and sum over the chunks in order -> row_scale[i], and
//                        ||A||_inf = max of the row sums (atomicMax on the bits of a
//                        non-negative double, which order like the values); these two alone
//                        are norm_inf();
//   col_scale_kernel     one block per column: max_i row_scale[i] |a_ij| -> col_scale[j], and
//                        (when asked) sum_i |a_ij| in a fixed order -> col_sum[j], the column
//                        sums of ||A||_1 for the condition estimate, read in the same pass;
//   scale_convert_kernel a_s(i, j) = fp32_rn((row_scale[i] a_ij) col_scale[j]), written row-major
//                        (the LU's layout) through shared-memory tiles.
//
// The last two go by column ranges (equilibrate_columns): the LU converts its first block's
// columns before the first panel and the rest on the update stream while that panel is factored
// (the columns' scales and values do not depend on the split: bitwise the same A_s).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "../equilibration.hpp"
#include "kernels.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = 256;             ///< threads per block of every kernel here
constexpr int kMaxChunks = 64;            ///< column chunks of the row pass (scratch: 2 kMaxChunks n doubles)
constexpr int kTile = 32, kTileRows = 8;  ///< scale_convert_kernel's tile and block rows

int row_chunks(int n) { return std::max(1, std::min(kMaxChunks, n / 128)); }

__global__ void __launch_bounds__(kThreads)
    row_partial_kernel(const double* __restrict__ a, int n, int chunk_cols, double* __restrict__ pmax,
                       double* __restrict__ psum) {
  const int i = blockIdx.x * kThreads + threadIdx.x;  // row
  if (i >= n) return;
  const int c0 = blockIdx.y * chunk_cols, c1 = min(n, c0 + chunk_cols);
  double m = 0, s = 0;
  for (int c = c0; c < c1; ++c) {
    const double v = fabs(a[i + static_cast<std::size_t>(c) * n]);
    m = fmax(m, v);
    s += v;
  }
  pmax[i + static_cast<std::size_t>(blockIdx.y) * n] = m;
  psum[i + static_cast<std::size_t>(blockIdx.y) * n] = s;
}

__global__ void __launch_bounds__(kThreads)
    row_finish_kernel(const double* __restrict__ pmax, const double* __restrict__ psum, int n, int chunks,
                      double* __restrict__ row_scale, unsigned long long* __restrict__ norm_bits) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  double m = 0, s = 0;
  for (int k = 0; k < chunks; ++k) {  // fixed order: the sum is deterministic
    m = fmax(m, pmax[i + static_cast<std::size_t>(k) * n]);
    s += psum[i + static_cast<std::size_t>(k) * n];
  }
  if (row_scale) row_scale[i] = detail::pow2(detail::equilibration_exponent(m));
  atomicMax(norm_bits, static_cast<unsigned long long>(__double_as_longlong(s)));
}

__global__ void __launch_bounds__(kThreads)
    col_scale_kernel(const double* __restrict__ a, int n, int c0, int c1,
                     const double* __restrict__ row_scale, double* __restrict__ col_scale,
                     double* __restrict__ col_sum) {
  __shared__ double partial[kThreads];
  __shared__ double partial_sum[kThreads];
  for (int j = c0 + static_cast<int>(blockIdx.x); j < c1; j += static_cast<int>(gridDim.x)) {
    const double* col = a + static_cast<std::size_t>(j) * n;
    double m = 0, s = 0;
    for (int i = threadIdx.x; i < n; i += kThreads) {
      const double v = fabs(col[i]);
      m = fmax(m, row_scale[i] * v);
      s += v;
    }
    partial[threadIdx.x] = m;
    partial_sum[threadIdx.x] = s;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        partial[threadIdx.x] = fmax(partial[threadIdx.x], partial[threadIdx.x + half]);
        partial_sum[threadIdx.x] += partial_sum[threadIdx.x + half];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      col_scale[j] = detail::pow2(detail::equilibration_exponent(partial[0]));
      if (col_sum) col_sum[j] = partial_sum[0];
    }
    __syncthreads();
  }
}

/// a_s(i, j) = fp32_rn((row_scale[i] a_ij) col_scale[j]) for the columns [c0, c1), a_s ROW-MAJOR:
/// each block converts a kTile x kTile tile, read down the columns of the column-major A and
/// written along the rows of a_s through shared memory, so that both sides are coalesced.
__global__ void __launch_bounds__(kTile* kTileRows)
    scale_convert_kernel(const double* __restrict__ a, int n, int c0, int c1, const double* __restrict__ row_scale,
                         const double* __restrict__ col_scale, float* __restrict__ a_s) {
  __shared__ float tile[kTile][kTile + 1];
  const int i0 = blockIdx.x * kTile, j0 = c0 + static_cast<int>(blockIdx.y) * kTile;
  const int n_cols = min(n, c1);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int i = i0 + tx;
  for (int dj = ty; dj < kTile; dj += kTileRows) {
    const int j = j0 + dj;
    if (i < n && j < n_cols) {
      const std::size_t at = i + static_cast<std::size_t>(j) * n;
      tile[dj][tx] = __double2float_rn(__dmul_rn(__dmul_rn(row_scale[i], a[at]), col_scale[j]));
    }
  }
  __syncthreads();
  const int j = j0 + tx;
  for (int di = ty; di < kTile; di += kTileRows) {
    const int ii = i0 + di;
    if (ii < n && j < n_cols) a_s[static_cast<std::size_t>(ii) * n + j] = tile[tx][di];
  }
}

void row_pass(cudaStream_t stream, const double* a, int n, double* row_scale, double* norm_inf, double* workspace) {
  const int chunks = row_chunks(n);
  const int chunk_cols = ceil_div(n, chunks);
  double* pmax = workspace;
  double* psum = workspace + static_cast<std::size_t>(kMaxChunks) * n;
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(norm_inf, 0, sizeof(double), stream));  // +0.0: the bits of the smallest sum
  const unsigned row_blocks = static_cast<unsigned>(ceil_div(n, kThreads));
  row_partial_kernel<<<dim3(row_blocks, static_cast<unsigned>(chunks)), kThreads, 0, stream>>>(a, n, chunk_cols, pmax,
                                                                                    psum);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  row_finish_kernel<<<row_blocks, kThreads, 0, stream>>>(pmax, psum, n, chunks, row_scale,
                                              reinterpret_cast<unsigned long long*>(norm_inf));
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::size_t equilibrate_workspace_doubles(int n) { return 2 * static_cast<std::size_t>(kMaxChunks) * n + 1; }

void equilibrate_rows(CUstream_st* stream, const double* a, int n, double* row_scale, double* norm_inf, double* workspace) {
  row_pass(stream, a, n, row_scale, norm_inf, workspace);
}

void equilibrate_columns(CUstream_st* stream, const double* a, int n, const double* row_scale, double* col_scale, float* a_s,
                         int c0, int c1, double* col_sum) {
  c0 = std::max(c0, 0);
  c1 = std::min(c1, n);
  if (c0 >= c1) return;
  col_scale_kernel<<<static_cast<unsigned>(std::min(c1 - c0, 65535)), kThreads, 0, stream>>>(
      a, n, c0, c1, row_scale, col_scale, col_sum);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  if (a_s == nullptr) return;  // the scales only (rbt: butterfly.cu forms its own A_r)
  const unsigned row_tiles = static_cast<unsigned>(ceil_div(n, kTile));
  const unsigned col_tiles = static_cast<unsigned>(ceil_div(c1 - c0, kTile));
  scale_convert_kernel<<<dim3(row_tiles, col_tiles), dim3(kTile, kTileRows), 0, stream>>>(a, n, c0, c1, row_scale,
                                                                                         col_scale, a_s);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void equilibrate(CUstream_st* stream, const double* a, int n, double* row_scale, double* col_scale, float* a_s, double* norm_inf,
                 double* workspace) {
  equilibrate_rows(stream, a, n, row_scale, norm_inf, workspace);
  equilibrate_columns(stream, a, n, row_scale, col_scale, a_s, 0, n);
}

void norm_inf(CUstream_st* stream, const double* a, int n, double* norm, double* workspace) {
  row_pass(stream, a, n, nullptr, norm, workspace);
}

}  // namespace tcsolve::cuda::kernels
