// The fused K-means assignment and the seeding on the device ([kmeans], issue 19). Claims:
//   - nearest_columns (cpu) is the argmin of weights[j] - 2 D(i, j) with the lowest j on ties:
//     exact integer data (every product and sum exact in FP16 and FP32, so the scores and their
//     ties are exact) against a brute-force FP64 scan, ties placed across the 128-column tiles;
//   - the fused assignment gives the same labels, centroids and iterations as the unfused one
//     on the committed data sets and on integer blobs with ties (cpu backend);
//   - [gpu] the same on the device (ec-fp16, ec-tf32, auto: bitwise the same D), and the device
//     fp32-simt kernel's labels are the cpu model's (FP32 FMAs in k order, bitwise);
//   - [gpu] k-means++ on the device returns bitwise the host's centroids for a seed;
//   - [gpu] a run and the seeding on the caller's non-blocking stream (KmeansOptions::stream)
//     give bitwise the labels and centroids of the legacy default stream.
#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/io/kmeans_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "test_data.hpp"

#if defined(TCSOLVE_HAVE_CUDA)
#include "cuda_test_util.hpp"  // tcsolve::test::Stream
#endif

namespace {

namespace cluster = tcsolve::cluster;
using tcsolve::Backend;
using tcsolve::Variant;

/// Integer points and centroids in [-4, 4]^dim: every product and partial sum is an integer far
/// below 2^11, exact in FP16, TF32 and FP32, so D and the FP64 scores are exact and equal
/// distances tie exactly. Centroid j + 128 (and j + 256) repeats centroid j: each such pair ties
/// across a tile boundary; the lower index must win.
struct TieData {
  int points, dim, k;
  std::vector<float> X, C;  // dim x points, dim x k (column-major)
  std::vector<double> weights;
};

TieData tie_data(int points, int dim, int k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-4, 4);
  TieData t{points, dim, k, std::vector<float>(static_cast<std::size_t>(points) * dim),
            std::vector<float>(static_cast<std::size_t>(k) * dim), std::vector<double>(static_cast<std::size_t>(k))};
  for (float& x : t.X) x = static_cast<float>(value(rng));
  for (int j = 0; j < k; ++j)
    for (int d = 0; d < dim; ++d)
      t.C[static_cast<std::size_t>(j) * dim + d] =
          j >= 128 && j % 3 != 0 ? t.C[static_cast<std::size_t>(j - 128) * dim + d] : static_cast<float>(value(rng));
  for (int j = 0; j < k; ++j) {
    double s = 0;
    for (int d = 0; d < dim; ++d) s += static_cast<double>(t.C[static_cast<std::size_t>(j) * dim + d]) * t.C[static_cast<std::size_t>(j) * dim + d];
    t.weights[static_cast<std::size_t>(j)] = s;
  }
  return t;
}

/// The brute-force reference: j ascending, strict <, in FP64 (exact here).
std::vector<int> brute_force(const TieData& t) {
  std::vector<int> labels(static_cast<std::size_t>(t.points));
  for (int i = 0; i < t.points; ++i) {
    double best = std::numeric_limits<double>::infinity();
    int arg = 0;
    for (int j = 0; j < t.k; ++j) {
      double dot = 0;
      for (int d = 0; d < t.dim; ++d)
        dot += static_cast<double>(t.X[static_cast<std::size_t>(i) * t.dim + d]) * t.C[static_cast<std::size_t>(j) * t.dim + d];
      const double s = t.weights[static_cast<std::size_t>(j)] - 2 * dot;
      if (s < best) best = s, arg = j;
    }
    labels[static_cast<std::size_t>(i)] = arg;
  }
  return labels;
}

int count_ties(const TieData& t) {  // points whose minimum score is shared by two centroids or more
  int ties = 0;
  for (int i = 0; i < t.points; ++i) {
    std::vector<double> s(static_cast<std::size_t>(t.k));
    for (int j = 0; j < t.k; ++j) {
      double dot = 0;
      for (int d = 0; d < t.dim; ++d)
        dot += static_cast<double>(t.X[static_cast<std::size_t>(i) * t.dim + d]) * t.C[static_cast<std::size_t>(j) * t.dim + d];
      s[static_cast<std::size_t>(j)] = t.weights[static_cast<std::size_t>(j)] - 2 * dot;
    }
    const double m = *std::min_element(s.begin(), s.end());
    ties += std::count(s.begin(), s.end(), m) > 1;
  }
  return ties;
}

const Variant kFused[] = {Variant::fp32_simt, Variant::ec_fp16, Variant::ec_tf32, Variant::auto_};

cluster::KmeansResult run(const float* X, int points, int dim, const std::vector<float>& start, Variant v,
                        cluster::KmeansAssign assign, Backend backend, int max_iter = 300) {
  cluster::KmeansOptions o;
  o.variant = v;
  o.backend = backend;
  o.assign = assign;
  o.max_iterations = max_iter;
  return cluster::kmeans(X, points, dim, start, o);
}

}  // namespace

TEST_CASE("cpu nearest_columns: the argmin of w_j - 2 x.c_j, the lowest j on ties across tiles",
          "[kmeans]") {
  const TieData t = tie_data(300, 24, 300, 11);  // 3 tiles of columns, the last one partial
  const int ties = count_ties(t);
  INFO(ties << " of " << t.points << " points tie");
  REQUIRE(ties >= 20);  // the data must exercise the rule
  const std::vector<int> expected = brute_force(t);
  for (Variant v : kFused) {
    INFO(tcsolve::to_string(v));
    std::vector<int> labels(static_cast<std::size_t>(t.points), -1);
    long long changed = 0;
    const tcsolve::GemmInfo info = tcsolve::cpu::nearest_columns(v, t.points, t.k, t.dim, t.X.data(), t.dim,
                                                                 t.C.data(), t.dim, t.weights.data(),
                                                                 labels.data(), &changed);
    CHECK(labels == expected);
    CHECK(changed == t.points);  // every label was -1
    if (v == Variant::auto_) CHECK(info.resolved == Variant::ec_fp16);  // small integers fit FP16
    changed = 0;
    tcsolve::cpu::nearest_columns(v, t.points, t.k, t.dim, t.X.data(), t.dim, t.C.data(), t.dim, t.weights.data(),
                                  labels.data(), &changed);
    CHECK(changed == 0);
  }
  std::vector<int> labels(static_cast<std::size_t>(t.points));
  CHECK_THROWS_AS(tcsolve::cpu::nearest_columns(Variant::fp16_tc, t.points, t.k, t.dim, t.X.data(), t.dim,
                                                t.C.data(), t.dim, t.weights.data(), labels.data(), nullptr),
                  tcsolve::Unavailable);
  CHECK_THROWS_AS(tcsolve::cpu::nearest_columns(Variant::ec_fp16, t.points, t.k, t.dim, t.X.data(), t.dim - 1,
                                                t.C.data(), t.dim, t.weights.data(), labels.data(), nullptr),
                  tcsolve::InvalidInput);
}

TEST_CASE("the fused assignment gives the unfused labels on the committed data sets and on blobs with ties",
          "[kmeans]") {
  for (const char* file : {"iris.h5", "wine.h5", "iris_shifted.h5"}) {
    const tcsolve::KmeansData d = tcsolve::read_kmeans_data(tcsolve::test::test_data_path(std::string("inputs/") + file));
    const std::vector<float> start = cluster::kmeans_plus_plus(d.X.data(), d.points, d.dim, 5, 3);
    for (Variant v : {Variant::ec_fp16, Variant::ec_tf32, Variant::auto_}) {
      INFO(file << ": " << tcsolve::to_string(v));
      const cluster::KmeansResult u = run(d.X.data(), d.points, d.dim, start, v, cluster::KmeansAssign::unfused, Backend::cpu);
      const cluster::KmeansResult f = run(d.X.data(), d.points, d.dim, start, v, cluster::KmeansAssign::fused, Backend::cpu);
      CHECK(u.assign == cluster::KmeansAssign::unfused);
      CHECK(f.assign == cluster::KmeansAssign::fused);
      CHECK(f.labels == u.labels);
      CHECK(f.centroids == u.centroids);
      CHECK(f.iterations == u.iterations);
    }
  }
  // Integer blobs, one assignment from centroids with exact ties across tile boundaries: every
  // fused variant (fp32-simt's FMAs included: exact here) gives the unfused labels.
  const TieData t = tie_data(2000, 16, 384, 5);
  REQUIRE(count_ties(t) > 100);
  const std::vector<int> expected = brute_force(t);
  for (Variant v : kFused) {
    INFO("ties: " << tcsolve::to_string(v));
    const cluster::KmeansResult u = run(t.X.data(), t.points, t.dim, t.C, v, cluster::KmeansAssign::unfused, Backend::cpu, 1);
    const cluster::KmeansResult f = run(t.X.data(), t.points, t.dim, t.C, v, cluster::KmeansAssign::fused, Backend::cpu, 1);
    CHECK(u.labels == expected);
    CHECK(f.labels == expected);
  }
  // automatic is unfused on the cpu; fused where there is no fused path is refused
  const cluster::KmeansResult a = run(t.X.data(), 200, t.dim, std::vector<float>(t.C.begin(), t.C.begin() + 16 * 8),
                                    Variant::ec_fp16, cluster::KmeansAssign::automatic, Backend::cpu, 1);
  CHECK(a.assign == cluster::KmeansAssign::unfused);
  CHECK_THROWS_AS(run(t.X.data(), 200, t.dim, std::vector<float>(t.C.begin(), t.C.begin() + 16 * 8), Variant::fp64,
                      cluster::KmeansAssign::fused, Backend::cpu, 1),
                  tcsolve::Unavailable);
  CHECK(cluster::parse_kmeans_assign("fused") == cluster::KmeansAssign::fused);
  CHECK_THROWS_AS(cluster::parse_kmeans_assign("fast"), tcsolve::InvalidInput);
}

TEST_CASE("on the GPU, the fused assignment gives the unfused labels, and the SIMT kernel the cpu model's",
          "[kmeans][gpu]") {
  if (!tcsolve::cuda::device_available()) {
    WARN("no CUDA device: skipping the fused K-means test (" << tcsolve::cuda::device_name() << ")");
    return;
  }
  // one assignment on integer data with ties: exact on both backends, so every variant matches
  // the brute force
  const TieData t = tie_data(5000, 40, 700, 9);
  const std::vector<int> expected = brute_force(t);
  for (Variant v : kFused) {
    INFO("ties: " << tcsolve::to_string(v));
    if (!tcsolve::cuda::nearest_columns_available(v)) {
      WARN("no fused cuda path for " << tcsolve::to_string(v) << " on " << tcsolve::cuda::device_name());
      continue;
    }
    const cluster::KmeansResult f = run(t.X.data(), t.points, t.dim, t.C, v, cluster::KmeansAssign::fused, Backend::cuda, 1);
    CHECK(f.assign == cluster::KmeansAssign::fused);
    CHECK(f.labels == expected);
  }
  // real-valued blobs, whole runs: the ec variants' fused labels are bitwise the unfused ones
  // on the device (the same D); fp32-simt's fused labels are the cpu model's in one assignment
  // For each ec variant with a fused kernel here: `iterations` unfused and fused from `start`;
  // the labels (and, when `same_iterations`, the iteration counts) must match; `more` checks
  // the fused run further.
  auto fused_matches_unfused = [&](const char* what, const std::vector<float>& X, int points, int dim,
                                   const std::vector<float>& C, int iterations, bool same_iterations, auto&& more) {
    for (Variant v : {Variant::ec_fp16, Variant::ec_tf32, Variant::auto_}) {
      if (!tcsolve::cuda::nearest_columns_available(v)) continue;
      INFO(what << ": " << tcsolve::to_string(v));
      const cluster::KmeansResult u = run(X.data(), points, dim, C, v, cluster::KmeansAssign::unfused, Backend::cuda,
                                        iterations);
      const cluster::KmeansResult f = run(X.data(), points, dim, C, v, cluster::KmeansAssign::fused, Backend::cuda,
                                        iterations);
      CHECK(f.labels == u.labels);
      if (same_iterations) CHECK(f.iterations == u.iterations);
      more(v, f);
    }
  };
  const auto nothing_more = [](Variant, const cluster::KmeansResult&) {};
  const cluster::Blobs b = cluster::make_blobs(30000, 64, 40, 3);
  const std::vector<float> start = cluster::kmeans_plus_plus(b.X.data(), 30000, 64, 300, 3);
  fused_matches_unfused("blobs", b.X, 30000, 64, start, 10, true, [](Variant v, const cluster::KmeansResult& f) {
    CHECK(f.points_prepared == (v != Variant::ec_tf32));  // the default prepare_points
  });
  {  // 200 dimensions: several k-tiles per tile (4 FP16, 7 TF32), and 3 column tiles for the
     // epilogue's skip of tiles that cannot win
    const cluster::Blobs wide = cluster::make_blobs(12000, 200, 30, 5);
    const std::vector<float> c0 = cluster::kmeans_plus_plus(wide.X.data(), 12000, 200, 300, 5);
    fused_matches_unfused("wide blobs", wide.X, 12000, 200, c0, 3, true, nothing_more);
  }
  {  // ec-fp16 on points split once against split every iteration, in chunks: the same run
    cluster::KmeansOptions o;
    o.variant = Variant::ec_fp16;
    o.backend = Backend::cuda;
    o.assign = cluster::KmeansAssign::fused;
    o.max_iterations = 10;
    o.chunk_points = 7000;  // 5 chunks, the last one partial
    const cluster::KmeansResult once = cluster::kmeans(b.X.data(), 30000, 64, start, o);
    o.prepare_points = false;
    const cluster::KmeansResult every = cluster::kmeans(b.X.data(), 30000, 64, start, o);
    CHECK(once.points_prepared);
    CHECK_FALSE(every.points_prepared);
    CHECK(once.labels == every.labels);
    CHECK(once.centroids == every.centroids);
  }
  for (Variant v : {Variant::ec_fp16, Variant::ec_tf32, Variant::auto_}) {  // the points kept in shared memory
    if (!tcsolve::cuda::nearest_columns_available(v)) continue;
    INFO("resident points: " << tcsolve::to_string(v));
    cluster::KmeansOptions o;
    o.variant = v;
    o.backend = Backend::cuda;
    o.assign = cluster::KmeansAssign::fused;
    o.max_iterations = 1;
    const cluster::KmeansResult streamed = cluster::kmeans(b.X.data(), 30000, 64, start, o);
    o.gemm.nearest_resident_points = true;
    const cluster::KmeansResult resident = cluster::kmeans(b.X.data(), 30000, 64, start, o);
    CHECK(resident.labels == streamed.labels);
    const cluster::KmeansResult ties = run(t.X.data(), t.points, t.dim, t.C, v, cluster::KmeansAssign::fused,
                                         Backend::cuda, 1);  // (streamed, as above)
    o.max_iterations = 1;
    const cluster::KmeansResult ties_resident = cluster::kmeans(t.X.data(), t.points, t.dim, t.C, o);
    CHECK(ties_resident.labels == ties.labels);
  }
  // the epilogue's other paths (wgmma_nearest.cuh): scales whose unscaling leaves FP32's normal
  // exponents (the exact path: 2^-70), weights beyond FP32's range (W = inf: every column in
  // FP64, 2^70), and points of mixed magnitudes (2^+-40 by point); the fused labels stay the
  // unfused ones
  for (const char* what : {"tiny", "huge", "mixed"}) {
    auto scaled = [&](std::vector<float> V) {  // vector v (64 values) times its factor
      for (std::size_t q = 0; q < V.size(); ++q) {
        const std::size_t v = q / 64;
        V[q] *= what[0] == 't' ? 0x1p-70f : what[0] == 'h' ? 0x1p70f : (v % 2 ? 0x1p40f : 0x1p-40f);
      }
      return V;
    };
    fused_matches_unfused((std::string("scaled ") + what).c_str(), scaled(b.X), 30000, 64, scaled(start), 2, false,
                          nothing_more);
  }
  {  // auto on prepared points choosing TF32 (dimension 0 made 2^45 larger: every point spans
     // more than kAutoMaxExponentRange binades): the points are split again, to TF32, from X
    std::vector<float> X = b.X, C = start;
    for (std::size_t q = 0; q < X.size(); q += 64) X[q] *= 0x1p45f;
    for (std::size_t q = 0; q < C.size(); q += 64) C[q] *= 0x1p45f;
    fused_matches_unfused("auto's TF32 choice", X, 30000, 64, C, 2, true, [](Variant v, const cluster::KmeansResult& f) {
      if (v != Variant::auto_) return;
      CHECK(f.points_prepared);
      CHECK(f.resolved_variant == Variant::ec_tf32);
    });
  }
  const cluster::KmeansResult gpu =
      run(b.X.data(), 30000, 64, start, Variant::fp32_simt, cluster::KmeansAssign::fused, Backend::cuda, 1);
  const cluster::KmeansResult cpu =
      run(b.X.data(), 30000, 64, start, Variant::fp32_simt, cluster::KmeansAssign::fused, Backend::cpu, 1);
  CHECK(gpu.labels == cpu.labels);
}

TEST_CASE("on the GPU, the update's sums are bitwise the host's and the same on every run", "[kmeans][gpu]") {
  if (!tcsolve::cuda::device_available()) {
    WARN("no CUDA device: skipping the cuda K-means update test (" << tcsolve::cuda::device_name() << ")");
    return;
  }
  // fp64 distances on both backends (cuBLAS DGEMM, Eigen): the same labels for these blobs, so
  // the update (sorted by label, each cluster summed in point order) must give the host's
  // centroids bit for bit; two cuda runs of ec-fp16 must agree with each other bit for bit
  const cluster::Blobs b = cluster::make_blobs(40000, 48, 60, 6);
  const std::vector<float> start = cluster::kmeans_plus_plus(b.X.data(), 40000, 48, 500, 6);
  const cluster::KmeansResult cpu =
      run(b.X.data(), 40000, 48, start, Variant::fp64, cluster::KmeansAssign::automatic, Backend::cpu, 1);
  const cluster::KmeansResult gpu =
      run(b.X.data(), 40000, 48, start, Variant::fp64, cluster::KmeansAssign::automatic, Backend::cuda, 1);
  REQUIRE(gpu.labels == cpu.labels);
  CHECK(gpu.centroids == cpu.centroids);
  const cluster::KmeansResult once =
      run(b.X.data(), 40000, 48, start, Variant::ec_fp16, cluster::KmeansAssign::automatic, Backend::cuda, 8);
  const cluster::KmeansResult again =
      run(b.X.data(), 40000, 48, start, Variant::ec_fp16, cluster::KmeansAssign::automatic, Backend::cuda, 8);
  CHECK(once.labels == again.labels);
  CHECK(once.centroids == again.centroids);
}

TEST_CASE("on the GPU, k-means++ returns bitwise the host's centroids for a seed", "[kmeans][gpu]") {
  if (!tcsolve::cuda::device_available()) {
    WARN("no CUDA device: skipping the device k-means++ test (" << tcsolve::cuda::device_name() << ")");
    return;
  }
  const cluster::Blobs b = cluster::make_blobs(50000, 37, 30, 8);  // 13 blocks of 4096, a partial one; odd dim
  for (std::uint64_t seed : {1u, 2u}) {
    INFO("blobs, seed " << seed);
    CHECK(cluster::kmeans_plus_plus(b.X.data(), 50000, 37, 64, seed, Backend::cuda) ==
          cluster::kmeans_plus_plus(b.X.data(), 50000, 37, 64, seed, Backend::cpu));
  }
  const cluster::Blobs c = cluster::make_blobs(9000, 32, 12, 4);  // dim % 4 == 0: the float4 loads
  CHECK(cluster::kmeans_plus_plus(c.X.data(), 9000, 32, 200, 5, Backend::cuda) ==
        cluster::kmeans_plus_plus(c.X.data(), 9000, 32, 200, 5, Backend::cpu));
  // fewer distinct points than k: the uniform redraws consume the same draws
  std::vector<float> same(4 * 10, 1.0f);
  same[0] = 2.0f;
  CHECK(cluster::kmeans_plus_plus(same.data(), 10, 4, 5, 1, Backend::cuda) ==
        cluster::kmeans_plus_plus(same.data(), 10, 4, 5, 1, Backend::cpu));
}

TEST_CASE("tcsolve kmeans --assign and --seeding: reported in the JSON; bad values exit 2, a variant without a "
          "fused path exits 4", "[kmeans][cli]") {
  const std::string iris = tcsolve::test::test_data_path("inputs/iris.h5");
  const tcsolve::test::CommandResult fused = tcsolve::test::run_tcsolve(
      "kmeans --input '" + iris + "' --k 3 --variant ec-fp16 --backend cpu --assign fused --seeding cpu --json");
  INFO(fused);
  REQUIRE(fused.exit_code == 0);
  const tcsolve::test::Json j = tcsolve::test::require_one_object(fused);
  CHECK(j.find("assign")->string == "fused");
  CHECK(j.find("seeding_backend")->string == "cpu");
  CHECK(j.find("points_prepared")->boolean == false);  // the cpu never prepares
  CHECK(j.find("agreement_vs_fp64")->number == 1.0);
  for (const char* key : {"assign_time_s", "update_time_s", "setup_time_s"}) {
    INFO(key);
    REQUIRE(j.find(key) != nullptr);
    CHECK(j.find(key)->number >= 0);
  }
  CHECK(j.find("assign_time_s")->number + j.find("update_time_s")->number <= j.find("time_s")->number * 1.000001);
  // the same labels as unfused: the same inertia, bit for bit
  const tcsolve::test::CommandResult unfused = tcsolve::test::run_tcsolve(
      "kmeans --input '" + iris + "' --k 3 --variant ec-fp16 --backend cpu --assign unfused --json");
  REQUIRE(unfused.exit_code == 0);
  const tcsolve::test::Json u = tcsolve::test::require_one_object(unfused);
  CHECK(u.find("assign")->string == "unfused");
  CHECK(u.find("inertia")->number == j.find("inertia")->number);

  const tcsolve::test::CommandResult bad =
      tcsolve::test::run_tcsolve("kmeans --input '" + iris + "' --k 3 --backend cpu --assign fastest");
  CHECK(bad.exit_code == 2);
  CHECK(tcsolve::test::contains(bad.err, "auto, fused or unfused"));
  const tcsolve::test::CommandResult none = tcsolve::test::run_tcsolve(
      "kmeans --input '" + iris + "' --k 3 --backend cpu --variant fp16-tc --assign fused");
  CHECK(none.exit_code == 4);
  CHECK(tcsolve::test::contains(none.err, "no fused assignment for fp16-tc"));
  const tcsolve::test::CommandResult seeding =
      tcsolve::test::run_tcsolve("kmeans --input '" + iris + "' --k 3 --backend cpu --seeding gpu");
  CHECK(seeding.exit_code == 2);
}

TEST_CASE("on the GPU, a run and the k-means++ seeding on the caller's non-blocking stream give the default "
          "stream's labels and centroids", "[kmeans][gpu]") {
  if (!tcsolve::cuda::device_available()) {
    WARN("no CUDA device: skipping the K-means stream test (" << tcsolve::cuda::device_name() << ")");
    return;
  }
#if defined(TCSOLVE_HAVE_CUDA)
  const tcsolve::test::Stream stream;  // cudaStreamNonBlocking: no implicit order with stream 0
  const cluster::Blobs b = cluster::make_blobs(30000, 64, 40, 3);
  const std::vector<float> start = cluster::kmeans_plus_plus(b.X.data(), 30000, 64, 300, 3, Backend::cuda);
  CHECK(cluster::kmeans_plus_plus(b.X.data(), 30000, 64, 300, 3, Backend::cuda, stream.get()) == start);
  cluster::KmeansOptions o;
  o.variant = Variant::ec_fp16;
  o.backend = Backend::cuda;
  o.max_iterations = 10;
  // unfused (every sm_80+ device): the GEMM, assign_kernel, the sort and the update on the stream;
  // fused (sm_90): nearest_columns on the prepared points
  for (cluster::KmeansAssign assign : {cluster::KmeansAssign::unfused, cluster::KmeansAssign::fused}) {
    if (assign == cluster::KmeansAssign::fused && !tcsolve::cuda::nearest_columns_available(o.variant)) {
      WARN("no fused cuda path for ec-fp16 on " << tcsolve::cuda::device_name());
      continue;
    }
    INFO(cluster::to_string(assign));
    o.assign = assign;
    o.stream = nullptr;
    const cluster::KmeansResult legacy = cluster::kmeans(b.X.data(), 30000, 64, start, o);
    o.stream = stream.get();
    const cluster::KmeansResult own = cluster::kmeans(b.X.data(), 30000, 64, start, o);
    CHECK(own.assign == assign);
    CHECK(own.labels == legacy.labels);
    CHECK(own.centroids == legacy.centroids);
    CHECK(own.iterations == legacy.iterations);
  }
  CHECK(cudaStreamQuery(stream.get()) == cudaSuccess);  // the run waited for its stream
#endif
}
