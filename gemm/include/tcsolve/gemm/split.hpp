// The FP32 -> (hi, lo) splits of the error-corrected GEMMs, written once for host and device.
//
// a ~= hi + lo / scale, with hi and lo exactly representable in the tensor-core input format.
// The values are returned as FP32 numbers (exact), so the emulation multiplies them exactly in
// double and a kernel converts them to FP16/TF32 without a second rounding.
//
//   markidis     hi = fp16_rn(a),  lo = fp16_rn(a - hi)                 Ootomo Eqs. (2)-(5), (8)-(9)
//   ootomo_fp16  hi = fp16_rn(a),  lo = fp16_rn((a - hi) * 2^11)        Ootomo Eqs. (19)-(22)
//   ootomo_tf32  hi = tf32_rna(a), lo = tf32_rna((a - hi) * 2^11)       Ootomo Sec. 3.3, tf32tf32
//   legemm       hi = bit-cut(a),  lo = fp16_rz((a - hi) * 2^10)        LE-GEMM Eqs. (5)-(8)
// a - hi is exact in FP32 whenever hi is finite (hi is a or a neighbour of a on a coarser grid).
#pragma once

#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/rounding.hpp"

namespace tcsolve {

struct SplitPair {
  float hi;
  float lo;
};

enum class SplitKind { markidis, ootomo_fp16, ootomo_tf32, legemm };

inline constexpr float kOotomoScale = 2048.0f;  ///< 2^11 = 2^(l_F16 + 1), Ootomo Sec. 3.3
inline constexpr float kLegemmScale = 1024.0f;  ///< 2^10, LE-GEMM Eq. (6)

/// Scale that multiplies the residual of split `kind` (1 for Markidis).
TCSOLVE_HOST_DEVICE constexpr float split_scale(SplitKind kind) {
  return kind == SplitKind::markidis ? 1.0f : kind == SplitKind::legemm ? kLegemmScale : kOotomoScale;
}

TCSOLVE_HOST_DEVICE inline SplitPair split_markidis(float a) {
  const float hi = round_fp16(a, Rounding::rn);
  return {hi, round_fp16(a - hi, Rounding::rn)};
}

TCSOLVE_HOST_DEVICE inline SplitPair split_ootomo_fp16(float a) {
  const float hi = round_fp16(a, Rounding::rn);
  return {hi, round_fp16((a - hi) * kOotomoScale, Rounding::rn)};
}

TCSOLVE_HOST_DEVICE inline SplitPair split_ootomo_tf32(float a) {
  const float hi = round_tf32(a, Rounding::rna);
  return {hi, round_tf32((a - hi) * kOotomoScale, Rounding::rna)};
}

TCSOLVE_HOST_DEVICE inline SplitPair split_legemm(float a) {
  const float hi = bit_cut_fp16(a);
  return {hi, round_fp16((a - hi) * kLegemmScale, Rounding::rz)};
}

/// The unscaled FP16 hi + lo split of Markidis' Eqs. (8)-(9) with rounding r for both
/// conversions; used to reproduce Ootomo's Tables 1 (RN) and 2 (RZ).
TCSOLVE_HOST_DEVICE inline SplitPair split_fp16_unscaled(float a, Rounding r) {
  const float hi = round_fp16(a, r);
  return {hi, round_fp16(a - hi, r)};
}

TCSOLVE_HOST_DEVICE inline SplitPair split(SplitKind kind, float a) {
  switch (kind) {
    case SplitKind::markidis: return split_markidis(a);
    case SplitKind::ootomo_fp16: return split_ootomo_fp16(a);
    case SplitKind::ootomo_tf32: return split_ootomo_tf32(a);
    case SplitKind::legemm:
    default: return split_legemm(a);
  }
}

}  // namespace tcsolve
