// Synthetic blobs by rows (tcsolve/cluster/synthetic.hpp, [synthetic]). Claims, each a test:
//   - bad specs and row ranges are refused with InvalidInput;
//   - a point depends on (seed, index, coordinate) alone: any split of [0, N) into row ranges
//     gives bitwise the points and labels of one call, and so do the same rows of a larger set;
//   - the labels are in [0, k) and every centre's count is within 6 sigma of N / k;
//   - the noise (a point minus its centre) is Irwin-Hall of 12: |z| < 6, sample mean and variance
//     within 6 standard errors of 0 and 1, no correlation between neighbouring coordinates;
//   - the generator is pinned: a few values for seed 1 (a change of it changes every run);
//   - [gpu] blob_rows_device is bitwise blob_rows, at odd offsets, for 1e5 x 17, 3 x 1, a
//     dim above the kernel's tile (tile of one point), with and without labels.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tcsolve/cluster/synthetic.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/error.hpp"

#if defined(TCSOLVE_HAVE_CUDA)
#include "cuda_test_util.hpp"  // TCSOLVE_SKIP_WITHOUT_GPU, tcsolve::test::Stream
#endif

namespace {

namespace cluster = tcsolve::cluster;
using cluster::BlobsSpec;

/// Standard errors a statistical check may be off by: a false failure has probability about
/// 2e-9 per check for a normal statistic.
constexpr double kSigmas = 6;

struct Rows {
  std::vector<float> X;
  std::vector<int> truth;
};

Rows host_rows(const BlobsSpec& spec, std::int64_t begin, std::int64_t count) {
  Rows r;
  r.X.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(spec.dim));
  r.truth.resize(static_cast<std::size_t>(count));
  cluster::blob_rows(spec, begin, count, r.X.data(), r.truth.data());
  return r;
}

/// Seed 1, dim 3, 4 clusters: the labels of points 0 and 1 and the bits of their six values.
constexpr int kPinnedLabel0 = 2, kPinnedLabel1 = 0;
constexpr std::uint32_t kPinnedBits[6] = {0x400ab208, 0x3ec57558, 0x40d030c6,
                                          0x3fdb522a, 0x3f084d70, 0xc0618da6};

/// Bitwise equality of two float arrays (== would call -0 and 0 equal, NaN unequal).
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("synthetic blobs: a spec or row range out of bounds is refused with InvalidInput",
          "[synthetic][kmeans]") {
  using tcsolve::InvalidInput;
  const BlobsSpec good{10, 3, 2, 1};
  CHECK_NOTHROW(cluster::check_blobs_spec(good));
  CHECK_THROWS_WITH(cluster::check_blobs_spec({0, 3, 2, 1}), Catch::Contains("points must be >= 1, got 0"));
  CHECK_THROWS_WITH(cluster::check_blobs_spec({-5, 3, 2, 1}), Catch::Contains("points must be >= 1, got -5"));
  CHECK_THROWS_WITH(cluster::check_blobs_spec({10, 0, 2, 1}), Catch::Contains("dim must be >= 1, got 0"));
  CHECK_THROWS_WITH(cluster::check_blobs_spec({10, 3, -1, 1}),
                    Catch::Contains("clusters must be >= 1, got -1"));
  CHECK_THROWS_AS(cluster::blob_centres({10, 3, 0, 1}), InvalidInput);
  std::vector<float> X(30);
  CHECK_THROWS_AS(cluster::blob_rows({10, 0, 2, 1}, 0, 1, X.data(), nullptr), InvalidInput);
  CHECK_THROWS_AS(cluster::blob_rows(good, -1, 2, X.data(), nullptr), InvalidInput);
  CHECK_THROWS_AS(cluster::blob_rows(good, 0, -1, X.data(), nullptr), InvalidInput);
  CHECK_THROWS_WITH(cluster::blob_rows(good, 4, 7, X.data(), nullptr),
                    Catch::Contains("outside the 10 points"));
  CHECK_THROWS_AS(cluster::blob_rows(good, 11, 0, X.data(), nullptr), InvalidInput);
  CHECK_THROWS_AS(cluster::blob_rows(good, 0, 1, nullptr, nullptr), InvalidInput);
  CHECK_NOTHROW(cluster::blob_rows(good, 10, 0, nullptr, nullptr));  // an empty range at the end
  CHECK_NOTHROW(cluster::blob_rows(good, 0, 10, X.data(), nullptr));
}

TEST_CASE(
    "synthetic blobs: any split into row ranges, or the same rows of a larger set, gives bitwise the same "
    "points and labels",
    "[synthetic][kmeans]") {
  const BlobsSpec spec{1000, 7, 5, 3};
  const Rows whole = host_rows(spec, 0, spec.points);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    // Cut points: random, with empty pieces and pieces of one point among them.
    std::vector<std::int64_t> cuts = {0, spec.points};
    const int pieces = 1 + trial % 7;
    for (int c = 1; c < pieces; ++c) cuts.push_back(static_cast<std::int64_t>(rng() % (spec.points + 1)));
    if (trial % 3 == 0) cuts.push_back(cuts.back() == 0 ? 1 : cuts.back() - 1);
    std::sort(cuts.begin(), cuts.end());
    Rows joined;
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      const Rows part = host_rows(spec, cuts[c], cuts[c + 1] - cuts[c]);
      joined.X.insert(joined.X.end(), part.X.begin(), part.X.end());
      joined.truth.insert(joined.truth.end(), part.truth.begin(), part.truth.end());
    }
    INFO("trial " << trial << ", " << cuts.size() - 1 << " pieces");
    CHECK(same_bits(joined.X, whole.X));
    CHECK(joined.truth == whole.truth);
  }
  // Rows [200, 700) of a set of 10^9 points with the same seed, dim and clusters.
  const BlobsSpec larger{1000000000, spec.dim, spec.clusters, spec.seed};
  const Rows middle = host_rows(larger, 200, 500);
  CHECK(same_bits(middle.X,
                  std::vector<float>(whole.X.begin() + 200 * spec.dim, whole.X.begin() + 700 * spec.dim)));
  CHECK(middle.truth == std::vector<int>(whole.truth.begin() + 200, whole.truth.begin() + 700));
  // Another seed: other points.
  const Rows other = host_rows({spec.points, spec.dim, spec.clusters, spec.seed + 1}, 0, spec.points);
  CHECK_FALSE(same_bits(other.X, whole.X));
}

TEST_CASE("synthetic blobs: labels in [0, k), every centre drawn about N / k times; centres in [-10, 10)",
          "[synthetic][kmeans]") {
  const BlobsSpec spec{20000, 2, 37, 5};
  const Rows r = host_rows(spec, 0, spec.points);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(spec.clusters), 0);
  for (int t : r.truth) {
    REQUIRE(t >= 0);
    REQUIRE(t < spec.clusters);
    ++counts[static_cast<std::size_t>(t)];
  }
  // Each count is Binomial(N, 1/k): mean N/k = 540.5, standard deviation sqrt(N (1/k)(1 - 1/k)) = 22.9.
  const double p = 1.0 / spec.clusters;
  const double mean = static_cast<double>(spec.points) * p;
  const double sd = std::sqrt(static_cast<double>(spec.points) * p * (1 - p));
  for (int j = 0; j < spec.clusters; ++j) {
    INFO("centre " << j << ": " << counts[static_cast<std::size_t>(j)] << " points, expected " << mean);
    CHECK(counts[static_cast<std::size_t>(j)] >= 1);
    CHECK(std::abs(static_cast<double>(counts[static_cast<std::size_t>(j)]) - mean) <= kSigmas * sd);
  }
  const std::vector<float> centres = cluster::blob_centres({1, 64, 100, 5});
  CHECK(centres.size() == 6400u);
  CHECK(std::all_of(centres.begin(), centres.end(), [](float c) { return c >= -10 && c < 10; }));
  // One call is as good as another: the centres do not depend on the number of points.
  CHECK(
      same_bits(cluster::blob_centres(spec), cluster::blob_centres({1, spec.dim, spec.clusters, spec.seed})));
}

TEST_CASE(
    "synthetic blobs: the noise is Irwin-Hall of 12 (|z| < 6, mean 0 and variance 1 within 6 standard "
    "errors, neighbouring coordinates uncorrelated)",
    "[synthetic][kmeans]") {
  const BlobsSpec spec{20000, 16, 9, 7};
  const Rows r = host_rows(spec, 0, spec.points);
  const std::vector<float> centres = cluster::blob_centres(spec);
  const std::size_t n = r.X.size();  // 320000 noise values
  std::vector<double> z(n);
  for (std::int64_t i = 0; i < spec.points; ++i)
    for (int d = 0; d < spec.dim; ++d) {
      const std::size_t e = static_cast<std::size_t>(i) * spec.dim + static_cast<std::size_t>(d);
      const float c = centres[static_cast<std::size_t>(r.truth[static_cast<std::size_t>(i)]) * spec.dim +
                              static_cast<std::size_t>(d)];
      // x = fl32(c + z): off from c + z by at most half an FP32 ulp of |x| < 16, 2^-20.
      z[e] = static_cast<double>(r.X[e]) - static_cast<double>(c);
    }
  const double rounding = 0x1p-20;
  CHECK(std::all_of(z.begin(), z.end(), [&](double v) { return std::abs(v) < 6 + rounding; }));
  double sum = 0, sum2 = 0, lag = 0;
  for (std::size_t e = 0; e < n; ++e) {
    sum += z[e];
    sum2 += z[e] * z[e];
    if (e % spec.dim != 0) lag += z[e] * z[e - 1];  // coordinates d - 1 and d of one point
  }
  const double nn = static_cast<double>(n);
  const double mean = sum / nn, variance = sum2 / nn - mean * mean;
  const double lag_pairs = nn * (spec.dim - 1) / spec.dim;
  // Irwin-Hall of 12: variance 1 (1 - 2^-42 with 21-bit uniforms), fourth moment 3 - 6/(5 * 12) = 2.9.
  // Standard errors: of the mean 1/sqrt(n) = 1.8e-3; of the sample variance sqrt((2.9 - 1) / n)
  // = 2.4e-3; of the mean of z_d z_{d-1} (independent, variance 1) 1/sqrt(pairs) = 1.8e-3. The
  // FP32 rounding moves each value by at most 2^-20, far below these.
  INFO("mean " << mean << ", variance " << variance << ", lag-1 mean product " << lag / lag_pairs);
  CHECK(std::abs(mean) <= kSigmas / std::sqrt(nn) + rounding);
  CHECK(std::abs(variance - 1) <= kSigmas * std::sqrt(1.9 / nn) + 2 * 6 * rounding);
  CHECK(std::abs(lag / lag_pairs) <= kSigmas / std::sqrt(lag_pairs) + 2 * 6 * rounding);
}

TEST_CASE("synthetic blobs: the generator is pinned (seed 1: the labels and values of points 0 and 1)",
          "[synthetic][kmeans]") {
  // Recorded from this implementation; a change of the generator (hash, streams, noise) changes
  // every synthetic run's data and must change these values on purpose.
  const BlobsSpec spec{100, 3, 4, 1};
  const Rows r = host_rows(spec, 0, 2);
  const std::vector<float> centres = cluster::blob_centres(spec);
  std::vector<std::uint32_t> bits(6);
  std::memcpy(bits.data(), r.X.data(), sizeof(float) * 6);
  INFO("centre 0 " << centres[0] << " " << centres[1] << " " << centres[2] << "; labels " << r.truth[0] << " "
                   << r.truth[1]);
  CHECK(r.truth == std::vector<int>{kPinnedLabel0, kPinnedLabel1});
  CHECK(bits == std::vector<std::uint32_t>(std::begin(kPinnedBits), std::end(kPinnedBits)));
}

#if defined(TCSOLVE_HAVE_CUDA)

namespace {

/// A device array of n Ts, freed at the end of the scope.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : n_(n) {
    REQUIRE(cudaMalloc(&p_, std::max<std::size_t>(n, 1) * sizeof(T)) == cudaSuccess);
  }
  ~DeviceArray() { cudaFree(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return p_; }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    REQUIRE(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return h;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

}  // namespace

TEST_CASE(
    "on the GPU, blob_rows_device is bitwise blob_rows (1e5 x 17 at an odd offset, 3 x 1, dim 5000, "
    "without labels)",
    "[synthetic][kmeans][gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the synthetic blobs' device test");
  tcsolve::test::Stream stream;
  struct Case {
    BlobsSpec spec;
    std::int64_t begin, count;
    bool labels;
  };
  const Case cases[] = {
      {{250001, 17, 40, 2}, 12345, 100000, true},  // dim 17: tiles of 240 points, a partial last tile
      {{3, 1, 2, 9}, 0, 3, true},                  // 3 x 1
      {{3, 1, 2, 9}, 1, 2, true},
      {{7, 5000, 3, 4}, 3, 4, true},          // dim > the kernel's 4096-value tile: one point a tile
      {{1000, 128, 1000, 6}, 1, 999, false},  // no labels asked for
      {{5, 4, 2, 1}, 5, 0, true},             // empty range: nothing written, nothing launched
  };
  for (const Case& c : cases) {
    INFO(c.spec.points << " points x " << c.spec.dim << ", " << c.spec.clusters << " clusters, rows ["
                       << c.begin << ", " << c.begin + c.count << ")");
    const Rows host = host_rows(c.spec, c.begin, c.count);
    DeviceArray<float> X(host.X.size());
    DeviceArray<int> truth(host.truth.size());
    cluster::blob_rows_device(c.spec, c.begin, c.count, X.get(), c.labels ? truth.get() : nullptr,
                              stream.get());
    REQUIRE(cudaStreamSynchronize(stream.get()) == cudaSuccess);
    CHECK(same_bits(X.download(), host.X));
    if (c.labels) CHECK(truth.download() == host.truth);
  }
  // Argument checks come before the launch, as on the host.
  DeviceArray<float> X(4);
  CHECK_THROWS_AS(cluster::blob_rows_device({3, 1, 2, 9}, 2, 2, X.get(), nullptr, stream.get()),
                  tcsolve::InvalidInput);
}

#else

TEST_CASE("without CUDA, blob_rows_device throws Unavailable", "[synthetic][kmeans]") {
  CHECK_THROWS_AS(cluster::blob_rows_device({3, 1, 2, 9}, 0, 3, nullptr, nullptr, nullptr),
                  tcsolve::Unavailable);
}

#endif
