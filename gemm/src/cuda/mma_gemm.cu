// The mma.sync kernel family (mma_gemm.hpp): tensor-core GEMMs with each paper's accumulation
// scheme as a policy, for GPUs without wgmma and the variants wgmma does not serve (FP16
// accumulation). gemm_cuda.cu chooses the kernel; ec_gemm.cu drives the ec variants:
//   Single    fp16-tc, tf32-tc   one rounded product chained inside the tensor core
//   Fp16Acc   fp16-fp16acc       FP16 accumulator chained inside (two-stage blog baseline)
//   TwoStage  fp16-twostage      FP16-accumulating mma from zero per k-step, added outside in FP32
//   Markidis  markidis           4 products chained in one accumulator (Ootomo Code 2)
//   Halfhalf  ootomo-fp16/tf32,  lo*hi + hi*lo chained inside; hi*hi chained for `chunk` k-steps
//             ec-fp16/tf32       then added outside in FP32 RN (Ootomo Code 3; chunk 1 there)
//   Legemm    legemm             hi*hi and hi*lo + lo*hi in two inside accumulators (Alg. 1)
// Two kernels share the policies, the block tile (128 x 64 x 32, 8 warps of 32 x 32) and the
// epilogue (alpha * v + beta * C in FP32 without contraction, like the emulation):
//   mma_fp16_kernel  mma.sync.m16n8k16: the next FP32 tile loaded into registers (16-byte
//                    loads) during the current tile's products, split once per block into
//                    double-buffered FP16 hi/lo shared tiles, fragments by ldmatrix;
//   mma_tf32_kernel  mma.sync.m16n8k8: FP32 tiles staged by cp.async, split per warp in registers.
// The splits use the hardware conversions that the [gpu] sweep proved bitwise equal to the
// shared helpers of split.hpp, so the operands are exactly those of the CPU emulation. With
// MmaScaling's shifts (the ec variants) rows of op(A) and columns of op(B) are multiplied by
// exact powers of two while splitting and unscaled in the epilogue.
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <string>

#include "backend.hpp"
#include "mma_gemm.hpp"
#include "tc_split.cuh"
#include "tcsolve/gemm/scaling.hpp"
#include "tcsolve/gemm/split.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::detail {
namespace {

constexpr int kBM = 128, kBN = 64, kBK = 32;  // block tile
constexpr int kWarpsM = 4, kWarpsN = 2;        // 8 warps, each 32 x 32
constexpr int kThreads = 32 * kWarpsM * kWarpsN;

struct Params {
  Op ta, tb;
  int m, n, k;
  float alpha, beta;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  float* C;
  int ldc;
  int chunk_steps;        // Halfhalf: k-steps of hi*hi chained inside before the outside add
  const int* shift_a;     // ec: scaling exponent per row of op(A) (nullptr: no scaling)
  const int* shift_b;     // ec: per column of op(B)
  const int* use_fp16;    // auto: device flag, the kernel of the other format returns at once
  int want_fp16;
  const float* alpha_ptr; // device scalars (cuBLAS's device pointer mode); nullptr: alpha, beta
  const float* beta_ptr;
};

// ---------------------------------------------------------------------------------------------
// PTX wrappers
// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ void mma_f16_f32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_f16_f16(unsigned (&d)[2], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"
      : "+r"(d[0]), "+r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_tf32_f32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/// ldmatrix.x4: four 8x8 b16 matrices; lane L supplies the row address of matrix L / 8.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem_row) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// ---------------------------------------------------------------------------------------------
// Operand transforms: what each variant feeds the tensor cores
// ---------------------------------------------------------------------------------------------

struct Fp16Mma {
  static constexpr int ks = 16;
  __device__ static void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) { mma_f16_f32(d, a, b); }
};
struct Tf32Mma {
  static constexpr int ks = 8;
  __device__ static void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) { mma_tf32_f32(d, a, b); }
};

/// One k-step's operand registers of a warp's 32 x 32 tile: 2 m16 tiles of A, 4 n8 tiles of B,
/// hi and lo parts (lo unused by the rounding variants). FP16 and TF32 fragments have the same
/// register counts (A 4, B 2).
struct Regs {
  unsigned ah[2][4], al[2][4], bh[4][2], bl[4][2];
};

// ---------------------------------------------------------------------------------------------
// Accumulation policies: per-warp state for 2 x 4 m16n8 tiles, one k-step at a time
// ---------------------------------------------------------------------------------------------

__device__ __forceinline__ void zero(float (&x)[2][4][4]) {
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) x[mi][ni][r] = 0.0f;
}

/// One rounded product chained inside (fp16-tc: RN to FP16; tf32-tc: RNA to TF32).
template <typename M>
struct Single {
  using Mma = M;
  static constexpr Transform transform = Transform::round;
  static constexpr int min_blocks = 2;  // blocks per SM the register budget aims at
  float acc[2][4][4];
  __device__ void init(int) { zero(acc); }
  __device__ void step(const Regs& g) {
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) M::mma(acc[mi][ni], g.ah[mi], g.bh[ni]);
  }
  __device__ void finish() {}
  __device__ float value(int mi, int ni, int r) const { return acc[mi][ni][r]; }
};

/// FP16 inputs with an FP16 accumulator chained inside (fp16-fp16acc), or an FP16 mma from zero
/// per k-step whose result is added outside in FP32 (fp16-twostage).
template <bool kTwoStage>
struct Fp16Accumulate {
  using Mma = Fp16Mma;
  static constexpr Transform transform = Transform::round;
  static constexpr int min_blocks = 2;
  unsigned acc16[2][4][2];  // fp16-fp16acc
  float acc[2][4][4];       // fp16-twostage
  __device__ void init(int) {
    zero(acc);
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) acc16[mi][ni][0] = acc16[mi][ni][1] = 0u;
  }
  __device__ void step(const Regs& g) {
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        if constexpr (kTwoStage) {
          unsigned t[2] = {0u, 0u};
          mma_f16_f16(t, g.ah[mi], g.bh[ni]);
#pragma unroll
          for (int r = 0; r < 4; ++r)
            acc[mi][ni][r] = __fadd_rn(acc[mi][ni][r], half_at(t, r));
        } else {
          mma_f16_f16(acc16[mi][ni], g.ah[mi], g.bh[ni]);
        }
      }
  }
  __device__ void finish() {}
  __device__ float value(int mi, int ni, int r) const {
    return kTwoStage ? acc[mi][ni][r] : half_at(acc16[mi][ni], r);
  }
  /// Element r (0..3) of an m16n8 FP16 accumulator fragment as FP32 (exact).
  __device__ static float half_at(const unsigned (&d)[2], int r) {
    const unsigned short bits = static_cast<unsigned short>(d[r / 2] >> (16 * (r % 2)));
    return __half2float(__ushort_as_half(bits));
  }
};

/// Markidis (Ootomo Code 2): lo*lo, lo*hi, hi*lo, hi*hi chained in one accumulator.
struct Markidis {
  using Mma = Fp16Mma;
  static constexpr Transform transform = Transform::markidis;
  static constexpr int min_blocks = 2;
  float acc[2][4][4];
  __device__ void init(int) { zero(acc); }
  __device__ void step(const Regs& g) {
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        mma_f16_f32(acc[mi][ni], g.al[mi], g.bl[ni]);
        mma_f16_f32(acc[mi][ni], g.al[mi], g.bh[ni]);
        mma_f16_f32(acc[mi][ni], g.ah[mi], g.bl[ni]);
        mma_f16_f32(acc[mi][ni], g.ah[mi], g.bh[ni]);
      }
  }
  __device__ void finish() {}
  __device__ float value(int mi, int ni, int r) const { return acc[mi][ni][r]; }
};

/// halfhalf / tf32tf32 (Ootomo Code 3) with hi*hi chained for `chunk` k-steps before the
/// outside FP32 addition (ootomo-*: 1; ec-tf32: GemmOptions::ec_chunk_k_tf32 / ks).
/// kShared: the production path's FP16 scheme (ec-fp16; emulate.cpp halfhalf_value with
/// shared = true): lo*hi and hi*lo go into the chunk's accumulator too, lo not scaled (the
/// Markidis split of the scaled values), and there is no correction term.
template <typename M, bool kShared = false>
struct Halfhalf {
  using Mma = M;
  static constexpr Transform transform = kShared ? Transform::markidis : Transform::ootomo;
  static constexpr int min_blocks = kShared ? 2 : 1;  // three accumulators: 2 blocks would spill
  float acc[2][4][4], corr[2][4][4], part[2][4][4];
  int chunk, steps;
  __device__ void init(int chunk_steps) {
    zero(acc), zero(corr), zero(part);
    chunk = chunk_steps, steps = 0;
  }
  __device__ void step(const Regs& g) {
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        float(&c)[4] = kShared ? part[mi][ni] : corr[mi][ni];
        M::mma(c, g.al[mi], g.bh[ni]);
        M::mma(c, g.ah[mi], g.bl[ni]);
        M::mma(part[mi][ni], g.ah[mi], g.bh[ni]);
      }
    if (++steps == chunk) flush();
  }
  __device__ void flush() {
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          acc[mi][ni][r] = __fadd_rn(acc[mi][ni][r], part[mi][ni][r]);
          part[mi][ni][r] = 0.0f;
        }
    steps = 0;
  }
  __device__ void finish() {
    if (steps != 0) flush();
  }
  __device__ float value(int mi, int ni, int r) const {
    return kShared ? acc[mi][ni][r] : __fadd_rn(acc[mi][ni][r], corr[mi][ni][r] * (1.0f / kOotomoScale));
  }
};

/// LE-GEMM Algorithm 1: acc0 = hi*hi and acc1 = hi*lo + lo*hi chained inside.
struct Legemm {
  using Mma = Fp16Mma;
  static constexpr Transform transform = Transform::legemm;
  static constexpr int min_blocks = 2;
  float acc0[2][4][4], acc1[2][4][4];
  __device__ void init(int) { zero(acc0), zero(acc1); }
  __device__ void step(const Regs& g) {
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        mma_f16_f32(acc0[mi][ni], g.ah[mi], g.bh[ni]);
        mma_f16_f32(acc1[mi][ni], g.ah[mi], g.bl[ni]);
        mma_f16_f32(acc1[mi][ni], g.al[mi], g.bh[ni]);
      }
  }
  __device__ void finish() {}
  __device__ float value(int mi, int ni, int r) const {
    return __fadd_rn(acc0[mi][ni][r], acc1[mi][ni][r] * (1.0f / kLegemmScale));
  }
};

// ---------------------------------------------------------------------------------------------
// Shared pieces of both kernels
// ---------------------------------------------------------------------------------------------

struct TileCoords {
  int lane, g, t, warp_m, warp_n, m0, n0;
  __device__ TileCoords() {
    lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    g = lane / 4, t = lane % 4;  // mma fragment coordinates
    warp_m = (warp % kWarpsM) * 32, warp_n = (warp / kWarpsM) * 32;
    m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
  }
};

/// ec: 2^shift as FP32 factors (1 without scaling) for the block's rows of op(A) / columns of op(B).
__device__ __forceinline__ float row_scale(const Params& p, int gi) {
  return p.shift_a != nullptr && gi < p.m ? scale_factor(p.shift_a[gi]) : 1.0f;
}
__device__ __forceinline__ float col_scale(const Params& p, int gj) {
  return p.shift_b != nullptr && gj < p.n ? scale_factor(p.shift_b[gj]) : 1.0f;
}

/// C fragment (rows g | g+8, columns 2t, 2t+1) of each m16n8 tile: unscale (ec), then
/// alpha * v + beta * C in FP32 without contraction.
template <typename P>
__device__ __forceinline__ void epilogue(const Params& p, const TileCoords& c, const P& policy) {
  const float alpha = p.alpha_ptr != nullptr ? *p.alpha_ptr : p.alpha;
  const float beta = p.beta_ptr != nullptr ? *p.beta_ptr : p.beta;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int gi = c.m0 + c.warp_m + mi * 16 + c.g + 8 * (r / 2);
        const int gj = c.n0 + c.warp_n + ni * 8 + 2 * c.t + (r % 2);
        if (gi >= p.m || gj >= p.n) continue;
        float v = policy.value(mi, ni, r);
        if (p.shift_a != nullptr) v = ldexpf(v, -(p.shift_a[gi] + p.shift_b[gj]));
        float& out = p.C[gi + static_cast<std::size_t>(gj) * p.ldc];
        out = beta == 0.0f ? __fmul_rn(alpha, v) : __fadd_rn(__fmul_rn(alpha, v), __fmul_rn(beta, out));
      }
}

// ---------------------------------------------------------------------------------------------
// Kernel 1 (TF32 variants): FP32 tiles in shared memory, transforms per warp in registers
// ---------------------------------------------------------------------------------------------

constexpr int kV1PadA = kBM + 4, kV1PadB = kBN + 4;  // row strides in floats: conflict-free fragment reads
constexpr int kV1StageFloats = kBK * kV1PadA + kBK * kV1PadB;
constexpr int kV1Stages = 3;
constexpr int kV1SmemBytes = kV1Stages * kV1StageFloats * static_cast<int>(sizeof(float));

/// cp.async (4-byte) copies of k-tile at k0 of op(A) (kBM x kBK, stored As[kk][i]) and op(B)
/// (kBK x kBN, Bs[kk][j]); out-of-range elements zero-filled (zero products change no sum).
__device__ __forceinline__ void v1_load_tile(const Params& p, float* stage, int m0, int n0, int k0) {
  float* As = stage;
  float* Bs = stage + kBK * kV1PadA;
  for (int idx = threadIdx.x; idx < kBM * kBK; idx += kThreads) {
    // consecutive threads walk the contiguous dimension of the stored matrix
    const int i = p.ta == Op::n ? idx % kBM : idx / kBK;
    const int kk = p.ta == Op::n ? idx / kBM : idx % kBK;
    const int gi = m0 + i, gk = k0 + kk;
    const bool ok = gi < p.m && gk < p.k;
    const float* src = ok ? (p.ta == Op::n ? p.A + gi + static_cast<std::size_t>(gk) * p.lda
                                           : p.A + gk + static_cast<std::size_t>(gi) * p.lda)
                          : p.A;
    cp_async_4(As + kk * kV1PadA + i, src, ok);
  }
  for (int idx = threadIdx.x; idx < kBK * kBN; idx += kThreads) {
    const int kk = p.tb == Op::n ? idx % kBK : idx / kBN;
    const int j = p.tb == Op::n ? idx / kBK : idx % kBN;
    const int gj = n0 + j, gk = k0 + kk;
    const bool ok = gj < p.n && gk < p.k;
    const float* src = ok ? (p.tb == Op::n ? p.B + gk + static_cast<std::size_t>(gj) * p.ldb
                                           : p.B + gj + static_cast<std::size_t>(gk) * p.ldb)
                          : p.B;
    cp_async_4(Bs + kk * kV1PadB + j, src, ok);
  }
}

template <typename P>
__global__ void __launch_bounds__(kThreads, P::min_blocks) mma_tf32_kernel(Params p) {
  static_assert(P::Mma::ks == 8, "kernel 1 serves the TF32 variants");
  if (p.use_fp16 != nullptr && *p.use_fp16 != p.want_fp16) return;  // auto: the other kernel runs
  extern __shared__ float smem[];
  const TileCoords c;
  float sa[2][2], sb[4];
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) sa[mi][h] = row_scale(p, c.m0 + c.warp_m + mi * 16 + c.g + 8 * h);
#pragma unroll
  for (int ni = 0; ni < 4; ++ni) sb[ni] = col_scale(p, c.n0 + c.warp_n + ni * 8 + c.g);

  P policy;
  policy.init(p.chunk_steps);
  const int tiles = ceil_div(p.k, kBK);
  for (int s = 0; s < kV1Stages - 1; ++s) {
    if (s < tiles) v1_load_tile(p, smem + s * kV1StageFloats, c.m0, c.n0, s * kBK);
    cp_async_commit();
  }
  for (int kt = 0; kt < tiles; ++kt) {
    cp_async_wait<kV1Stages - 2>();
    __syncthreads();
    const int next = kt + kV1Stages - 1;
    if (next < tiles) v1_load_tile(p, smem + (next % kV1Stages) * kV1StageFloats, c.m0, c.n0, next * kBK);
    cp_async_commit();

    const float* As = smem + (kt % kV1Stages) * kV1StageFloats;
    const float* Bs = As + kBK * kV1PadA;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 8) {
      Regs g;
      // A (m16n8k8 tf32): a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int h = i % 2, col = c.t + 4 * (i / 2);
          const float v = As[(kk + col) * kV1PadA + c.warp_m + mi * 16 + c.g + 8 * h] * sa[mi][h];
          tf32_one<P::transform>(v, g.ah[mi][i], g.al[mi][i]);
        }
      // B: b0 (k = t, n = g), b1 (k = t + 4, n = g)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const float v = Bs[(kk + c.t + 4 * i) * kV1PadB + c.warp_n + ni * 8 + c.g] * sb[ni];
          tf32_one<P::transform>(v, g.bh[ni][i], g.bl[ni][i]);
        }
      policy.step(g);
    }
  }
  cp_async_wait<0>();
  policy.finish();
  epilogue(p, c, policy);
}

// ---------------------------------------------------------------------------------------------
// Kernel 2 (FP16 variants): each thread loads its share of the next k-tile of op(A) and op(B)
// from global memory into registers (16-byte loads where aligned and in range) while the warps
// compute on the current tile from shared memory; then it scales and splits the values and
// stores them as FP16 hi/lo into the other of two shared buffers. Fragments by ldmatrix; one
// barrier per k-tile.
// ---------------------------------------------------------------------------------------------

constexpr int kHalfRow = kBK + 8;  // halves per tile row: 80 bytes, conflict-free ldmatrix
constexpr int kRowWords = kHalfRow / 2;
constexpr int kWordsA = kBM * kRowWords, kWordsB = kBN * kRowWords;
constexpr int kBufWords = 2 * (kWordsA + kWordsB);  // hi and lo of A and B
constexpr int kV2SmemBytes = 2 * kBufWords * 4 + (kBM + kBN) * 4;
constexpr int kGroupsA = kBM * kBK / 8 / kThreads, kGroupsB = kBN * kBK / 8 / kThreads;  // per thread

/// One operand of the block: op(X) rows [r0, r0 + rows) of the stored matrix X (column-major,
/// leading dimension ld). k_inner: op(X)(r, k) = X[k + r ld] (k contiguous), else X[r + k ld].
/// A group is 8 values: k_inner, one row and 8 consecutive k; else 4 consecutive rows and 2 k.
struct Operand {
  const float* X;
  int ld, rows, r_lim, k_lim, r0;
  bool k_inner, vec;

  /// Row and k of group `idx` (0 .. rows * kBK / 8) within the tile. Lanes walk the contiguous
  /// dimension: 4 lanes per row (k_inner) or 8 lanes down the rows (else).
  __device__ void coords(int idx, int& r, int& kk) const {
    if (k_inner) {
      r = idx / (kBK / 8), kk = (idx % (kBK / 8)) * 8;
    } else {
      const int lane = idx % 32, w = idx / 32, bands = rows / 32;
      r = 4 * (lane % 8 + 8 * (w % bands)), kk = 2 * (lane / 8 + 4 * (w / bands));
    }
  }
  __device__ float at(int r, int k) const {  // op(X)(r0 + r, k), 0 outside
    const int gr = r0 + r;
    if (gr >= r_lim || k >= k_lim) return 0.0f;
    return k_inner ? X[k + static_cast<std::size_t>(gr) * ld] : X[gr + static_cast<std::size_t>(k) * ld];
  }
  /// Four values along the contiguous dimension from (r, k): one 16-byte load when possible.
  __device__ float4 quad(int r, int k) const {
    const int gr = r0 + r;
    const bool full = k_inner ? (gr < r_lim && k + 3 < k_lim) : (gr + 3 < r_lim && k < k_lim);
    if (vec && full) {
      const float* src = k_inner ? X + k + static_cast<std::size_t>(gr) * ld : X + gr + static_cast<std::size_t>(k) * ld;
      return __ldg(reinterpret_cast<const float4*>(src));
    }
    return k_inner ? make_float4(at(r, k), at(r, k + 1), at(r, k + 2), at(r, k + 3))
                   : make_float4(at(r, k), at(r + 1, k), at(r + 2, k), at(r + 3, k));
  }
  __device__ void load(int idx, int k0, float (&v)[8]) const {
    int r, kk;
    coords(idx, r, kk);
    const float4 a = k_inner ? quad(r, k0 + kk) : quad(r, k0 + kk);
    const float4 b = k_inner ? quad(r, k0 + kk + 4) : quad(r, k0 + kk + 1);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  }
  /// Scales, splits and stores group `idx` as hi (and lo) FP16 pairs along k.
  template <Transform T>
  __device__ void store(int idx, const float (&v)[8], const float* scale, unsigned* hi, unsigned* lo) const {
    int r, kk;
    coords(idx, r, kk);
    unsigned h[4], l[4];
    if (k_inner) {  // pairs (v0, v1) .. (v6, v7) of row r
      const float s = scale[r];
#pragma unroll
      for (int i = 0; i < 4; ++i) fp16_pair<T>(v[2 * i] * s, v[2 * i + 1] * s, h[i], l[i]);
      const int w = r * kRowWords + kk / 2;
      *reinterpret_cast<uint4*>(hi + w) = make_uint4(h[0], h[1], h[2], h[3]);
      if constexpr (T != Transform::round) *reinterpret_cast<uint4*>(lo + w) = make_uint4(l[0], l[1], l[2], l[3]);
    } else {  // rows r .. r+3, pair (k, k+1) = (v[i], v[4 + i])
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float s = scale[r + i];
        fp16_pair<T>(v[i] * s, v[4 + i] * s, h[i], l[i]);
        hi[(r + i) * kRowWords + kk / 2] = h[i];
        if constexpr (T != Transform::round) lo[(r + i) * kRowWords + kk / 2] = l[i];
      }
    }
  }
};

template <typename P>
__global__ void __launch_bounds__(kThreads, P::min_blocks) mma_fp16_kernel(Params p) {
  static_assert(P::Mma::ks == 16, "kernel 2 serves the FP16 variants");
  constexpr Transform T = P::transform;
  constexpr bool kSplit = T != Transform::round;
  if (p.use_fp16 != nullptr && *p.use_fp16 != p.want_fp16) return;  // auto: the other kernel runs
  extern __shared__ __align__(16) unsigned smem_words[];
  float* scale_a = reinterpret_cast<float*>(smem_words + 2 * kBufWords);
  float* scale_b = scale_a + kBM;
  // buffer b: [a_hi | a_lo | b_hi | b_lo]
  auto a_hi = [&](int b) { return smem_words + b * kBufWords; };
  auto a_lo = [&](int b) { return smem_words + b * kBufWords + kWordsA; };
  auto b_hi = [&](int b) { return smem_words + b * kBufWords + 2 * kWordsA; };
  auto b_lo = [&](int b) { return smem_words + b * kBufWords + 2 * kWordsA + kWordsB; };

  const TileCoords c;
  for (int i = threadIdx.x; i < kBM; i += kThreads) scale_a[i] = row_scale(p, c.m0 + i);
  for (int j = threadIdx.x; j < kBN; j += kThreads) scale_b[j] = col_scale(p, c.n0 + j);
  const Operand opa{p.A, p.lda, kBM, p.m, p.k, c.m0, p.ta == Op::t,
                    p.lda % 4 == 0 && (reinterpret_cast<std::uintptr_t>(p.A) & 15u) == 0};
  const Operand opb{p.B, p.ldb, kBN, p.n, p.k, c.n0, p.tb == Op::n,
                    p.ldb % 4 == 0 && (reinterpret_cast<std::uintptr_t>(p.B) & 15u) == 0};

  float va[kGroupsA][8], vb[kGroupsB][8];
  auto fetch = [&](int kt) {
#pragma unroll
    for (int q = 0; q < kGroupsA; ++q) opa.load(threadIdx.x + q * kThreads, kt * kBK, va[q]);
#pragma unroll
    for (int q = 0; q < kGroupsB; ++q) opb.load(threadIdx.x + q * kThreads, kt * kBK, vb[q]);
  };
  auto deposit = [&](int buf) {
#pragma unroll
    for (int q = 0; q < kGroupsA; ++q) opa.store<T>(threadIdx.x + q * kThreads, va[q], scale_a, a_hi(buf), a_lo(buf));
#pragma unroll
    for (int q = 0; q < kGroupsB; ++q) opb.store<T>(threadIdx.x + q * kThreads, vb[q], scale_b, b_hi(buf), b_lo(buf));
  };

  P policy;
  policy.init(p.chunk_steps);
  const int tiles = ceil_div(p.k, kBK);
  fetch(0);
  __syncthreads();  // the scale factors
  deposit(0);
  __syncthreads();
  for (int kt = 0; kt < tiles; ++kt) {
    const int buf = kt % 2;
    if (kt + 1 < tiles) fetch(kt + 1);  // in flight while this tile is multiplied
    const unsigned short* ah16 = reinterpret_cast<const unsigned short*>(a_hi(buf));
    const unsigned short* al16 = reinterpret_cast<const unsigned short*>(a_lo(buf));
    const unsigned short* bh16 = reinterpret_cast<const unsigned short*>(b_hi(buf));
    const unsigned short* bl16 = reinterpret_cast<const unsigned short*>(b_lo(buf));
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      Regs g;
      // A: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15) -> a0a1, a2a3, a4a5, a6a7
      const int a_row = c.lane % 16, a_col = kk + (c.lane / 16) * 8;
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        const int off = (c.warp_m + mi * 16 + a_row) * kHalfRow + a_col;
        ldmatrix_x4(g.ah[mi], ah16 + off);
        if constexpr (kSplit) ldmatrix_x4(g.al[mi], al16 + off);
      }
      // B (rows = n): matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
      const int b_row = (c.lane / 16) * 8 + c.lane % 8, b_col = kk + ((c.lane / 8) % 2) * 8;
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        const int off = (c.warp_n + nj * 16 + b_row) * kHalfRow + b_col;
        unsigned r[4];
        ldmatrix_x4(r, bh16 + off);
        g.bh[2 * nj][0] = r[0], g.bh[2 * nj][1] = r[1], g.bh[2 * nj + 1][0] = r[2], g.bh[2 * nj + 1][1] = r[3];
        if constexpr (kSplit) {
          ldmatrix_x4(r, bl16 + off);
          g.bl[2 * nj][0] = r[0], g.bl[2 * nj][1] = r[1], g.bl[2 * nj + 1][0] = r[2], g.bl[2 * nj + 1][1] = r[3];
        }
      }
      policy.step(g);
    }
    if (kt + 1 < tiles) deposit(1 - buf);  // the other buffer: last read in iteration kt - 1
    __syncthreads();
  }
  policy.finish();
  epilogue(p, c, policy);
}

// ---------------------------------------------------------------------------------------------
// ec scaling: exponent ranges of the rows of op(A) and columns of op(B)
// ---------------------------------------------------------------------------------------------

/// Vectors v < count of X whose elements are X[v * vstride + q * estride], q < len: folds
template <typename P>
void launch(cudaStream_t stream, const Params& p) {
  constexpr bool fp16 = P::Mma::ks == 16;
  void (*kernel)(Params);
  if constexpr (fp16) kernel = mma_fp16_kernel<P>;
  else kernel = mma_tf32_kernel<P>;
  const int smem = fp16 ? kV2SmemBytes : kV1SmemBytes;
  // per call (about a microsecond): a flag set once would be shared by every thread and device
  TCSOLVE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(ceil_div(p.m, kBM), ceil_div(p.n, kBN));
  kernel<<<grid, kThreads, smem, stream>>>(p);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void mma_gemm(MmaKernel kernel, const GemmArgs& g, const MmaScaling& scaling) {
  Params p{g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.beta, g.A, g.lda, g.B, g.ldb, g.C, g.ldc,
           scaling.chunk_steps, scaling.shift_a, scaling.shift_b, scaling.use_fp16, scaling.want_fp16,
           g.alpha_device, g.beta_device};
  const cudaStream_t stream = g.stream();
  switch (kernel) {
    case MmaKernel::fp16_single: return launch<Single<Fp16Mma>>(stream, p);
    case MmaKernel::tf32_single: return launch<Single<Tf32Mma>>(stream, p);
    case MmaKernel::fp16_accumulate: return launch<Fp16Accumulate<false>>(stream, p);
    case MmaKernel::fp16_two_stage: return launch<Fp16Accumulate<true>>(stream, p);
    case MmaKernel::markidis: return launch<Markidis>(stream, p);
    case MmaKernel::halfhalf_fp16: return launch<Halfhalf<Fp16Mma>>(stream, p);
    case MmaKernel::halfhalf_tf32: return launch<Halfhalf<Tf32Mma>>(stream, p);
    case MmaKernel::halfhalf_fp16_shared: return launch<Halfhalf<Fp16Mma, true>>(stream, p);
    case MmaKernel::legemm: return launch<Legemm>(stream, p);
  }
  throw Error("mma_gemm: unknown kernel");
}

}  // namespace tcsolve::cuda::detail
