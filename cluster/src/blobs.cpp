// make_blobs (tcsolve::cluster, kmeans.hpp): scikit-learn-style Gaussian blobs from one seeded
// std::mt19937_64 stream on the host (the tests' and examples' data).
#include <cmath>
#include <string>

#include "common.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster {

Blobs make_blobs(int points, int dim, int clusters, std::uint64_t seed) {
  using detail::count;
  constexpr double kBlobsBox = 10.0;  ///< make_blobs' centre_box (-10, 10)
  if (points < 1 || dim < 1 || clusters < 1)
    throw InvalidInput("make_blobs: points, dim and clusters must be >= 1, got " + std::to_string(points) + ", " +
                       std::to_string(dim) + ", " + std::to_string(clusters));
  detail::Rng64 rng(seed);
  // Standard normals by Box-Muller from 53-bit uniforms (std::normal_distribution's algorithm
  // is the library's choice; this is the same everywhere).
  bool has_spare = false;
  double spare = 0;
  auto normal = [&]() {
    if (has_spare) {
      has_spare = false;
      return spare;
    }
    const double u1 = (static_cast<double>(rng() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
    const double u2 = detail::uniform01(rng);
    const double radius = std::sqrt(-2.0 * std::log(u1));
    constexpr double kTwoPi = 6.283185307179586476925;
    spare = radius * std::sin(kTwoPi * u2);
    has_spare = true;
    return radius * std::cos(kTwoPi * u2);
  };
  Blobs b;
  b.centres.resize(count(clusters, dim));
  for (float& c : b.centres) c = static_cast<float>(-kBlobsBox + 2.0 * kBlobsBox * detail::uniform01(rng));
  b.X.resize(count(points, dim));
  b.truth.resize(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) {
    const int t = detail::uniform_index(rng, clusters);
    b.truth[static_cast<std::size_t>(i)] = t;
    for (int d = 0; d < dim; ++d) b.X[count(i, dim) + d] = static_cast<float>(b.centres[count(t, dim) + d] + normal());
  }
  return b;
}

}  // namespace tcsolve::cluster
