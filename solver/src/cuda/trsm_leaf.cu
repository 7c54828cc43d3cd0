// The diagonal-block solves of the one-GPU LU's recursive TRSMs (blocked_lu.cpp, CudaLuPlan::
// trsm_leaves kernel): the blocks of at most kTrsmLeafMaxWidth = 64 columns where the recursion
// ends, in U12's rest (X U = B, U unit upper) and in beam's L21 (L X = B, L = U11^T lower,
// non-unit). Both are column-major (cuBLAS's terms, T = A_s^T) with leading dimensions of their
// own.
//
// Why it was tried: at n = 32768 beam's L21 took 151 ms on the panel's 16 SMs, with its
// products on the tensor cores or by SGEMM alike, and U12's rest 34 ms of the update stream,
// while each of these solves is small (64 x 64 against up to n right-hand sides: 64^2 n / 2 fmas).
// Measured (H200, session 39 call e): L21 119 ms at 32768 (so its products, not cublasStrsm, are
// most of it) and 16.8 against 13.6 at 16384; U12's rest 30.2 against 34.5 ms at 32768. Not the
// default (CudaLuPlan::trsm_leaves): with its factors classical refinement stagnated on that
// U(-1,1) system of 32768, whose convergence with FP32 factors hangs on their last bits.
//
// One thread per right-hand side ("vector"): its 64 entries in registers, M's strict lower part
// in shared memory as M^T (row k of M^T = column k of M, padded to 68 floats so that a row is
// 16-byte aligned) and M's diagonal beside it. The substitution is right-looking and fully
// unrolled: for k, x_k /= M(k, k), then x_e = fmaf(-x_k, M(e, k), x_e) for e > k, the M(e, k) read
// four at a time (one 16-byte broadcast load). Entries beyond w are zero and M beyond w is the
// identity, so they leave the first w untouched. The order of operations is cpu/trsm_leaf.hpp's,
// whose results these are bit for bit.
//   rows     (X U = B) a vector is a row of B: entry e at b[r + e ldb], so a warp's loads of one
//            entry are 32 consecutive floats;
//   columns  (L X = B) a vector is a column of B, contiguous: 64 columns are staged through shared
//            memory (loaded and stored a column's entries by consecutive threads), each thread then
//            solving its own column from there (stride 65: no bank conflicts).
#include <cuda_runtime.h>

#include <cstddef>

#include "../cpu/trsm_leaf.hpp"
#include "kernels.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kW = cpu::kTrsmLeafMaxWidth;
constexpr int kMStride = kW + 4;   ///< floats per row of M^T in shared memory (16-byte rows)
constexpr int kRowThreads = 128;   ///< rows: vectors per CTA
constexpr int kColThreads = 64;    ///< columns: vectors per CTA (the staging tile's columns)
constexpr int kTileStride = kW + 1;
static_assert(kW % 4 == 0, "M^T's rows are read four entries at a time");

/// M (w x w, lower triangular in the solve's terms): M(e, k) at m[e se + k sk].
struct LeafMatrix {
  const float* m;
  std::ptrdiff_t se, sk;
  int w;
};

/// M^T's strict upper part into mt (mt[k kMStride + e] = M(e, k) for e > k, zero for e <= k and
/// beyond w) and M's diagonal into diag (1 where unit or beyond w); consecutive threads read
/// consecutive addresses (e fastest when se is 1, else k).
__device__ void load_leaf_matrix(const LeafMatrix& a, bool unit, float* mt, float* diag, int threads) {
  const bool e_fast = a.se == 1;
  for (int idx = static_cast<int>(threadIdx.x); idx < kW * kW; idx += threads) {
    const int e = e_fast ? idx % kW : idx / kW, k = e_fast ? idx / kW : idx % kW;
    const bool inside = e < a.w && k < a.w;
    if (e > k) mt[k * kMStride + e] = inside ? a.m[e * a.se + k * a.sk] : 0.0f;
    else mt[k * kMStride + e] = 0.0f;
    if (e == k) diag[k] = unit || !inside ? 1.0f : a.m[e * a.se + k * a.sk];
  }
}

/// x := M^-1 x in cpu::trsm_leaf_substitute's order (the padding beyond w changes nothing).
template <bool kUnit>
__device__ __forceinline__ void substitute(float (&x)[kW], const float* mt, const float* diag) {
#pragma unroll
  for (int k = 0; k < kW; ++k) {
    if (!kUnit) x[k] = x[k] / diag[k];
    const float minus = -x[k];
#pragma unroll
    for (int g = (k + 1) / 4; g < kW / 4; ++g) {
      const float4 v = *reinterpret_cast<const float4*>(mt + k * kMStride + 4 * g);
      if (4 * g + 0 > k) x[4 * g + 0] = fmaf(minus, v.x, x[4 * g + 0]);
      if (4 * g + 1 > k) x[4 * g + 1] = fmaf(minus, v.y, x[4 * g + 1]);
      if (4 * g + 2 > k) x[4 * g + 2] = fmaf(minus, v.z, x[4 * g + 2]);
      if (4 * g + 3 > k) x[4 * g + 3] = fmaf(minus, v.w, x[4 * g + 3]);
    }
  }
}

template <bool kUnit>
__global__ void __launch_bounds__(kRowThreads) trsm_leaf_rows_kernel(LeafMatrix a, float* __restrict__ b,
                                                                     std::ptrdiff_t ldb, int count) {
  __shared__ __align__(16) float mt[kW * kMStride];
  __shared__ float diag[kW];
  load_leaf_matrix(a, kUnit, mt, diag, kRowThreads);
  __syncthreads();
  const std::ptrdiff_t r = static_cast<std::ptrdiff_t>(blockIdx.x) * kRowThreads + threadIdx.x;
  if (r >= count) return;
  float x[kW];
  // pointers walked entry by entry: 64 addresses kept from the loads to the stores spilled
  const float* in = b + r;
#pragma unroll
  for (int e = 0; e < kW; ++e, in += ldb) x[e] = e < a.w ? *in : 0.0f;
  substitute<kUnit>(x, mt, diag);
  float* out = b + r;
#pragma unroll
  for (int e = 0; e < kW; ++e, out += ldb)
    if (e < a.w) *out = x[e];
}

template <bool kUnit>
__global__ void __launch_bounds__(kColThreads) trsm_leaf_columns_kernel(LeafMatrix a, float* __restrict__ b,
                                                                        std::ptrdiff_t ldb, int count) {
  __shared__ __align__(16) float mt[kW * kMStride];
  __shared__ float diag[kW];
  __shared__ float tile[kColThreads * kTileStride];
  load_leaf_matrix(a, kUnit, mt, diag, kColThreads);
  const std::ptrdiff_t c0 = static_cast<std::ptrdiff_t>(blockIdx.x) * kColThreads;
  const int here = static_cast<int>(count - c0 < kColThreads ? count - c0 : kColThreads);
  for (int idx = static_cast<int>(threadIdx.x); idx < kColThreads * kW; idx += kColThreads) {
    const int c = idx / kW, e = idx % kW;
    tile[c * kTileStride + e] = c < here && e < a.w ? b[(c0 + c) * ldb + e] : 0.0f;
  }
  __syncthreads();
  float x[kW];
  const int t = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int e = 0; e < kW; ++e) x[e] = tile[t * kTileStride + e];
  substitute<kUnit>(x, mt, diag);
#pragma unroll
  for (int e = 0; e < kW; ++e) tile[t * kTileStride + e] = x[e];
  __syncthreads();
  for (int idx = static_cast<int>(threadIdx.x); idx < kColThreads * kW; idx += kColThreads) {
    const int c = idx / kW, e = idx % kW;
    if (c < here && e < a.w) b[(c0 + c) * ldb + e] = tile[c * kTileStride + e];
  }
}

unsigned blocks_for(int count, int per_block) { return static_cast<unsigned>((count + per_block - 1) / per_block); }

}  // namespace

bool trsm_leaf_right_upper_unit(CUstream_st* stream, const float* u, int ldu, float* b, int ldb, int rows, int w) {
  if (w > kW || ldu < w || ldb < rows) return false;
  if (w < 1 || rows < 1) return true;
  // a vector is a row of B; M(e, k) = U(k, e), at u[k + e ldu]
  const LeafMatrix m{u, ldu, 1, w};
  trsm_leaf_rows_kernel<true><<<blocks_for(rows, kRowThreads), kRowThreads, 0, stream>>>(m, b, ldb, rows);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  return true;
}

bool trsm_leaf_left_lower(CUstream_st* stream, const float* l, int ldl, float* b, int ldb, int w, int cols) {
  if (w > kW || ldl < w || ldb < w) return false;
  if (w < 1 || cols < 1) return true;
  // a vector is a column of B; M(e, k) = L(e, k), at l[e + k ldl]
  const LeafMatrix m{l, 1, ldl, w};
  trsm_leaf_columns_kernel<false><<<blocks_for(cols, kColThreads), kColThreads, 0, stream>>>(m, b, ldb, cols);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  return true;
}

}  // namespace tcsolve::cuda::kernels
