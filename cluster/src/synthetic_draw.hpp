// The synthetic blobs' draws (synthetic.hpp), written once as host+device functions: the host
// reference (synthetic.cpp) and the kernel (synthetic_cuda.cu) call these and nothing else, so
// every value is bitwise the same on both; and the argument check both entry points make first.
// Internal to tcsolve::cluster.
//
// Counter-based: a draw is splitmix64's output function applied to key + (n + 1) * kGolden, the
// n-th output of splitmix64 started from `key` (Steele, Lea, Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014), with one key per (seed, stream):
//   key(seed, s) = mix(mix(seed) + (s + 1) * kStreamStep).
// So a value depends only on (seed, stream, counter), never on what was drawn before it.
//
// Arithmetic: integers, then FP64 operations whose results are exact, then one FP64 addition and
// one rounding to FP32 (the point's coordinate), each correctly rounded in IEEE arithmetic on the
// host and on the device; no transcendental function, and contraction cannot change an exact
// product-plus-sum. That is what makes the host and the device agree bitwise.
#pragma once

#include <cstdint>

#include "tcsolve/cluster/synthetic.hpp"
#include "tcsolve/gemm/config.hpp"

namespace tcsolve::cluster::detail {

/// Throws InvalidInput "<who>: <problem>" for a bad spec, begin < 0, count < 0, begin + count >
/// spec.points, or a null X with count > 0 (synthetic.cpp).
void check_blob_rows(const char* who, const BlobsSpec& spec, std::int64_t begin, std::int64_t count,
                     const void* X);

inline constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;      ///< splitmix64's increment, 2^64 / phi
inline constexpr std::uint64_t kStreamStep = 0xD1B54A32D192ED03ull;  ///< odd: separates the streams' keys

// The streams of one seed, and what their counters number.
inline constexpr std::uint64_t kCentreStream = 0;  ///< counter j * dim + d: coordinate d of centre j
inline constexpr std::uint64_t kLabelStream = 1;   ///< counter i: the centre of point i
inline constexpr std::uint64_t kNoiseStream = 2;  ///< + r, r < kNoiseDraws; counter i * dim + d: value (i, d)
inline constexpr int kNoiseDraws = 4;             ///< 64-bit draws per noise value
inline constexpr int kNoiseUniformBits = 21;      ///< three 21-bit uniforms from each draw: 12 in all

/// splitmix64's output function (a bijection of 64-bit integers with full avalanche).
TCSOLVE_HOST_DEVICE inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The key of stream s of a seed.
TCSOLVE_HOST_DEVICE inline std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) {
  return mix(mix(seed) + (stream + 1) * kStreamStep);
}

/// Draw number `counter` of the stream whose key is `key` (arithmetic modulo 2^64).
TCSOLVE_HOST_DEVICE inline std::uint64_t draw(std::uint64_t key, std::uint64_t counter) {
  return mix(key + (counter + 1) * kGolden);
}

/// floor(a * b / 2^64), exactly.
TCSOLVE_HOST_DEVICE inline std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

/// The keys a row range needs, computed once per call (host) or per thread (device).
struct BlobKeys {
  std::uint64_t centre, label, noise[kNoiseDraws];
};

TCSOLVE_HOST_DEVICE inline BlobKeys blob_keys(std::uint64_t seed) {
  BlobKeys k;
  k.centre = stream_key(seed, kCentreStream);
  k.label = stream_key(seed, kLabelStream);
  for (int r = 0; r < kNoiseDraws; ++r) k.noise[r] = stream_key(seed, kNoiseStream + r);
  return k;
}

/// Coordinate d of centre j: -10 + 20 u with u = m 2^-24, m the draw's top 24 bits, so u is
/// uniform on the 2^24 points of [0, 1); -10 + 20 m 2^-24 is exact in FP64 (|20 m - 10 2^24| <
/// 2^28) and rounded once to FP32, which keeps it in [-10, 10).
TCSOLVE_HOST_DEVICE inline float centre_value(const BlobKeys& k, int dim, int j, int d) {
  const std::uint64_t n =
      static_cast<std::uint64_t>(j) * static_cast<std::uint64_t>(dim) + static_cast<std::uint64_t>(d);
  const std::uint64_t m = draw(k.centre, n) >> 40;
  return static_cast<float>(static_cast<double>(20 * m) * 0x1p-24 - 10.0);
}

/// The centre of point i: floor(h clusters / 2^64) for the 64-bit draw h, exact in integers
/// (uniform on [0, clusters) up to a relative bias below clusters 2^-64).
TCSOLVE_HOST_DEVICE inline int point_label(const BlobKeys& k, std::int64_t i, int clusters) {
  return static_cast<int>(
      mul_high(draw(k.label, static_cast<std::uint64_t>(i)), static_cast<std::uint64_t>(clusters)));
}

/// The noise of value (i, d): Irwin-Hall of 12 uniforms, sum_{t<12} (m_t + 1/2) 2^-21 - 6 with m_t
/// the 21-bit fields (bits 63..43, 42..22, 21..1) of the four draws. The sum of the m_t is an
/// integer below 12 2^21 < 2^25, so (S + 6) 2^-21 - 6 is exact in FP64: a multiple of 2^-21 in
/// (-6, 6).
TCSOLVE_HOST_DEVICE inline double noise_value(const BlobKeys& k, std::int64_t i, int dim, int d) {
  const std::uint64_t n =
      static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(dim) + static_cast<std::uint64_t>(d);
  constexpr std::uint64_t kField = (std::uint64_t{1} << kNoiseUniformBits) - 1;
  std::uint64_t sum = 0;
  for (int r = 0; r < kNoiseDraws; ++r) {
    const std::uint64_t h = draw(k.noise[r], n);
    sum += (h >> 43) + ((h >> 22) & kField) + ((h >> 1) & kField);
  }
  return static_cast<double>(sum + 6) * 0x1p-21 - 6.0;
}

/// Value (i, d) of the blobs, for `centre` = centre_value(k, dim, label of i, d): the FP32 centre
/// coordinate widened, plus the noise, in one FP64 addition, rounded once to FP32.
TCSOLVE_HOST_DEVICE inline float blob_value(const BlobKeys& k, std::int64_t i, float centre, int dim, int d) {
  return static_cast<float>(static_cast<double>(centre) + noise_value(k, i, dim, d));
}

}  // namespace tcsolve::cluster::detail
