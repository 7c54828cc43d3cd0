// `tcsolve solve` as P ranks under mpirun (the distributed solver on cpu ranks; OpenMPI as root in
// CI: --allow-run-as-root --oversubscribe), from the command line ([cli]; skipped with a warning
// where mpirun is missing):
//   - every committed system of inputs/ on a 1 x 2 and a 2 x 2 grid (two of them on 3 x 1; nb = 16,
//     so no order is a multiple of the block), fp32-simt: converged to dsgesv's criterion, the JSON
//     names the grid and ranks, rank 0 alone writes x, and x is within the perturbation bound of
//     the one-process x: both meet ||r||_inf <= sqrt(n) ||x||_inf ||A||_inf eps64, so each is
//     within kappa_inf sqrt(n) eps64 of the true x (to first order) and they are within twice that
//     of each other, kappa_inf <= n kappa_1 and kappa_1 taken as 4x the solve's estimate;
//   - errors on every rank (a missing file, a grid that is not the ranks, a singular A, the cuda
//     backend) and on one rank (a NaN in the piece of A one rank reads) exit with the documented
//     code on every rank, say it once, write nothing; --json prints one object;
//   - alone, --grid other than 1x1 is a bad argument.
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/group.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve::test;

struct Solved {
  Json json;
  Eigen::MatrixXd x;
};

/// `solve` of `input` with --json and --output, alone (ranks = 0) or as ranks.
Solved run_solve(int ranks, const std::string& input, const std::string& extra, const TempDir& dir) {
  const std::string out = dir.path("x_np" + std::to_string(ranks) + ".h5");
  const std::string line = "solve --input '" + input +
                           "' --backend cpu --variant fp32-simt --block-size 16 --json "
                           "--force --condition-estimate always --output '" +
                           out + "'" + extra;
  const CommandResult r = ranks == 0 ? run_tcsolve(line) : run_ranks(ranks, line);
  INFO(r);
  REQUIRE(r.exit_code == 0);
  return {require_one_object(r), tcsolve::read_solution(out).x};
}

}  // namespace

TEST_CASE("solve under mpirun converges on every committed system, within the bound of one process' x", "[cli]") {
  if (!have_mpirun()) {
    WARN("no mpirun here: skipping solve under mpirun");
    return;
  }
  TempDir dir("solve_ranks");
  const std::vector<std::string> systems = {"bfwa62.h5",    "gr_900_900_crg.h5",     "olm500.h5",
                                            "random_n512.h5", "randsvd_n256_c1e4.h5", "west0067.h5"};
  for (const std::string& name : systems) {
    const std::string input = test_data_path("inputs/" + name);
    const Solved one = run_solve(0, input, "", dir);
    const double n = one.json.find("n")->number;
    const Json* cond = one.json.find("condition_estimate");
    REQUIRE(cond->type == Json::Type::number);
    const double bound = 2 * std::sqrt(n) * 0x1p-53 * n * 4 * cond->number;
    struct Run {
      int ranks;
      std::string grid;
    };
    std::vector<Run> runs = {{2, "1x2"}, {4, "2x2"}};
    if (name == "olm500.h5" || name == "west0067.h5") runs.push_back({3, "3x1"});
    for (const Run& run : runs) {
      INFO(name << " on " << run.grid << " (" << run.ranks << " ranks), bound " << bound);
      const Solved many = run_solve(run.ranks, input, run.grid == "1x2" ? "" : " --grid " + run.grid, dir);
      CHECK(many.json.find("converged")->boolean);
      CHECK(many.json.find("grid")->string == run.grid);
      CHECK(many.json.find("ranks")->number == run.ranks);
      CHECK(many.json.find("group")->string == "mpi x " + std::to_string(run.ranks) + " (cpu)");
      // dsgesv's criterion: the backward error's denominator (||A|| ||x|| + ||b||) only adds to it
      CHECK(many.json.find("backward_error")->number <= std::sqrt(n) * 0x1p-53);
      REQUIRE(many.x.rows() == one.x.rows());
      const double gap = (many.x - one.x).lpNorm<Eigen::Infinity>() / one.x.lpNorm<Eigen::Infinity>();
      CHECK(gap <= bound);
    }
  }
  // rank 0 alone wrote, and no temporary is left behind
  CHECK(dir.entries() == std::vector<std::string>{"x_np0.h5", "x_np2.h5", "x_np3.h5", "x_np4.h5"});
}

TEST_CASE("solve under mpirun: an error on one rank or on all ends every rank with one message", "[cli]") {
  if (!have_mpirun()) {
    WARN("no mpirun here: skipping solve errors under mpirun");
    return;
  }
  TempDir dir("solve_ranks");
  // a singular A (two equal rows), and a NaN at (37, 5): row block 2 of nb 16 -> process row 0 of
  // 2, column block 0 -> process column 0: rank 0 alone reads it on a 2 x 2 grid
  tcsolve::LinearSystem s;
  s.A = Eigen::MatrixXd::Random(50, 50) + 50 * Eigen::MatrixXd::Identity(50, 50);
  s.b = Eigen::VectorXd::Ones(50);
  tcsolve::LinearSystem singular = s;
  singular.A.row(7) = singular.A.row(3);
  tcsolve::write_system(dir.path("singular.h5"), singular, false);
  tcsolve::LinearSystem nan = s;
  nan.A(37, 5) = std::nan("");
  tcsolve::write_system(dir.path("nan.h5"), nan, false);
  const std::string out = dir.path("x.h5");
  struct Case {
    int ranks;
    std::string args, message;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {2, "--input '" + dir.path("absent.h5") + "'", "absent.h5: no such file", 2},
      {2, "--input '" + dir.path("nan.h5") + "' --grid 2x2", "grid 2x2 has 4 processes, but there are 2 ranks", 2},
      {3, "--input '" + dir.path("singular.h5") + "'", "singular.h5: A: matrix is exactly singular", 2},
      {4, "--input '" + dir.path("nan.h5") + "' --grid 2x2 --block-size 16", "nan.h5: A: contains NaN at (37, 5)", 2},
      // cuda ranks: without a device (CI) refused by name; with one, the file's NaN as on the cpu
      tcsolve::runtime::device_count() == 0
          ? Case{2, "--input '" + dir.path("nan.h5") + "' --backend cuda", "no usable CUDA device", 4}
          : Case{2, "--input '" + dir.path("nan.h5") + "' --backend cuda", "nan.h5: A: contains NaN at (37, 5)", 2},
      {2, "--input '" + dir.path("nan.h5") + "' --synthetic 100", "--synthetic and --input exclude each other", 2},
      // a NumPy file (refused before it is read): the hint is h5py or one process, not import --mtx
      {2, "--input '" + dir.path("a.npy") + "'", "write A and b as HDF5 datasets A and b (h5py)", 2},
  };
  { std::ofstream(dir.path("a.npy")) << "not read"; }
  for (const Case& c : cases)
    for (bool json : {false, true}) {
      std::string args = "solve " + c.args + " --variant fp32-simt --output '" + out + "'" + (json ? " --json" : "");
      if (c.args.find("--backend") == std::string::npos) args += " --backend cpu";
      const CommandResult r = run_ranks(c.ranks, args);
      INFO(r);
      CHECK(r.exit_code == c.exit_code);
      CHECK(occurrences(r.err, c.message) == 1);
      CHECK(occurrences(r.err, "tcsolve solve: error") == 1);
      CHECK_FALSE(std::filesystem::exists(out));
      if (json) {
        const Json doc = require_one_object(r);
        CHECK(doc.find("error")->find("exit_code")->number == c.exit_code);
        CHECK(contains(doc.find("error")->find("message")->string, c.message));
      } else {
        CHECK(r.out.empty());
      }
    }
  CHECK(dir.entries() == std::vector<std::string>{"a.npy", "nan.h5", "singular.h5"});
}

TEST_CASE("solve alone: --grid other than 1x1 needs mpirun", "[cli]") {
  const std::string input = test_data_path("inputs/bfwa62.h5");
  const CommandResult bad = run_tcsolve("solve --input '" + input + "' --backend cpu --grid 2x1");
  INFO(bad);
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--grid 2x1 needs as many ranks: run under mpirun -np P*Q (one process: 1x1)"));
  const CommandResult one = run_tcsolve("solve --input '" + input + "' --backend cpu --grid 1x1 --json");
  INFO(one);
  CHECK(one.exit_code == 0);
}
