// Test inputs shared by tests, benchmarks and the generator (docs/architecture.md, "Test inputs").
//   urand        U(-1, 1);  urand:A:B  U(A, B)
//   exp_rand:a:b Ootomo Eq. (25): sign uniform, exponent uniform integer in [a, b], significand
//                uniform in [1, 2) (all 23 mantissa bits random).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace tcsolve {

struct Distribution {
  enum class Kind { urand, exp_rand } kind = Kind::urand;
  double lo = -1.0, hi = 1.0;  ///< urand bounds
  int emin = -15, emax = 14;   ///< exp_rand exponent range (inclusive)
};

/// Parses "urand", "urand:A:B" (A < B) or "exp_rand:A:B" (integers, A <= B, within FP32's
/// normal exponent range -126..127); throws InvalidInput naming the problem otherwise.
Distribution parse_distribution(std::string_view text);
/// Canonical text of d ("exp_rand:-15:14").
std::string to_string(const Distribution& d);

using Rng = std::mt19937_64;

/// One value drawn from d.
float draw(const Distribution& d, Rng& rng);
/// Fills data[0..count) with independent draws from d.
void fill(const Distribution& d, Rng& rng, float* data, std::size_t count);

}  // namespace tcsolve
