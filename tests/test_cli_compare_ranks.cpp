// `tcsolve compare` as P ranks under mpirun (cpu ranks; OpenMPI as root in CI: --allow-run-as-root
// --oversubscribe), from the command line ([cli]; skipped with a warning where mpirun is missing):
//   - two committed systems (olm500, n = 500; randsvd_n256_c1e4, n = 256, cond 1e4) on a 1 x 2
//     and a 2 x 2 grid (nb = 64: 500 not a multiple of it, 256 one), --variants
//     fp32-simt,ec-fp16 --json: one object with the grid, the ranks and the group; each variant
//     converged to dsgesv's criterion; the baseline scalapack-pdgesv present with a backward
//     error within LU's bound, or (a build without ScaLAPACK) absent with a note saying why; each
//     variant's forward error within the perturbation bound of pdgesv's;
//   - the text table printed once (rank 0), --csv written by rank 0 alone with a row a method;
//   - errors (a missing file, a grid that is not the ranks, the cuda backend) exit with their
//     code on every rank, say it once, print one JSON object with --json, write nothing;
//   - alone, --grid other than 1x1 is a bad argument.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve::test;

constexpr double kEps64 = 0x1p-53;

/// The result object whose `key` ("variant" or "method") is `name`, or null.
const Json* result_named(const Json& doc, const std::string& key, const std::string& name) {
  for (const Json& r : doc.find("results")->items)
    if (const Json* k = r.find(key); k != nullptr && k->type == Json::Type::string && k->string == name)
      return &r;
  return nullptr;
}

/// Whether the build has the baseline, from the JSON: its row, or a note saying why not (exactly
/// one of the two).
bool has_pdgesv(const Json& doc) {
  const bool row = result_named(doc, "method", "scalapack-pdgesv") != nullptr;
  bool note = false;
  for (const Json& n : doc.find("notes")->items)
    note = note || contains(n.string, "scalapack-pdgesv: not run");
  CHECK(row != note);
  return row;
}

}  // namespace

TEST_CASE("compare under mpirun: each variant converges, scalapack-pdgesv within LU's backward error bound",
          "[cli]") {
  if (!have_mpirun()) {
    WARN("no mpirun here: skipping compare under mpirun");
    return;
  }
  struct Run {
    int ranks;
    std::string grid;
  };
  for (const std::string name : {"olm500.h5", "randsvd_n256_c1e4.h5"})
    for (const Run& run : {Run{2, "1x2"}, Run{4, "2x2"}}) {
      const std::string input = test_data_path("inputs/" + name);
      const CommandResult r = run_ranks(run.ranks, "compare --input '" + input +
                                                       "' --backend cpu --block-size 64 --variants "
                                                       "fp32-simt,ec-fp16 --condition-estimate always --json" +
                                                       (run.ranks == 4 ? " --grid 2x2" : ""));
      INFO(name << " on " << run.grid << ": " << r);
      REQUIRE(r.exit_code == 0);
      const Json doc = require_one_object(r);
      CHECK(doc.find("command")->string == "compare");
      CHECK(doc.find("grid")->string == run.grid);
      CHECK(doc.find("ranks")->number == run.ranks);
      CHECK(doc.find("group")->string == "mpi x " + std::to_string(run.ranks) + " (cpu)");
      const double n = doc.find("n")->number;
      // dsgesv's criterion ||r|| <= sqrt(n) ||x|| ||A|| eps64: the backward error's denominator
      // (||A|| ||x|| + ||b||) only adds to ||A|| ||x||
      const double criterion = std::sqrt(n) * kEps64;
      struct Variant {
        std::string name;
        double backward, forward, cond;
      };
      std::vector<Variant> variants;
      for (const std::string v : {"fp32-simt", "ec-fp16"}) {
        const Json* row = result_named(doc, "variant", v);
        REQUIRE(row != nullptr);
        INFO(v);
        CHECK(row->find("converged")->boolean);
        CHECK(row->find("block_size")->number == 64);
        CHECK(row->find("backward_error")->number <= criterion);
        REQUIRE(row->find("forward_error")->type == Json::Type::number);  // both files hold x
        REQUIRE(row->find("condition_estimate")->type == Json::Type::number);
        variants.push_back({v, row->find("backward_error")->number, row->find("forward_error")->number,
                            row->find("condition_estimate")->number});
      }
      if (!has_pdgesv(doc)) {
        WARN("this tcsolve was built without ScaLAPACK: the scalapack-pdgesv baseline is absent");
        continue;
      }
      const Json& p = *result_named(doc, "method", "scalapack-pdgesv");
      CHECK(p.find("resolved_variant")->type == Json::Type::null);
      CHECK(p.find("time_s")->find("total")->number > 0);
      // LU with partial pivoting is backward stable: the computed x solves (A + dA) x = b with
      // |dA| <= gamma_3n |L||U| (Higham, "Accuracy and Stability", Thm 9.4, with the solves),
      // gamma_3n = 3n eps64 / (1 - 3n eps64), so eta <= gamma_3n || |L||U| ||_inf / ||A||_inf.
      // Partial pivoting keeps |l_ij| <= 1; the growth || |L||U| || / ||A|| is at most n 2^(n-1)
      // in theory and small in practice (Trefethen & Schreiber: ~n^(2/3) for random matrices);
      // allowing 4 for these two systems: eta <= 4 gamma_3n, about 12 n eps64.
      const double gamma = 3 * n * kEps64 / (1 - 3 * n * kEps64);
      const double eta_p = p.find("backward_error")->number;
      CHECK(eta_p <= 4 * gamma);
      CHECK(p.find("converged")->boolean == (eta_p <= criterion));
      REQUIRE(p.find("forward_error")->type == Json::Type::number);
      const double fe_p = p.find("forward_error")->number;
      for (const Variant& v : variants) {
        // Both x solve a nearby system: x_i = x* + e_i with ||e_i|| <= 2 kappa_inf eta_i ||x*|| to
        // first order (eta with the ||b|| term: the relative perturbation of A and b), x* the
        // exact solution of the stored system; so |fe_v - fe_p| <= ||x_v - x_p|| / ||x_true|| <=
        // 2 kappa_inf (eta_v + eta_p) (1 + fe_p). kappa_inf <= n kappa_1, and kappa_1 taken as 4x
        // the solve's estimate (Hager-Higham: a lower bound, usually within 3x).
        const double kappa = n * 4 * v.cond;
        const double bound = fe_p + 2 * kappa * (v.backward + eta_p) * (1 + fe_p);
        INFO(v.name << ": forward error " << v.forward << ", pdgesv's " << fe_p << ", bound " << bound);
        CHECK(v.forward <= bound);
      }
    }
}

TEST_CASE("compare under mpirun prints its table once and writes --csv from rank 0 alone", "[cli]") {
  if (!have_mpirun()) {
    WARN("no mpirun here: skipping compare's table under mpirun");
    return;
  }
  TempDir dir("compare_ranks");
  const std::string input = test_data_path("inputs/randsvd_n256_c1e4.h5");
  const std::string csv = dir.path("rows.csv");
  const CommandResult r =
      run_ranks(2, "compare --input '" + input + "' --backend cpu --variants fp32-simt --csv '" + csv +
                       "' --progress never");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  CHECK(occurrences(r.out, "compare " + input + ": n = 256, nrhs = 1") == 1);
  CHECK(occurrences(r.out, "on a 1x2 grid of 2 cpu ranks") == 1);
  CHECK(occurrences(r.out, "\nmethod ") == 1);  // one header
  CHECK(occurrences(r.out, "\nfp32-simt ") == 1);
  const bool baseline = occurrences(r.out, "\nscalapack-pdgesv ") == 1;
  CHECK(baseline != (occurrences(r.out, "note: scalapack-pdgesv: not run") == 1));
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == (baseline ? 3u : 2u));  // header, fp32-simt, scalapack-pdgesv
  CHECK(lines[1].rfind("fp32-simt,", 0) == 0);
  if (baseline) CHECK(lines[2].rfind("scalapack-pdgesv,", 0) == 0);
  CHECK(dir.entries() == std::vector<std::string>{"rows.csv"});  // no temporary left behind
}

TEST_CASE("compare under mpirun: an error ends every rank with one message and writes nothing", "[cli]") {
  if (!have_mpirun()) {
    WARN("no mpirun here: skipping compare errors under mpirun");
    return;
  }
  TempDir dir("compare_ranks");
  const std::string input = test_data_path("inputs/randsvd_n256_c1e4.h5");
  const std::string csv = dir.path("rows.csv");
  struct Case {
    std::string args, message;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {"--input '" + dir.path("absent.h5") + "' --backend cpu", "absent.h5: no such file", 2},
      {"--input '" + input + "' --backend cpu --grid 2x2", "grid 2x2 has 4 processes, but there are 2 ranks",
       2},
      {"--input '" + input + "' --backend cuda",
       "compare under mpirun: the distributed solver runs on cpu ranks only", 4},
  };
  for (const Case& c : cases)
    for (bool json : {false, true}) {
      const CommandResult r = run_ranks(
          2, "compare " + c.args + " --variants fp32-simt --csv '" + csv + "'" + (json ? " --json" : ""));
      INFO(r);
      CHECK(r.exit_code == c.exit_code);
      CHECK(occurrences(r.err, c.message) == 1);
      CHECK(occurrences(r.err, "tcsolve compare: error") == 1);
      if (json) {
        const Json doc = require_one_object(r);
        CHECK(doc.find("error")->find("exit_code")->number == c.exit_code);
        CHECK(contains(doc.find("error")->find("message")->string, c.message));
      } else {
        CHECK(r.out.empty());
      }
    }
  CHECK(dir.entries().empty());
}

TEST_CASE("compare alone: --grid other than 1x1 needs mpirun", "[cli]") {
  const std::string input = test_data_path("inputs/bfwa62.h5");
  const CommandResult bad = run_tcsolve("compare --input '" + input + "' --backend cpu --grid 1x2");
  INFO(bad);
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--grid 1x2 needs as many ranks: run under mpirun -np P*Q (one process: 1x1)"));
}
