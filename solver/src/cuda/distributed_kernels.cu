// The distributed LU's kernels on one GPU member (distributed_kernels.hpp): the equilibration of
// the member's columns (the row maxima reduce over the members in between: exact, so R and C are
// bitwise the single process'), and the row moves of a block's interchanges in the member's
// columns.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../equilibration.hpp"
#include "distributed_kernels.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32, kTileRows = 8;

__global__ void row_max_sum_kernel(const double* __restrict__ a, int lda, int n, int cols, double* row_max,
                                   double* row_sum) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  double m = 0, s = 0;
  for (int j = 0; j < cols; ++j) {
    const double v = fabs(a[i + static_cast<std::size_t>(j) * lda]);
    m = fmax(m, v);
    s += v;
  }
  row_max[i] = m;
  row_sum[i] = s;
}

__global__ void row_scales_kernel(const double* __restrict__ row_max, int n, double* row_scale) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < n) row_scale[i] = detail::pow2(detail::equilibration_exponent(row_max[i]));
}

/// One block per column: its scale and sums (fixed order: a tree over the block's threads).
__global__ void col_kernel(const double* __restrict__ a, int lda, int n, int cols, const double* __restrict__ row_scale,
                           double* col_scale, double* col_sum, double* col_sum_s) {
  __shared__ double pm[kThreads], ps[kThreads], pss[kThreads];
  const int j = blockIdx.x;
  if (j >= cols) return;
  const double* col = a + static_cast<std::size_t>(j) * lda;
  double m = 0, s = 0, ss = 0;
  for (int i = threadIdx.x; i < n; i += kThreads) {
    const double v = fabs(col[i]);
    m = fmax(m, row_scale[i] * v);
    s += v;
    ss += row_scale[i] * v;
  }
  pm[threadIdx.x] = m;
  ps[threadIdx.x] = s;
  pss[threadIdx.x] = ss;
  __syncthreads();
  for (int h = kThreads / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) {
      pm[threadIdx.x] = fmax(pm[threadIdx.x], pm[threadIdx.x + h]);
      ps[threadIdx.x] += ps[threadIdx.x + h];
      pss[threadIdx.x] += pss[threadIdx.x + h];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double c = detail::pow2(detail::equilibration_exponent(pm[0]));
    col_scale[j] = c;
    col_sum[j] = ps[0];
    col_sum_s[j] = c * pss[0];
  }
}

/// t(i, j) = fp32((r_i a(i, j)) c_j), row-major, through a shared tile (coalesced both ways).
__global__ void convert_kernel(const double* __restrict__ a, int lda, int n, int cols,
                               const double* __restrict__ row_scale, const double* __restrict__ col_scale, float* t,
                               int ldt) {
  __shared__ float tile[kTile][kTile + 1];
  const int i0 = blockIdx.x * kTile, j0 = blockIdx.y * kTile;
  for (int k = threadIdx.y; k < kTile; k += kTileRows) {
    const int i = i0 + threadIdx.x, j = j0 + k;
    if (i < n && j < cols)
      tile[k][threadIdx.x] =
          static_cast<float>((row_scale[i] * a[i + static_cast<std::size_t>(j) * lda]) * col_scale[j]);
  }
  __syncthreads();
  for (int k = threadIdx.y; k < kTile; k += kTileRows) {
    const int i = i0 + k, j = j0 + threadIdx.x;
    if (i < n && j < cols) t[static_cast<std::size_t>(i) * ldt + j] = tile[threadIdx.x][k];
  }
}

constexpr int kSolveWarps = 8;

__global__ void block_solve_kernel(const float* __restrict__ m, int w, const float* __restrict__ v,
                                   const float* __restrict__ acc, float* __restrict__ out) {
  extern __shared__ float in[];
  for (int k = threadIdx.x; k < w; k += blockDim.x) in[k] = acc != nullptr ? v[k] - acc[k] : v[k];
  __syncthreads();
  const int lane = threadIdx.x % 32, i = blockIdx.x * kSolveWarps + threadIdx.x / 32;
  if (i >= w) return;
  const float* col = m + static_cast<std::size_t>(i) * w;
  float s = 0;
  for (int k = lane; k < w; k += 32) s = fmaf(col[k], in[k], s);
  for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
  if (lane == 0) out[i] = s;
}

template <bool kVector>
__global__ void rows_dot_kernel(const float* __restrict__ f, int ldf, int rows, int w, const float* __restrict__ x,
                                float* __restrict__ acc) {
  extern __shared__ float xs[];
  for (int k = threadIdx.x; k < w; k += blockDim.x) xs[k] = x[k];
  __syncthreads();
  const int lane = threadIdx.x % 32, r = blockIdx.x * kSolveWarps + threadIdx.x / 32;
  if (r >= rows) return;
  const float* row = f + static_cast<std::size_t>(r) * ldf;
  float s = 0;
  if constexpr (kVector) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    const float4* x4 = reinterpret_cast<const float4*>(xs);
    for (int k = lane; k < w / 4; k += 32) {
      const float4 a = __ldcs(row4 + k), b = x4[k];  // streamed: the factors are read once a sweep
      s = fmaf(a.x, b.x, s);
      s = fmaf(a.y, b.y, s);
      s = fmaf(a.z, b.z, s);
      s = fmaf(a.w, b.w, s);
    }
  } else {
    for (int k = lane; k < w; k += 32) s = fmaf(row[k], xs[k], s);
  }
  for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
  if (lane == 0) acc[r] += s;
}

constexpr int kSolveGroups = 8;  ///< block_solve_n: k groups per output
constexpr int kColChunks = 8;    ///< cols_dot: row chunks

__global__ void block_solve_n_kernel(const float* __restrict__ m, int w, const float* __restrict__ v,
                                     const float* __restrict__ acc1, const float* __restrict__ acc2,
                                     float* __restrict__ out) {
  extern __shared__ float in[];
  __shared__ float part[kSolveGroups][32];
  for (int k = threadIdx.x; k < w; k += blockDim.x) {
    float x = v[k];
    if (acc1 != nullptr) x -= acc1[k];
    if (acc2 != nullptr) x -= acc2[k];
    in[k] = x;
  }
  __syncthreads();
  const int tx = threadIdx.x % 32, g = threadIdx.x / 32, i = blockIdx.x * 32 + tx;
  float s = 0;
  if (i < w)
    for (int k = g; k < w; k += kSolveGroups) s = fmaf(m[i + static_cast<std::size_t>(k) * w], in[k], s);
  part[g][tx] = s;
  __syncthreads();
  if (g == 0 && i < w) {
    float t = part[0][tx];
    for (int q = 1; q < kSolveGroups; ++q) t += part[q][tx];
    out[i] = t;
  }
}

__global__ void cols_part_kernel(const float* __restrict__ f, int ldf, int rows, int cols, const float* __restrict__ x,
                                 int per_chunk, float* __restrict__ part) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x, chunk = blockIdx.y;
  if (c >= cols) return;
  const int r0 = chunk * per_chunk, r1 = min(rows, r0 + per_chunk);
  float s = 0;
#pragma unroll 8
  for (int r = r0; r < r1; ++r) s = fmaf(__ldcs(f + static_cast<std::size_t>(r) * ldf + c), x[r], s);
  part[static_cast<std::size_t>(chunk) * cols + c] = s;
}

__global__ void cols_join_kernel(int cols, int chunks, const float* __restrict__ part, float* __restrict__ acc) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = part[c];
  for (int q = 1; q < chunks; ++q) s += part[static_cast<std::size_t>(q) * cols + c];
  acc[c] += s;
}

__global__ void block_moves_kernel(const int* __restrict__ origin, int j, int n, int w, int* perm, int* scratch) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  int* dst = scratch + 1;
  int* src = dst + 2 * w;
  int* old = src + 2 * w;
  for (int i = j + threadIdx.x; i < n; i += blockDim.x) {
    const int o = origin[i];
    if (o == i) continue;
    const int k = atomicAdd(&count, 1);
    if (k >= 2 * w) __trap();  // a block moves at most 2w rows
    dst[k] = i;
    src[k] = o;
    old[k] = perm[o];
  }
  __syncthreads();
  for (int k = threadIdx.x; k < count; k += blockDim.x) perm[dst[k]] = old[k];
  if (threadIdx.x == 0) scratch[0] = count;
}

/// gather: rows[k][c - lo] = t[src_k][c]; scatter: t[dst_k][c] = rows[k][c - lo]; c in [lo, hi)
/// outside [skip_lo, skip_hi).
__global__ void gather_kernel(const float* __restrict__ t, int ldt, int lo, int hi, int skip_lo, int skip_hi,
                              const int* __restrict__ scratch, int w, float* rows) {
  const int k = blockIdx.y;
  if (k >= scratch[0]) return;
  const int src = scratch[1 + 2 * w + k], width = hi - lo;
  for (int c = lo + blockIdx.x * kThreads + threadIdx.x; c < hi; c += gridDim.x * kThreads)
    if (c < skip_lo || c >= skip_hi)
      rows[static_cast<std::size_t>(k) * width + (c - lo)] = t[static_cast<std::size_t>(src) * ldt + c];
}
__global__ void scatter_kernel(float* t, int ldt, int lo, int hi, int skip_lo, int skip_hi,
                               const int* __restrict__ scratch, const float* __restrict__ rows) {
  const int k = blockIdx.y;
  if (k >= scratch[0]) return;
  const int dst = scratch[1 + k], width = hi - lo;
  for (int c = lo + blockIdx.x * kThreads + threadIdx.x; c < hi; c += gridDim.x * kThreads)
    if (c < skip_lo || c >= skip_hi)
      t[static_cast<std::size_t>(dst) * ldt + c] = rows[static_cast<std::size_t>(k) * width + (c - lo)];
}

__global__ void scaled_piece_kernel(const double* __restrict__ a, int lda, int n, int cols,
                                    const double* __restrict__ row_scale, const double* __restrict__ col_scale,
                                    double* s, int lds) {
  const int j = blockIdx.y;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads)
    s[i + static_cast<std::size_t>(j) * lds] = (row_scale[i] * a[i + static_cast<std::size_t>(j) * lda]) * col_scale[j];
}

/// One thread per column: the w swaps in order (a column's rows are strided by lda apart only
/// between columns, so neighbouring threads touch neighbouring columns' same rows).
__global__ void swap_rows_kernel(double* a, int lda, int cols, int skip_lo, int skip_hi, const int* __restrict__ ipiv,
                                 int j, int w) {
  const int c = blockIdx.x * kThreads + threadIdx.x;
  if (c >= cols || (c >= skip_lo && c < skip_hi)) return;
  double* col = a + static_cast<std::size_t>(c) * lda;
  for (int i = 0; i < w; ++i) {
    const int p = ipiv[i] - 1 + j;
    if (p == j + i) continue;
    const double t = col[j + i];
    col[j + i] = col[p];
    col[p] = t;
  }
}

int blocks_for(int count) { return std::max(1, (count + kThreads - 1) / kThreads); }

/// blockIdx.y = k: the member's entries of A's row p_k (its local columns j, to out_rows[k n +
/// global(j)]) and, on p_k's owner, column p_k (whole, to out_columns[k n + i]).
__global__ void piece_samples_kernel(const double* __restrict__ a, int lda, int n, int cols, int nb, int member,
                                     int members, const int* __restrict__ positions, double* out_columns,
                                     double* out_rows) {
  const int k = blockIdx.y, p = positions[k];
  const std::size_t base = static_cast<std::size_t>(k) * n;
  for (int j = blockIdx.x * kThreads + threadIdx.x; j < cols; j += gridDim.x * kThreads) {
    const int g = ((j / nb) * members + member) * nb + j % nb;
    out_rows[base + g] = a[p + static_cast<std::size_t>(j) * lda];
  }
  if ((p / nb) % members != member) return;
  const int l = (p / (nb * members)) * nb + p % nb;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < n; i += gridDim.x * kThreads)
    out_columns[base + i] = a[i + static_cast<std::size_t>(l) * lda];
}

}  // namespace

void piece_samples(CUstream_st* stream, const double* a, int lda, int n, int cols, int nb, int member, int members,
                   const int* positions, int c, double* out_columns, double* out_rows) {
  if (c < 1) return;
  const dim3 grid(std::min(64, blocks_for(std::max(n, cols))), c);
  piece_samples_kernel<<<grid, kThreads, 0, stream>>>(a, lda, n, cols, nb, member, members, positions, out_columns,
                                                      out_rows);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void piece_row_max_sum(CUstream_st* stream, const double* a, int lda, int n, int cols, double* row_max,
                       double* row_sum) {
  row_max_sum_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, lda, n, cols, row_max, row_sum);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void row_scales(CUstream_st* stream, const double* row_max, int n, double* row_scale) {
  row_scales_kernel<<<blocks_for(n), kThreads, 0, stream>>>(row_max, n, row_scale);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void piece_columns(CUstream_st* stream, const double* a, int lda, int n, int cols, const double* row_scale,
                   double* col_scale, double* col_sum, double* col_sum_s, float* t, int ldt) {
  if (cols < 1) return;
  col_kernel<<<cols, kThreads, 0, stream>>>(a, lda, n, cols, row_scale, col_scale, col_sum, col_sum_s);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  if (t == nullptr) return;
  const dim3 grid((n + kTile - 1) / kTile, (cols + kTile - 1) / kTile), block(kTile, kTileRows);
  convert_kernel<<<grid, block, 0, stream>>>(a, lda, n, cols, row_scale, col_scale, t, ldt);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void block_solve(CUstream_st* stream, const float* m, int w, const float* v, const float* acc, float* out) {
  if (w < 1) return;
  const std::size_t smem = static_cast<std::size_t>(w) * sizeof(float);
  if (smem > 48 * 1024) throw Unavailable("block_solve: blocks of at most 12288 columns, got " + std::to_string(w));
  block_solve_kernel<<<(w + kSolveWarps - 1) / kSolveWarps, 32 * kSolveWarps, smem, stream>>>(m, w, v, acc, out);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void rows_dot(CUstream_st* stream, const float* f, int ldf, int rows, int w, const float* x, float* acc) {
  if (rows < 1 || w < 1) return;
  const std::size_t smem = static_cast<std::size_t>(w) * sizeof(float);
  if (smem > 48 * 1024) throw Unavailable("rows_dot: blocks of at most 12288 columns, got " + std::to_string(w));
  const bool vector = w % 4 == 0 && ldf % 4 == 0 && reinterpret_cast<std::uintptr_t>(f) % 16 == 0;
  const int blocks = (rows + kSolveWarps - 1) / kSolveWarps;
  if (vector)
    rows_dot_kernel<true><<<blocks, 32 * kSolveWarps, smem, stream>>>(f, ldf, rows, w, x, acc);
  else
    rows_dot_kernel<false><<<blocks, 32 * kSolveWarps, smem, stream>>>(f, ldf, rows, w, x, acc);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void block_solve_n(CUstream_st* stream, const float* m, int w, const float* v, const float* acc1, const float* acc2,
                   float* out) {
  if (w < 1) return;
  const std::size_t smem = static_cast<std::size_t>(w) * sizeof(float);
  if (smem > 40 * 1024) throw Unavailable("block_solve_n: blocks of at most 10240 columns, got " + std::to_string(w));
  block_solve_n_kernel<<<(w + 31) / 32, 32 * kSolveGroups, smem, stream>>>(m, w, v, acc1, acc2, out);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

std::size_t cols_dot_scratch(int cols) { return static_cast<std::size_t>(kColChunks) * std::max(cols, 1); }

void cols_dot(CUstream_st* stream, const float* f, int ldf, int rows, int cols, const float* x, float* acc,
              float* scratch) {
  if (rows < 1 || cols < 1) return;
  const int chunks = std::min(kColChunks, rows), per_chunk = (rows + chunks - 1) / chunks;
  const int used = (rows + per_chunk - 1) / per_chunk;  // chunks with rows
  cols_part_kernel<<<dim3((cols + kThreads - 1) / kThreads, used), kThreads, 0, stream>>>(f, ldf, rows, cols, x,
                                                                                         per_chunk, scratch);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  cols_join_kernel<<<(cols + kThreads - 1) / kThreads, kThreads, 0, stream>>>(cols, used, scratch, acc);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

std::size_t block_moves_ints(int w) { return 1 + 6 * static_cast<std::size_t>(w); }

void block_moves(CUstream_st* stream, const int* origin, int j, int n, int w, int* perm, int* scratch) {
  block_moves_kernel<<<1, 1024, 0, stream>>>(origin, j, n, w, perm, scratch);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void move_rows(CUstream_st* stream, float* t, int ldt, Columns in, Columns skip, const int* scratch, int w,
               float* rows) {
  if (in.hi <= in.lo) return;
  const dim3 grid(std::min(8, blocks_for(in.hi - in.lo)), 2 * w);
  gather_kernel<<<grid, kThreads, 0, stream>>>(t, ldt, in.lo, in.hi, skip.lo, skip.hi, scratch, w, rows);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  scatter_kernel<<<grid, kThreads, 0, stream>>>(t, ldt, in.lo, in.hi, skip.lo, skip.hi, scratch, rows);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void scaled_piece(CUstream_st* stream, const double* a, int lda, int n, int cols, const double* row_scale,
                  const double* col_scale, double* s, int lds) {
  if (cols < 1 || n < 1) return;
  const dim3 grid(std::min(64, blocks_for(n)), cols);
  scaled_piece_kernel<<<grid, kThreads, 0, stream>>>(a, lda, n, cols, row_scale, col_scale, s, lds);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void swap_rows(CUstream_st* stream, double* a, int lda, int cols, Columns skip, const int* ipiv, int j, int w) {
  if (cols < 1 || w < 1) return;
  swap_rows_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(a, lda, cols, skip.lo, skip.hi, ipiv, j, w);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
