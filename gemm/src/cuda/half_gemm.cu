// cuda backend: fp16-simt, RFC 0007's half_gemm_fp32_accum ("Phase 1: scalar FP16 arithmetic,
// FP32 accumulation, shared memory tiling with FP16 tiles") on the CUDA cores, no tensor cores.
//
//   C(i, j) = alpha * acc(i, j) + beta * C(i, j),   acc(i, j) = sum_{p = 0..k-1} a_ip * b_pj
//
// with a_ip = fp16(op(A)(i, p)), b_pj = fp16(op(B)(p, j)) converted on load under RFC 0007's
// saturating rules (tcsolve::fp32_to_fp16_value, the function the CPU emulation calls), and the
// sum taken sequentially in k order in FP32: acc = fl(acc + fl(a * b)). The product of two FP16
// values has at most 22 significant bits and no subnormal FP16 value survives the saturating
// conversion, so fl(a * b) = a * b exactly; __fmul_rn / __fadd_rn keep nvcc from contracting the
// pair into an FMA. The result is therefore bitwise equal to cpu::gemm(Variant::fp16_simt)
// (NaN payloads aside: the GPU produces the canonical NaN). The epilogue is rounded as the
// emulation's: fl(fl(alpha * acc) + fl(beta * C)), or fl(alpha * acc) when beta == 0 (C not read).
//
// Tiling: one thread per element of C in kTile x kTile thread blocks; per k-step the block
// stages a kTile x kTile FP16 tile of op(A) and one of op(B) in shared memory.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "backend.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/convert.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda::detail {

namespace {

constexpr int kMaxGridY = 65535;  ///< gridDim.y limit; the kernel loops over further tiles

/// Parameters of one launch (the public gemm arguments).
struct HalfGemmParams {
  Op ta, tb;
  int m, n, k;
  float alpha;
  const float* __restrict__ A;
  int lda;
  const float* __restrict__ B;
  int ldb;
  float beta;
  float* __restrict__ C;
  int ldc;
};

/// Element (row, col) of a stored column-major matrix with leading dimension ld.
__device__ __forceinline__ float load(const float* X, int ld, int row, int col) {
  return X[row + static_cast<std::size_t>(col) * ld];
}

/// FP16 value of x under RFC 0007's saturating rules (shared with the CPU emulation).
__device__ __forceinline__ __half to_half(float x) {
  return __ushort_as_half(fp32_to_fp16_value(x, Fp16Mode::saturate));
}

/// Block kTile x kTile; thread (tx, ty) computes C(tile_i + tx, tile_j + ty) (tx runs along
/// the columns of C, which are contiguous: coalesced stores).
template <int kTile>
__global__ void __launch_bounds__(kTile * kTile) half_gemm_fp32_accum(const HalfGemmParams p) {
  // as[q][r] = fp16(op(A)(tile_i + r, k0 + q)),  bs[q][c] = fp16(op(B)(k0 + q, tile_j + c)):
  // the k index outermost, so the inner loop reads as[q][tx] (consecutive across the warp)
  // and bs[q][ty] (a broadcast). The padding of 2 halves (an odd number of 32-bit words per
  // row) spreads the transposed stores of the Op::t loads over the banks.
  constexpr int kPad = 2;
  __shared__ __half as[kTile][kTile + kPad];
  __shared__ __half bs[kTile][kTile + kPad];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tile_i = blockIdx.x * kTile;
  const int tiles_n = ceil_div(p.n, kTile);
  const __half zero = __ushort_as_half(0);

  for (int by = blockIdx.y; by < tiles_n; by += gridDim.y) {  // uniform across the block
    const int tile_j = by * kTile;
    float acc = 0.0f;
    for (int k0 = 0; k0 < p.k; k0 += kTile) {
      // op(A) tile. Op::n: A(i, q) is contiguous in i, so tx walks i; Op::t: A(q, i) is
      // contiguous in q, so tx walks q. Out-of-range entries are zero (never summed below).
      {
        const int r = p.ta == Op::n ? tx : ty;  // row of op(A) within the tile
        const int q = p.ta == Op::n ? ty : tx;  // k within the tile
        const int i = tile_i + r, kk = k0 + q;
        __half v = zero;
        if (i < p.m && kk < p.k)
          v = to_half(p.ta == Op::n ? load(p.A, p.lda, i, kk) : load(p.A, p.lda, kk, i));
        as[q][r] = v;
      }
      // op(B) tile. Op::n: B(q, j) is contiguous in q, so tx walks q; Op::t: B(j, q) is
      // contiguous in j, so tx walks j.
      {
        const int q = p.tb == Op::n ? tx : ty;  // k within the tile
        const int c = p.tb == Op::n ? ty : tx;  // column of op(B) within the tile
        const int kk = k0 + q, j = tile_j + c;
        __half v = zero;
        if (kk < p.k && j < p.n)
          v = to_half(p.tb == Op::n ? load(p.B, p.ldb, kk, j) : load(p.B, p.ldb, j, kk));
        bs[q][c] = v;
      }
      __syncthreads();
      // Exactly the k - k0 real terms of this tile, in k order: no padding term is ever
      // added, so the sum is the emulation's term for term.
      const int steps = min(kTile, p.k - k0);
      for (int q = 0; q < steps; ++q)
        acc = __fadd_rn(acc, __fmul_rn(__half2float(as[q][tx]), __half2float(bs[q][ty])));
      __syncthreads();
    }
    const int i = tile_i + tx, j = tile_j + ty;
    if (i < p.m && j < p.n) {
      float& c = p.C[i + static_cast<std::size_t>(j) * p.ldc];
      const float scaled = __fmul_rn(p.alpha, acc);
      c = p.beta == 0.0f ? scaled : __fadd_rn(scaled, __fmul_rn(p.beta, c));
    }
  }
}

constexpr int kHalfTile = 16;  ///< RFC 0007 phase 1: 16 x 16 threads, 16 x 16 FP16 tiles

}  // namespace

GemmInfo half_gemm(const GemmArgs& a) {
  const HalfGemmParams p{a.ta, a.tb, a.m, a.n, a.k, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta, a.C,
                         a.ldc};
  const dim3 block(kHalfTile, kHalfTile);
  const dim3 grid(static_cast<unsigned int>(ceil_div(a.m, kHalfTile)),
                  static_cast<unsigned int>(std::min(ceil_div(a.n, kHalfTile), kMaxGridY)));
  half_gemm_fp32_accum<kHalfTile><<<grid, block, 0, a.stream()>>>(p);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  return GemmInfo{Variant::fp16_simt, Variant::fp16_simt, Backend::cuda, ""};
}

}  // namespace tcsolve::cuda::detail
