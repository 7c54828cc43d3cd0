// Exact power-of-two scaling of the production path (ec-fp16, ec-tf32, auto).
//
// Row i of op(A) is multiplied by 2^sa_i and column j of op(B) by 2^sb_j so that the largest
// magnitude of each lands in [2^14, 2^15): FP16's range then holds the row/column whatever its
// original exponents, and the product is unscaled exactly by 2^-(sa_i + sb_j). Powers of two
// change no significand bit, so the scaling itself loses nothing.
//
// auto: within a scaled row (column) the pair hi + lo/2^11 keeps every element to at least
// FP16's 11 significant bits while the element is >= 2^-25 after scaling (lo's subnormal grid
// is 2^-24, i.e. 2^-35 in hi units). auto therefore picks ec-fp16 when every row of op(A) and
// every column of op(B) has an exponent range (largest minus smallest nonzero exponent) of at
// most kAutoMaxExponentRange = 14 + 25 = 39, else ec-tf32 (TF32 has FP32's exponent range).
// Elements that keep fewer than 24 bits under this rule are at least 2^-26 below their row's
// largest, so their loss is below FP32's unit roundoff relative to that row's contribution.
// Ootomo's input types 1 (range 29) and 3 (20) go to FP16, types 2 and 4 (65) to TF32.
#pragma once

#include <cmath>

#include "tcsolve/gemm/config.hpp"

namespace tcsolve {

inline constexpr int kEcTopExponent = 14;          ///< scaled maxima lie in [2^14, 2^15)
inline constexpr int kAutoMaxExponentRange = 39;   ///< see the file comment

/// Exponent e with 2^e <= |x| < 2^(e+1) for finite nonzero x (FP32 subnormals included).
TCSOLVE_HOST_DEVICE inline int exponent_of(float x) {
  const std::uint32_t a = float_bits(x) & 0x7fffffffu;
  const int e = static_cast<int>(a >> 23);
  if (e != 0) return e - 127;
  int lead = 22;  // subnormal: position of the leading one
  while (lead > 0 && !((a >> lead) & 1u)) --lead;
  return lead - 149;
}

/// Folds exponent_of(x) into [lo, hi] when x is nonzero and finite (the elements that define
/// a row's or column's exponent range).
TCSOLVE_HOST_DEVICE inline void fold_exponent(float x, int& hi, int& lo) {
  if (x != 0.0f && std::isfinite(x)) {
    const int e = exponent_of(x);
    hi = hi > e ? hi : e;
    lo = lo < e ? lo : e;
  }
}

/// Scaling exponent s for a row/column whose largest finite magnitude has exponent e_max:
/// 2^s * max lies in [2^14, 2^15). 0 for a row/column without a nonzero finite element. s is
/// clamped to [-126, 127] so that 2^s is one normal FP32 number (scale_factor): a row whose
/// largest magnitude is below 2^-113 is scaled by 2^127 only.
TCSOLVE_HOST_DEVICE inline int scale_exponent(bool any_nonzero, int e_max) {
  if (!any_nonzero) return 0;
  const int s = kEcTopExponent - e_max;
  return s < -126 ? -126 : (s > 127 ? 127 : s);
}

/// 2^s as an FP32 number, s in [-126, 127]: multiplying by it is exact unless the product is
/// subnormal (then it rounds like ldexp).
TCSOLVE_HOST_DEVICE inline float scale_factor(int s) {
  return bits_float(static_cast<std::uint32_t>(s + 127) << 23);
}

/// auto's choice: ec-fp16 when the largest exponent range of any row of op(A) and of any
/// column of op(B) is at most kAutoMaxExponentRange (see the file comment).
TCSOLVE_HOST_DEVICE inline bool auto_uses_fp16(int max_range_a, int max_range_b) {
  return max_range_a <= kAutoMaxExponentRange && max_range_b <= kAutoMaxExponentRange;
}

}  // namespace tcsolve
