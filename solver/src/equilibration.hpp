// The power-of-two equilibration exponent, written once for the cpu path (cpu/blocked_lu.cpp) and the
// device kernels (cuda/equilibrate.cu), so that both compute bitwise the same R and C and hence
// the same FP32 matrix A_s = R A C. Internal to tcsolve::solver; no Eigen, no CUDA headers.
#pragma once

#include <cstdint>
#include <cstring>

#include "tcsolve/gemm/config.hpp"

namespace tcsolve::detail {

/// |log2| bound of a scale factor: 2^e stays a normal FP64 number.
inline constexpr int kMaxScaleExponent = 1000;

/// Bits of an FP64 value (host and device).
TCSOLVE_HOST_DEVICE inline std::uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

/// 2^e exactly, for -1022 <= e <= 1023 (built from its bits: no library rounding).
TCSOLVE_HOST_DEVICE inline double pow2(int e) {
  const std::uint64_t u = static_cast<std::uint64_t>(e + 1023) << 52;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/// The exponent e of the power of two 2^e that brings m = max |entry| of a row or column to
/// [2^-1/2, 2^1/2]: e = -round(log2 m), clamped to [-kMaxScaleExponent, kMaxScaleExponent];
/// 0 when m is 0, inf or NaN (an all-zero row or column is left alone: the LU reports it as a
/// zero pivot).
///
/// Computed exactly from the bits: m = s 2^E with s in [1, 2); log2 m = E + log2 s rounds up to
/// E + 1 exactly when s > sqrt(2). No double lies at sqrt(2) and the double nearest it,
/// 0x1.6a09e667f3bcdp0, is above it, so "s > sqrt(2)" is "mantissa bits >= 0x6a09e667f3bcd".
/// (FP64 subnormals have log2 m < -1022: they clamp to kMaxScaleExponent.)
TCSOLVE_HOST_DEVICE inline int equilibration_exponent(double m) {
  if (!(m > 0) || !(m <= 1.7976931348623157e308)) return 0;  // 0, negative, NaN, inf
  const std::uint64_t u = double_bits(m);
  const int biased = static_cast<int>((u >> 52) & 0x7ff);
  if (biased == 0) return kMaxScaleExponent;
  const std::uint64_t mantissa = u & ((std::uint64_t{1} << 52) - 1);
  const int rounded_log2 = (biased - 1023) + (mantissa >= 0x6a09e667f3bcdULL ? 1 : 0);
  const int e = -rounded_log2;
  return e < -kMaxScaleExponent ? -kMaxScaleExponent : (e > kMaxScaleExponent ? kMaxScaleExponent : e);
}

}  // namespace tcsolve::detail
