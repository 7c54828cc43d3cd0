// Tensor-core GEMMs of the research variants and the mma.sync production path, one kernel
// family: mma.sync.m16n8k16 (FP16) and m16n8k8 (TF32), FP32 tiles staged in shared memory by a
// 3-stage cp.async pipeline, splits and roundings done in registers from the FP32 tiles with
// the shared helpers of split.hpp / rounding.hpp (so the operands are bitwise those of the CPU
// emulation), and each paper's accumulation scheme as a policy:
//   Single    fp16-tc, tf32-tc   one product chained inside the tensor core
//   Fp16Acc   fp16-fp16acc       FP16 accumulator chained inside (two-stage blog baseline)
//   TwoStage  fp16-twostage      FP16-accumulating mma from zero per k-step, added outside in FP32
//   Markidis  markidis           4 products chained in one accumulator (Ootomo Code 2)
//   Halfhalf  ootomo-fp16/tf32,  lo*hi + hi*lo chained inside; hi*hi chained for `chunk` k-steps
//             ec-fp16/tf32       then added outside in FP32 RN (Ootomo Code 3; chunk 1 there)
//   Legemm    legemm             hi*hi and hi*lo + lo*hi in two inside accumulators (Alg. 1)
// The ec variants multiply rows of op(A) and columns of op(B) by exact powers of two computed
// on the device (scaling.hpp) while loading fragments, and unscale in the epilogue.
// Block tile 128 x 64 x 32, 8 warps of 32 x 32; epilogue alpha * v + beta * C in FP32 without
// FMA contraction, like the emulation.
#include <cuda_fp16.h>

#include <climits>
#include <type_traits>
#include <utility>
#include <string>

#include "backend.hpp"
#include "tcsolve/gemm/cuda_check.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/scaling.hpp"
#include "tcsolve/gemm/split.hpp"

namespace tcsolve::cuda::detail {
namespace {

constexpr int kBM = 128, kBN = 64, kBK = 32;  // block tile
constexpr int kWarpsM = 4, kWarpsN = 2;        // 8 warps, each 32 x 32
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kStages = 3;
constexpr int kPadA = kBM + 4, kPadB = kBN + 4;  // row strides in floats: conflict-free fragment reads
constexpr int kStageFloats = kBK * kPadA + kBK * kPadB;
constexpr int kSmemBytes = kStages * kStageFloats * static_cast<int>(sizeof(float));

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

/// Two FP32 values rounded to FP16 (RN) and packed as the half2 an mma reads, x0 in the low
/// half. One cvt.rn.f16x2.f32; equal to fp16_bits(x, Rounding::rn) on all 2^32 inputs (the
/// [gpu] sweep of split_kernels.cu), so exact FP16 values pass unchanged.
__device__ __forceinline__ unsigned pack_half2(float x0, float x1) {
  const __half2 h = __floats2half2_rn(x0, x1);
  return *reinterpret_cast<const unsigned*>(&h);
}

/// The splits of split.hpp written with the hardware conversions that the [gpu] sweep proved
/// equal to the shared helpers on all 2^32 inputs: (hi, lo) of a pair of values, packed.
/// FP16 halfhalf / Markidis: hi = RN(a), lo = RN((a - hi) * scale).
__device__ __forceinline__ void split_fp16_rn_pair(float a0, float a1, float scale, unsigned& hi, unsigned& lo) {
  const __half2 h = __floats2half2_rn(a0, a1);
  const float2 hf = __half22float2(h);
  const __half2 l = __floats2half2_rn(__fmul_rn(__fsub_rn(a0, hf.x), scale), __fmul_rn(__fsub_rn(a1, hf.y), scale));
  hi = *reinterpret_cast<const unsigned*>(&h);
  lo = *reinterpret_cast<const unsigned*>(&l);
}
/// LE-GEMM: hi = bit-cut = RZ to FP16, lo = RZ((a - hi) * 2^10).
__device__ __forceinline__ void split_legemm_pair(float a0, float a1, unsigned& hi, unsigned& lo) {
  const __half h0 = __float2half_rz(a0), h1 = __float2half_rz(a1);
  const __half l0 = __float2half_rz(__fmul_rn(__fsub_rn(a0, __half2float(h0)), kLegemmScale));
  const __half l1 = __float2half_rz(__fmul_rn(__fsub_rn(a1, __half2float(h1)), kLegemmScale));
  const __half2 h = __halves2half2(h0, h1), l = __halves2half2(l0, l1);
  hi = *reinterpret_cast<const unsigned*>(&h);
  lo = *reinterpret_cast<const unsigned*>(&l);
}
/// TF32 RNA (cvt.rna.tf32.f32), except that a NaN stays NaN as in round_tf32 (the hardware
/// turns NaNs with payload only in the dropped bits into inf).
__device__ __forceinline__ float tf32_rna(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  r &= 0xffffe000u;
  return isnan(x) ? bits_float(float_bits(x) | 0x00400000u) : bits_float(r);
}

// ---------------------------------------------------------------------------------------------
// Operand formats: how raw FP32 fragment values become the mma's registers
// ---------------------------------------------------------------------------------------------

/// FP16 m16n8k16: A fragment 8 values -> 4 half2 registers, B fragment 4 values -> 2.
struct Fp16Format {
  static constexpr int ks = 16, a_vals = 8, b_vals = 4;
  __device__ static void pack_a(const float (&v)[8], unsigned (&r)[4]) {
    #pragma unroll
    for (int i = 0; i < 4; ++i) r[i] = pack_half2(v[2 * i], v[2 * i + 1]);
  }
  __device__ static void pack_b(const float (&v)[4], unsigned (&r)[2]) {
    #pragma unroll
    for (int i = 0; i < 2; ++i) r[i] = pack_half2(v[2 * i], v[2 * i + 1]);
  }
  __device__ static void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) { mma_f16_f32(d, a, b); }
};

/// TF32 m16n8k8: A fragment 4 values, B fragment 2, each already on the TF32 grid.
struct Tf32Format {
  static constexpr int ks = 8, a_vals = 4, b_vals = 2;
  __device__ static void pack_a(const float (&v)[4], unsigned (&r)[4]) {
    #pragma unroll
    for (int i = 0; i < 4; ++i) r[i] = float_bits(v[i]);
  }
  __device__ static void pack_b(const float (&v)[2], unsigned (&r)[2]) {
    #pragma unroll
    for (int i = 0; i < 2; ++i) r[i] = float_bits(v[i]);
  }
  __device__ static void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) { mma_tf32_f32(d, a, b); }
};

// ---------------------------------------------------------------------------------------------
// Accumulation policies. Each keeps per-warp state for 2 x 4 m16n8 tiles and sees one k-step
// at a time: raw FP32 fragments of A (per m-tile) and B (per n-tile).
// ---------------------------------------------------------------------------------------------

template <typename F, int A, int B>
struct Frags {
  float a[2][A];
  float b[4][B];
};

/// One rounded product chained inside (fp16-tc: RN to FP16; tf32-tc: RNA to TF32).
template <typename F>
struct Single {
  using Format = F;
  float acc[2][4][4];
  __device__ void init(int) { zero(acc); }
  __device__ static float round(float x) {
    return F::ks == 16 ? x : tf32_rna(x);  // FP16: pack_half2 rounds (RN) while packing
  }
  __device__ void step(Frags<F, F::a_vals, F::b_vals>& f) {
    unsigned ra[2][4], rb[4][2];
    round_pack(f, ra, rb);
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
      for (int ni = 0; ni < 4; ++ni) F::mma(acc[mi][ni], ra[mi], rb[ni]);
  }
  __device__ float value(int mi, int ni, int r) const { return acc[mi][ni][r]; }

  __device__ static void zero(float (&x)[2][4][4]) {
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
      for (int ni = 0; ni < 4; ++ni)
        #pragma unroll
        for (int r = 0; r < 4; ++r) x[mi][ni][r] = 0.0f;
  }
  __device__ static void round_pack(Frags<F, F::a_vals, F::b_vals>& f, unsigned (&ra)[2][4], unsigned (&rb)[4][2]) {
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi) {
      #pragma unroll
      for (int i = 0; i < F::a_vals; ++i) f.a[mi][i] = round(f.a[mi][i]);
      F::pack_a(f.a[mi], ra[mi]);
    }
    #pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      #pragma unroll
      for (int i = 0; i < F::b_vals; ++i) f.b[ni][i] = round(f.b[ni][i]);
      F::pack_b(f.b[ni], rb[ni]);
    }
  }
};

/// FP16 inputs, FP16 accumulator inside the tensor core (fp16-fp16acc), or an FP16 mma from
/// zero per k-step whose result is added outside in FP32 (fp16-twostage).
template <bool kTwoStage>
struct Fp16Accumulate {
  using Format = Fp16Format;
  unsigned acc16[2][4][2];  // fp16-fp16acc
  float acc[2][4][4];       // fp16-twostage
  __device__ void init(int) {
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        acc16[mi][ni][0] = acc16[mi][ni][1] = 0u;
        #pragma unroll
        for (int r = 0; r < 4; ++r) acc[mi][ni][r] = 0.0f;
      }
  }
  __device__ void step(Frags<Fp16Format, 8, 4>& f) {
    unsigned ra[2][4], rb[4][2];
    Single<Fp16Format>::round_pack(f, ra, rb);
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        if (kTwoStage) {
          unsigned t[2] = {0u, 0u};
          mma_f16_f16(t, ra[mi], rb[ni]);
          #pragma unroll
          for (int r = 0; r < 4; ++r)
            acc[mi][ni][r] = __fadd_rn(acc[mi][ni][r], fp16_value(static_cast<std::uint16_t>(t[r / 2] >> (16 * (r % 2)))));
        } else {
          mma_f16_f16(acc16[mi][ni], ra[mi], rb[ni]);
        }
      }
  }
  __device__ float value(int mi, int ni, int r) const {
    if (kTwoStage) return acc[mi][ni][r];
    return fp16_value(static_cast<std::uint16_t>(acc16[mi][ni][r / 2] >> (16 * (r % 2))));
  }
};

/// Split operands: hi/lo pairs of every fragment value, packed (split.hpp's splits, computed
/// with the equivalent hardware conversions).
template <typename F>
struct SplitRegs {
  unsigned ah[2][4], al[2][4], bh[4][2], bl[4][2];
  __device__ static void pair(SplitKind kind, float x0, float x1, unsigned& hi, unsigned& lo) {
    if (kind == SplitKind::legemm) split_legemm_pair(x0, x1, hi, lo);
    else split_fp16_rn_pair(x0, x1, kind == SplitKind::markidis ? 1.0f : kOotomoScale, hi, lo);
  }
  __device__ void make(const Frags<F, F::a_vals, F::b_vals>& f, SplitKind kind) {
    if constexpr (F::ks == 16) {
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int i = 0; i < 4; ++i) pair(kind, f.a[mi][2 * i], f.a[mi][2 * i + 1], ah[mi][i], al[mi][i]);
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int i = 0; i < 2; ++i) pair(kind, f.b[ni][2 * i], f.b[ni][2 * i + 1], bh[ni][i], bl[ni][i]);
    } else {  // tf32tf32: hi = RNA(a), lo = RNA((a - hi) * 2^11)
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float h = tf32_rna(f.a[mi][i]);
          ah[mi][i] = float_bits(h);
          al[mi][i] = float_bits(tf32_rna(__fmul_rn(__fsub_rn(f.a[mi][i], h), kOotomoScale)));
        }
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const float h = tf32_rna(f.b[ni][i]);
          bh[ni][i] = float_bits(h);
          bl[ni][i] = float_bits(tf32_rna(__fmul_rn(__fsub_rn(f.b[ni][i], h), kOotomoScale)));
        }
    }
  }
};

/// Markidis (Ootomo Code 2): lo*lo, lo*hi, hi*lo, hi*hi chained in one accumulator.
struct Markidis {
  using Format = Fp16Format;
  float acc[2][4][4];
  __device__ void init(int) { Single<Fp16Format>::zero(acc); }
  __device__ void step(Frags<Fp16Format, 8, 4>& f) {
    SplitRegs<Fp16Format> s;
    s.make(f, SplitKind::markidis);
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        mma_f16_f32(acc[mi][ni], s.al[mi], s.bl[ni]);
        mma_f16_f32(acc[mi][ni], s.al[mi], s.bh[ni]);
        mma_f16_f32(acc[mi][ni], s.ah[mi], s.bl[ni]);
        mma_f16_f32(acc[mi][ni], s.ah[mi], s.bh[ni]);
      }
  }
  __device__ float value(int mi, int ni, int r) const { return acc[mi][ni][r]; }
};

/// halfhalf / tf32tf32 (Ootomo Code 3) with hi*hi chained for `chunk` k-steps before the
/// outside FP32 addition (ootomo-*: 1; ec-*: GemmOptions::ec_chunk_k / ks).
template <typename F, SplitKind kKind>
struct Halfhalf {
  using Format = F;
  float acc[2][4][4], corr[2][4][4], part[2][4][4];
  int chunk, steps;
  __device__ void init(int chunk_steps) {
    Single<F>::zero(acc), Single<F>::zero(corr), Single<F>::zero(part);
    chunk = chunk_steps, steps = 0;
  }
  __device__ void step(Frags<F, F::a_vals, F::b_vals>& f) {
    SplitRegs<F> s;
    s.make(f, kKind);
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        F::mma(corr[mi][ni], s.al[mi], s.bh[ni]);
        F::mma(corr[mi][ni], s.ah[mi], s.bl[ni]);
        F::mma(part[mi][ni], s.ah[mi], s.bh[ni]);
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
    return __fadd_rn(acc[mi][ni][r], corr[mi][ni][r] * (1.0f / kOotomoScale));
  }
};

/// LE-GEMM Algorithm 1: acc0 = hi*hi and acc1 = hi*lo + lo*hi chained inside.
struct Legemm {
  using Format = Fp16Format;
  float acc0[2][4][4], acc1[2][4][4];
  __device__ void init(int) { Single<Fp16Format>::zero(acc0), Single<Fp16Format>::zero(acc1); }
  __device__ void step(Frags<Fp16Format, 8, 4>& f) {
    SplitRegs<Fp16Format> s;
    s.make(f, SplitKind::legemm);
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        mma_f16_f32(acc0[mi][ni], s.ah[mi], s.bh[ni]);
        mma_f16_f32(acc1[mi][ni], s.ah[mi], s.bl[ni]);
        mma_f16_f32(acc1[mi][ni], s.al[mi], s.bh[ni]);
      }
  }
  __device__ float value(int mi, int ni, int r) const {
    return __fadd_rn(acc0[mi][ni][r], acc1[mi][ni][r] * (1.0f / kLegemmScale));
  }
};

template <typename P, typename = void>
struct HasFinish : std::false_type {};
template <typename P>
struct HasFinish<P, decltype(std::declval<P&>().finish(), void())> : std::true_type {};

// ---------------------------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------------------------

/// Issues the cp.async copies of k-tile `kt` of op(A) (kBM x kBK) and op(B) (kBK x kBN) into
/// one stage; out-of-range elements are zero-filled (zero products change no sum).
__device__ __forceinline__ void load_tile(const Params& p, float* stage, int m0, int n0, int k0) {
  float* As = stage;               // As[kk][i], row stride kPadA
  float* Bs = stage + kBK * kPadA;  // Bs[kk][j], row stride kPadB
  const int tid = threadIdx.x;
  for (int idx = tid; idx < kBM * kBK; idx += kThreads) {
    // consecutive threads walk the contiguous dimension of the stored matrix
    const int i = p.ta == Op::n ? idx % kBM : idx / kBK;
    const int kk = p.ta == Op::n ? idx / kBM : idx % kBK;
    const int gi = m0 + i, gk = k0 + kk;
    const bool ok = gi < p.m && gk < p.k;
    const float* src = ok ? (p.ta == Op::n ? p.A + gi + static_cast<std::size_t>(gk) * p.lda
                                           : p.A + gk + static_cast<std::size_t>(gi) * p.lda)
                          : p.A;
    cp_async_4(As + kk * kPadA + i, src, ok);
  }
  for (int idx = tid; idx < kBK * kBN; idx += kThreads) {
    const int kk = p.tb == Op::n ? idx % kBK : idx / kBN;
    const int j = p.tb == Op::n ? idx / kBK : idx % kBN;
    const int gj = n0 + j, gk = k0 + kk;
    const bool ok = gj < p.n && gk < p.k;
    const float* src = ok ? (p.tb == Op::n ? p.B + gk + static_cast<std::size_t>(gj) * p.ldb
                                           : p.B + gj + static_cast<std::size_t>(gk) * p.ldb)
                          : p.B;
    cp_async_4(Bs + kk * kPadB + j, src, ok);
  }
}

template <typename P>
__global__ void __launch_bounds__(kThreads) mma_gemm_kernel(Params p) {
  using F = typename P::Format;
  if (p.use_fp16 != nullptr && *p.use_fp16 != p.want_fp16) return;  // auto: the other kernel runs
  extern __shared__ float smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;  // mma fragment coordinates
  const int warp_m = (warp % kWarpsM) * 32, warp_n = (warp / kWarpsM) * 32;
  const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;

  // ec: the scale factors of the rows and columns this thread's fragments touch
  float sa[2][2], sb[4];
  const bool scaled = p.shift_a != nullptr;
  if (scaled) {
    #pragma unroll
    for (int mi = 0; mi < 2; ++mi)
      #pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int gi = m0 + warp_m + mi * 16 + g + 8 * h;
        sa[mi][h] = scale_factor(gi < p.m ? p.shift_a[gi] : 0);
      }
    #pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      const int gj = n0 + warp_n + ni * 8 + g;
      sb[ni] = scale_factor(gj < p.n ? p.shift_b[gj] : 0);
    }
  }

  P policy;
  policy.init(p.chunk_steps);
  const int tiles = ceil_div(p.k, kBK);
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles) load_tile(p, smem + s * kStageFloats, m0, n0, s * kBK);
    cp_async_commit();
  }
  for (int kt = 0; kt < tiles; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    const int next = kt + kStages - 1;
    if (next < tiles) load_tile(p, smem + (next % kStages) * kStageFloats, m0, n0, next * kBK);
    cp_async_commit();

    const float* As = smem + (kt % kStages) * kStageFloats;
    const float* Bs = As + kBK * kPadA;
    #pragma unroll
    for (int kk = 0; kk < kBK; kk += F::ks) {
      Frags<F, F::a_vals, F::b_vals> f;
      #pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        const int r0 = warp_m + mi * 16 + g;
        #pragma unroll
        for (int i = 0; i < F::a_vals; ++i) {
          // FP16: values (g|g+8, 2t|2t+1|2t+8|2t+9); TF32: (g|g+8, t|t+4)
          const int h = F::ks == 16 ? (i / 2) % 2 : i % 2;
          const int col = F::ks == 16 ? 2 * t + (i % 2) + 8 * (i / 4) : t + 4 * (i / 2);
          float v = As[(kk + col) * kPadA + r0 + 8 * h];
          if (scaled) v *= sa[mi][h];
          f.a[mi][i] = v;
        }
      }
      #pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        const int c0 = warp_n + ni * 8 + g;
        #pragma unroll
        for (int i = 0; i < F::b_vals; ++i) {
          // FP16: k = 2t|2t+1|2t+8|2t+9; TF32: k = t|t+4
          const int row = F::ks == 16 ? 2 * t + (i % 2) + 8 * (i / 2) : t + 4 * i;
          float v = Bs[(kk + row) * kPadB + c0];
          if (scaled) v *= sb[ni];
          f.b[ni][i] = v;
        }
      }
      policy.step(f);
    }
  }
  cp_async_wait<0>();
  if constexpr (HasFinish<P>::value) policy.finish();

  // epilogue: C fragment (row g | g+8, columns 2t, 2t+1)
  #pragma unroll
  for (int mi = 0; mi < 2; ++mi)
    #pragma unroll
    for (int ni = 0; ni < 4; ++ni)
      #pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int gi = m0 + warp_m + mi * 16 + g + 8 * (r / 2);
        const int gj = n0 + warp_n + ni * 8 + 2 * t + (r % 2);
        if (gi >= p.m || gj >= p.n) continue;
        float v = policy.value(mi, ni, r);
        if (scaled) v = ldexpf(v, -(p.shift_a[gi] + p.shift_b[gj]));
        float& c = p.C[gi + static_cast<std::size_t>(gj) * p.ldc];
        c = p.beta == 0.0f ? __fmul_rn(p.alpha, v) : __fadd_rn(__fmul_rn(p.alpha, v), __fmul_rn(p.beta, c));
      }
}

// ---------------------------------------------------------------------------------------------
// ec scaling: exponent ranges of the rows of op(A) and columns of op(B)
// ---------------------------------------------------------------------------------------------

/// Vectors v < count of X whose elements are X[v * vstride + q * estride], q < len: folds
/// exponent_of(x) of the nonzero finite elements into emax[v] / emin[v] (atomics; initialised
/// to INT_MIN / INT_MAX). Threads map to consecutive v when estride != 1 (coalesced when the
/// vectors interleave) and the length is split over gridDim.y.
__global__ void exponent_range_kernel(const float* X, std::size_t vstride, std::size_t estride, int count,
                                      int len, int* emax, int* emin) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= count) return;
  const int per = ceil_div(len, static_cast<int>(gridDim.y));
  const int q0 = blockIdx.y * per, q1 = min(len, q0 + per);
  int hi = INT_MIN, lo = INT_MAX;
  for (int q = q0; q < q1; ++q) {
    const float x = X[v * vstride + q * estride];
    if (x != 0.0f && isfinite(x)) {
      const int e = exponent_of(x);
      hi = max(hi, e), lo = min(lo, e);
    }
  }
  if (hi != INT_MIN) {
    atomicMax(emax + v, hi);
    atomicMin(emin + v, lo);
  }
}

/// The same for vectors stored contiguously (estride 1): one warp per vector.
__global__ void exponent_range_contiguous_kernel(const float* X, std::size_t vstride, int count, int len,
                                                 int* emax, int* emin) {
  const int v = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (v >= count) return;
  int hi = INT_MIN, lo = INT_MAX;
  for (int q = threadIdx.x % 32; q < len; q += 32) {
    const float x = X[v * vstride + q];
    if (x != 0.0f && isfinite(x)) {
      const int e = exponent_of(x);
      hi = max(hi, e), lo = min(lo, e);
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
  }
  if (threadIdx.x % 32 == 0 && hi != INT_MIN) emax[v] = hi, emin[v] = lo;
}

/// shift[v] = scale_exponent(...) for every vector, and the largest range into *max_range[which].
__global__ void finish_scaling_kernel(const int* emax, const int* emin, int count, int* shift, int* max_range) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= count) return;
  const bool any = emax[v] != INT_MIN;
  shift[v] = scale_exponent(any, emax[v]);
  if (any) atomicMax(max_range, emax[v] - emin[v]);
}

__global__ void init_ranges_kernel(int* emax, int* emin, int count, int* max_range) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < count) emax[v] = INT_MIN, emin[v] = INT_MAX;
  if (v < 2) max_range[v] = 0;
}

__global__ void auto_choice_kernel(const int* max_range, int* use_fp16) {
  *use_fp16 = auto_uses_fp16(max_range[0], max_range[1]) ? 1 : 0;
}

/// Device workspace of the ec path, grown on demand and kept (one stream).
struct Workspace {
  int* data = nullptr;
  std::size_t capacity = 0;
  int* get(std::size_t ints) {
    if (ints > capacity) {
      if (data) TCSOLVE_CUDA_CHECK(cudaFree(data));
      TCSOLVE_CUDA_CHECK(cudaMalloc(&data, ints * sizeof(int)));
      capacity = ints;
    }
    return data;
  }
};

Workspace& workspace() {
  static Workspace w;
  return w;
}

/// Fills shift_a[0..m), shift_b[0..n) and max_range[0..2) (ranges of op(A) rows, op(B) columns).
void compute_scaling(const GemmArgs& g, int* emax, int* emin, int* shift_a, int* shift_b, int* max_range) {
  const int total = g.m + g.n;
  init_ranges_kernel<<<ceil_div(total, 256), 256>>>(emax, emin, total, max_range);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  auto ranges = [&](const float* X, int ld, bool contiguous, int count, int len, int* hi, int* lo) {
    if (contiguous) {  // vector v at X + v*ld, elements adjacent
      exponent_range_contiguous_kernel<<<ceil_div(count, 8), 256>>>(X, ld, count, len, hi, lo);
    } else {  // vector v at X + v, elements ld apart
      const int split = std::max(1, std::min(64, len / 256));
      exponent_range_kernel<<<dim3(ceil_div(count, 256), split), 256>>>(X, 1, ld, count, len, hi, lo);
    }
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
  };
  ranges(g.A, g.lda, g.ta == Op::t, g.m, g.k, emax, emin);                 // rows of op(A)
  ranges(g.B, g.ldb, g.tb == Op::n, g.n, g.k, emax + g.m, emin + g.m);     // columns of op(B)
  finish_scaling_kernel<<<ceil_div(g.m, 256), 256>>>(emax, emin, g.m, shift_a, max_range);
  finish_scaling_kernel<<<ceil_div(g.n, 256), 256>>>(emax + g.m, emin + g.m, g.n, shift_b, max_range + 1);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

template <typename P>
void launch(const Params& p) {
  static bool configured = false;
  if (!configured) {
    TCSOLVE_CUDA_CHECK(cudaFuncSetAttribute(mma_gemm_kernel<P>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    configured = true;
  }
  const dim3 grid(ceil_div(p.m, kBM), ceil_div(p.n, kBN));
  mma_gemm_kernel<P><<<grid, kThreads, kSmemBytes>>>(p);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

GemmInfo mma_gemm(Variant variant, const GemmArgs& g, const GemmOptions& options) {
  Params p{g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.beta, g.A, g.lda, g.B, g.ldb, g.C, g.ldc, 1, nullptr, nullptr, nullptr, 0};
  GemmInfo info{variant, variant, Backend::cuda, {}};
  switch (variant) {
    case Variant::fp16_tc: launch<Single<Fp16Format>>(p); break;
    case Variant::tf32_tc: launch<Single<Tf32Format>>(p); break;
    case Variant::fp16_fp16acc: launch<Fp16Accumulate<false>>(p); break;
    case Variant::fp16_twostage: launch<Fp16Accumulate<true>>(p); break;
    case Variant::markidis: launch<Markidis>(p); break;
    case Variant::ootomo_fp16: launch<Halfhalf<Fp16Format, SplitKind::ootomo_fp16>>(p); break;
    case Variant::ootomo_tf32: launch<Halfhalf<Tf32Format, SplitKind::ootomo_tf32>>(p); break;
    case Variant::legemm: launch<Legemm>(p); break;
    case Variant::ec_fp16:
    case Variant::ec_tf32:
    case Variant::auto_: {
      if (options.ec_chunk_k < 16 || options.ec_chunk_k % 16 != 0)
        throw InvalidInput("ec_chunk_k must be a positive multiple of 16, got " + std::to_string(options.ec_chunk_k));
      const int total = g.m + g.n;
      int* ws = workspace().get(3 * static_cast<std::size_t>(total) + 3);
      int *emax = ws, *emin = ws + total, *shift = ws + 2 * total, *max_range = ws + 3 * total, *flag = max_range + 2;
      compute_scaling(g, emax, emin, shift, shift + g.m, max_range);
      p.shift_a = shift, p.shift_b = shift + g.m;
      Params p16 = p, p32 = p;
      p16.chunk_steps = options.ec_chunk_k / Fp16Format::ks;
      p32.chunk_steps = options.ec_chunk_k / Tf32Format::ks;
      if (variant == Variant::ec_fp16) {
        launch<Halfhalf<Fp16Format, SplitKind::ootomo_fp16>>(p16);
      } else if (variant == Variant::ec_tf32) {
        launch<Halfhalf<Tf32Format, SplitKind::ootomo_tf32>>(p32);
      } else {
        // auto: the choice is made on the device; both kernels are queued and the one not
        // chosen returns at its first instruction. The flag is read back for GemmInfo.
        auto_choice_kernel<<<1, 1>>>(max_range, flag);
        TCSOLVE_CUDA_CHECK(cudaGetLastError());
        p16.use_fp16 = p32.use_fp16 = flag;
        p16.want_fp16 = 1, p32.want_fp16 = 0;
        launch<Halfhalf<Fp16Format, SplitKind::ootomo_fp16>>(p16);
        launch<Halfhalf<Tf32Format, SplitKind::ootomo_tf32>>(p32);
        int chose_fp16 = 0;
        TCSOLVE_CUDA_CHECK(cudaMemcpy(&chose_fp16, flag, sizeof chose_fp16, cudaMemcpyDeviceToHost));
        info.resolved = chose_fp16 ? Variant::ec_fp16 : Variant::ec_tf32;
      }
      break;
    }
    default:
      throw Unavailable("variant " + std::string(to_string(variant)) + " has no mma.sync kernel");
  }
  return info;
}

}  // namespace tcsolve::cuda::detail
