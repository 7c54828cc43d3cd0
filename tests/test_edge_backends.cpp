// The singular and edge systems (two equal rows; A of order 1e-310 and 1e306; x of order 1e306;
// a column that is the sum of two others) through the executable: the cpu path alone ([cli]),
// and the cpu and cuda paths side by side ([gpu], skipped with a warning without a device): the
// same exit codes and messages, never a NaN solution written, never "converged" at FP32
// accuracy.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "temp_dir.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve::test;
namespace fs = std::filesystem;

using tcsolve::test::TempDir;

/// U(-1, 1) plus n on the diagonal: well conditioned (cond_inf below 3), every entry non-zero.
Eigen::MatrixXd dominant(int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd A(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A(i, j) = u(rng) + (i == j ? n : 0.0);
  return A;
}

tcsolve::LinearSystem system_of(Eigen::MatrixXd A, Eigen::MatrixXd x) {
  tcsolve::LinearSystem sys;
  sys.b = A * x;
  sys.A = std::move(A);
  sys.x_true = std::move(x);
  return sys;
}

/// The edge systems: name and system.
std::vector<std::pair<std::string, tcsolve::LinearSystem>> edge_systems() {
  const int n = 96;  // with --block-size 32: three blocks, two trailing updates
  std::vector<std::pair<std::string, tcsolve::LinearSystem>> out;
  const Eigen::MatrixXd ones = Eigen::MatrixXd::Ones(n, 1);
  {  // two equal rows: exactly singular
    Eigen::MatrixXd A = dominant(n, 1);
    A.row(40) = A.row(7);
    out.emplace_back("equal_rows", system_of(A, ones));
  }
  {  // the order of 1e-310: a power of two times a well-conditioned matrix (exact scaling)
    const Eigen::MatrixXd A = std::ldexp(1.0, -1030) * dominant(n, 2);
    out.emplace_back("tiny", system_of(A, ones));
  }
  {  // the order of 1e306
    const Eigen::MatrixXd A = std::ldexp(1.0, 1010) * dominant(n, 3);
    out.emplace_back("huge", system_of(A, ones));
  }
  {  // ||x|| near 1e306: sqrt(n) ||x|| ||A|| eps overflowed before
    const Eigen::MatrixXd A = dominant(n, 4);
    out.emplace_back("huge_x", system_of(A, std::ldexp(1.0, 1010) * ones));
  }
  {  // a column that is the sum of two others: singular in exact arithmetic, not in floating point
    Eigen::MatrixXd A = dominant(n, 5);
    A.col(50) = A.col(3) + A.col(11);
    out.emplace_back("column_sum", system_of(A, ones));
  }
  return out;
}

/// Exit code, the error line (stderr's "error:" line, if any) and the JSON of one solve.
struct Outcome {
  int exit_code = -1;
  std::string error_line;
  std::optional<Json> json;
};

Outcome solve_on(const std::string& file, const char* backend, const std::string& output = "") {
  const CommandResult r = run_tcsolve(std::string("solve --json --block-size 32 --backend ") + backend +
                                      " --input '" + file + "'" + (output.empty() ? "" : " --output '" + output + "'"));
  Outcome o;
  o.exit_code = r.exit_code;
  std::istringstream err(r.err);
  std::string line;
  while (std::getline(err, line))
    if (contains(line, "error:")) o.error_line = line;
  o.json = JsonReader(r.out).parse_document();
  return o;
}

}  // namespace

TEST_CASE("the cpu path never writes a NaN solution nor calls one converged on the edge systems", "[cli]") {
  TempDir dir;
  for (auto& [name, sys] : edge_systems()) {
    const std::string file = dir.path(name + ".h5"), out = dir.path(name + "_solution.h5");
    tcsolve::write_system(file, sys, false);
    const Outcome o = solve_on(file, "cpu", out);
    INFO(name << ": exit " << o.exit_code << " '" << o.error_line << "'");
    REQUIRE(o.json.has_value());
    if (name == "equal_rows") {
      CHECK(o.exit_code == 2);
      CHECK(contains(o.error_line, file));
      CHECK(contains(o.error_line, "exactly singular"));
      CHECK(!fs::exists(out));
      continue;
    }
    CHECK((o.exit_code == 0 || o.exit_code == 3));
    if (o.exit_code == 0) {
      // Converged: within dsgesv's bound, eta <= sqrt(n) eps64, and the file's x is finite.
      CHECK(o.json->find("converged")->boolean);
      CHECK(o.json->find("backward_error")->number <= std::sqrt(96.0) * 0x1p-53);
    }
    if (fs::exists(out)) {
      const tcsolve::Solution x = tcsolve::read_solution(out);
      CHECK(x.x.allFinite());
    }
    if (name == "column_sum") CHECK(!o.json->find("warnings")->items.empty());
  }
}

TEST_CASE("cpu and cuda give the same exit codes and messages on singular and edge systems", "[gpu]") {
  if (!tcsolve::cuda::device_available()) {
    WARN("no usable CUDA device: the cuda half of the edge-system comparison is skipped");
    return;
  }
  TempDir dir;
  for (auto& [name, sys] : edge_systems()) {
    const std::string file = dir.path(name + ".h5");
    tcsolve::write_system(file, sys, false);
    const Outcome cpu = solve_on(file, "cpu"), gpu = solve_on(file, "cuda");
    INFO(name << ": cpu exit " << cpu.exit_code << " '" << cpu.error_line << "', cuda exit " << gpu.exit_code
              << " '" << gpu.error_line << "'");
    CHECK(cpu.exit_code == gpu.exit_code);
    CHECK(cpu.error_line == gpu.error_line);
    for (const Outcome* o : {&cpu, &gpu}) {
      REQUIRE(o->json.has_value());  // one JSON object on every exit path
      if (o->exit_code == 2) continue;
      // Never a non-finite backward error reported as converged; a converged solve is within
      // dsgesv's bound: ||r|| <= sqrt(n) ||x|| ||A|| eps, so eta <= sqrt(n) eps.
      const Json* converged = o->json->find("converged");
      const Json* eta = o->json->find("backward_error");
      REQUIRE(converged != nullptr);
      REQUIRE(eta != nullptr);
      if (converged->boolean) {
        REQUIRE(eta->type == Json::Type::number);
        CHECK(eta->number <= std::sqrt(96.0) * 0x1p-53);
        CHECK(o->exit_code == 0);
      } else {
        CHECK(o->exit_code == 3);
      }
    }
    if (name == "equal_rows") {
      CHECK(cpu.exit_code == 2);
      CHECK(contains(cpu.error_line, file));
      CHECK(contains(cpu.error_line, "singular"));
    }
    if (name == "column_sum") {
      for (const Outcome* o : {&cpu, &gpu}) {
        const Json* warnings = o->json->find("warnings");
        REQUIRE(warnings != nullptr);
        CHECK(!warnings->items.empty());
      }
    }
  }
}
