// Counter-based random numbers for the cuda randsvd generator (generate.hpp), written once for
// the device kernel and the host tests: Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011; the Random123 reference constants) and the
// Box-Muller transform on two 53-bit uniforms. Every output is a pure function of (seed,
// stream, index), so a kernel fills a matrix in any order and launch shape with the same numbers.
#pragma once

#include <cmath>
#include <cstdint>

#include "tcsolve/gemm/config.hpp"

namespace tcsolve::philox {

/// Four 32-bit words: a Philox counter or output block.
struct Block {
  std::uint32_t w[4];
};

inline constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  ///< round multipliers
inline constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  ///< key increments (Weyl)

/// Philox4x32 with 10 rounds of the counter under the key (k0, k1). One round, with (hi, lo) the
/// halves of the 64-bit products M0 c0 and M1 c2:
///   (c0, c1, c2, c3) <- (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0)),
/// the key bumped by (W0, W1) between rounds.
TCSOLVE_HOST_DEVICE inline Block philox4x32_10(Block c, std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(kM0) * c.w[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(kM1) * c.w[2];
    const Block next{{static_cast<std::uint32_t>(p1 >> 32) ^ c.w[1] ^ k0, static_cast<std::uint32_t>(p1),
                      static_cast<std::uint32_t>(p0 >> 32) ^ c.w[3] ^ k1, static_cast<std::uint32_t>(p0)}};
    c = next;
  }
  return c;
}

/// Two standard normal numbers.
struct GaussianPair {
  double first, second;
};

/// The pair number `index` of stream `stream` under `seed`: the Philox block of counter
/// (lo(index), hi(index), stream, 0) and key (lo(seed), hi(seed)) gives two 53-bit uniforms,
/// u1 = (w0 w1 as 64 bits >> 11) 2^-53 and u2 likewise from w2 w3, in [0, 1); Box-Muller:
/// r = sqrt(-2 ln(1 - u1)) (1 - u1 in (0, 1]: finite), t = 2 pi u2, (r cos t, r sin t).
/// The transcendental functions are the platform's (host libm, CUDA's device functions, both
/// within a few ulps): host and device agree to about 1e-15 relative, not bit for bit.
TCSOLVE_HOST_DEVICE inline GaussianPair gaussian_pair(std::uint64_t seed, std::uint32_t stream,
                                                      std::uint64_t index) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  const Block b = philox4x32_10(Block{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32),
                                       stream, 0u}},
                                static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  const std::uint64_t a = (static_cast<std::uint64_t>(b.w[0]) << 32) | b.w[1];
  const std::uint64_t c = (static_cast<std::uint64_t>(b.w[2]) << 32) | b.w[3];
  const double u1 = static_cast<double>(a >> 11) * 0x1.0p-53;
  const double u2 = static_cast<double>(c >> 11) * 0x1.0p-53;
  const double r = ::sqrt(-2.0 * ::log(1.0 - u1));
  const double t = kTwoPi * u2;
  return {r * ::cos(t), r * ::sin(t)};
}

/// Two U[-1, 1) numbers: the pair number `pair` of stream `stream` under `seed` (the Philox block
/// of counter (lo(pair), hi(pair), stream, 0) and key (lo(seed), hi(seed))), each 2 u - 1 with u
/// the top 53 bits of (w0 w1), resp. (w2 w3), times 2^-53: exact in FP64, the same bits on host
/// and device. The random mode's A and x_true (generate.hpp, by blocks): element `index` of a
/// stream is first (index even) or second of pair index / 2.
struct UniformPair {
  double first, second;
};
TCSOLVE_HOST_DEVICE inline UniformPair uniform_pair(std::uint64_t seed, std::uint32_t stream, std::uint64_t pair) {
  const Block b = philox4x32_10(Block{{static_cast<std::uint32_t>(pair), static_cast<std::uint32_t>(pair >> 32),
                                       stream, 0u}},
                                static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  const std::uint64_t a = (static_cast<std::uint64_t>(b.w[0]) << 32) | b.w[1];
  const std::uint64_t c = (static_cast<std::uint64_t>(b.w[2]) << 32) | b.w[3];
  return {2.0 * (static_cast<double>(a >> 11) * 0x1.0p-53) - 1.0, 2.0 * (static_cast<double>(c >> 11) * 0x1.0p-53) - 1.0};
}

}  // namespace tcsolve::philox
