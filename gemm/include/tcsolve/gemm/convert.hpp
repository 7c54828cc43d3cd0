// RFC 0007 conversion API: FP32 <-> FP16 over arrays, and mixed_precision_gemm.
//
// RFC 0007's error-handling table defines the saturating mode (its default):
//   |x| > 65504 (finite)  -> +-65504, the largest finite FP16 (clamp)
//   |x| < 6.1e-5 (2^-14)  -> +-0 (flush: no subnormals)
//   NaN                   -> NaN (propagated)
//   +-inf                 -> +-inf (not an overflow of a finite value, so not clamped)
//   otherwise             -> round to nearest even
// The IEEE mode is plain round-to-nearest-even: overflow to inf, subnormals kept.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/rounding.hpp"

namespace tcsolve {

enum class Fp16Mode { saturate, ieee };

/// One value converted under RFC 0007's rules (see the file comment).
TCSOLVE_HOST_DEVICE inline std::uint16_t fp32_to_fp16_value(float x, Fp16Mode mode) {
  if (mode == Fp16Mode::ieee) return fp16_bits(x, Rounding::rn);
  const float a = x < 0 ? -x : x;
  const std::uint16_t sign = (float_bits(x) >> 31) ? 0x8000u : 0u;
  if (a < kFp16MinNormal) return sign;                                       // flush (NaN fails <)
  if (a > kFp16Max && a <= 3.4028234663852886e38f) return sign | 0x7bffu;    // clamp finite overflow
  return fp16_bits(x, Rounding::rn);                                         // NaN, inf, in range
}

/// dst[i] = FP16 bits of src[i] (host arrays), i < elements.
void fp32_to_fp16(const float* src, std::uint16_t* dst, std::size_t elements,
                  Fp16Mode mode = Fp16Mode::saturate);
/// dst[i] = exact FP32 value of the FP16 bits src[i] (host arrays).
void fp16_to_fp32(const std::uint16_t* src, float* dst, std::size_t elements);

/// RFC 0007's wrapper: C (M x N) = A (M x K) * B (K x N), column-major, through the fp16-simt
/// variant (saturating FP16 operands, FP32 accumulation). Host pointers for the cpu backend,
/// device pointers for cuda. A GPU without FP16 support falls back to fp32-simt (said in the
/// returned GemmInfo).
GemmInfo mixed_precision_gemm(const float* A, const float* B, float* C, int M, int N, int K,
                              Backend backend = Backend::cpu);

}  // namespace tcsolve
