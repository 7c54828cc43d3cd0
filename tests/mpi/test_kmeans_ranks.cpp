// K-means over MPI ranks on the cpu backend (tcsolve_mpi_tests, run as -np 1, 2 and 3): every
// rank reads the whole committed data set (the reference), runs the single-process K-means on
// it, then the distributed one on its own rows (kmeans_rows) through an mpi() DeviceGroup, and
// checks (kmeans.hpp, "Groups"):
//   - on integer-valued data (iris x 10; every FP64 sum exact in any order) fp64 and fp32-simt
//     give bitwise the single-process labels, centroids, iterations and stop, and the inertia
//     to the rounding of a sum of 150 positive terms taken in another order (150 u64 relative);
//   - on iris and wine as they are the labels equal the single process' and each centroid
//     coordinate is within one FP32 ulp of it (the FP64 sums differ by a few u64 in another
//     order, then round once to FP32);
//   - the distributed k-means++ gives bitwise the single-process centroids for several seeds
//     and k, and every rank the same;
//   - errors one rank meets alone (a non-finite value in its rows) and errors every rank
//     meets (k above the number of points, a bad file) end every rank with the same error and
//     message, and no rank hangs.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../test_data.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/io/kmeans_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/mpi.hpp"

namespace {

namespace cluster = tcsolve::cluster;
namespace runtime = tcsolve::runtime;
using tcsolve::Variant;

tcsolve::KmeansData load(const std::string& name) {
  return tcsolve::read_kmeans_data(tcsolve::test::test_data_path("inputs/" + name));
}

/// This rank's rows of X (dim x N column-major: the rows are contiguous).
std::vector<float> my_rows(const std::vector<float>& X, std::int64_t points, int dim, const runtime::DeviceGroup& g) {
  const cluster::RowRange r = cluster::kmeans_rows(points, g.size(), g.first_member());
  return std::vector<float>(X.begin() + r.first * dim, X.begin() + (r.first + r.count) * dim);
}

/// The labels of every rank, in rank order (an allgather through the group's communicator,
/// padded to the longest share).
std::vector<int> all_labels(const std::vector<int>& mine, std::int64_t points, runtime::DeviceGroup& g) {
  runtime::Communicator& comm = *g.host_communicator();
  int most = 0;
  for (int r = 0; r < g.size(); ++r) most = std::max(most, cluster::kmeans_rows(points, g.size(), r).count);
  std::vector<int> padded(static_cast<std::size_t>(std::max(most, 1)), -1);
  std::copy(mine.begin(), mine.end(), padded.begin());
  std::vector<int> gathered(padded.size() * static_cast<std::size_t>(g.size()));
  comm.allgather(padded.data(), gathered.data(), padded.size() * sizeof(int), nullptr);
  std::vector<int> labels;
  for (int r = 0; r < g.size(); ++r) {
    const int n = cluster::kmeans_rows(points, g.size(), r).count;
    labels.insert(labels.end(), gathered.begin() + static_cast<std::ptrdiff_t>(r) * padded.size(),
                  gathered.begin() + static_cast<std::ptrdiff_t>(r) * padded.size() + n);
  }
  return labels;
}

/// Whether every rank passed `ok` (so that one rank's failure shows on all).
bool all(bool ok, runtime::DeviceGroup& g) { return g.host_communicator()->sum(std::int64_t{ok ? 0 : 1}) == 0; }

cluster::KmeansOptions cpu_options(Variant v) {
  cluster::KmeansOptions o;
  o.variant = v;
  o.backend = tcsolve::Backend::cpu;
  o.max_iterations = 100;
  return o;
}

float ulp(float x) {
  return std::nextafter(std::fabs(x), std::numeric_limits<float>::infinity()) - std::fabs(x);
}

}  // namespace

TEST_CASE("rows are dealt in 128-point blocks, in order, covering every point once", "[mpi][kmeans]") {
  for (std::int64_t n : {1, 127, 128, 150, 300, 4097, 1000000})
    for (int p = 1; p <= 5; ++p) {
      std::int64_t next = 0;
      for (int r = 0; r < p; ++r) {
        const cluster::RowRange range = cluster::kmeans_rows(n, p, r);
        CHECK(range.first == next);
        CHECK(range.first % cluster::kRowBlock == 0);
        next += range.count;
      }
      CHECK(next == n);
    }
}

TEST_CASE("integer-valued data: the ranks give bitwise the single process' K-means", "[mpi][kmeans]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  tcsolve::KmeansData d = load("iris.h5");
  for (float& x : d.X) x = std::round(x * 10.0f);  // iris has one decimal: integers to 79
  const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, 3, 5);
  const std::vector<float> rows = my_rows(d.X, d.points, d.dim, group);
  for (Variant v : {Variant::fp64, Variant::fp32_simt}) {
    INFO(tcsolve::to_string(v) << " on " << group.describe());
    const cluster::KmeansResult single = cluster::kmeans(d.X.data(), d.points, d.dim, start, cpu_options(v));
    const cluster::KmeansResult mine = cluster::kmeans(rows.data(), static_cast<int>(rows.size() / d.dim), d.dim,
                                                       start, cpu_options(v), runtime::Where(group));
    CHECK(mine.total_points == d.points);
    CHECK(mine.members == group.size());
    CHECK(all_labels(mine.labels, d.points, group) == single.labels);
    CHECK(mine.centroids == single.centroids);
    CHECK(mine.iterations == single.iterations);
    CHECK(mine.stop == single.stop);
    CHECK(std::fabs(mine.inertia - single.inertia) <= 150 * 0x1p-53 * single.inertia);
  }
}

TEST_CASE("iris and wine: the ranks give the single process' labels, centroids within an ulp", "[mpi][kmeans]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  for (const char* name : {"iris.h5", "wine.h5"}) {
    const tcsolve::KmeansData d = load(name);
    const int k = std::string(name) == "iris.h5" ? 3 : 3;
    const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, k, 11);
    const std::vector<float> rows = my_rows(d.X, d.points, d.dim, group);
    for (Variant v : {Variant::fp64, Variant::ec_fp16, Variant::auto_}) {
      INFO(name << ", " << tcsolve::to_string(v) << " on " << group.describe());
      const cluster::KmeansResult single = cluster::kmeans(d.X.data(), d.points, d.dim, start, cpu_options(v));
      const cluster::KmeansResult mine = cluster::kmeans(rows.data(), static_cast<int>(rows.size() / d.dim), d.dim,
                                                         start, cpu_options(v), runtime::Where(group));
      CHECK(all_labels(mine.labels, d.points, group) == single.labels);
      REQUIRE(mine.centroids.size() == single.centroids.size());
      for (std::size_t i = 0; i < single.centroids.size(); ++i)
        CHECK(std::fabs(mine.centroids[i] - single.centroids[i]) <= ulp(single.centroids[i]));
      CHECK(mine.iterations == single.iterations);
    }
  }
}

TEST_CASE("the distributed k-means++ gives bitwise the single-process centroids", "[mpi][kmeans]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  // iris, wine, and 5000 points with duplicates (D^2 = 0 draws) over several 4096-point blocks
  tcsolve::KmeansData blobs;
  {
    const cluster::Blobs b = cluster::make_blobs(5000, 3, 7, 9);
    blobs.X = b.X;
    blobs.points = 5000;
    blobs.dim = 3;
    for (int i = 4000; i < 5000; ++i)
      for (int c = 0; c < 3; ++c) blobs.X[static_cast<std::size_t>(i) * 3 + c] = blobs.X[c];
  }
  const std::vector<std::pair<std::string, tcsolve::KmeansData>> sets = {
      {"iris", load("iris.h5")}, {"wine", load("wine.h5")}, {"blobs", blobs}};
  for (const auto& [name, d] : sets)
    for (int k : {1, 3, 17})
      for (std::uint64_t seed : {1u, 2u, 99u}) {
        INFO(name << " k = " << k << " seed " << seed << " on " << group.describe());
        const std::vector<float> rows = my_rows(d.X, d.points, d.dim, group);
        const std::vector<float> single = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, k, seed);
        const std::vector<float> mine = cluster::kmeans_plus_plus(rows.data(), static_cast<int>(rows.size() / d.dim),
                                                                  d.dim, k, seed, runtime::Where(group));
        CHECK(all(mine == single, group));
      }
}

TEST_CASE("a failure on one rank ends every rank with the same error", "[mpi][kmeans]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  const tcsolve::KmeansData d = load("iris.h5");
  const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, 3, 5);
  std::vector<float> rows = my_rows(d.X, d.points, d.dim, group);
  const int mine = static_cast<int>(rows.size() / d.dim);
  const int last = group.size() - 1;
  SECTION("a NaN in the last rank's rows") {
    const cluster::RowRange r = cluster::kmeans_rows(d.points, group.size(), last);
    std::vector<float> bad = rows;
    if (group.first_member() == last) bad[static_cast<std::size_t>(r.count - 1) * d.dim + 2] = std::nanf("");
    const std::string expected = "kmeans: X has a non-finite value at (" + std::to_string(d.points - 1) + ", 2)";
    CHECK_THROWS_WITH(cluster::kmeans(bad.data(), mine, d.dim, start, cpu_options(Variant::fp64), runtime::Where(group)),
                      expected);
    CHECK_THROWS_WITH(cluster::kmeans_plus_plus(bad.data(), mine, d.dim, 3, 1, runtime::Where(group)), expected);
  }
  SECTION("k above the number of points") {
    const std::vector<float> too_many(static_cast<std::size_t>(d.dim) * 151, 1.0f);
    CHECK_THROWS_AS(cluster::kmeans(rows.data(), mine, d.dim, too_many, cpu_options(Variant::fp64), runtime::Where(group)),
                    tcsolve::InvalidInput);
    CHECK_THROWS_WITH(cluster::kmeans_plus_plus(rows.data(), mine, d.dim, 151, 1, runtime::Where(group)),
                      "kmeans: k = 151 exceeds the number of points (150)");
  }
  SECTION("rows that are not kmeans_rows'") {
    if (group.size() > 1) {
      const int wrong = group.first_member() == 0 ? mine - 1 : mine;  // rank 0 holds one row too few
      CHECK_THROWS_AS(cluster::kmeans(rows.data(), wrong, d.dim, start, cpu_options(Variant::fp64), runtime::Where(group)),
                      tcsolve::InvalidInput);
    }
  }
  // the group still works after agreed errors
  const cluster::KmeansResult ok = cluster::kmeans(rows.data(), mine, d.dim, start, cpu_options(Variant::fp64),
                                                   runtime::Where(group));
  CHECK(ok.total_points == d.points);
}
