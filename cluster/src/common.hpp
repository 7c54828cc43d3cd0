// What the parts of K-means (tcsolve::cluster) share inside cluster/src: sizes and index
// arithmetic, the FP64 squared distance, the portable random draws, the argument checks (the
// weights' among them), and the constants of k-means++'s sums. Nothing outside cluster/src includes this.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster::detail {

using Rng64 = std::mt19937_64;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr int kSeedBlock = 4096;  ///< points per partial sum of the k-means++ sampling
inline constexpr int kSeedSub = kRowBlock;  ///< points per sub-block: a block's sum is its sub-blocks' sums
static_assert(kSeedBlock % kSeedSub == 0 && kSeedBlock / kSeedSub <= 32, "a block's sub-blocks fit a warp");

inline std::size_t count(std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

/// Uniform double in [0, 1) from 53 random bits: the same on every standard library.
inline double uniform01(Rng64& rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }

/// Uniform index in [0, n): floor(u n) with u from uniform01 (n < 2^31, so every index can occur).
inline int uniform_index(Rng64& rng, int n) { return std::min(n - 1, static_cast<int>(uniform01(rng) * n)); }

/// Throws InvalidInput unless `rows` > 0 points at X are device memory of GPU `device` (a caller's
/// array on another GPU, or in host memory, would fault on the device or read the wrong memory);
/// `what` names the array ("member 1's points").
inline void check_on_device(const float* X, std::int64_t rows, int device, const std::string& what) {
  if (rows <= 0) return;
  const int on = cuda::pointer_device(X);
  if (on != device)
    throw InvalidInput("kmeans: " + what + " are " +
                       (on < 0 ? std::string("not device memory") : "on GPU " + std::to_string(on)) +
                       ", not on GPU " + std::to_string(device) + ", where they are used");
}

inline void check_sizes(std::int64_t points, int dim, int k) {
  if (points < 1) throw InvalidInput("kmeans: no points (N = " + std::to_string(points) + ")");
  if (dim < 1) throw InvalidInput("kmeans: dimension must be >= 1, got " + std::to_string(dim));
  if (k < 1) throw InvalidInput("kmeans: k must be >= 1, got " + std::to_string(k));
  if (k > points)
    throw InvalidInput("kmeans: k = " + std::to_string(k) + " exceeds the number of points (" +
                       std::to_string(points) + ")");
}

/// InvalidInput naming the non-finite value at index e of rows of dim values (row numbers from
/// `first_row`, so a member of a group names the global row): found on the host or by a device scan.
[[noreturn]] inline void throw_nonfinite(const char* what, std::size_t e, int dim, std::int64_t first_row = 0) {
  throw InvalidInput(std::string("kmeans: ") + what + " has a non-finite value at (" +
                     std::to_string(first_row + static_cast<std::int64_t>(e / dim)) + ", " + std::to_string(e % dim) +
                     ")");
}

/// throw_nonfinite for the first non-finite value of v, if any.
inline void check_finite(const float* v, std::size_t n, int dim, const char* what, std::int64_t first_row = 0) {
  for (std::size_t e = 0; e < n; ++e)
    if (!std::isfinite(v[e])) throw_nonfinite(what, e, dim, first_row);
}

/// Throws InvalidInput unless the `points` sample weights w (host memory; nullptr: unweighted,
/// nothing to check) are finite, >= 0 and not all 0 (KmeansOptions::weights), naming the first
/// bad one; `what` starts the message ("kmeans", "kmeans++").
inline void check_weights(const double* w, std::int64_t points, const char* what) {
  if (w == nullptr) return;
  bool positive = false;
  for (std::int64_t i = 0; i < points; ++i) {
    const double v = w[i];
    if (!(v >= 0) || !std::isfinite(v)) {
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", v);
      throw InvalidInput(std::string(what) + ": weight " + std::to_string(i) + " is " + text +
                         ": sample weights must be finite and >= 0");
    }
    positive = positive || v > 0;
  }
  if (!positive)
    throw InvalidInput(std::string(what) + ": every sample weight is 0 (" + std::to_string(points) +
                       " points): at least one must be positive");
}

/// sum_d (x_d - c_d)^2 in FP64: four partial sums over d = 0, 1, 2, 3 mod 4 (independent
/// chains: 3-4x the speed of one, and the same result on every run), then the tail.
inline double squared_distance(const float* x, const float* c, int dim) {
  double s[4] = {0, 0, 0, 0};
  int d = 0;
  for (; d + 4 <= dim; d += 4)
    for (int q = 0; q < 4; ++q) {
      const double diff = static_cast<double>(x[d + q]) - static_cast<double>(c[d + q]);
      s[q] += diff * diff;
    }
  double total = (s[0] + s[1]) + (s[2] + s[3]);
  for (; d < dim; ++d) {
    const double diff = static_cast<double>(x[d]) - static_cast<double>(c[d]);
    total += diff * diff;
  }
  return total;
}

}  // namespace tcsolve::cluster::detail
