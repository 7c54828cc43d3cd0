// Rounding of FP32 values to the tensor-core input formats, written once for host and device.
//
// Every function works on the IEEE-754 bit pattern with integer arithmetic only, so the CPU
// emulation and the CUDA kernels produce bitwise identical results (checked against the
// hardware conversions by the [gpu] tests). Formats:
//   FP16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; normal range [2^-14, 65504],
//         subnormals down to 2^-24.
//   TF32: FP32's 8-bit exponent with 10 mantissa bits; held in an FP32 word whose low 13
//         mantissa bits are zero.
//   BF16: FP32's exponent with 7 mantissa bits (the high half of the FP32 word).
//   E4M3 (OCP FP8): 1 sign, 4 exponent (bias 7), 3 mantissa bits; normal range [2^-6, 448],
//         subnormals down to 2^-9; no infinities, S.1111.111 is NaN.
// Rounding modes (Ootomo & Yokota, Sec. 2.1): RN = nearest, ties to even; RNA = nearest,
// ties away from zero; RZ = toward zero. "bit-cut" (LE-GEMM, Eq. 5) drops low mantissa bits
// without looking at them: on FP16's normal range it equals RZ.
#pragma once

#include <cstdint>

#include "tcsolve/gemm/config.hpp"

namespace tcsolve {

enum class Rounding { rn, rna, rz };

/// 1 when a value whose kept bits are `kept` and whose dropped bits are `rem` must be rounded
/// up in magnitude; `half` is the dropped-bits pattern of exactly one half unit.
TCSOLVE_HOST_DEVICE inline std::uint32_t rounding_increment(std::uint32_t kept, std::uint32_t rem,
                                                           std::uint32_t half, Rounding r) {
  switch (r) {
    case Rounding::rn:
      return (rem > half || (rem == half && (kept & 1u))) ? 1u : 0u;
    case Rounding::rna:
      return rem >= half ? 1u : 0u;
    case Rounding::rz:
    default:
      return 0u;
  }
}

// ---------------------------------------------------------------------------------------------
// FP16
// ---------------------------------------------------------------------------------------------

inline constexpr float kFp16Max = 65504.0f;          ///< largest finite FP16
inline constexpr float kFp16MinNormal = 6.103515625e-05f;  ///< 2^-14
inline constexpr std::uint16_t kFp16QuietNan = 0x7fff;

/// FP16 bit pattern of x rounded with mode r (IEEE semantics: subnormals kept; overflow gives
/// inf for RN/RNA and the largest finite value for RZ; NaN gives a quiet NaN).
TCSOLVE_HOST_DEVICE inline std::uint16_t fp16_bits(float x, Rounding r) {
  const std::uint32_t u = float_bits(x);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) {  // inf or NaN
    return static_cast<std::uint16_t>(a > 0x7f800000u ? kFp16QuietNan : (sign | 0x7c00u));
  }
  const std::uint32_t e = a >> 23;  // biased FP32 exponent
  if (e >= 143u) {                  // |x| >= 2^16: beyond FP16 whatever the rounding
    return static_cast<std::uint16_t>(sign | (r == Rounding::rz ? 0x7bffu : 0x7c00u));
  }
  if (e >= 113u) {  // FP16 normal range: |x| >= 2^-14
    std::uint32_t h = ((e - 112u) << 10) | ((a >> 13) & 0x3ffu);
    h += rounding_increment(h, a & 0x1fffu, 0x1000u, r);  // a carry may reach 0x7c00 = inf
    return static_cast<std::uint16_t>(sign | h);
  }
  if (e < 102u) return static_cast<std::uint16_t>(sign);  // |x| < 2^-25: below half the least subnormal
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;   // 24-bit significand
  const std::uint32_t shift = 126u - e;                  // in [14, 24]: units of 2^-24
  std::uint32_t h = m >> shift;
  h += rounding_increment(h, m & ((1u << shift) - 1u), 1u << (shift - 1u), r);
  return static_cast<std::uint16_t>(sign | h);
}

/// Exact FP32 value of an FP16 bit pattern.
TCSOLVE_HOST_DEVICE inline float fp16_value(std::uint16_t h) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu;
  const std::uint32_t m = h & 0x3ffu;
  if (e == 0x1fu) return bits_float(sign | 0x7f800000u | (m << 13));
  if (e == 0u) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-08f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

/// x rounded to FP16 with mode r, returned as the (exactly representable) FP32 value.
TCSOLVE_HOST_DEVICE inline float round_fp16(float x, Rounding r) { return fp16_value(fp16_bits(x, r)); }

// ---------------------------------------------------------------------------------------------
// TF32 and BF16
// ---------------------------------------------------------------------------------------------

/// x rounded to TF32 (10 mantissa bits, FP32 exponent range) with mode r; low 13 bits zero.
/// Overflow past FLT_MAX gives inf for RN/RNA; inf passes through; NaN comes back quiet (a
/// payload held only in the low 13 bits would otherwise read as inf in TF32).
TCSOLVE_HOST_DEVICE inline float round_tf32(float x, Rounding r) {
  const std::uint32_t u = float_bits(x);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return bits_float(u | 0x00400000u);  // NaN stays NaN after the low bits go
  if (a == 0x7f800000u) return x;
  std::uint32_t kept = a >> 13;
  kept += rounding_increment(kept, a & 0x1fffu, 0x1000u, r);
  return bits_float((u & 0x80000000u) | (kept << 13));
}

/// BF16 bit pattern of x rounded to nearest even; NaN gives a quiet NaN.
TCSOLVE_HOST_DEVICE inline std::uint16_t bf16_bits_rn(float x) {
  const std::uint32_t u = float_bits(x);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  std::uint32_t kept = a >> 16;
  kept += rounding_increment(kept, a & 0xffffu, 0x8000u, Rounding::rn);
  return static_cast<std::uint16_t>(((u >> 16) & 0x8000u) | kept);
}

/// Exact FP32 value of a BF16 bit pattern.
TCSOLVE_HOST_DEVICE inline float bf16_value(std::uint16_t h) {
  return bits_float(static_cast<std::uint32_t>(h) << 16);
}

// ---------------------------------------------------------------------------------------------
// FP8 E4M3
// ---------------------------------------------------------------------------------------------

inline constexpr float kE4m3Max = 448.0f;          ///< largest finite E4M3 (1.75 * 2^8)
inline constexpr std::uint8_t kE4m3Nan = 0x7f;     ///< the NaN pattern with a + sign

/// E4M3 bit pattern of x rounded with mode r. E4M3 has no infinities: magnitudes that round
/// above 448, and infinities, saturate to +-448 (the .satfinite rule of PTX cvt ... .e4m3x2);
/// NaN gives 0x7f. Subnormals kept (multiples of 2^-9).
TCSOLVE_HOST_DEVICE inline std::uint8_t e4m3_bits(float x, Rounding r) {
  const std::uint32_t u = float_bits(x);
  const std::uint32_t sign = (u >> 24) & 0x80u;
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return kE4m3Nan;
  const std::uint32_t e = a >> 23;  // biased FP32 exponent
  if (e >= 136u) return static_cast<std::uint8_t>(sign | 0x7eu);  // |x| >= 512 (or inf)
  if (e >= 121u) {  // E4M3 normal range: |x| >= 2^-6
    std::uint32_t h = ((e - 120u) << 3) | ((a >> 20) & 0x7u);
    h += rounding_increment(h, a & 0xfffffu, 0x80000u, r);
    if (h > 0x7eu) h = 0x7eu;  // 0x7f would be NaN: saturate at 448
    return static_cast<std::uint8_t>(sign | h);
  }
  if (e < 117u) return static_cast<std::uint8_t>(sign);  // |x| < 2^-10: below half the least subnormal
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;    // 24-bit significand
  const std::uint32_t shift = 141u - e;                   // in [21, 24]: units of 2^-9
  std::uint32_t h = m >> shift;
  h += rounding_increment(h, m & ((1u << shift) - 1u), 1u << (shift - 1u), r);
  return static_cast<std::uint8_t>(sign | h);  // a carry to 8 = 2^-6 is the least normal, as it should be
}

/// Exact FP32 value of an E4M3 bit pattern (NaN for S.1111.111).
TCSOLVE_HOST_DEVICE inline float e4m3_value(std::uint8_t h) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x80u) << 24;
  const std::uint32_t e = (h >> 3) & 0xfu;
  const std::uint32_t m = h & 0x7u;
  if (e == 0xfu && m == 0x7u) return bits_float(sign | 0x7fc00000u);
  if (e == 0u) {
    const float v = static_cast<float>(m) * 0.001953125f;  // m * 2^-9, exact
    return sign ? -v : v;
  }
  return bits_float(sign | ((e + 120u) << 23) | (m << 20));
}

/// x rounded to E4M3 with mode r, returned as the (exactly representable) FP32 value.
TCSOLVE_HOST_DEVICE inline float round_e4m3(float x, Rounding r) { return e4m3_value(e4m3_bits(x, r)); }

// ---------------------------------------------------------------------------------------------
// Bit-cut
// ---------------------------------------------------------------------------------------------

/// x with all but the leading `mantissa_bits` (0..23) explicit mantissa bits cleared: pure
/// truncation of the FP32 word, no rounding. NaN passes through unchanged.
TCSOLVE_HOST_DEVICE inline float bit_cut(float x, int mantissa_bits) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return x;
  const std::uint32_t drop = static_cast<std::uint32_t>(23 - mantissa_bits);
  return bits_float(u & ~((1u << drop) - 1u));
}

/// LE-GEMM's bit-cut to FP16 (Eq. 5): the high 10 mantissa bits are copied and the exponent is
/// re-biased. Outside FP16's normal range a re-biased exponent does not exist; there the cut is
/// continued as truncation: subnormal results are truncated to multiples of 2^-24 and
/// magnitudes above 65504 saturate to 65504. The whole function therefore equals RZ to FP16.
TCSOLVE_HOST_DEVICE inline float bit_cut_fp16(float x) {
  const float a = x < 0 ? -x : x;
  if (a >= kFp16MinNormal && a <= kFp16Max) return bit_cut(x, 10);
  return round_fp16(x, Rounding::rz);
}

}  // namespace tcsolve
