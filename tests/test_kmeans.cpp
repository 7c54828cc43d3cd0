// K-means, tcsolve::cluster ([kmeans]): Lloyd's algorithm with the distance GEMM on each variant, on the
// bundled real data (inputs/iris.h5, inputs/wine.h5) and on the large-norm variant of iris
// (inputs/iris_shifted.h5 = iris + 100). Claims, each a test:
//   - fp64, fp32-simt and ootomo-fp16 from the same start end with the same labels on iris;
//   - the FP32-accurate variants (ec-*, ootomo-*, auto) agree with fp64 on >= 99.9% of labels
//     on all three data sets;
//   - fp16-tc agrees on iris but not on iris_shifted: the cross term x.c carries FP16's input
//     rounding, u16 |x||c| ~ 2^-11 * 4e4 ~ 20, far above the score gaps (~1) that decide labels;
//     FP32 (2^-24 * 4e4 ~ 2e-3) stays below them. The table is printed;
//   - the documented rules (ties, empty clusters, stopping, k-means++, chunking) and the file
//     format; bad input exits 2 with a message naming the problem;
//   - sample weights (KmeansOptions::weights): integer weights are the points repeated, weight 0
//     removes a point, weights of 1 are the unweighted run bitwise, weighted k-means++ draws
//     proportionally to w and w D^2, bad weights are refused naming them;
//   - [gpu] the cuda backend reproduces the cpu backend's labels (skipped without a device), and
//     its weighted centroids bitwise.
// Sizes are small: the tensor-core variants are emulated on the cpu backend.
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/io/kmeans_file.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"

namespace {

namespace fs = std::filesystem;
namespace cli = tcsolve::test;
namespace cluster = tcsolve::cluster;
using tcsolve::Backend;
using tcsolve::Variant;

/// The bar for the FP32-accurate variants: >= 99.9% of labels equal to fp64's. On
/// these data sets (150 and 178 points) it means every label.
constexpr double kAgreementBar = 0.999;
/// fp16-tc on iris_shifted: measured 0.61 after kTableMaxIter = 50 iterations (0.26 after 300:
/// its labels oscillate and never settle), inertia 4.7x fp64's; the claim is only that it is
/// visibly below the bar.
constexpr double kFp16TcShiftedCeiling = 0.9;
/// Iterations of the table runs: fp64 converges in 9-11 on these sets, fp16-tc never does on
/// iris_shifted (labels oscillate), so a cap keeps the emulation short.
constexpr int kTableMaxIter = 50;
constexpr int kIrisK = 3;

std::string input(const std::string& name) { return tcsolve::test::test_data_path("inputs/" + name); }

const tcsolve::KmeansData& dataset(const std::string& name) {
  static std::vector<std::pair<std::string, tcsolve::KmeansData>> cache;
  for (const auto& e : cache)
    if (e.first == name) return e.second;
  cache.emplace_back(name, tcsolve::read_kmeans_data(input(name)));
  return cache.back().second;
}

cluster::KmeansResult run(const tcsolve::KmeansData& d, const std::vector<float>& start, Variant v,
                        Backend backend = Backend::cpu, int max_iter = 300) {
  cluster::KmeansOptions o;
  o.variant = v;
  o.backend = backend;
  o.max_iterations = max_iter;
  return cluster::kmeans(d.X.data(), d.points, d.dim, start, o);
}

using tcsolve::test::TempDir;

/// Writes float64 datasets (name, dims, C-order data) to a new HDF5 file.
void write_h5(
    const std::string& path,
    const std::vector<std::tuple<std::string, std::vector<hsize_t>, std::vector<double>>>& datasets) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(file >= 0);
  for (const auto& [name, dims, data] : datasets) {
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t ds =
        H5Dcreate2(file, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(ds >= 0);
    REQUIRE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
    H5Dclose(ds);
    H5Sclose(space);
  }
  H5Fclose(file);
}

/// The iris points as float64 in C order (points x dim), for hand-made files.
std::vector<double> iris_values() {
  const tcsolve::KmeansData& d = dataset("iris.h5");
  return std::vector<double>(d.X.begin(), d.X.end());
}

struct Row {
  std::string variant, resolved;
  double agreement = 0, inertia = 0, inertia_error = 0;
  int iterations = 0;
};

/// Every variant in `variants` from the k-means++ start (seed 1) against fp64 from the same start.
std::vector<Row> agreement_table(const std::string& file, int k, const std::vector<Variant>& variants) {
  const tcsolve::KmeansData& d = dataset(file);
  const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, k, 1);
  const cluster::KmeansResult ref = run(d, start, Variant::fp64, Backend::cpu, kTableMaxIter);
  std::vector<Row> rows;
  for (Variant v : variants) {
    const cluster::KmeansResult r = run(d, start, v, Backend::cpu, kTableMaxIter);
    rows.push_back({std::string(tcsolve::to_string(v)), r.resolved_name,
                    cluster::label_agreement(r.labels, ref.labels), r.inertia,
                    std::abs(r.inertia - ref.inertia) / ref.inertia, r.iterations});
  }
  std::printf("\nkmeans %s, k = %d, k-means++ seed 1, cpu backend; fp64: inertia %.10g, %d iterations\n",
              file.c_str(), k, ref.inertia, ref.iterations);
  std::printf("  %-12s %-10s %10s %16s %14s %6s\n", "variant", "ran as", "agreement", "inertia",
              "inertia err", "iter");
  for (const Row& r : rows)
    std::printf("  %-12s %-10s %10.4f %16.10g %14.3e %6d\n", r.variant.c_str(), r.resolved.c_str(),
                r.agreement, r.inertia, r.inertia_error, r.iterations);
  std::fflush(stdout);
  return rows;
}

const Row& row(const std::vector<Row>& rows, const std::string& name) {
  for (const Row& r : rows)
    if (r.variant == name) return r;
  FAIL("no row " << name);
  return rows.front();
}

/// Pearson's statistic of the counts `observed` against total p_i / sum (over the cells whose
/// expected count is at least 5); df grows by the cells less one (none below two cells).
template <class Count>
double pearson(double total, const std::vector<double>& p, double sum, const std::vector<Count>& observed, int& df) {
  double chi = 0;
  int cells = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double e = total * p[i] / sum;
    if (e < 5) continue;
    const double o = static_cast<double>(observed[i]);
    chi += (o - e) * (o - e) / e;
    ++cells;
  }
  df += std::max(0, cells - 1);
  return chi;
}

}  // namespace

// --- the claims of the issue ------------------------------------------------------------------

TEST_CASE(
    "kmeans with fp64, fp32-simt and ootomo-fp16 from the same start converge to the same labels on iris",
    "[kmeans]") {
  const tcsolve::KmeansData& d = dataset("iris.h5");
  REQUIRE(d.points == 150);
  REQUIRE(d.dim == 4);
  for (std::uint64_t seed : {1, 2, 3}) {
    INFO("k-means++ seed " << seed);
    const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, kIrisK, seed);
    const cluster::KmeansResult ref = run(d, start, Variant::fp64);
    CHECK(ref.stop == cluster::KmeansStop::labels_unchanged);
    for (Variant v : {Variant::fp32_simt, Variant::ootomo_fp16}) {
      INFO(tcsolve::to_string(v));
      const cluster::KmeansResult r = run(d, start, v);
      CHECK(r.stop == cluster::KmeansStop::labels_unchanged);
      CHECK(r.labels == ref.labels);
      // Same labels, same FP64 sums: bitwise the same centroids and inertia.
      CHECK(r.centroids == ref.centroids);
      CHECK(r.inertia == ref.inertia);
    }
  }
}

TEST_CASE(
    "ec-fp16, ec-tf32, ootomo-fp16, ootomo-tf32 and auto agree with fp64 on >= 99.9% of labels on iris, "
    "wine and iris_shifted",
    "[kmeans]") {
  const std::vector<Variant> variants = {Variant::ec_fp16, Variant::ec_tf32, Variant::ootomo_fp16,
                                         Variant::ootomo_tf32, Variant::auto_};
  for (const char* file : {"iris.h5", "wine.h5", "iris_shifted.h5"}) {
    const std::vector<Row> rows = agreement_table(file, kIrisK, variants);
    for (const Row& r : rows) {
      INFO(file << ": " << r.variant);
      CHECK(r.agreement >= kAgreementBar);
    }
    CHECK(row(rows, "auto").resolved == "ec-fp16");  // the data fit FP16 after the power-of-two scaling
  }
}

TEST_CASE(
    "fp16-tc keeps iris's labels but loses them on iris_shifted (large norms), where the FP32-accurate "
    "variants keep them",
    "[kmeans]") {
  // iris_shifted is iris + 100: the same clusters (the same distances), ||x||^2 ~ 4e4.
  const tcsolve::KmeansData& plain = dataset("iris.h5");
  const tcsolve::KmeansData& shifted = dataset("iris_shifted.h5");
  REQUIRE(shifted.points == plain.points);
  for (std::size_t e = 0; e < plain.X.size(); ++e)
    REQUIRE(std::abs(static_cast<double>(shifted.X[e]) - (plain.X[e] + 100.0)) <=
            1e-4);  // FP32 rounding of x + 100

  const std::vector<Variant> variants = {Variant::fp32_simt,   Variant::fp16_tc, Variant::tf32_tc,
                                         Variant::ootomo_fp16, Variant::ec_fp16, Variant::ec_tf32,
                                         Variant::auto_};
  const std::vector<Row> near_origin = agreement_table("iris.h5", kIrisK, variants);
  const std::vector<Row> far = agreement_table("iris_shifted.h5", kIrisK, variants);
  CHECK(row(near_origin, "fp16-tc").agreement >= kAgreementBar);
  CHECK(row(far, "fp16-tc").agreement < kFp16TcShiftedCeiling);
  CHECK(row(far, "fp16-tc").inertia_error > 0.1);  // a worse partition, not a relabelling
  for (const char* v : {"fp32-simt", "ootomo-fp16", "ec-fp16", "ec-tf32", "auto"}) {
    INFO(v);
    CHECK(row(far, v).agreement >= kAgreementBar);
    CHECK(row(far, v).inertia_error == 0.0);  // same labels: bitwise the same centroids
  }
}

// --- the documented rules ---------------------------------------------------------------------

TEST_CASE("ties go to the lowest index; an empty cluster keeps its centroid", "[kmeans]") {
  const tcsolve::KmeansData& d = dataset("iris.h5");
  // Centroids 0 and 1 identical (every point ties between them), centroid 2 far from every point.
  std::vector<float> start(3 * 4);
  for (int c = 0; c < 4; ++c) start[c] = start[4 + c] = d.X[c];
  for (int c = 0; c < 4; ++c) start[8 + c] = 1e4f;
  for (Variant v : {Variant::fp64, Variant::fp32_simt, Variant::ec_fp16}) {
    INFO(tcsolve::to_string(v));
    const cluster::KmeansResult r = run(d, start, v, Backend::cpu, /*max_iter=*/1);
    REQUIRE(r.iterations == 1);
    CHECK(r.stop == cluster::KmeansStop::max_iterations);
    CHECK(std::all_of(r.labels.begin(), r.labels.end(), [](int l) { return l == 0; }));
    CHECK(r.empty_clusters == 2);
    CHECK(std::equal(start.begin() + 4, start.end(), r.centroids.begin() + 4));  // kept
    // Centroid 0 is the mean of all points.
    for (int c = 0; c < 4; ++c) {
      double mean = 0;
      for (int i = 0; i < d.points; ++i) mean += d.X[i * 4 + c];
      CHECK(r.centroids[c] == static_cast<float>(mean / d.points));
    }
  }
}

TEST_CASE("kmeans stops on unchanged labels, on tol, or at max_iterations, and reports every iteration",
          "[kmeans]") {
  const tcsolve::KmeansData& d = dataset("iris.h5");
  const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, kIrisK, 1);
  cluster::KmeansOptions o;
  o.variant = Variant::fp32_simt;
  o.backend = Backend::cpu;
  int calls = 0;
  o.progress = [&](const cluster::KmeansIteration& s) { CHECK(s.iteration == ++calls); };
  const cluster::KmeansResult full = cluster::kmeans(d.X.data(), d.points, d.dim, start, o);
  CHECK(full.stop == cluster::KmeansStop::labels_unchanged);
  CHECK(calls == full.iterations);
  REQUIRE(full.history.size() == static_cast<std::size_t>(full.iterations));
  CHECK(full.history.front().changed == d.points);  // every label is new in the first assignment
  CHECK(full.history.back().changed == 0);
  CHECK(full.inertia ==
        Approx(cluster::kmeans_inertia(d.X.data(), d.points, d.dim, full.labels, full.centroids)));
  CHECK(full.time_per_iteration_s == Approx(full.time_s / full.iterations));

  o.progress = nullptr;
  o.tol = 1e-2;  // sum of squared movements below 1% of the mean variance
  const cluster::KmeansResult early = cluster::kmeans(d.X.data(), d.points, d.dim, start, o);
  CHECK(early.stop == cluster::KmeansStop::tolerance);
  CHECK(early.iterations < full.iterations);

  o.tol = 0;
  o.max_iterations = 2;
  const cluster::KmeansResult capped = cluster::kmeans(d.X.data(), d.points, d.dim, start, o);
  CHECK(capped.stop == cluster::KmeansStop::max_iterations);
  CHECK(capped.iterations == 2);
}

TEST_CASE("processing the points in chunks of G gives the same labels as one GEMM", "[kmeans]") {
  const tcsolve::KmeansData& d = dataset("wine.h5");
  const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, 5, 7);
  cluster::KmeansOptions o;
  o.variant = Variant::ec_fp16;
  o.backend = Backend::cpu;
  const cluster::KmeansResult whole = cluster::kmeans(d.X.data(), d.points, d.dim, start, o);
  o.chunk_points = 17;  // 11 chunks, the last one partial
  const cluster::KmeansResult chunked = cluster::kmeans(d.X.data(), d.points, d.dim, start, o);
  CHECK(chunked.labels == whole.labels);
  CHECK(chunked.centroids == whole.centroids);
  CHECK(chunked.iterations == whole.iterations);
}

TEST_CASE("k-means++ is reproducible for a seed and picks k distinct data points", "[kmeans]") {
  const tcsolve::KmeansData& d = dataset("wine.h5");
  const int k = 8;
  const std::vector<float> a = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, k, 42);
  CHECK(a == cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, k, 42));
  CHECK(a != cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, k, 43));
  std::vector<int> picked;
  for (int j = 0; j < k; ++j) {
    int found = -1;
    for (int i = 0; i < d.points && found < 0; ++i)
      if (std::equal(a.begin() + j * d.dim, a.begin() + (j + 1) * d.dim, d.X.begin() + i * d.dim)) found = i;
    INFO("centroid " << j);
    REQUIRE(found >= 0);
    picked.push_back(found);
  }
  std::sort(picked.begin(), picked.end());
  CHECK(std::adjacent_find(picked.begin(), picked.end()) == picked.end());
  // Fewer distinct points than k: duplicates are drawn uniformly, no failure.
  const std::vector<float> same(4 * 10, 1.0f);
  CHECK(cluster::kmeans_plus_plus(same.data(), 10, 4, 3, 1).size() == 12);
}

TEST_CASE("k-means++ draws its first centre uniformly and the next with probability D(x)^2 / sum D^2 "
          "(chi-square, false-alarm rate 1e-6 per statistic)", "[kmeans]") {
  // 12 points on a line at distinct, uneven positions (exact in FP32 and their squares in FP64),
  // k = 2, 24000 seeds: the first pick against 1/12 each, the second, for each first pick f,
  // against D(x)^2 / sum_y D(y)^2 with D the distance to f. Pearson's statistic over the cells
  // with an expected count >= 5 against the chi-square quantile of probability 1 - 1e-6
  // (Wilson-Hilferty, z = 4.753): a correct sampler with independent seeds fails each check
  // with probability 1e-6; the seeds are fixed, so the test is deterministic.
  const int points = 12, runs = 24000;
  const std::vector<float> x = {0, 1, 3, 4, 8, 9, 15, 16, 17, 30, 31, 45};
  auto quantile = [](int df) {
    const double z = 4.753, a = 2.0 / (9.0 * df);
    return df * std::pow(1 - a + z * std::sqrt(a), 3);
  };
  std::vector<int> first(points, 0);
  std::vector<std::vector<int>> second(points, std::vector<int>(points, 0));
  int bad = 0;
  for (int r = 0; r < runs; ++r) {
    const std::vector<float> c = cluster::kmeans_plus_plus(x.data(), points, 1, 2, 1000 + static_cast<std::uint64_t>(r));
    const auto f = std::find(x.begin(), x.end(), c[0]) - x.begin();
    const auto g = std::find(x.begin(), x.end(), c[1]) - x.begin();
    if (f >= points || g >= points || f == g) {  // not a data point, or f again (D(f)^2 = 0)
      ++bad;
      continue;
    }
    ++first[static_cast<std::size_t>(f)];
    ++second[static_cast<std::size_t>(f)][static_cast<std::size_t>(g)];
  }
  double chi_first = 0;
  for (int i = 0; i < points; ++i) {
    const double e = static_cast<double>(runs) / points;
    chi_first += (first[static_cast<std::size_t>(i)] - e) * (first[static_cast<std::size_t>(i)] - e) / e;
  }
  CHECK(chi_first <= quantile(points - 1));
  CHECK(bad == 0);
  // Pearson's statistic of the second picks against the law D(x)^power / sum D^power
  auto chi_second = [&](int power, int& df) {
    double chi = 0;
    df = 0;
    for (int f = 0; f < points; ++f) {
      std::vector<double> weight(points);
      double sum = 0;
      for (int i = 0; i < points; ++i)
        sum += weight[static_cast<std::size_t>(i)] =
            std::pow(std::abs(x[static_cast<std::size_t>(i)] - x[static_cast<std::size_t>(f)]), power);
      chi += pearson(first[static_cast<std::size_t>(f)], weight, sum, second[static_cast<std::size_t>(f)], df);
    }
    return chi;
  };
  int df = 0, df_d = 0;
  const double chi_d2 = chi_second(2, df), chi_d = chi_second(1, df_d);
  INFO("first: chi2 " << chi_first << " (df " << points - 1 << "); second against D^2: chi2 " << chi_d2 << " (df "
                      << df << ", quantile " << quantile(df) << "); against D: " << chi_d << " (df " << df_d << ")");
  REQUIRE(df >= 60);
  CHECK(chi_d2 <= quantile(df));
  // the test's power: the same counts reject sampling proportional to D (not squared)
  CHECK(chi_d > quantile(df_d));
}

TEST_CASE("k-means++ walks its blocks and sub-blocks to the point one running sum would pick (integer data: "
          "every sum exact)", "[kmeans]") {
  // 10000 points on a line at integer positions: D(x)^2 and every partial sum are integers
  // below 2^53, so the block (4096) and sub-block (128) sums are exact and the three walks must
  // land where a single running sum over all points lands; 3 blocks, the last one with a
  // partial sub-block. The reference repeats the documented draws: mt19937_64(seed), a uniform
  // (r >> 11) 2^-53, index floor(u n), then u * sum D^2 against the running sums.
  const int points = 10000, k = 4;
  std::mt19937_64 make(5);
  std::vector<float> x(points);
  for (float& v : x) v = static_cast<float>(make() % 2001);
  auto uniform01 = [](std::mt19937_64& r) { return static_cast<double>(r() >> 11) * 0x1p-53; };
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    std::vector<double> d2(points, std::numeric_limits<double>::infinity());
    std::vector<float> expected;
    int chosen = std::min(points - 1, static_cast<int>(uniform01(rng) * points));
    for (int t = 0;; ++t) {
      expected.push_back(x[static_cast<std::size_t>(chosen)]);
      if (t + 1 == k) break;
      double total = 0;
      for (int i = 0; i < points; ++i) {
        const double diff = static_cast<double>(x[static_cast<std::size_t>(i)]) - x[static_cast<std::size_t>(chosen)];
        d2[static_cast<std::size_t>(i)] = std::min(d2[static_cast<std::size_t>(i)], diff * diff);
        total += d2[static_cast<std::size_t>(i)];
      }
      const double target = uniform01(rng) * total;
      REQUIRE(total > 0);
      double run = 0;
      for (int i = 0; i < points; ++i) {
        run += d2[static_cast<std::size_t>(i)];
        if (d2[static_cast<std::size_t>(i)] > 0 && run > target) {
          chosen = i;
          break;
        }
      }
    }
    CHECK(cluster::kmeans_plus_plus(x.data(), points, 1, k, seed) == expected);
  }
}

TEST_CASE("make_blobs draws reproducible blobs around centres in [-10, 10]^dim", "[kmeans]") {
  const cluster::Blobs a = cluster::make_blobs(500, 3, 4, 9);
  const cluster::Blobs b = cluster::make_blobs(500, 3, 4, 9);
  CHECK(a.X == b.X);
  CHECK(a.truth == b.truth);
  CHECK(std::all_of(a.centres.begin(), a.centres.end(), [](float c) { return c >= -10 && c <= 10; }));
  // Clustering them from the true centres finds the true blobs (centres >> noise apart).
  cluster::KmeansOptions o;
  o.variant = Variant::ec_fp16;
  o.backend = Backend::cpu;
  const cluster::KmeansResult r = cluster::kmeans(a.X.data(), 500, 3, a.centres, o);
  CHECK(cluster::label_agreement(r.labels, a.truth) >= 0.95);
}

TEST_CASE("the library rejects bad sizes and non-finite values with InvalidInput", "[kmeans]") {
  const std::vector<float> X = {0, 0, 1, 1, 2, 2};  // 3 points in 2-D
  cluster::KmeansOptions o;
  o.backend = Backend::cpu;
  using tcsolve::InvalidInput;
  CHECK_THROWS_AS(cluster::kmeans(X.data(), 3, 2, std::vector<float>(8, 0.0f), o), InvalidInput);  // k = 4 > 3
  CHECK_THROWS_AS(cluster::kmeans(X.data(), 3, 2, {}, o), InvalidInput);                           // k = 0
  CHECK_THROWS_AS(cluster::kmeans(X.data(), 3, 2, std::vector<float>(3, 0.0f), o), InvalidInput);  // not k x 2
  std::vector<float> bad = X;
  bad[3] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(cluster::kmeans(bad.data(), 3, 2, std::vector<float>(2, 0.0f), o),
                    Catch::Contains("non-finite value at (1, 1)"));
  CHECK_THROWS_AS(cluster::kmeans_plus_plus(X.data(), 3, 2, 0, 1), InvalidInput);
  o.max_iterations = 0;
  CHECK_THROWS_AS(cluster::kmeans(X.data(), 3, 2, std::vector<float>(2, 0.0f), o), InvalidInput);
}

TEST_CASE("data far from 1 in magnitude (subnormal, 1e-30, 1e21, 1e36) runs scaled by a power of two: the "
          "run at scale 1, scaled",
          "[kmeans]") {
  // The cross terms x.c are FP32: unscaled, points of order 1e-42 (subnormal) or 1e-30 gave
  // x.c = 0 and put every point in one cluster, fp64 included; 1e21 overflowed x.c. Integer data
  // (10 x iris: 0..79) times 2^s is exact even subnormal (m 2^-140 = (m 2^9) 2^-149), so every
  // scaled run must be the run at scale 1 scaled: the same labels, iterations and stop, the
  // centroids ldexp(c, s) (rounded where subnormal), the shifts ldexp(shift, 2 s), the inertia
  // 4^s times (to the centroids' rounding). k-means++ too (FP64 distances: exact at any scale).
  const tcsolve::KmeansData& d = dataset("iris.h5");
  std::vector<float> base(d.X.size());
  for (std::size_t e = 0; e < base.size(); ++e) base[e] = static_cast<float>(std::lround(10.0 * d.X[e]));
  const std::vector<float> start = cluster::kmeans_plus_plus(base.data(), d.points, d.dim, kIrisK, 3);
  for (Variant v : {Variant::fp64, Variant::fp32_simt, Variant::ec_fp16}) {
    for (double tol : {0.0, 1e-3}) {
      cluster::KmeansOptions o;
      o.variant = v;
      o.backend = Backend::cpu;
      o.tol = tol;
      const cluster::KmeansResult ref = cluster::kmeans(base.data(), d.points, d.dim, start, o);
      CHECK(ref.scale_exponent == 0);
      for (int s : {-140, -100, -60, 70, 120}) {
        INFO(tcsolve::to_string(v) << ", tol " << tol << ", scale 2^" << s);
        std::vector<float> X(base.size());
        for (std::size_t e = 0; e < X.size(); ++e) X[e] = std::ldexp(base[e], s);
        std::vector<float> init = cluster::kmeans_plus_plus(X.data(), d.points, d.dim, kIrisK, 3);
        for (std::size_t e = 0; e < init.size(); ++e) CHECK(init[e] == std::ldexp(start[e], s));
        const cluster::KmeansResult r = cluster::kmeans(X.data(), d.points, d.dim, init, o);
        CHECK(r.scale_exponent != 0);
        CHECK(r.labels == ref.labels);
        CHECK(r.iterations == ref.iterations);
        CHECK(r.stop == ref.stop);
        REQUIRE(r.centroids.size() == ref.centroids.size());
        for (std::size_t e = 0; e < r.centroids.size(); ++e) CHECK(r.centroids[e] == std::ldexp(ref.centroids[e], s));
        for (std::size_t i = 0; i < r.history.size(); ++i)
          CHECK(r.history[i].shift == std::ldexp(ref.history[i].shift, 2 * s));
        CHECK(r.inertia == Approx(std::ldexp(ref.inertia, 2 * s)).epsilon(s < -126 ? 1e-2 : 1e-12));
        // the inertia is that of the centroids returned
        CHECK(r.inertia == cluster::kmeans_inertia(X.data(), d.points, d.dim, r.labels, r.centroids));
      }
    }
  }
  // Unscaled, 2^-100 put every point in one cluster (x.c = 0): the labels above are iris's three.
  cluster::KmeansOptions o;
  o.backend = Backend::cpu;
  o.variant = Variant::fp64;
  const cluster::KmeansResult ref = cluster::kmeans(base.data(), d.points, d.dim, start, o);
  CHECK(std::set<int>(ref.labels.begin(), ref.labels.end()).size() == 3);
}

TEST_CASE("a set interrupt flag stops k-means++ and kmeans (Interrupted), whatever the assignment", "[kmeans]") {
  // The C API's tcsolveInterrupt sets the handle's flag; tcsolveKmeans passes it as
  // GemmOptions::interrupt, tcsolveKmeansPlusPlus as kmeans_plus_plus's interrupt.
  const tcsolve::KmeansData& d = dataset("iris.h5");
  std::atomic<bool> flag{true};
  CHECK_THROWS_AS(cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, kIrisK, 1, Backend::cpu, nullptr, &flag),
                  tcsolve::Interrupted);
  const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, kIrisK, 1);
  cluster::KmeansOptions o;
  o.backend = Backend::cpu;
  o.gemm.interrupt = &flag;
  for (cluster::KmeansAssign assign : {cluster::KmeansAssign::unfused, cluster::KmeansAssign::fused}) {
    for (Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
      INFO(cluster::to_string(assign) << ", " << tcsolve::to_string(v));
      o.assign = assign;
      o.variant = v;
      flag = true;
      CHECK_THROWS_AS(cluster::kmeans(d.X.data(), d.points, d.dim, start, o), tcsolve::Interrupted);
      flag = false;
      CHECK(cluster::kmeans(d.X.data(), d.points, d.dim, start, o).iterations > 1);
    }
  }
}

// --- the command --------------------------------------------------------------------------------

TEST_CASE("tcsolve kmeans --json: the docs/architecture.md fields; --output writes labels, centroids and inertia",
          "[kmeans][cli]") {
  TempDir dir;
  const std::string out = dir.path("iris_labels.h5");
  const cli::CommandResult r =
      cli::run_tcsolve("kmeans --input '" + input("iris.h5") +
                       "' --k 3 --variant ec-fp16 --backend cpu --json --output '" + out + "'");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const cli::Json j = cli::require_one_object(r);
  for (const char* key : {"command", "variant", "backend", "points", "dim", "k", "iterations", "inertia",
                          "time_s", "agreement_vs_fp64", "resolved_variant", "time_per_iteration_s"})
    CHECK(j.find(key) != nullptr);
  CHECK(j.find("command")->string == "kmeans");
  CHECK(j.find("variant")->string == "ec-fp16");
  CHECK(j.find("backend")->string == "cpu");
  CHECK(j.find("points")->number == 150);
  CHECK(j.find("dim")->number == 4);
  CHECK(j.find("k")->number == 3);
  CHECK(j.find("agreement_vs_fp64")->number == 1.0);
  CHECK(j.find("inertia")->number == Approx(78.8557).epsilon(1e-4));
  // the wall time of the whole command and of its parts, which it contains
  const cli::Json* wall = j.find("wall_time_s");
  REQUIRE(wall != nullptr);
  double parts = 0;
  for (const char* key : {"input", "seeding", "run", "agreement", "output"}) {
    INFO(key);
    REQUIRE(wall->find(key) != nullptr);
    CHECK(wall->find(key)->number >= 0);
    parts += wall->find(key)->number;
  }
  CHECK(wall->find("run")->number >= j.find("time_s")->number);
  CHECK(wall->find("total")->number >= parts);

  // The file: labels int32 (150), centroids float32 (3 x 4), inertia float64 = the JSON's.
  const hid_t f = H5Fopen(out.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  for (const auto& [name, cls, size, rank] :
       {std::tuple{"labels", H5T_INTEGER, 4, 1}, std::tuple{"centroids", H5T_FLOAT, 4, 2}}) {
    const hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    REQUIRE(ds >= 0);
    const hid_t type = H5Dget_type(ds), space = H5Dget_space(ds);
    CHECK(H5Tget_class(type) == cls);
    CHECK(H5Tget_size(type) == static_cast<std::size_t>(size));
    CHECK(H5Sget_simple_extent_ndims(space) == rank);
    H5Tclose(type);
    H5Sclose(space);
    H5Dclose(ds);
  }
  H5Fclose(f);
  const tcsolve::KmeansOutput o = tcsolve::read_kmeans_output(out);
  CHECK(o.labels.size() == 150);
  CHECK(o.k == 3);
  CHECK(o.dim == 4);
  CHECK(o.inertia == j.find("inertia")->number);

  // Refused without --force (nothing else written), accepted with it; never the input file.
  const cli::CommandResult again =
      cli::run_tcsolve("kmeans --input '" + input("iris.h5") +
                       "' --k 3 --variant fp32-simt --backend cpu --output '" + out + "'");
  CHECK(again.exit_code == 2);
  CHECK(cli::contains(again.err, "exists (use --force to overwrite)"));
  CHECK(cli::run_tcsolve("kmeans --input '" + input("iris.h5") +
                         "' --k 3 --variant fp32-simt --backend cpu --output '" + out + "' --force")
            .exit_code == 0);
  CHECK(dir.entries().size() == 1);  // no temporary file left
  const cli::CommandResult self =
      cli::run_tcsolve("kmeans --input '" + input("iris.h5") + "' --k 3 --backend cpu --output '" +
                       input("iris.h5") + "' --force");
  CHECK(self.exit_code == 2);
  CHECK(cli::contains(self.err, "is the input file"));
}

TEST_CASE("tcsolve kmeans --synthetic: blobs, k-means++ start, text summary", "[kmeans][cli]") {
  const cli::CommandResult r = cli::run_tcsolve(
      "kmeans --synthetic 2000:8 --clusters-true 5 --k 5 --seed 3 --variant fp32-simt --backend cpu --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const cli::Json j = cli::require_one_object(r);
  CHECK(j.find("input")->string == "synthetic:2000:8");
  CHECK(j.find("points")->number == 2000);
  CHECK(j.find("dim")->number == 8);
  CHECK(j.find("agreement_vs_fp64")->number >= kAgreementBar);
  // --no-agreement: no fp64 run, its wall time 0 (nothing timed but the branch)
  const cli::CommandResult skipped = cli::run_tcsolve(
      "kmeans --synthetic 2000:8 --clusters-true 5 --k 5 --seed 3 --variant fp32-simt --backend cpu --json "
      "--no-agreement");
  REQUIRE(skipped.exit_code == 0);
  const cli::Json js = cli::require_one_object(skipped);
  CHECK(js.find("agreement_vs_fp64")->type == cli::Json::Type::null);
  CHECK(js.find("wall_time_s")->find("agreement")->number < 1e-3);
  const cli::CommandResult text = cli::run_tcsolve("kmeans --input '" + input("iris_shifted.h5") +
                                                   "' --k 3 --variant fp16-tc --backend cpu --max-iter 20");
  INFO(text);
  CHECK(text.exit_code == 0);
  CHECK(cli::contains(text.out, "of the labels equal"));
}

TEST_CASE("tcsolve kmeans: data of order 1e-42 is clustered as its exactly scaled copy, and says so",
          "[kmeans][cli]") {
  TempDir dir;
  std::vector<double> tiny = iris_values();
  for (double& v : tiny) v = std::ldexp(v, -140);  // exact; float32 subnormals for |v| < 2^-126
  const std::string plain = input("iris.h5"), small = dir.path("tiny.h5");
  write_h5(small, {{"X", {150, 4}, tiny}});
  const std::string args = "' --k 3 --variant ec-fp16 --backend cpu --seed 2 --json";
  const cli::CommandResult a = cli::run_tcsolve("kmeans --input '" + plain + args);
  const cli::CommandResult b = cli::run_tcsolve("kmeans --input '" + small + args);
  INFO(a);
  INFO(b);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  const cli::Json ja = cli::require_one_object(a), jb = cli::require_one_object(b);
  CHECK(ja.find("scale_exponent")->number == 0);
  CHECK(jb.find("scale_exponent")->number != 0);
  // The same clustering (the scaled copy is iris itself): the same iterations. (The inertia is
  // recomputed from centroids of order 1e-42, float32 subnormals with few bits: not compared.)
  CHECK(jb.find("iterations")->number == ja.find("iterations")->number);
  const cli::CommandResult text = cli::run_tcsolve("kmeans --input '" + small + "' --k 3 --backend cpu --seed 2");
  INFO(text);
  CHECK(cli::contains(text.out, "the points were clustered as X 2^"));
}

TEST_CASE("tcsolve kmeans: bad input exits 2 naming the file, dataset and problem", "[kmeans][cli]") {
  TempDir dir;
  const std::vector<double> iris = iris_values();
  std::vector<double> with_nan = iris;
  with_nan[1 * 4 + 2] = std::numeric_limits<double>::quiet_NaN();
  const std::string no_x = dir.path("no_x.h5"), flat = dir.path("flat.h5"), cube = dir.path("cube.h5"),
                    nan = dir.path("nan.h5"), bad_init = dir.path("bad_init.h5"),
                    init3 = dir.path("init3.h5");
  write_h5(no_x, {{"Y", {150, 4}, iris}});
  write_h5(flat, {{"X", {600}, iris}});
  write_h5(cube, {{"X", {150, 2, 2}, iris}});
  write_h5(nan, {{"X", {150, 4}, with_nan}});
  write_h5(bad_init, {{"X", {150, 4}, iris}, {"init", {3, 5}, std::vector<double>(15, 1.0)}});
  write_h5(init3,
           {{"X", {150, 4}, iris}, {"init", {3, 4}, std::vector<double>(iris.begin(), iris.begin() + 12)}});

  struct Case {
    std::string args, message;
  };
  const std::string iris_file = "'" + input("iris.h5") + "'";
  const std::vector<Case> cases = {
      {"--input '" + no_x + "' --k 3", "no_x.h5: X: dataset missing"},
      {"--input '" + flat + "' --k 3", "flat.h5: X: 1-D (600), expected 2-D (points x dim)"},
      {"--input '" + cube + "' --k 3", "cube.h5: X: 3-D (150 x 2 x 2), expected 2-D (points x dim)"},
      {"--input " + iris_file + " --k 151", "iris.h5: X: 150 points, fewer than --k 151"},
      {"--input " + iris_file + " --k 0", "--k must be a positive integer (at most 2147483647), got 0"},
      {"--input " + iris_file + " --k -2", "--k must be a positive integer (at most 2147483647), got -2"},
      {"--input '" + nan + "' --k 3", "nan.h5: X: contains NaN at (1, 2)"},
      {"--input '" + bad_init + "'", "bad_init.h5: init: 3 x 5, expected k x 4"},
      {"--input '" + init3 + "' --k 2", "init3.h5: init: 3 x 4, expected k = 2 rows"},
      {"--input " + iris_file, "--k is required"},
      {"--input '" + dir.path("absent.h5") + "' --k 3", "absent.h5: no such file"},
      {"--k 3", "give exactly one of --input DATA.h5 and --synthetic N:D"},
      {"--input " + iris_file + " --synthetic 10:2 --k 3", "give exactly one of"},
      {"--synthetic 10x2 --k 3", "--synthetic expects N:D"},
      {"--input " + iris_file + " --k 3 --variant fp17", "fp17"},
      {"--input " + iris_file + " --k 3 --tol -1", "--tol must be a finite number >= 0"},
  };
  for (const Case& c : cases) {
    const cli::CommandResult r = cli::run_tcsolve("kmeans --backend cpu " + c.args);
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(cli::contains(r.err, c.message));
    CHECK(r.out.empty());
  }
  // A file's init of the right shape is used as the start (k from its rows).
  const cli::CommandResult ok =
      cli::run_tcsolve("kmeans --backend cpu --variant fp32-simt --json --input '" + init3 + "'");
  INFO(ok);
  CHECK(ok.exit_code == 0);
  if (ok.exit_code == 0) CHECK(cli::require_one_object(ok).find("init")->string == "file");
  // A variant that the cpu backend lacks: exit 4.
  CHECK(cli::run_tcsolve("kmeans --backend cpu --input " + iris_file + " --k 3 --variant cublas-tf32")
            .exit_code == 4);
}

// --- sample weights ---------------------------------------------------------------------------

namespace {

/// 3 groups of 2-D points whose coordinates are multiples of 1/8 below 2^4, and weights in
/// {0, 1, 2, 3} (a quarter of them 0): every FP64 sum of w x, of repeated x and of w is exact.
struct WeightedPoints {
  std::vector<float> X;  ///< 2 x n, column-major
  std::vector<double> w;
  int n = 0;
};

WeightedPoints weighted_points(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  WeightedPoints p;
  p.n = n;
  for (int i = 0; i < n; ++i) {
    const int g = static_cast<int>(rng() % 3);
    p.X.push_back(static_cast<float>(g * 4 + static_cast<int>(rng() % 24) * 0.125));
    p.X.push_back(static_cast<float>((g == 1 ? 6 : 0) + static_cast<int>(rng() % 24) * 0.125));
    p.w.push_back(static_cast<double>(rng() % 4));
  }
  return p;
}

/// The points repeated w_i times (weight 0: gone), and for each point its first copy's row.
std::vector<float> repeated(const WeightedPoints& p, std::vector<int>& first_row) {
  std::vector<float> R;
  first_row.assign(static_cast<std::size_t>(p.n), -1);
  for (int i = 0; i < p.n; ++i) {
    if (p.w[static_cast<std::size_t>(i)] > 0) first_row[static_cast<std::size_t>(i)] = static_cast<int>(R.size() / 2);
    for (int c = 0; c < static_cast<int>(p.w[static_cast<std::size_t>(i)]); ++c)
      R.insert(R.end(), p.X.begin() + 2 * i, p.X.begin() + 2 * i + 2);
  }
  return R;
}

}  // namespace

TEST_CASE("weighted K-means with integer weights is K-means on the points repeated w_i times, a weight of 0 "
          "removes the point (multiples of 1/8: every FP64 sum exact, so bitwise)",
          "[kmeans]") {
  const WeightedPoints p = weighted_points(400, 21);
  std::vector<int> first_row;
  const std::vector<float> R = repeated(p, first_row);
  const int rn = static_cast<int>(R.size() / 2);
  // the start: the first 3 points of positive weight (copies of the same rows of R)
  std::vector<float> start;
  for (int i = 0; i < p.n && start.size() < 6; ++i)
    if (p.w[static_cast<std::size_t>(i)] > 0) start.insert(start.end(), p.X.begin() + 2 * i, p.X.begin() + 2 * i + 2);
  for (Variant v : {Variant::fp64, Variant::fp32_simt, Variant::ec_fp16}) {
    INFO(tcsolve::to_string(v));
    cluster::KmeansOptions o;
    o.variant = v;
    o.backend = Backend::cpu;
    const cluster::KmeansResult rep = cluster::kmeans(R.data(), rn, 2, start, o);
    o.weights = p.w.data();
    const cluster::KmeansResult wtd = cluster::kmeans(p.X.data(), p.n, 2, start, o);
    // exact sums: the same FP64 means, rounded once to FP32 -- the same bits
    CHECK(wtd.centroids == rep.centroids);
    CHECK(wtd.iterations == rep.iterations);
    CHECK(wtd.stop == rep.stop);
    CHECK(wtd.empty_clusters == rep.empty_clusters);
    for (int i = 0; i < p.n; ++i)
      if (first_row[static_cast<std::size_t>(i)] >= 0)
        CHECK(wtd.labels[static_cast<std::size_t>(i)] ==
              rep.labels[static_cast<std::size_t>(first_row[static_cast<std::size_t>(i)])]);
    // inertia: n rounded products w d^2 summed against rn terms summed, each sum of non-negative
    // terms within its count times u64 (2^-53) relative
    CHECK(std::abs(wtd.inertia - rep.inertia) <= (p.n + 2.0 * rn) * 0x1p-53 * rep.inertia);
  }
}

TEST_CASE("weights of 1 give the unweighted k-means++ start and Lloyd run bitwise; null weights are the "
          "unweighted run",
          "[kmeans]") {
  // 1 x = x and the sums of ones are exact: every number of the weighted paths equals the
  // unweighted one's (the first draw walks 1, 2, 3, ... to floor(u n), the uniform index).
  const cluster::Blobs b = cluster::make_blobs(3000, 5, 6, 8);
  const std::vector<double> ones(3000, 1.0);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const std::vector<float> plain = cluster::kmeans_plus_plus(b.X.data(), 3000, 5, 6, seed);
    const std::vector<float> weighted =
        cluster::kmeans_plus_plus(b.X.data(), 3000, 5, 6, seed, Backend::cpu, nullptr, nullptr, ones.data());
    CHECK(weighted == plain);
    cluster::KmeansOptions o;
    o.variant = Variant::ec_fp16;
    o.backend = Backend::cpu;
    o.tol = 1e-4;
    const cluster::KmeansResult a = cluster::kmeans(b.X.data(), 3000, 5, plain, o);
    o.weights = ones.data();
    const cluster::KmeansResult c = cluster::kmeans(b.X.data(), 3000, 5, plain, o);
    CHECK(c.labels == a.labels);
    CHECK(c.centroids == a.centroids);
    CHECK(c.inertia == a.inertia);
    CHECK(c.iterations == a.iterations);
  }
}

TEST_CASE("a cluster whose points all weigh 0 is empty: its centroid is kept", "[kmeans]") {
  // points 0..9 near the origin (weight 1), points 10..13 near (100, 100) with weight 0; the
  // start has a centroid there: its cluster weighs 0, so it stays where it started
  std::vector<float> X;
  std::vector<double> w;
  for (int i = 0; i < 14; ++i) {
    const float base = i < 10 ? 0.0f : 100.0f;
    X.push_back(base + 0.25f * static_cast<float>(i % 4));
    X.push_back(base + 0.5f * static_cast<float>(i % 3));
    w.push_back(i < 10 ? 1.0 : 0.0);
  }
  const std::vector<float> start = {0, 0, 0.75f, 1.0f, 99, 99};
  cluster::KmeansOptions o;
  o.backend = Backend::cpu;
  o.variant = Variant::fp64;
  o.weights = w.data();
  const cluster::KmeansResult r = cluster::kmeans(X.data(), 14, 2, start, o);
  CHECK(r.empty_clusters == 1);
  CHECK(r.centroids[4] == 99.0f);
  CHECK(r.centroids[5] == 99.0f);
  for (int i = 10; i < 14; ++i) CHECK(r.labels[static_cast<std::size_t>(i)] == 2);
  // the inertia has no term of the weight-0 points: the weighted sum over points 0..9
  double inertia = 0;
  for (int i = 0; i < 10; ++i) {
    const int l = r.labels[static_cast<std::size_t>(i)];
    for (int d = 0; d < 2; ++d) {
      const double diff = static_cast<double>(X[static_cast<std::size_t>(2 * i + d)]) -
                          static_cast<double>(r.centroids[static_cast<std::size_t>(2 * l + d)]);
      inertia += diff * diff;
    }
  }
  CHECK(r.inertia == Approx(inertia).epsilon(1e-14));
}

TEST_CASE("weighted k-means++ draws its first centre with probability w / sum w and the next with "
          "probability w D(x)^2 / sum w D^2; a point of weight 0 is never drawn (chi-square, false-alarm rate "
          "1e-6 per statistic)",
          "[kmeans]") {
  // The unweighted test's 12 points with weights 0..3 (point 4 has weight 0), k = 2, 24000 seeds,
  // Pearson's statistics over the cells with an expected count >= 5 against the chi-square
  // quantile of probability 1 - 1e-6 (Wilson-Hilferty, z = 4.753).
  const int points = 12, runs = 24000;
  const std::vector<float> x = {0, 1, 3, 4, 8, 9, 15, 16, 17, 30, 31, 45};
  const std::vector<double> w = {1, 2, 3, 1, 0, 2, 3, 1, 2, 3, 1, 2};
  const double W = 21;
  auto quantile = [](int df) {
    const double z = 4.753, a = 2.0 / (9.0 * df);
    return df * std::pow(1 - a + z * std::sqrt(a), 3);
  };
  std::vector<int> first(points, 0);
  std::vector<std::vector<int>> second(points, std::vector<int>(points, 0));
  int bad = 0;
  for (int r = 0; r < runs; ++r) {
    const std::vector<float> c = cluster::kmeans_plus_plus(x.data(), points, 1, 2, 5000 + static_cast<std::uint64_t>(r),
                                                           Backend::cpu, nullptr, nullptr, w.data());
    const auto f = std::find(x.begin(), x.end(), c[0]) - x.begin();
    const auto g = std::find(x.begin(), x.end(), c[1]) - x.begin();
    if (f >= points || g >= points || f == g || f == 4 || g == 4) {  // weight 0 drawn, or f again
      ++bad;
      continue;
    }
    ++first[static_cast<std::size_t>(f)];
    ++second[static_cast<std::size_t>(f)][static_cast<std::size_t>(g)];
  }
  CHECK(bad == 0);
  double chi_first = 0;
  int df_first = -1;
  for (int i = 0; i < points; ++i) {
    const double e = runs * w[static_cast<std::size_t>(i)] / W;
    if (e < 5) continue;
    chi_first += (first[static_cast<std::size_t>(i)] - e) * (first[static_cast<std::size_t>(i)] - e) / e;
    ++df_first;
  }
  CHECK(chi_first <= quantile(df_first));
  // the second picks against the law w D^2 / sum w D^2 (and, for the test's power, D^2 alone)
  auto chi_second = [&](bool weighted, int& df) {
    double chi = 0;
    df = 0;
    for (int f = 0; f < points; ++f) {
      std::vector<double> p(points);
      double sum = 0;
      for (int i = 0; i < points; ++i) {
        const double d = x[static_cast<std::size_t>(i)] - x[static_cast<std::size_t>(f)];
        sum += p[static_cast<std::size_t>(i)] = (weighted ? w[static_cast<std::size_t>(i)] : 1.0) * d * d;
      }
      chi += pearson(first[static_cast<std::size_t>(f)], p, sum, second[static_cast<std::size_t>(f)], df);
    }
    return chi;
  };
  int df = 0, df_plain = 0;
  const double chi_w = chi_second(true, df), chi_plain = chi_second(false, df_plain);
  INFO("first: chi2 " << chi_first << " (df " << df_first << "); second against w D^2: chi2 " << chi_w << " (df "
                      << df << ", quantile " << quantile(df) << "); against D^2: " << chi_plain << " (df "
                      << df_plain << ")");
  REQUIRE(df >= 50);
  CHECK(chi_w <= quantile(df));
  CHECK(chi_plain > quantile(df_plain));
}

TEST_CASE("bad sample weights are refused with InvalidInput naming the first bad one", "[kmeans]") {
  const std::vector<float> X = {0, 0, 1, 1, 2, 2, 3, 3};  // 4 points in 2-D
  const std::vector<float> init = {0, 0, 3, 3};
  cluster::KmeansOptions o;
  o.backend = Backend::cpu;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<std::vector<double>, std::string>> cases = {
      {{1, -0.5, 1, 1}, "weight 1 is -0.5"},
      {{1, 1, nan, 1}, "weight 2 is nan"},
      {{1, 1, 1, inf}, "weight 3 is inf"},
      {{0, 0, 0, 0}, "every sample weight is 0"}};
  for (const auto& [w, message] : cases) {
    o.weights = w.data();
    CHECK_THROWS_WITH(cluster::kmeans(X.data(), 4, 2, init, o), Catch::Contains(message));
    CHECK_THROWS_AS(cluster::kmeans(X.data(), 4, 2, init, o), tcsolve::InvalidInput);
    CHECK_THROWS_WITH(cluster::kmeans_plus_plus(X.data(), 4, 2, 2, 1, Backend::cpu, nullptr, nullptr, w.data()),
                      Catch::Contains("kmeans++: " + message));
  }
}

// --- GPU ----------------------------------------------------------------------------------------

TEST_CASE(
    "on the GPU, the cuda backend reproduces the cpu backend's labels (fp32-simt, ec-fp16; iris, "
    "iris_shifted, blobs in chunks)",
    "[kmeans][gpu]") {
  if (!tcsolve::cuda::device_available()) {
    WARN("no CUDA device: skipping the cuda K-means test (" << tcsolve::cuda::device_name() << ")");
    return;
  }
  // Labels are compared exactly: on iris_shifted, the largest FP32 error of x.c (a few units of
  // 2^-24 * 2 |x||c| ~ 5e-3) is well below the smallest score gap at convergence (0.06, measured
  // in FP64), and the fp32-simt run on the cpu matches fp64 there.
  for (const char* file : {"iris.h5", "iris_shifted.h5"}) {
    const tcsolve::KmeansData& d = dataset(file);
    const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, kIrisK, 1);
    for (Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
      INFO(file << ": " << tcsolve::to_string(v));
      const cluster::KmeansResult cpu = run(d, start, v, Backend::cpu);
      const cluster::KmeansResult gpu = run(d, start, v, Backend::cuda);
      CHECK(gpu.backend == Backend::cuda);
      CHECK(gpu.labels == cpu.labels);
      CHECK(gpu.iterations == cpu.iterations);
      // Same labels in every iteration: the same sums (both in point order), so the same
      // centroids; the inertia's FP64 reduction order differs (far below 1e-6 relative).
      CHECK(gpu.inertia == Approx(cpu.inertia).epsilon(1e-6));
    }
  }
  // Blobs processed in 7 chunks of G on both backends.
  const cluster::Blobs b = cluster::make_blobs(20000, 32, 16, 5);
  const std::vector<float> start = cluster::kmeans_plus_plus(b.X.data(), 20000, 32, 16, 5);
  for (Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
    INFO("blobs: " << tcsolve::to_string(v));
    cluster::KmeansOptions o;
    o.variant = v;
    o.chunk_points = 3000;
    o.max_iterations = 20;
    o.backend = Backend::cpu;
    const cluster::KmeansResult cpu = cluster::kmeans(b.X.data(), 20000, 32, start, o);
    o.backend = Backend::cuda;
    const cluster::KmeansResult gpu = cluster::kmeans(b.X.data(), 20000, 32, start, o);
    // 20 Lloyd iterations amplify last-bit differences of the cross term at near-ties (the
    // hardware accumulator is not the emulation's model): measured on an H100, ec-fp16 kept
    // 99.7% of the cpu labels and the inertia within 6e-6. The bar of the demo is agreement
    // with fp64 on one backend (>= 0.999); across backends the run must agree to 99% and the
    // inertia to 1e-4 (a real indexing or reduction error moves both by far more).
    CHECK(cluster::label_agreement(gpu.labels, cpu.labels) >= 0.99);
    CHECK(gpu.inertia == Approx(cpu.inertia).epsilon(1e-4));
  }
}

TEST_CASE("on the GPU, weighted K-means gives the cpu backend's weighted labels and centroids bitwise, and "
          "the weighted k-means++ start of the cpu",
          "[kmeans][gpu]") {
  if (!tcsolve::cuda::device_available()) {
    WARN("no CUDA device: skipping the weighted cuda K-means test (" << tcsolve::cuda::device_name() << ")");
    return;
  }
  // fp64 cross terms: the same labels in every iteration on both backends, so the same weighted
  // sums in point order (cluster_sum_kernel with weights) and the same centroids, bitwise; the
  // inertia's reduction order differs (1e-12 relative is far above it)
  const cluster::Blobs b = cluster::make_blobs(5000, 8, 5, 3);
  std::mt19937_64 rng(4);
  std::vector<double> w(5000);
  for (double& v : w) v = static_cast<double>(rng() % 5) * 0.5;  // 0, 0.5, ..., 2
  const std::vector<float> start =
      cluster::kmeans_plus_plus(b.X.data(), 5000, 8, 5, 9, Backend::cpu, nullptr, nullptr, w.data());
  CHECK(cluster::kmeans_plus_plus(b.X.data(), 5000, 8, 5, 9, Backend::cuda, nullptr, nullptr, w.data()) == start);
  cluster::KmeansOptions o;
  o.variant = Variant::fp64;
  o.weights = w.data();
  o.backend = Backend::cpu;
  const cluster::KmeansResult cpu = cluster::kmeans(b.X.data(), 5000, 8, start, o);
  o.backend = Backend::cuda;
  const cluster::KmeansResult gpu = cluster::kmeans(b.X.data(), 5000, 8, start, o);
  CHECK(gpu.backend == Backend::cuda);
  CHECK(gpu.labels == cpu.labels);
  CHECK(gpu.centroids == cpu.centroids);
  CHECK(gpu.iterations == cpu.iterations);
  CHECK(gpu.empty_clusters == cpu.empty_clusters);
  CHECK(gpu.inertia == Approx(cpu.inertia).epsilon(1e-12));
  // points in device memory (Where(context)): the weighted start is drawn on the host from a
  // copy of them (the cpu's), the run reads them where they are
  namespace runtime = tcsolve::runtime;
  tcsolve::cuda::Context context;
  tcsolve::cuda::DeviceBuffer<float> X(b.X);
  CHECK(cluster::kmeans_plus_plus(X.data(), 5000, 8, 5, 9, runtime::Where(context), runtime::Memory::device, nullptr,
                                  w.data()) == start);
  o.points_memory = runtime::Memory::device;
  const cluster::KmeansResult device = cluster::kmeans(X.data(), 5000, 8, start, o, runtime::Where(context));
  CHECK(device.labels == cpu.labels);
  CHECK(device.centroids == cpu.centroids);
  // groups refuse weights (Unavailable), before any work
  if (runtime::have_nccl()) {
    runtime::DeviceGroup group = runtime::DeviceGroup::gpus({tcsolve::cuda::current_device()});
    o.points_memory = runtime::Memory::host;
    CHECK_THROWS_AS(cluster::kmeans(b.X.data(), 5000, 8, start, o, runtime::Where(group)), tcsolve::Unavailable);
    CHECK_THROWS_AS(cluster::kmeans_plus_plus(b.X.data(), 5000, 8, 5, 9, runtime::Where(group), runtime::Memory::host,
                                              nullptr, w.data()),
                    tcsolve::Unavailable);
  }
}
