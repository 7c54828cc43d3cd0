// Shared compile-time configuration of the gemm library: the host+device qualifier and
// bit casts usable on both sides, so arithmetic written once runs in kernels and emulation.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TCSOLVE_HOST_DEVICE __host__ __device__
#else
#define TCSOLVE_HOST_DEVICE
#endif

namespace tcsolve {

/// Bits of an FP32 value (no aliasing UB, works in device code).
TCSOLVE_HOST_DEVICE inline std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

/// FP32 value of a bit pattern.
TCSOLVE_HOST_DEVICE inline float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/// Smallest integer >= a / b for positive b.
template <typename T>
TCSOLVE_HOST_DEVICE constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

}  // namespace tcsolve
