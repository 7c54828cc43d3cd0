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
//   equilibrate_fp64_kernel  the FP64 path of small systems' equilibration and A_s in FP64 (the
//                        matrix dgetrf factors) in one cooperative launch below n = 1024: the
//                        same arithmetic as the kernels above and scale_copy, parted by grid
//                        barriers (each launch costs the host microseconds, and before the LU
//                        the device only waits).
//   equilibrate_fp64_cluster_kernel  the same in one launch of one thread-block cluster
//                        (small_cluster.cuh), parted by one cluster barrier: the default below n
//                        = 384, the cooperative launch from there to 1024 (Fp64Equilibration).
//
// The last two go by column ranges (equilibrate_columns): the LU converts its first block's
// columns before the first panel and the rest on the update stream while that panel is factored
// (the columns' scales and values do not depend on the split: bitwise the same A_s).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "../equilibration.hpp"
#include "kernels.hpp"
#include "small_cluster.cuh"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;             ///< threads per block of every kernel here
constexpr int kMaxChunks = 64;            ///< column chunks of the row pass (scratch: 2 kMaxChunks n doubles)
constexpr int kTile = 32, kTileRows = 8;  ///< scale_convert_kernel's tile and block rows
/// equilibrate_fp64 in one cooperative launch below this n, the kernels one by one from it. On
/// an H200 (session 34, calls b, f and g: the FP64 path's "equilibrate" phase, launches
/// included) one launch took 26 us at n = 200 against 43 for the four kernels alone (scale_copy
/// and the memset not counted), 67 against 66 at 1024 with everything counted, and 109 against
/// 97 at 2048: its grid barriers cost more than the launches they save once the passes are long.
constexpr int kOneLaunchBelow = kFp64OneLaunchBelow;
/// kFp64ClusterBelow: Fp64Equilibration::automatic takes one cluster below it, one cooperative
/// launch from it (below kOneLaunchBelow). Device times on a busy stream
/// (tcsolve_small_lu_bench --fixed, H200, session 38 call a), cluster / cooperative / kernel by
/// kernel: 12.0 / 15.4 / 17.2 us at n = 200, 12.7 / 17.2 / 17.0 at 256, 23.0 / 21.5 / 19.2 at
/// 384, 47.7 / 34.1 / 24.0 at 768: the cluster's 8 SMs read A twice, the kernels spread over the
/// GPU (their launches, which the busy stream hides, are what the one launch saves in the solve,
/// where the equilibration starts on an idle device).
constexpr int kClusterBelow = kFp64ClusterBelow;

/// Column chunks of the row pass: about 16 columns each up to n = 1024, so that a small A's few
/// rows still make several blocks of short loops (at n = 200, one chunk of 200 dependent loads
/// took 43 us, a tenth of the FP64 path's time), then kMaxChunks.
int row_chunks(int n) { return std::max(1, std::min(kMaxChunks, ceil_div(n, 16))); }

/// Row block bx, chunk by of the row pass: max |a_ij| and sum |a_ij| over the chunk's columns.
/// t: the thread's index in its block of kThreads (a one-cluster kernel's groups of kThreads).
__device__ __forceinline__ void row_partial(const double* __restrict__ a, int n, int chunk_cols, int bx, int by,
                                            double* __restrict__ pmax, double* __restrict__ psum, int t) {
  const int i = bx * kThreads + t;  // row
  if (i >= n) return;
  const int c0 = by * chunk_cols, c1 = min(n, c0 + chunk_cols);
  double m = 0, s = 0;
#pragma unroll 4
  for (int c = c0; c < c1; ++c) {
    const double v = fabs(a[i + static_cast<std::size_t>(c) * n]);
    m = fmax(m, v);
    s += v;
  }
  pmax[i + static_cast<std::size_t>(by) * n] = m;
  psum[i + static_cast<std::size_t>(by) * n] = s;
}

/// Row block bx of the row pass's end: the chunks in order -> row_scale[i], ||A||_inf.
__device__ __forceinline__ void row_finish(const double* __restrict__ pmax, const double* __restrict__ psum, int n,
                                           int chunks, int bx, double* __restrict__ row_scale,
                                           unsigned long long* __restrict__ norm_bits) {
  const int i = bx * kThreads + static_cast<int>(threadIdx.x);
  if (i >= n) return;
  double m = 0, s = 0;
#pragma unroll 8
  for (int k = 0; k < chunks; ++k) {  // fixed order: the sum is deterministic
    m = fmax(m, pmax[i + static_cast<std::size_t>(k) * n]);
    s += psum[i + static_cast<std::size_t>(k) * n];
  }
  if (row_scale) row_scale[i] = detail::pow2(detail::equilibration_exponent(m));
  atomicMax(norm_bits, static_cast<unsigned long long>(__double_as_longlong(s)));
}

__global__ void __launch_bounds__(kThreads)
    row_partial_kernel(const double* __restrict__ a, int n, int chunk_cols, double* __restrict__ pmax,
                       double* __restrict__ psum) {
  row_partial(a, n, chunk_cols, static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y), pmax, psum,
              static_cast<int>(threadIdx.x));
}

__global__ void __launch_bounds__(kThreads)
    row_finish_kernel(const double* __restrict__ pmax, const double* __restrict__ psum, int n, int chunks,
                      double* __restrict__ row_scale, unsigned long long* __restrict__ norm_bits) {
  row_finish(pmax, psum, n, chunks, static_cast<int>(blockIdx.x), row_scale, norm_bits);
}

/// Columns first, first + stride, ... of [c0, c1) (the whole block together): max_i row_scale[i]
/// |a_ij| -> col_scale[j] and sum_i |a_ij| -> col_sum[j] (when not null), in a fixed order.
__device__ __forceinline__ void col_scales(const double* __restrict__ a, int n, int c0, int c1, int first, int stride,
                                           const double* __restrict__ row_scale, double* __restrict__ col_scale,
                                           double* __restrict__ col_sum) {
  __shared__ double partial[kThreads];
  __shared__ double partial_sum[kThreads];
  for (int j = c0 + first; j < c1; j += stride) {
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

__global__ void __launch_bounds__(kThreads)
    col_scale_kernel(const double* __restrict__ a, int n, int c0, int c1,
                     const double* __restrict__ row_scale, double* __restrict__ col_scale,
                     double* __restrict__ col_sum) {
  col_scales(a, n, c0, c1, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x), row_scale, col_scale, col_sum);
}

/// equilibrate_fp64's one cooperative launch: the row pass's two steps, the column scales and
/// sums, then a_s = (R A) C in FP64, the phases parted by grid barriers; `zero` set to 0 first.
__global__ void __launch_bounds__(kThreads)
    equilibrate_fp64_kernel(const double* __restrict__ a, int n, int chunks, int chunk_cols, double* __restrict__ pmax,
                            double* __restrict__ psum, double* __restrict__ row_scale, double* __restrict__ col_scale,
                            double* __restrict__ col_sum, unsigned long long* __restrict__ norm_bits,
                            double* __restrict__ a_s, int* __restrict__ zero) {
  cg::grid_group grid = cg::this_grid();
  const int block = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
  if (block == 0 && threadIdx.x == 0) {
    *norm_bits = 0;  // +0.0: the bits of the smallest sum
    *zero = 0;
  }
  const int row_blocks = ceil_div(n, kThreads);
  for (int v = block; v < row_blocks * chunks; v += blocks)
    row_partial(a, n, chunk_cols, v % row_blocks, v / row_blocks, pmax, psum, static_cast<int>(threadIdx.x));
  grid.sync();
  for (int v = block; v < row_blocks; v += blocks) row_finish(pmax, psum, n, chunks, v, row_scale, norm_bits);
  grid.sync();
  col_scales(a, n, 0, n, block, blocks, row_scale, col_scale, col_sum);
  grid.sync();
  for (int j = block; j < n; j += blocks) {  // a block per column, its threads down the rows
    const double c = col_scale[j];
    const std::size_t col = static_cast<std::size_t>(j) * static_cast<std::size_t>(n);
    for (int i = static_cast<int>(threadIdx.x); i < n; i += kThreads)
      a_s[col + i] = __dmul_rn(__dmul_rn(row_scale[i], a[col + i]), c);
  }
}

/// equilibrate_fp64 in one cluster (small_cluster.cuh; n < kOneLaunchBelow): the same arithmetic
/// in the same order as equilibrate_fp64_kernel, in two phases parted by the cluster's barrier.
///   rows     the row pass's partial step, its tasks over the cluster's groups of kThreads
///            threads (row_partial), into pmax and psum;
///   columns  every block forms all n row scales from the partials (row_finish's loop) in shared
///            memory; block 0 also writes them and ||A||_inf (the largest row sum's bits, as the
///            atomicMax), and zero. Then a warp per column: col_scales' 256 strided partial
///            maxima and sums held as 8 per lane, and its tree (halves 128, 64, 32 inside the
///            lane, 16 to 1 by shuffles: the same pairs in the same order), the column's scale
///            and sum, then its column of a_s.
__global__ void __launch_bounds__(kSmallClusterThreads, 1)
    equilibrate_fp64_cluster_kernel(const double* __restrict__ a, int n, int chunks, int chunk_cols,
                                    double* __restrict__ pmax, double* __restrict__ psum,
                                    double* __restrict__ row_scale, double* __restrict__ col_scale,
                                    double* __restrict__ col_sum, double* __restrict__ norm_inf,
                                    double* __restrict__ a_s, int* __restrict__ zero) {
  constexpr int kGroups = kSmallClusterThreads / kThreads;  // groups of kThreads a block
  __shared__ double scale[kOneLaunchBelow];
  __shared__ unsigned long long warp_bits[kSmallClusterThreads / 32];
  const int block = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid / 32;
  const int row_blocks = ceil_div(n, kThreads);
  for (int v = block * kGroups + tid / kThreads; v < row_blocks * chunks; v += blocks * kGroups)
    row_partial(a, n, chunk_cols, v % row_blocks, v / row_blocks, pmax, psum, tid % kThreads);
  small_cluster_sync();
  unsigned long long bits = 0;  // +0.0: the bits of the smallest sum
  for (int i = tid; i < n; i += kSmallClusterThreads) {
    double m = 0, s = 0;
    for (int k = 0; k < chunks; ++k) {  // row_finish's order
      m = fmax(m, __ldcg(pmax + i + static_cast<std::size_t>(k) * n));
      s += __ldcg(psum + i + static_cast<std::size_t>(k) * n);
    }
    const double r = detail::pow2(detail::equilibration_exponent(m));
    scale[i] = r;
    if (block == 0) row_scale[i] = r;
    bits = max(bits, static_cast<unsigned long long>(__double_as_longlong(s)));
  }
  if (block == 0) {  // ||A||_inf: the largest sum's bits (non-negative doubles order like their bits)
    for (int offset = 16; offset > 0; offset /= 2) bits = max(bits, __shfl_down_sync(0xffffffffu, bits, offset));
    if (lane == 0) warp_bits[warp] = bits;
  }
  __syncthreads();
  if (block == 0 && warp == 0) {
    bits = warp_bits[lane];
    for (int offset = 16; offset > 0; offset /= 2) bits = max(bits, __shfl_down_sync(0xffffffffu, bits, offset));
    if (lane == 0) {
      *norm_inf = __longlong_as_double(static_cast<long long>(bits));
      *zero = 0;
    }
  }
  for (int j = block * (kSmallClusterThreads / 32) + warp; j < n; j += blocks * (kSmallClusterThreads / 32)) {
    const double* col = a + static_cast<std::size_t>(j) * n;
    double pm[8], ps[8];  // col_scales' partials of threads lane + 32 q
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      double m = 0, s = 0;
      for (int i = lane + 32 * q; i < n; i += kThreads) {
        const double v = fabs(col[i]);
        m = fmax(m, scale[i] * v);
        s += v;
      }
      pm[q] = m;
      ps[q] = s;
    }
#pragma unroll
    for (int half = 4; half > 0; half /= 2)  // the tree's halves 128, 64, 32
#pragma unroll
      for (int q = 0; q < half; ++q) {
        pm[q] = fmax(pm[q], pm[q + half]);
        ps[q] += ps[q + half];
      }
    for (int half = 16; half > 0; half /= 2) {  // 16 .. 1: lane t takes lane t + half's
      pm[0] = fmax(pm[0], __shfl_down_sync(0xffffffffu, pm[0], half));
      ps[0] += __shfl_down_sync(0xffffffffu, ps[0], half);
    }
    const double c = __shfl_sync(0xffffffffu, detail::pow2(detail::equilibration_exponent(pm[0])), 0);
    if (lane == 0) {
      col_scale[j] = c;
      if (col_sum) col_sum[j] = ps[0];
    }
    double* out = a_s + static_cast<std::size_t>(j) * n;
    for (int i = lane; i < n; i += 32) out[i] = __dmul_rn(__dmul_rn(scale[i], col[i]), c);
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

Fp64Equilibration equilibrate_fp64(CUstream_st* stream, const double* a, int n, double* row_scale, double* col_scale,
                                   double* col_sum, double* norm_inf, double* a_s, int* zero, double* workspace,
                                   Fp64Equilibration how) {
  if (how == Fp64Equilibration::automatic)
    how = n < kClusterBelow ? Fp64Equilibration::cluster : Fp64Equilibration::cooperative;
  if (n >= kOneLaunchBelow) how = Fp64Equilibration::kernels;
  int chunks = row_chunks(n), chunk_cols = ceil_div(n, chunks);
  double* pmax = workspace;
  double* psum = workspace + static_cast<std::size_t>(kMaxChunks) * n;
  if (how == Fp64Equilibration::cluster) {
    const void* kernel = reinterpret_cast<const void*>(equilibrate_fp64_cluster_kernel);
    void* args[] = {&a,         &n,         &chunks,  &chunk_cols, &pmax, &psum,
                    &row_scale, &col_scale, &col_sum, &norm_inf,   &a_s,  &zero};
    launch_small_cluster(kernel, stream, small_cluster_blocks(kernel), 1, args);
    return how;
  }
  int dev = 0, sms = 0, coop = 0;
  if (how == Fp64Equilibration::cooperative) {
    TCSOLVE_CUDA_CHECK(cudaGetDevice(&dev));
    TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    TCSOLVE_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  }
  if (coop == 0) {  // the same kernels one by one
    equilibrate_rows(stream, a, n, row_scale, norm_inf, workspace);
    equilibrate_columns(stream, a, n, row_scale, col_scale, nullptr, 0, n, col_sum);
    scale_copy(stream, a, n, row_scale, col_scale, a_s);
    TCSOLVE_CUDA_CHECK(cudaMemsetAsync(zero, 0, sizeof(int), stream));
    return Fp64Equilibration::kernels;
  }
  unsigned long long* norm_bits = reinterpret_cast<unsigned long long*>(norm_inf);
  // as many blocks as are resident at once (a cooperative launch's limit; about 8 an SM), at
  // most the widest phase's tasks: with one block an SM, n = 2048 took 161 us against 66 for
  // the separate kernels
  int per_sm = 0;
  TCSOLVE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, equilibrate_fp64_kernel, kThreads, 0));
  const int grid = std::max(1, std::min(std::max(per_sm, 1) * sms, std::max(n, ceil_div(n, kThreads) * chunks)));
  void* args[] = {&a, &n, &chunks, &chunk_cols, &pmax, &psum, &row_scale, &col_scale, &col_sum, &norm_bits, &a_s, &zero};
  TCSOLVE_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(equilibrate_fp64_kernel), dim3(grid),
                                                 dim3(kThreads), args, 0, stream));
  return Fp64Equilibration::cooperative;
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
