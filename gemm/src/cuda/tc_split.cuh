// Device FP32 -> FP16 / TF32 conversions and splits shared by the mma.sync kernels (mma_gemm.cu) and
// the wgmma kernels' split pass (wgmma_gemm.cu). They use the hardware conversions that the
// [gpu] sweep of split_kernels.cu proved bitwise equal to the host/device helpers of split.hpp
// on all 2^32 inputs, so both kernel families feed the tensor cores exactly the operands of the
// CPU emulation.
#pragma once

#include <cuda_fp16.h>

#include "tcsolve/gemm/split.hpp"

namespace tcsolve::cuda::detail {

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
/// What a variant feeds the tensor cores: one rounded value (round) or a (hi, lo) split.
enum class Transform { round, markidis, ootomo, legemm };

/// FP16: a pair of FP32 values (adjacent in k) -> packed hi (and lo) half2 registers.
template <Transform T>
__device__ __forceinline__ void fp16_pair(float x0, float x1, unsigned& hi, unsigned& lo) {
  if constexpr (T == Transform::round) hi = pack_half2(x0, x1);
  else if constexpr (T == Transform::legemm) split_legemm_pair(x0, x1, hi, lo);
  else split_fp16_rn_pair(x0, x1, T == Transform::markidis ? 1.0f : kOotomoScale, hi, lo);
}

/// TF32 RNA (cvt.rna.tf32.f32), except that a NaN stays NaN as in round_tf32 (the hardware
/// turns NaNs with payload only in the dropped bits into inf).
__device__ __forceinline__ float tf32_rna(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  r &= 0xffffe000u;
  return isnan(x) ? bits_float(float_bits(x) | 0x00400000u) : bits_float(r);
}

/// TF32: one FP32 value -> hi (and lo) registers (tf32-tc rounds; tf32tf32 splits).
template <Transform T>
__device__ __forceinline__ void tf32_one(float x, unsigned& hi, unsigned& lo) {
  const float h = tf32_rna(x);
  hi = float_bits(h);
  if constexpr (T != Transform::round) lo = float_bits(tf32_rna(__fmul_rn(__fsub_rn(x, h), kOotomoScale)));
}

}  // namespace tcsolve::cuda::detail
