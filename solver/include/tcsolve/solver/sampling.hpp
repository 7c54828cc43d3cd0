// Random samples for the generated systems, written out so that a seed names the same numbers
// with any standard library on one platform (std::*_distribution algorithms are unspecified).
// Shared by tcsolve::solver (generate_system) and tcsolve::io (import_matrix_market).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace tcsolve::detail {

/// U[0, 1): the top 53 bits of one draw, times 2^-53.
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

/// U[-1, 1): 2 u - 1 (exact in FP64).
inline double uniform_pm1(std::mt19937_64& rng) { return 2.0 * uniform01(rng) - 1.0; }

/// N(0, 1) by the Box-Muller transform: each pair (u1, u2) gives r cos(t), then r sin(t), with
/// r = sqrt(-2 ln u1), t = 2 pi u2, and u1 in (0, 1] so the logarithm is finite.
class Gaussian {
  static constexpr double kTwoPi = 6.283185307179586476925286766559;

 public:
  double operator()(std::mt19937_64& rng) {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform01(rng);  // (0, 1]
    const double u2 = uniform01(rng);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double t = kTwoPi * u2;
    spare_ = r * std::sin(t);
    have_spare_ = true;
    return r * std::cos(t);
  }

 private:
  double spare_ = 0;
  bool have_spare_ = false;
};

}  // namespace tcsolve::detail
