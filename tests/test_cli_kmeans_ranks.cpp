// `tcsolve kmeans` as P ranks under mpirun (cpu ranks; OpenMPI as root in CI: --allow-run-as-root
// --oversubscribe) and on several GPUs (--gpus), from the command line ([cli]; the mpirun cases
// skip with a warning where mpirun is missing):
//   - -np 2 and -np 3 (where rank 0 holds none of iris' 150 points: kmeans_rows deals them in
//     blocks of 128) write the one-process command's labels and centroids and report its
//     iterations and inertia: fp64 bitwise the centroids, the inertia within 1e-12 relative (its
//     FP64 sum taken in another order); ec-fp16 the same labels, centroids within one FP32 ulp
//     (the clusters' FP64 sums added in another order round once to FP32);
//   - --synthetic: every rank makes its own rows, the same points as one process makes;
//   - a failure on one rank (a NaN in the last row, which the last rank reads), or on every rank
//     (k above the points, a missing file), exits 2 on every rank with one message, and nothing
//     is written; --json prints one object on stdout in success and failure;
//   - --gpus: a repeated device is a bad argument (exit 2), --gpus with --backend cpu is refused
//     (exit 4), and without a GPU --gpus 2 is unavailable (exit 4).
#include <hdf5.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"
#include "tcsolve/io/kmeans_file.hpp"
#include "tcsolve/runtime/device.hpp"

namespace {

using namespace tcsolve::test;

std::string iris() { return "'" + test_data_path("inputs/iris.h5") + "'"; }

float ulp(float x) { return std::nextafter(std::fabs(x), std::numeric_limits<float>::infinity()) - std::fabs(x); }

/// A K-means data file holding X (points x dim, float64).
void write_points(const std::string& path, const std::vector<float>& X, int points, int dim) {
  const std::vector<double> values(X.begin(), X.end());
  const hsize_t dims[2] = {static_cast<hsize_t>(points), static_cast<hsize_t>(dim)};
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t ds = H5Dcreate2(file, "X", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(ds >= 0);
  REQUIRE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0);
  H5Dclose(ds);
  H5Sclose(space);
  H5Fclose(file);
}

struct Outcome {
  Json json;
  tcsolve::KmeansOutput output;
};

/// The command with `args` (its --json and --output added) alone (ranks = 0) or as `ranks` ranks.
Outcome run_kmeans(int ranks, const std::string& args, const TempDir& dir) {
  const std::string out = dir.path("out_np" + std::to_string(ranks) + ".h5");
  const std::string line = "kmeans " + args + " --json --output '" + out + "'";
  const CommandResult r = ranks == 0 ? run_tcsolve(line) : run_ranks(ranks, line);
  INFO(r);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  Outcome o{require_one_object(r), tcsolve::read_kmeans_output(out)};
  CHECK(o.json.find("ranks")->number == (ranks == 0 ? 1 : ranks));
  if (ranks > 1) CHECK(o.json.find("group")->string == "mpi x " + std::to_string(ranks) + " (cpu)");
  return o;
}

}  // namespace

TEST_CASE("kmeans under mpirun -np 2 and 3 writes the one-process labels and centroids", "[cli]") {
  if (!have_mpirun()) {
    WARN("no mpirun here: skipping kmeans under mpirun");
    return;
  }
  TempDir dir("kmeans_ranks");
  SECTION("fp64: the same labels, bitwise the centroids, iterations, the inertia to 1e-12") {
    const std::string args = "--input " + iris() + " --k 3 --backend cpu --variant fp64 --seed 5";
    const Outcome one = run_kmeans(0, args, dir);
    for (int ranks : {2, 3}) {
      INFO(ranks << " ranks");
      const Outcome many = run_kmeans(ranks, args, dir);
      CHECK(many.output.labels == one.output.labels);
      CHECK(many.output.centroids == one.output.centroids);
      CHECK(many.json.find("iterations")->number == one.json.find("iterations")->number);
      const double inertia = one.json.find("inertia")->number;
      CHECK(std::fabs(many.json.find("inertia")->number - inertia) <= 1e-12 * inertia);
      CHECK(std::fabs(many.output.inertia - one.output.inertia) <= 1e-12 * one.output.inertia);
      CHECK(many.json.find("agreement_vs_fp64")->number == 1);
    }
  }
  SECTION("ec-fp16: the same labels, the centroids within one FP32 ulp") {
    const std::string args = "--input " + iris() + " --k 3 --backend cpu --variant ec-fp16 --seed 5";
    const Outcome one = run_kmeans(0, args, dir);
    for (int ranks : {2, 3}) {
      INFO(ranks << " ranks");
      const Outcome many = run_kmeans(ranks, args, dir);
      CHECK(many.output.labels == one.output.labels);
      REQUIRE(many.output.centroids.size() == one.output.centroids.size());
      for (std::size_t i = 0; i < one.output.centroids.size(); ++i)
        CHECK(std::fabs(many.output.centroids[i] - one.output.centroids[i]) <= ulp(one.output.centroids[i]));
      CHECK(many.json.find("iterations")->number == one.json.find("iterations")->number);
      CHECK(many.json.find("agreement_vs_fp64")->number == one.json.find("agreement_vs_fp64")->number);
    }
  }
  SECTION("--synthetic: each rank makes its rows of the same points") {
    const std::string args = "--synthetic 1000:3 --clusters-true 4 --k 4 --backend cpu --variant fp64 --seed 7";
    const Outcome one = run_kmeans(0, args, dir);
    const Outcome many = run_kmeans(3, args, dir);
    CHECK(many.output.labels == one.output.labels);
    CHECK(many.output.centroids == one.output.centroids);
    CHECK(many.json.find("iterations")->number == one.json.find("iterations")->number);
  }
}

TEST_CASE("kmeans under mpirun: an error on one rank or on all ends every rank with one message", "[cli]") {
  if (!have_mpirun()) {
    WARN("no mpirun here: skipping kmeans errors under mpirun");
    return;
  }
  TempDir dir("kmeans_ranks");
  const tcsolve::KmeansData d = tcsolve::read_kmeans_data(test_data_path("inputs/iris.h5"));
  std::vector<float> X = d.X;
  X[static_cast<std::size_t>(d.points - 1) * d.dim + 2] = std::numeric_limits<float>::quiet_NaN();
  const std::string nan_file = dir.path("nan.h5"), out = dir.path("out.h5");
  write_points(nan_file, X, d.points, d.dim);
  struct Case {
    int ranks;
    std::string input, k, message;
  };
  const std::vector<Case> cases = {
      {2, "'" + nan_file + "'", "3", "nan.h5: X: contains NaN at (149, 2)"},  // the last rank's rows
      {3, "'" + nan_file + "'", "3", "nan.h5: X: contains NaN at (149, 2)"},
      {2, iris(), "151", "iris.h5: X: 150 points, fewer than --k 151"},
      {2, "'" + dir.path("absent.h5") + "'", "3", "absent.h5: no such file"},
  };
  for (const Case& c : cases)
    for (bool json : {false, true}) {
      const CommandResult r = run_ranks(c.ranks, "kmeans --backend cpu --input " + c.input + " --k " + c.k +
                                                     " --output '" + out + "'" + (json ? " --json" : ""));
      INFO(r);
      CHECK(r.exit_code == 2);
      CHECK(occurrences(r.err, c.message) == 1);
      CHECK(occurrences(r.err, "tcsolve kmeans: error") == 1);
      CHECK_FALSE(std::filesystem::exists(out));
      if (json) {
        const Json doc = require_one_object(r);
        CHECK(doc.find("error")->find("exit_code")->number == 2);
        CHECK(contains(doc.find("error")->find("message")->string, c.message));
      } else {
        CHECK(r.out.empty());
      }
    }
  CHECK(dir.entries() == std::vector<std::string>{"nan.h5"});  // no temporary left behind
}

TEST_CASE("kmeans --gpus: a repeated device is a bad argument, the cpu backend and no GPU are refused", "[cli]") {
  const std::string args = "kmeans --input " + iris() + " --k 3 ";
  CommandResult r = run_tcsolve(args + "--gpus 0,0 --json");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "device 0 is listed twice"));
  CHECK(require_one_object(r).find("error")->find("exit_code")->number == 2);
  r = run_tcsolve(args + "--gpus 2 --backend cpu");
  INFO(r);
  CHECK(r.exit_code == 4);
  CHECK(contains(r.err, "--gpus 2"));
  CHECK(contains(r.err, "--backend cpu"));
  CHECK(count_lines(r.err) == 1);
  if (tcsolve::cuda::device_available()) {
    WARN("a CUDA device is present: --gpus 2 without a GPU is not checked here");
    return;
  }
  r = run_tcsolve(args + "--gpus 2");
  INFO(r);
  CHECK(r.exit_code == 4);
  CHECK(contains(r.err, "--gpus '2': no CUDA device here"));
  CHECK(count_lines(r.err) == 1);
  CHECK(r.out.empty());
}
