// The rbt pivoting's random butterfly transform on the device (butterfly.hpp states it), with the
// host code's operations in the host code's order and no contraction (__dmul_rn, __dadd_rn), so
// that every result is bitwise the host's:
//   matrix_kernel    A_r = fp32(U^T [R A C 0; 0 I] V), ROW-MAJOR p x p, from the FP64 A
//                    (column-major), and max |A_r| (the breakdown tests' scale);
//   rhs_kernel       t = U^T pad(R r) in FP64 (the correction's right-hand side, p rows);
//   solution_kernel  x = (C (V double(y))[0, n)) 2^e (the correction, back to the n rows);
//   max_abs_kernel   max |a| of FP32 values (the growth test).
// A depth-2 butterfly of size p = 4q mixes exactly the rows {i0, i0 + q, i0 + 2q, i0 + 3q} of
// each column among themselves (i0 < q): each thread transforms such a group of 4 (of a vector),
// or of 4 x 4 (of the matrix: its rows by U^T, then its columns by V), in registers.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "kernels.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;  // butterfly.cpp's constant

/// x := W^T x for the group x[0..4) = rows i0 + {0, 1, 2, 3} q of a vector (p = 4q): the halves'
/// transposes (B_top on rows 0..2q, B_bot on 2q..4q), then B^T (RandomButterfly::apply_transpose).
/// The host's `kInvSqrt2 * r0 * (a + b)` is (kInvSqrt2 r0)(a + b).
__device__ __forceinline__ void transpose_group(double x[4], const double* __restrict__ outer,
                                                const double* __restrict__ inner, int i0, int q) {
  const int h = 2 * q;
  auto pair_t = [](double& a, double& b, double r0, double r1) {
    const double s = __dadd_rn(a, b), d = __dsub_rn(a, b);
    a = __dmul_rn(__dmul_rn(kInvSqrt2, r0), s);
    b = __dmul_rn(__dmul_rn(kInvSqrt2, r1), d);
  };
  pair_t(x[0], x[1], inner[i0], inner[q + i0]);          // B_top: rows i0, i0 + q
  pair_t(x[2], x[3], inner[h + i0], inner[h + q + i0]);  // B_bot: rows h + i0, h + q + i0
  pair_t(x[0], x[2], outer[i0], outer[h + i0]);          // B: rows i0, i0 + h
  pair_t(x[1], x[3], outer[q + i0], outer[h + q + i0]);  //    rows q + i0, h + q + i0
}

/// x := W x for the group (RandomButterfly::apply): B, then the halves. The host's
/// `kInvSqrt2 * (r0 * a + r1 * b)`, without contraction.
__device__ __forceinline__ void plain_group(double x[4], const double* __restrict__ outer,
                                            const double* __restrict__ inner, int i0, int q) {
  const int h = 2 * q;
  auto pair_p = [](double& a, double& b, double r0, double r1) {
    const double ra = __dmul_rn(r0, a), rb = __dmul_rn(r1, b);
    a = __dmul_rn(kInvSqrt2, __dadd_rn(ra, rb));
    b = __dmul_rn(kInvSqrt2, __dsub_rn(ra, rb));
  };
  pair_p(x[0], x[2], outer[i0], outer[h + i0]);
  pair_p(x[1], x[3], outer[q + i0], outer[h + q + i0]);
  pair_p(x[0], x[1], inner[i0], inner[q + i0]);
  pair_p(x[2], x[3], inner[h + i0], inner[h + q + i0]);
}

// matrix_kernel: a CTA of 32 x 8 threads covers 32 row groups (threadIdx.x) and 16 column groups
// (threadIdx.y and threadIdx.y + 8); its 16 x 32 x 16 results are staged in shared memory and
// written as rows of 16 consecutive floats.
constexpr int kRowGroups = 32, kColGroups = 16, kThreadsY = 8;

__global__ void __launch_bounds__(kRowGroups * kThreadsY)
    matrix_kernel(const double* __restrict__ a, int n, int p, const double* __restrict__ row_scale,
                  const double* __restrict__ col_scale, const double* __restrict__ u_outer,
                  const double* __restrict__ u_inner, const double* __restrict__ v_outer,
                  const double* __restrict__ v_inner, float* __restrict__ a_r, unsigned* __restrict__ max_bits) {
  __shared__ float tile[4][4][kRowGroups][kColGroups + 1];
  const int q = p / 4;
  const int i0 = blockIdx.x * kRowGroups + threadIdx.x;
  float local_max = 0;
  for (int y = threadIdx.y; y < kColGroups; y += kThreadsY) {
    const int j0 = blockIdx.y * kColGroups + y;
    if (i0 < q && j0 < q) {
      double m[4][4];
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int i = i0 + r * q, j = j0 + c * q;
          m[r][c] = (i < n && j < n)
                        ? __dmul_rn(__dmul_rn(row_scale[i], a[i + static_cast<std::size_t>(j) * n]), col_scale[j])
                        : (i == j ? 1.0 : 0.0);
        }
#pragma unroll
      for (int c = 0; c < 4; ++c) {  // U^T on each column's group
        double x[4] = {m[0][c], m[1][c], m[2][c], m[3][c]};
        transpose_group(x, u_outer, u_inner, i0, q);
#pragma unroll
        for (int r = 0; r < 4; ++r) m[r][c] = x[r];
      }
#pragma unroll
      for (int r = 0; r < 4; ++r) {  // then V^T on each row's group: (U^T M) V
        transpose_group(m[r], v_outer, v_inner, j0, q);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const float v = __double2float_rn(m[r][c]);
          tile[r][c][threadIdx.x][y] = v;
          local_max = fmaxf(local_max, fabsf(v));
        }
      }
    }
  }
  // max |A_r| (non-negative floats order as their bits)
  for (int o = 16; o > 0; o /= 2) local_max = fmaxf(local_max, __shfl_xor_sync(0xffffffffu, local_max, o));
  if (threadIdx.x == 0) atomicMax(max_bits, __float_as_uint(local_max));
  __syncthreads();
  const int t = threadIdx.y * kRowGroups + threadIdx.x;
  for (int l = t; l < 16 * kRowGroups * kColGroups; l += kRowGroups * kThreadsY) {
    const int rc = l / (kRowGroups * kColGroups), rest = l % (kRowGroups * kColGroups);
    const int r = rc / 4, c = rc % 4, row = rest / kColGroups, col = rest % kColGroups;
    const int gi = blockIdx.x * kRowGroups + row, gj = blockIdx.y * kColGroups + col;
    if (gi < q && gj < q)
      a_r[static_cast<std::size_t>(gi + r * q) * p + gj + c * q] = tile[r][c][row][col];
  }
}

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    rhs_kernel(const double* __restrict__ r, int ld, int n, int p, int cols, const double* __restrict__ row_scale,
               const double* __restrict__ outer, const double* __restrict__ inner, double* __restrict__ t) {
  const int q = p / 4, i0 = blockIdx.x * kThreads + threadIdx.x;
  if (i0 >= q) return;
  for (int c = blockIdx.y; c < cols; c += gridDim.y) {
    double x[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int i = i0 + k * q;
      x[k] = i < n ? __dmul_rn(row_scale[i], r[i + static_cast<std::size_t>(c) * ld]) : 0.0;
    }
    transpose_group(x, outer, inner, i0, q);
#pragma unroll
    for (int k = 0; k < 4; ++k) t[i0 + k * q + static_cast<std::size_t>(c) * p] = x[k];
  }
}

__global__ void __launch_bounds__(kThreads)
    solution_kernel(const float* __restrict__ y, int n, int p, int cols, const double* __restrict__ outer,
                    const double* __restrict__ inner, const double* __restrict__ col_scale,
                    const int* __restrict__ exponent, double* __restrict__ x, int ldx) {
  const int q = p / 4, i0 = blockIdx.x * kThreads + threadIdx.x;
  if (i0 >= q) return;
  for (int c = blockIdx.y; c < cols; c += gridDim.y) {
    double z[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) z[k] = static_cast<double>(y[i0 + k * q + static_cast<std::size_t>(c) * p]);
    plain_group(z, outer, inner, i0, q);
    const double scale = ldexp(1.0, exponent[c]);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int i = i0 + k * q;
      if (i < n) x[i + static_cast<std::size_t>(c) * ldx] = __dmul_rn(__dmul_rn(col_scale[i], z[k]), scale);
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    max_abs_kernel(const float* __restrict__ a, std::size_t count, unsigned* __restrict__ max_bits) {
  float m = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * kThreads) {
    const float v = fabsf(a[i]);
    m = (v != v || v > m) ? v : m;  // NaN wins (its bits are above inf's)
  }
  for (int o = 16; o > 0; o /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, m, o);
    m = (other != other || other > m) ? other : m;
  }
  if ((threadIdx.x & 31) == 0) atomicMax(max_bits, __float_as_uint(m));
}

dim3 group_grid(int p, int cols) {
  return dim3(static_cast<unsigned>(ceil_div(p / 4, kThreads)), static_cast<unsigned>(std::min(cols, 65535)));
}

}  // namespace

void butterfly_matrix(CUstream_st* stream, const double* a, int n, int p, const double* row_scale,
                      const double* col_scale, const double* u_outer, const double* u_inner, const double* v_outer,
                      const double* v_inner, float* a_r, unsigned* max_bits) {
  const int q = p / 4;
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(max_bits, 0, sizeof(unsigned), stream));
  const dim3 grid(static_cast<unsigned>(ceil_div(q, kRowGroups)), static_cast<unsigned>(ceil_div(q, kColGroups)));
  matrix_kernel<<<grid, dim3(kRowGroups, kThreadsY), 0, stream>>>(a, n, p, row_scale, col_scale, u_outer, u_inner,
                                                                 v_outer, v_inner, a_r, max_bits);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void butterfly_rhs(CUstream_st* stream, const double* r, int ld, int n, int p, int cols, const double* row_scale,
                   const double* u_outer, const double* u_inner, double* t) {
  rhs_kernel<<<group_grid(p, cols), kThreads, 0, stream>>>(r, ld, n, p, cols, row_scale, u_outer, u_inner, t);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void butterfly_solution(CUstream_st* stream, const float* y, int n, int p, int cols, const double* v_outer,
                        const double* v_inner, const double* col_scale, const int* exponent, double* x, int ldx) {
  solution_kernel<<<group_grid(p, cols), kThreads, 0, stream>>>(y, n, p, cols, v_outer, v_inner, col_scale, exponent,
                                                               x, ldx);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void max_abs(CUstream_st* stream, const float* a, std::size_t count, unsigned* max_bits) {
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(max_bits, 0, sizeof(unsigned), stream));
  const std::size_t blocks = std::min<std::size_t>(4096, (count + kThreads - 1) / kThreads);
  if (blocks == 0) return;
  max_abs_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, count, max_bits);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
