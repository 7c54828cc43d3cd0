// X = L^-1 B in place for the GPU LU's small triangular solves (blocked_lu.cpp): U12 of the next
// block's columns (w = nb = 512 rows, 512 columns) on the panel's path, and the joins of the
// recursive panel (w = 32..256 rows and columns); on GPU members (distributed_lu_cuda.cpp) U12
// of the next block's columns, L11 from the broadcast panel (its own leading dimension). L is
// unit lower triangular and both are row-major (leading dimensions ldl and ldb).
//
// Why: cublasStrsm took about 150 us for the 512 x 512 case (4.9 ms over the 32 blocks of
// n = 16384, with the whole GPU to itself: 0.9 TFLOP/s), i.e. its launches and internal steps,
// not its 134 MFLOP, set its time (docs/benchmark-history.md, session 5). This kernel: 44 us there
// (H100), the chain of 8 diagonal solves and 8 rounds of L2 latency.
//
// One CTA of 256 threads per kCols = 8 columns of B, which it keeps in shared memory (w x 8) for
// the whole solve; row blocks of kDiag = 64 rows, top down (right-looking), per block p:
//   diagonal  warp c solves column c of the block: lane holds rows lane and lane + 32, and for
//             each step j the solved x_j is broadcast by a shuffle and every lane does x_i -=
//             l_ij x_j (zeros on and above the diagonal leave the solved rows as they are);
//   below     every row under the block: x(r) -= L(r, block) x(block): thread (i, s) = (t / 4,
//             t % 4) takes rows i, i + 64, ... below the block and 16 of its 64 columns (16-byte
//             loads of L where aligned), 8 column sums in registers, the 4 partial sums added by
//             two shuffles in a fixed order. The loads of L for kGroup = 4 rows per thread and
//             of the next diagonal block (into the other of two shared buffers) go out together,
//             so that a block costs about one round of L2 latency, not one per row.
// Every x_i is thus b_i minus 64-term dot products, block by block, in a fixed order (one rounding
// per fmaf): forward substitution's error bound (Higham, Thm 8.5), deterministic run to run.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/per_device.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kCols = 8;   ///< columns of B per CTA (one warp each in the diagonal solve)
constexpr int kDiag = 64;  ///< rows of a row block (lane and lane + 32 in the diagonal solve)
constexpr unsigned kFull = 0xffffffffu;
static_assert(kThreads / 32 == kCols, "one warp per column in the diagonal solve");
static_assert(kThreads / 4 == kDiag, "four threads per row of a row block in the gemm part");

/// Where row r of the CTA's columns starts in shared memory: 8 floats a row, 4 more after every
/// 4 rows. The gemm part's 16-byte reads of rows k = 4 s + c by the four threads s of a row then
/// fall in four different bank groups (without the skew, all in one: 69% of the kernel's
/// shared-memory wavefronts were bank-conflict replays, ncu, and it took 90 us at w = 512).
__host__ __device__ constexpr int xoff(int r) { return r * kCols + (r >> 2) * 4; }

std::size_t shared_bytes(int w) {
  return (static_cast<std::size_t>(xoff(w)) + 2 * kDiag * (kDiag + 1)) * sizeof(float);
}

using Diag = float[kDiag][kDiag + 1];

constexpr int kDiagLoads = kDiag * kDiag / kThreads;  ///< elements of a diagonal block per thread
constexpr int kGroup = 4;  ///< rows below the block per thread whose loads of L go out together

/// This thread's elements of the diagonal block at r0 (h rows; strict lower part, zeros elsewhere).
__device__ __forceinline__ void load_diagonal_regs(const float* __restrict__ l, int ldl, int r0, int h,
                                                   float (&v)[kDiagLoads]) {
#pragma unroll
  for (int u = 0; u < kDiagLoads; ++u) {
    const int e = static_cast<int>(threadIdx.x) + u * kThreads, rr = e / kDiag, cc = e % kDiag;
    v[u] = rr < h && cc < rr ? l[static_cast<std::size_t>(r0 + rr) * ldl + r0 + cc] : 0.0f;
  }
}

__device__ __forceinline__ void store_diagonal(const float (&v)[kDiagLoads], Diag& d) {
#pragma unroll
  for (int u = 0; u < kDiagLoads; ++u) {
    const int e = static_cast<int>(threadIdx.x) + u * kThreads;
    d[e / kDiag][e % kDiag] = v[u];
  }
}

template <bool Vec>
__global__ void __launch_bounds__(kThreads, 1)
    trsm_lower_unit_kernel(const float* __restrict__ l, int ldl, float* __restrict__ b, int ldb, int w, int cols) {
  extern __shared__ float4 shared_raw[];
  float* x = reinterpret_cast<float*>(shared_raw);  // x[xoff(r) + c]: row r, column col0 + c
  Diag* diag = reinterpret_cast<Diag*>(x + xoff(w));  // two buffers
  const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
  const int col0 = static_cast<int>(blockIdx.x) * kCols;
  const int ncols = min(kCols, cols - col0);

#pragma unroll 8
  for (int e = t; e < w * kCols; e += kThreads) {
    const int r = e / kCols, c = e % kCols;
    x[xoff(r) + c] = c < ncols ? b[static_cast<std::size_t>(r) * ldb + col0 + c] : 0.0f;
  }
  {
    float first[kDiagLoads];
    load_diagonal_regs(l, ldl, 0, min(kDiag, w), first);
    store_diagonal(first, diag[0]);
  }
  __syncthreads();
  const int i = t / 4, s = t % 4;
  for (int r0 = 0, p = 0; r0 < w; r0 += kDiag, ++p) {
    const int h = min(kDiag, w - r0);
    const Diag& d = diag[p % 2];
    {  // the diagonal block, warp c on column c
      float lo = lane < h ? x[xoff(r0 + lane) + warp] : 0.0f;
      float hi = lane + 32 < h ? x[xoff(r0 + lane + 32) + warp] : 0.0f;
      if (h == kDiag) {  // unrolled: the source lane and the shared-memory offsets are constants
#pragma unroll
        for (int j = 0; j < kDiag; ++j) {
          const float xj = __shfl_sync(kFull, j < 32 ? lo : hi, j % 32);
          lo = fmaf(-d[lane][j], xj, lo);
          hi = fmaf(-d[lane + 32][j], xj, hi);
        }
      } else {
        for (int j = 0; j < h; ++j) {
          const float xj = __shfl_sync(kFull, j < 32 ? lo : hi, j % 32);
          lo = fmaf(-d[lane][j], xj, lo);
          hi = fmaf(-d[lane + 32][j], xj, hi);
        }
      }
      if (lane < h) x[xoff(r0 + lane) + warp] = lo;
      if (lane + 32 < h) x[xoff(r0 + lane + 32) + warp] = hi;
    }
    const int below = r0 + h;
    if (below >= w) break;
    __syncthreads();  // the block's x is solved
    // x(r) -= L(r, r0 .. r0 + h) x(r0 .. r0 + h) for the rows r below the block (h = 64 here),
    // kGroup rows per thread at a time: their loads of L all issued before the first use (one
    // round of L2 latency per group, not per row; alone it changed nothing measurable, 89.5 ->
    // 88.4 us at w = 512: bank conflicts set the time then, see xoff).
    const float* xb = x + xoff(r0);  // r0 is a multiple of 4: xoff(r0 + k) = xoff(r0) + xoff(k)
    const int passes = (w - below + kDiag - 1) / kDiag;  // rows per thread, the same in every lane
    float next_diag[kDiagLoads];  // the next diagonal block, stored once this step's loads are in
    load_diagonal_regs(l, ldl, below, min(kDiag, w - below), next_diag);
    for (int g = 0; g < passes; g += kGroup) {
      float lk[kGroup][16];  // this thread's 16 of the 64 columns, per row of the group
#pragma unroll
      for (int m = 0; m < kGroup; ++m) {
        const int r = below + i + (g + m) * kDiag;
        const float* row = l + static_cast<std::size_t>(r < w ? r : below) * ldl + r0;
        if (g + m < passes) {
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            if constexpr (Vec) {
              const float4 v = *reinterpret_cast<const float4*>(row + 4 * s + 16 * q);
              lk[m][4 * q] = v.x, lk[m][4 * q + 1] = v.y, lk[m][4 * q + 2] = v.z, lk[m][4 * q + 3] = v.w;
            } else {
#pragma unroll
              for (int dd = 0; dd < 4; ++dd) lk[m][4 * q + dd] = row[s + 4 * q + 16 * dd];
            }
          }
        }
      }
#pragma unroll
      for (int m = 0; m < kGroup; ++m) {
        if (g + m >= passes) break;  // uniform: every lane takes part in the shuffles below
        const int r = below + i + (g + m) * kDiag;
        float acc[kCols];
#pragma unroll
        for (int c = 0; c < kCols; ++c) acc[c] = 0.0f;
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
          for (int dd = 0; dd < 4; ++dd) {
            // column of lk[m][4 q + dd]: Vec 4 s + 16 q + dd, else s + 4 q + 16 dd
            const int kk = Vec ? 4 * s + 16 * q + dd : s + 4 * q + 16 * dd;
            const float lv = lk[m][4 * q + dd];
            const float4 x0 = *reinterpret_cast<const float4*>(xb + xoff(kk));
            const float4 x1 = *reinterpret_cast<const float4*>(xb + xoff(kk) + 4);
            acc[0] = fmaf(lv, x0.x, acc[0]);
            acc[1] = fmaf(lv, x0.y, acc[1]);
            acc[2] = fmaf(lv, x0.z, acc[2]);
            acc[3] = fmaf(lv, x0.w, acc[3]);
            acc[4] = fmaf(lv, x1.x, acc[4]);
            acc[5] = fmaf(lv, x1.y, acc[5]);
            acc[6] = fmaf(lv, x1.z, acc[6]);
            acc[7] = fmaf(lv, x1.w, acc[7]);
          }
        // The four partial sums of a row sit in lanes 4 i' .. 4 i' + 3 of one warp.
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          acc[c] += __shfl_xor_sync(kFull, acc[c], 1);
          acc[c] += __shfl_xor_sync(kFull, acc[c], 2);
        }
        if (r < w) {  // lane s writes columns 2 s and 2 s + 1
          x[xoff(r) + 2 * s] -= acc[2 * s];
          x[xoff(r) + 2 * s + 1] -= acc[2 * s + 1];
        }
      }
    }
    store_diagonal(next_diag, diag[(p + 1) % 2]);
    __syncthreads();  // the rows below are updated; the next diagonal block is loaded
  }
  __syncthreads();
#pragma unroll 8
  for (int e = t; e < w * kCols; e += kThreads) {
    const int r = e / kCols, c = e % kCols;
    if (c < ncols) b[static_cast<std::size_t>(r) * ldb + col0 + c] = x[xoff(r) + c];
  }
}

}  // namespace

bool trsm_lower_unit(CUstream_st* stream, const float* l, float* b, int ld, int w, int cols) {
  return trsm_lower_unit(stream, l, ld, b, ld, w, cols);
}

/// The kernels' shared-memory attribute for the largest w, set once on each device (the first
/// call there also loads trsm.cu's module: CUDA loads modules lazily).
void trsm_lower_unit_load() {
  static tcsolve::detail::PerDeviceOnce attributes;
  attributes([] {
    const int most = static_cast<int>(shared_bytes(kTrsmMaxRows));
    TCSOLVE_CUDA_CHECK(
        cudaFuncSetAttribute(trsm_lower_unit_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
    TCSOLVE_CUDA_CHECK(
        cudaFuncSetAttribute(trsm_lower_unit_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
  });
}

bool trsm_lower_unit(CUstream_st* stream, const float* l, int ldl, float* b, int ldb, int w, int cols) {
  if (w < 1 || cols < 1) return true;
  if (w > kTrsmMaxRows || ldl < w || ldb < cols) return false;
  const bool vec = reinterpret_cast<std::uintptr_t>(l) % 16 == 0 && ldl % 4 == 0;
  const std::size_t bytes = shared_bytes(w);
  trsm_lower_unit_load();
  const unsigned grid = static_cast<unsigned>((cols + kCols - 1) / kCols);
  if (vec)
    trsm_lower_unit_kernel<true><<<grid, kThreads, bytes, stream>>>(l, ldl, b, ldb, w, cols);
  else
    trsm_lower_unit_kernel<false><<<grid, kThreads, bytes, stream>>>(l, ldl, b, ldb, w, cols);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  return true;
}

}  // namespace tcsolve::cuda::kernels
