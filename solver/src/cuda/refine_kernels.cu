// Element-wise and per-column kernels of the refinement on the device, each the device form of
// one step of the cpu path's lu_apply() and refinement loop (cpu/, refinement_rules.hpp), with the same
// operations in the same order so that the FP32 right-hand side and the FP64 correction are
// bitwise those the cpu would form from the same residual:
//   column_max_kernel  one block per column: max_i |s_i x_ic| (NaN propagates), and the frexp
//                      exponent of it (the power of two that brings ||R r_c|| to [1/2, 1));
//   to_fp32_kernel     y(i, c) = fp32_rn(ldexp(R[perm_i] r(perm_i, c), -e_c))  (P R r / 2^e_c);
//   to_fp64_kernel     d(i, c) = (C[i] y(i, c)) 2^e_c;
//   masked_add_kernel  x(:, c) += d(:, c) for the columns not yet converged.
//   divide_kernel      y = x / s (GMRES: the normalization of a Krylov basis vector).
//   gather_rows_kernel out(i, c) = x(rows[i], c) (beam's Woodbury correction: V^T x).
//   gather_samples_kernel  the sampled rows and columns of A for the search for equal lines.
//   scale_pow2_kernel  v scaled by R or C and a power of two per column (the FP64 LU path's
//                      solves on the device, as EquilibratedInverse scales them on the host);
//                      with a permutation, the rows gathered through it (P R v, for the solves
//                      by cublasDtrsm).
// and one of the FP64 fallback:
//   scale_copy_kernel  a_s(i, j) = (R_i a_ij) C_j in FP64 (exact: powers of two), the matrix the
//                      FP64 LU factors.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "kernels.hpp"
#include "nan_max.cuh"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGridY = 65535;

__global__ void __launch_bounds__(kThreads)
    column_max_kernel(const double* __restrict__ x, int ld, int rows, int cols,
                      const double* __restrict__ scale, double* __restrict__ out,
                      int* __restrict__ exponent) {
  __shared__ double partial[kThreads];
  for (int c = blockIdx.x; c < cols; c += gridDim.x) {
    const double* col = x + static_cast<std::size_t>(c) * ld;
    double m = 0;
    for (int i = threadIdx.x; i < rows; i += kThreads)
      m = nan_max(m, fabs(scale ? __dmul_rn(scale[i], col[i]) : col[i]));
    partial[threadIdx.x] = m;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half)
        partial[threadIdx.x] = nan_max(partial[threadIdx.x], partial[threadIdx.x + half]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      const double s = partial[0];
      out[c] = s;
      if (exponent) {
        int e = 0;
        if (s > 0 && s <= 1.7976931348623157e308) frexp(s, &e);
        exponent[c] = e;
      }
    }
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kThreads)
    scale_copy_kernel(const double* __restrict__ a, int n, const double* __restrict__ row_scale,
                      const double* __restrict__ col_scale, double* __restrict__ a_s) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  for (int j = blockIdx.y; j < n; j += gridDim.y) {
    const std::size_t at = i + static_cast<std::size_t>(j) * n;
    a_s[at] = __dmul_rn(__dmul_rn(row_scale[i], a[at]), col_scale[j]);
  }
}

__global__ void __launch_bounds__(kThreads)
    to_fp32_kernel(const double* __restrict__ r, int ld, int n, int cols,
                   const double* __restrict__ row_scale, const int* __restrict__ perm,
                   const int* __restrict__ exponent, float* __restrict__ y) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  const int p = perm[i];
  for (int c = blockIdx.y; c < cols; c += gridDim.y) {
    const double v = r[p + static_cast<std::size_t>(c) * ld];
    const double t = row_scale ? __dmul_rn(row_scale[p], v) : v;
    y[i + static_cast<std::size_t>(c) * n] = __double2float_rn(ldexp(t, -exponent[c]));
  }
}

__global__ void __launch_bounds__(kThreads)
    to_fp64_kernel(const float* __restrict__ y, int n, int cols, const double* __restrict__ col_scale,
                   const int* __restrict__ exponent, double* __restrict__ d) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  for (int c = blockIdx.y; c < cols; c += gridDim.y) {
    const std::size_t at = i + static_cast<std::size_t>(c) * n;
    d[at] = __dmul_rn(__dmul_rn(col_scale[i], static_cast<double>(y[at])), ldexp(1.0, exponent[c]));
  }
}

__global__ void __launch_bounds__(kThreads)
    gather_rows_kernel(const double* __restrict__ x, int ld, int cols, const int* __restrict__ rows, int count,
                       double* __restrict__ out) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= count) return;
  for (int c = blockIdx.y; c < cols; c += gridDim.y)
    out[i + static_cast<std::size_t>(c) * count] = x[rows[i] + static_cast<std::size_t>(c) * ld];
}

__global__ void __launch_bounds__(kThreads)
    masked_add_kernel(double* __restrict__ x, const double* __restrict__ d, int n, int cols,
                      const int* __restrict__ mask) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  for (int c = blockIdx.y; c < cols; c += gridDim.y) {
    if (!mask[c]) continue;
    const std::size_t at = i + static_cast<std::size_t>(c) * n;
    x[at] = __dadd_rn(x[at], d[at]);
  }
}

__global__ void __launch_bounds__(kThreads)
    divide_kernel(const double* x, int n, double s, double* y) {  // y may alias x: no __restrict__
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < n) y[i] = __ddiv_rn(x[i], s);
}

/// out(i, c) = v(p, c) 2^(log2(scale[p]) + sign k[c]) in one rounding (ldexp: no intermediate
/// overflow or underflow), p = perm[i] (perm nullptr: p = i), the scalings of condition.hpp's
/// EquilibratedInverse.
__global__ void __launch_bounds__(kThreads)
    scale_pow2_kernel(const double* v, int n, int cols, const double* __restrict__ scale, const int* __restrict__ perm,
                      const int* __restrict__ k, int sign, double* out) {  // out may alias v without perm
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  const int p = perm != nullptr ? perm[i] : i;
  const int e = ilogb(scale[p]);
  for (int c = blockIdx.y; c < cols; c += gridDim.y) {
    const std::size_t col = static_cast<std::size_t>(c) * n;
    out[i + col] = ldexp(v[p + col], e + sign * k[c]);
  }
}

/// rows[k n + i] = a(i, p_k), columns[k n + j] = a(p_k, j) for the c positions p (the sampled
/// entries of detail::exact_singularity); blockIdx.y picks k.
__global__ void __launch_bounds__(kThreads)
    gather_samples_kernel(const double* __restrict__ a, int n, const int* __restrict__ positions, int c,
                          double* __restrict__ rows, double* __restrict__ columns) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  for (int k = blockIdx.y; k < c; k += gridDim.y) {
    const std::size_t p = static_cast<std::size_t>(positions[k]);
    rows[static_cast<std::size_t>(k) * n + i] = a[i + p * n];
    columns[static_cast<std::size_t>(k) * n + i] = a[p + static_cast<std::size_t>(i) * n];
  }
}

/// row_nonzero[i] = 1 when row i of the n x n a (leading dimension lda) has a nonzero entry in
/// this block's slice of columns (blockIdx.y); untouched otherwise (every writer writes 1).
__global__ void __launch_bounds__(kThreads)
    row_nonzero_kernel(const double* __restrict__ a, int n, int lda, int* __restrict__ row_nonzero) {
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= n) return;
  const int per = (n + gridDim.y - 1) / gridDim.y;
  const int j0 = blockIdx.y * per, j1 = min(n, j0 + per);
  for (int j = j0; j < j1; ++j)
    if (a[i + static_cast<std::size_t>(j) * lda] != 0.0) {
      row_nonzero[i] = 1;
      return;
    }
}

dim3 grid(int n, int cols) {
  return dim3(static_cast<unsigned>(ceil_div(n, kThreads)), static_cast<unsigned>(std::min(cols, kMaxGridY)));
}

}  // namespace

void column_max_abs(CUstream_st* stream, const double* x, int ld, int rows, int cols, const double* scale, double* out,
                    int* exponent) {
  column_max_kernel<<<static_cast<unsigned>(std::min(cols, 65535)), kThreads, 0, stream>>>(x, ld, rows, cols, scale, out,
                                                                                exponent);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void mark_nonzero_rows(CUstream_st* stream, const double* a, int n, int lda, int* row_nonzero) {
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(row_nonzero, 0, static_cast<std::size_t>(n) * sizeof(int), stream));
  const dim3 blocks(static_cast<unsigned>(ceil_div(n, kThreads)), static_cast<unsigned>(std::min(64, std::max(1, n / 256))));
  row_nonzero_kernel<<<blocks, kThreads, 0, stream>>>(a, n, lda, row_nonzero);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void scale_copy(CUstream_st* stream, const double* a, int n, const double* row_scale, const double* col_scale, double* a_s) {
  scale_copy_kernel<<<grid(n, n), kThreads, 0, stream>>>(a, n, row_scale, col_scale, a_s);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void scale_permute_to_fp32(CUstream_st* stream, const double* r, int ld, int n, int cols, const double* row_scale, const int* perm,
                           const int* exponent, float* y) {
  to_fp32_kernel<<<grid(n, cols), kThreads, 0, stream>>>(r, ld, n, cols, row_scale, perm, exponent, y);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void unscale_to_fp64(CUstream_st* stream, const float* y, int n, int cols, const double* col_scale, const int* exponent,
                     double* d) {
  to_fp64_kernel<<<grid(n, cols), kThreads, 0, stream>>>(y, n, cols, col_scale, exponent, d);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void scale_pow2(CUstream_st* stream, const double* v, int n, int cols, const double* scale, const int* k,
                int sign, double* out) {
  scale_pow2_kernel<<<grid(n, cols), kThreads, 0, stream>>>(v, n, cols, scale, nullptr, k, sign, out);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void scale_pow2_permuted(CUstream_st* stream, const double* v, int n, int cols, const double* scale, const int* perm,
                         const int* k, int sign, double* out) {
  scale_pow2_kernel<<<grid(n, cols), kThreads, 0, stream>>>(v, n, cols, scale, perm, k, sign, out);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void gather_samples(CUstream_st* stream, const double* a, int n, const int* positions, int c, double* rows,
                    double* columns) {
  gather_samples_kernel<<<grid(n, c), kThreads, 0, stream>>>(a, n, positions, c, rows, columns);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void masked_add(CUstream_st* stream, double* x, const double* d, int n, int cols, const int* mask) {
  masked_add_kernel<<<grid(n, cols), kThreads, 0, stream>>>(x, d, n, cols, mask);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void gather_rows(CUstream_st* stream, const double* x, int ld, int cols, const int* rows, int count, double* out) {
  if (count <= 0 || cols <= 0) return;
  gather_rows_kernel<<<grid(count, cols), kThreads, 0, stream>>>(x, ld, cols, rows, count, out);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void divide(CUstream_st* stream, const double* x, int n, double s, double* y) {
  if (n <= 0) return;
  divide_kernel<<<static_cast<unsigned>(ceil_div(n, kThreads)), kThreads, 0, stream>>>(x, n, s, y);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
