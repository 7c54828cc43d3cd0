// The solver (solver.hpp, docs/architecture.md "Solver"): P (R A C) = L U within a derived bound,
// refinement to LAPACK dsgesv's criterion per variant, GMRES-IR beyond classical refinement,
// singular and badly scaled systems, the fallback, and the solve / compare command lines.
// Sizes stay small (n <= 128): the tensor-core variants are emulated on the cpu.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve;
using namespace tcsolve::test;

constexpr double kEps64 = 0x1p-53;  ///< LAPACK dlamch('E')
constexpr int kBlock = 32;          ///< nb of the tests: n = 96 has 3 panels and 2 trailing updates

Eigen::MatrixXd haar_orthogonal(int n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd G(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) G(i, j) = normal(rng);
  return Eigen::HouseholderQR<Eigen::MatrixXd>(G).householderQ();
}

/// randsvd (geometric spectrum 1 .. 1/cond): A = U diag(sigma) V^T, x ~ U(-1,1), b = A x.
LinearSystem randsvd(int n, double cond, unsigned seed, int nrhs = 1) {
  std::mt19937_64 rng(seed);
  Eigen::VectorXd sigma(n);
  for (int i = 0; i < n; ++i) sigma[i] = std::pow(cond, -static_cast<double>(i) / (n - 1));
  LinearSystem sys;
  sys.A = haar_orthogonal(n, rng) * sigma.asDiagonal() * haar_orthogonal(n, rng).transpose();
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::MatrixXd x(n, nrhs);
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) x(i, j) = u(rng);
  sys.b = sys.A * x;
  sys.x_true = x;
  sys.b_is_vector = nrhs == 1;
  return sys;
}

using test::dsgesv_criterion;

SolveOptions cpu_options(Variant v, Refinement refinement = Refinement::classical) {
  SolveOptions o;
  o.variant = v;
  o.backend = Backend::cpu;
  o.block_size = kBlock;
  o.refinement = refinement;
  o.fallback = false;  // what the refinement itself achieves
  return o;
}

/// The reconstruction error of lu_factorize and its bound (lu_test_util.hpp), after checking
/// that R and C are powers of two.
LuResidual lu_residual(const Eigen::MatrixXd& A, Variant v) {
  const LuFactorization f = lu_factorize(A, v, kBlock);
  for (Eigen::Index i = 0; i < A.rows(); ++i) {
    int e = 0;
    CHECK(std::frexp(f.row_scale[i], &e) == 0.5);
    CHECK(std::frexp(f.col_scale[i], &e) == 0.5);
  }
  return lu_reconstruction(f, A);
}

/// A temporary folder removed (with its files) at the end of the test.
struct TempDir {
  std::string dir;
  TempDir() {
    char t[] = "/tmp/tcsolve_solver_test_XXXXXX";
    REQUIRE(mkdtemp(t) != nullptr);
    dir = t;
  }
  ~TempDir() { std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string path(const std::string& name) const { return dir + "/" + name; }
};

const Json& member(const Json& object, const char* key) {
  INFO("member " << key);
  const Json* v = object.find(key);
  REQUIRE(v != nullptr);
  return *v;
}

/// Every member of a solve object (docs/architecture.md, JSON: solve) with its type.
void check_solve_members(const Json& o, bool baseline) {
  CHECK(member(o, baseline ? "method" : "variant").type == Json::Type::string);
  for (const char* key : {"resolved_variant", "backend", "device", "converged", "iterations", "fallback",
                          "backward_error", "forward_error", "history", "time_s"})
    CHECK(o.find(key) != nullptr);
  CHECK(member(o, "converged").type == Json::Type::boolean);
  CHECK(member(o, "fallback").type == Json::Type::boolean);
  CHECK(member(o, "iterations").type == Json::Type::number);
  CHECK(member(o, "backward_error").type == Json::Type::number);
  const Json& history = member(o, "history");
  REQUIRE(history.type == Json::Type::array);
  CHECK(history.items.size() >= 1);
  for (std::size_t i = 0; i < history.items.size(); ++i) {
    CHECK(member(history.items[i], "iteration").number == static_cast<double>(i));
    CHECK(member(history.items[i], "backward_error").type == Json::Type::number);
  }
  const Json& t = member(o, "time_s");
  for (const char* key : {"factorization", "refinement", "total"})
    CHECK(member(t, key).type == Json::Type::number);
}

}  // namespace

TEST_CASE("P R A C = L U within the LU error bound for fp64, fp32-simt and ootomo-fp16 updates", "[solver]") {
  const LinearSystem sys = randsvd(96, 1e4, 11);
  for (Variant v : {Variant::fp64, Variant::fp32_simt, Variant::ootomo_fp16}) {
    const LuResidual e = lu_residual(sys.A, v);
    INFO(to_string(v) << ": ||PRAC - LU||_F = " << e.residual << ", bound " << e.bound);
    std::printf("lu reconstruction n=96 nb=32 %-12s ||PRAC-LU||_F = %.3e  bound %.3e\n",
                std::string(to_string(v)).c_str(), e.residual, e.bound);
    CHECK(e.residual <= e.bound);
  }
  // The bound discriminates: one FP16 product per update (u = 2^-11) breaks it.
  const LuResidual fp16 = lu_residual(sys.A, Variant::fp16_tc);
  std::printf("lu reconstruction n=96 nb=32 %-12s ||PRAC-LU||_F = %.3e  bound %.3e\n", "fp16-tc",
              fp16.residual, fp16.bound);
  CHECK(fp16.residual > fp16.bound);
}

TEST_CASE("lu_factorize records the variant the trailing updates ran", "[solver]") {
  const LinearSystem sys = randsvd(64, 1e2, 3);
  CHECK(lu_factorize(sys.A, Variant::auto_, kBlock).resolved_variant == Variant::ec_fp16);
  CHECK(lu_factorize(sys.A, Variant::ootomo_tf32, kBlock).resolved_variant == Variant::ootomo_tf32);
  // n <= nb: no trailing update runs; the requested variant is reported.
  CHECK(lu_factorize(sys.A, Variant::auto_, 64).resolved_variant == Variant::auto_);
}

TEST_CASE(
    "refinement reaches dsgesv's criterion with FP32-accurate updates in fp32-simt's "
    "iteration count; fp16-tc needs more or fails",
    "[solver]") {
  struct Case {
    int n;
    double cond;
  };
  const Variant accurate[] = {Variant::ootomo_fp16, Variant::ootomo_tf32, Variant::ec_fp16, Variant::ec_tf32,
                              Variant::auto_};
  std::printf("\nclassical refinement, nb = %d, no fallback: iterations (x = not converged)\n", kBlock);
  std::printf("%-5s %-6s %-10s", "n", "cond", "fp32-simt");
  for (Variant v : accurate) std::printf(" %-12s", std::string(to_string(v)).c_str());
  std::printf(" %-8s\n", "fp16-tc");
  for (const Case c : {Case{64, 1e2}, Case{96, 1e4}, Case{128, 1e6}}) {
    const LinearSystem sys = randsvd(c.n, c.cond, 5);
    const SolveResult base = solve(sys, cpu_options(Variant::fp32_simt));
    INFO("n " << c.n << ", cond " << c.cond);
    REQUIRE(base.converged);
    CHECK(dsgesv_criterion(sys, base.x));
    std::printf("%-5d %-6.0e %-10d", c.n, c.cond, base.iterations);
    for (Variant v : accurate) {
      const SolveResult r = solve(sys, cpu_options(v));
      INFO(to_string(v) << ": " << r.note);
      std::printf(" %-12s", (std::to_string(r.iterations) + (r.converged ? "" : "x")).c_str());
      CHECK(r.converged);
      CHECK_FALSE(r.fallback_used);
      CHECK(dsgesv_criterion(sys, r.x));
      CHECK(std::abs(r.iterations - base.iterations) <= 1);
      CHECK(r.history.size() == static_cast<std::size_t>(r.iterations) + 1);
    }
    const SolveResult half = solve(sys, cpu_options(Variant::fp16_tc));
    std::printf(" %-8s\n", (std::to_string(half.iterations) + (half.converged ? "" : "x")).c_str());
    INFO("fp16-tc: " << half.note);
    CHECK((!half.converged || half.iterations > base.iterations));
  }
}

TEST_CASE("GMRES-IR converges where classical refinement on fp16-tc does not", "[solver]") {
  for (double cond : {1e6, 1e8}) {
    const LinearSystem sys = randsvd(96, cond, 7);
    const SolveResult classical = solve(sys, cpu_options(Variant::fp16_tc));
    const SolveResult gmres = solve(sys, cpu_options(Variant::fp16_tc, Refinement::gmres));
    std::printf("fp16-tc, n = 96, cond %.0e: classical %d%s (%s); gmres %d%s (%s)\n", cond,
                classical.iterations, classical.converged ? "" : "x", classical.note.c_str(),
                gmres.iterations, gmres.converged ? "" : "x", gmres.note.c_str());
    INFO("cond " << cond << ": " << classical.note << " / " << gmres.note);
    CHECK_FALSE(classical.converged);
    CHECK(gmres.converged);
    CHECK(dsgesv_criterion(sys, gmres.x));
    // The forward error a backward-stable solve gives: about cond * eps64.
    REQUIRE(gmres.forward_error.has_value());
    CHECK(*gmres.forward_error <= cond * 1e-14);
  }
}

TEST_CASE("refine auto converges with GMRES-IR where classical refinement needs the FP64 fallback, "
          "and is classical refinement bitwise where that converges", "[solver]") {
  for (double cond : {1e6, 1e8}) {
    const LinearSystem sys = randsvd(96, cond, 7);
    const SolveResult classical = solve(sys, cpu_options(Variant::fp16_tc));
    const SolveResult automatic = solve(sys, cpu_options(Variant::fp16_tc, Refinement::auto_));
    INFO("cond " << cond << ": classical: " << classical.note << " / auto: " << automatic.note);
    CHECK_FALSE(classical.converged);  // it would need the FP64 fallback (off in these options)
    CHECK(automatic.converged);
    CHECK_FALSE(automatic.fallback_used);
    CHECK(dsgesv_criterion(sys, automatic.x));
    // it switched after a classical step that gained less than 10x, and says so
    REQUIRE(automatic.gmres_from >= 1);
    const std::size_t k = static_cast<std::size_t>(automatic.gmres_from);
    REQUIRE(automatic.history.size() > k);
    CHECK(automatic.note.find("refine auto: GMRES-IR from iteration " + std::to_string(k)) != std::string::npos);
    CHECK(automatic.iterations <= classical.iterations + 10);
  }
  // a system classical refinement solves: auto never switches and gives its bits
  const LinearSystem easy = randsvd(96, 1e2, 8);
  const SolveResult classical = solve(easy, cpu_options(Variant::ec_fp16));
  const SolveResult automatic = solve(easy, cpu_options(Variant::ec_fp16, Refinement::auto_));
  REQUIRE(classical.converged);
  CHECK(automatic.gmres_from == -1);
  CHECK(automatic.iterations == classical.iterations);
  CHECK(automatic.history == classical.history);
  CHECK(automatic.x == classical.x);
  CHECK(parse_refinement("auto") == Refinement::auto_);
  CHECK(to_string(Refinement::auto_) == "auto");
}

TEST_CASE("an exactly singular matrix throws InvalidInput naming the column of the zero pivot", "[solver]") {
  LinearSystem sys = randsvd(40, 10, 2);
  sys.A.col(25).setZero();  // column 26, 1-based: its pivot is exactly zero
  for (auto attempt : {+[](const LinearSystem& s) { (void)lu_factorize(s.A, Variant::fp32_simt, 16); },
                       +[](const LinearSystem& s) { (void)solve(s, cpu_options(Variant::ec_fp16)); },
                       +[](const LinearSystem& s) { (void)solve_fp64_baseline(s); }}) {
    CHECK_THROWS_AS(attempt(sys), InvalidInput);
    CHECK_THROWS_WITH(attempt(sys), Catch::Matchers::Contains("exactly singular") &&
                                        Catch::Matchers::Contains("column 26"));
  }
  // A zero row is never chosen as pivot row: in the LU its zero pivot comes last, in column 40;
  // the solver finds the row itself before any LU (an O(n^2) scan).
  sys = randsvd(40, 10, 2);
  sys.A.row(30).setZero();
  CHECK_THROWS_WITH(lu_factorize(sys.A, Variant::fp32_simt, 16), Catch::Matchers::Contains("column 40"));
  CHECK_THROWS_WITH(solve(sys, cpu_options(Variant::fp32_simt)),
                    Catch::Matchers::Contains("exactly singular") && Catch::Matchers::Contains("row 31"));
}

TEST_CASE(
    "a system scaled by 2^+-140 is solved bit for bit as the unscaled one: the "
    "equilibration is exact",
    "[solver]") {
  // 2^140 overflows FP32 (and FP16 far sooner), 2^-140 is below FP32's normal range: without
  // equilibration the FP32 copy of A would be inf or flushed. (2^s A) x = 2^s b has the same x.
  const LinearSystem plain = randsvd(96, 1e2, 9);
  for (int e : {140, -140}) {
    LinearSystem scaled = plain;
    scaled.A *= std::ldexp(1.0, e);
    scaled.b *= std::ldexp(1.0, e);
    for (Variant v : {Variant::fp32_simt, Variant::ec_fp16, Variant::fp16_tc}) {
      const SolveResult p = solve(plain, cpu_options(v));
      const SolveResult s = solve(scaled, cpu_options(v));
      INFO("2^" << e << ", " << to_string(v) << ": " << s.note);
      CHECK(s.converged);
      CHECK(s.iterations == p.iterations);
      CHECK(s.x == p.x);
      CHECK(s.backward_error == p.backward_error);
    }
  }
}

TEST_CASE("rows scaled by up to 2^+-40 and columns by 2^+-20 still converge", "[solver]") {
  const LinearSystem plain = randsvd(96, 1e2, 9);
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int> row_exp(-40, 40), col_exp(-20, 20);
  Eigen::VectorXd dr(96), dc(96);
  for (int i = 0; i < 96; ++i) dr[i] = std::ldexp(1.0, row_exp(rng)), dc[i] = std::ldexp(1.0, col_exp(rng));
  // (Dr A Dc) (Dc^-1 x) = Dr b. The range of A's entries (2^120) is far beyond FP16's and, for
  // the normwise criterion, the large rows dominate: fewer iterations may suffice.
  LinearSystem scaled;
  scaled.A = dr.asDiagonal() * plain.A * dc.asDiagonal();
  scaled.b = dr.asDiagonal() * plain.b;
  scaled.x_true = dc.cwiseInverse().asDiagonal() * *plain.x_true;
  for (Variant v : {Variant::fp32_simt, Variant::ec_fp16, Variant::fp16_tc}) {
    const SolveResult p = solve(plain, cpu_options(v));
    const SolveResult s = solve(scaled, cpu_options(v));
    INFO(to_string(v) << ": " << s.note);
    CHECK(s.converged);
    CHECK(dsgesv_criterion(scaled, s.x));
    CHECK(s.iterations <= p.iterations + 1);
  }
}

TEST_CASE("several right-hand sides converge together; the backward error is their maximum", "[solver]") {
  const LinearSystem sys = randsvd(64, 1e4, 4, 3);
  const SolveResult r = solve(sys, cpu_options(Variant::ec_tf32));
  CHECK(r.converged);
  CHECK(r.x.cols() == 3);
  CHECK(dsgesv_criterion(sys, r.x));
  double worst = 0;
  const double norm_a = sys.A.cwiseAbs().rowwise().sum().maxCoeff();
  for (int j = 0; j < 3; ++j)
    worst = std::max(
        worst, (sys.b.col(j) - sys.A * r.x.col(j)).lpNorm<Eigen::Infinity>() /
                   (norm_a * r.x.col(j).lpNorm<Eigen::Infinity>() + sys.b.col(j).lpNorm<Eigen::Infinity>()));
  CHECK(r.backward_error == Approx(worst).epsilon(1e-12));
}

TEST_CASE(
    "the FP64 fallback rescues a failed refinement and says so; max_iterations 0 is the "
    "LU solve alone",
    "[solver]") {
  const LinearSystem sys = randsvd(96, 1e8, 7);
  SolveOptions o = cpu_options(Variant::fp16_tc);
  o.fallback = true;
  const SolveResult r = solve(sys, o);
  CHECK(r.fallback_used);
  CHECK(r.converged);
  CHECK(r.note.find("fallback") != std::string::npos);
  CHECK(dsgesv_criterion(sys, r.x));

  o = cpu_options(Variant::fp32_simt);
  o.max_iterations = 0;
  const SolveResult lu_only = solve(sys, o);
  CHECK(lu_only.iterations == 0);
  CHECK(lu_only.history.size() == 1);
  CHECK_FALSE(lu_only.converged);

  const SolveResult baseline = solve_fp64_baseline(sys);
  CHECK(baseline.converged);
  CHECK(baseline.iterations == 0);
  CHECK(baseline.history.size() == 1);
}

TEST_CASE("solve throws Unavailable for the cuda path without a device and for a variant the cpu lacks",
          "[solver]") {
  const LinearSystem sys = randsvd(16, 10, 1);
  SolveOptions o = cpu_options(Variant::fp32_simt);
  o.backend = Backend::cuda;
  if (!cuda::device_available()) CHECK_THROWS_AS(solve(sys, o), Unavailable);  // [gpu]: test_solver_cuda.cpp
  CHECK_THROWS_AS(solve(sys, cpu_options(Variant::cublas_tf32)), Unavailable);
  o = cpu_options(Variant::fp32_simt);
  o.block_size = -1;
  CHECK_THROWS_AS(solve(sys, o), InvalidInput);
}

TEST_CASE("block size 0 is the backend's default, and the result says which nb the LU ran with",
          "[solver]") {
  // The default is the library's, not the command line's: a library caller on cuda gets 512,
  // and 1024 from n = kLargeBlockFromCuda on; the cpu 128 at every n.
  CHECK(default_block_size(Backend::cpu) == kDefaultBlockSizeCpu);
  CHECK(default_block_size(Backend::cpu, 100000) == kDefaultBlockSizeCpu);
  CHECK(default_block_size(Backend::cuda) == kDefaultBlockSizeCuda);
  CHECK(default_block_size(Backend::cuda, kLargeBlockFromCuda - 1) == kDefaultBlockSizeCuda);
  CHECK(default_block_size(Backend::cuda, kLargeBlockFromCuda) == kLargeBlockSizeCuda);
  const LinearSystem sys = randsvd(40, 10, 1);
  SolveOptions o = cpu_options(Variant::fp32_simt);
  o.block_size = 0;
  const SolveResult r = solve(sys, o);
  CHECK(r.converged);
  CHECK(r.block_size == kDefaultBlockSizeCpu);
  o.block_size = 16;
  CHECK(solve(sys, o).block_size == 16);
}

// --- command line -------------------------------------------------------------------------------

TEST_CASE("tcsolve solve --json prints the solve object; --output writes x that reads back", "[solver]") {
  TempDir dir;
  const std::string input = dir.path("sys.h5"), output = dir.path("x.h5");
  const LinearSystem sys = randsvd(48, 1e2, 3);
  write_system(input, sys, false);
  CommandResult r = run_tcsolve("solve --input '" + input + "' --backend cpu --variant ec-fp16 " +
                                "--block-size 16 --json --output '" + output + "'");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json doc = require_one_object(r);
  CHECK(member(doc, "command").string == "solve");
  CHECK(member(doc, "input").string == input);
  CHECK(member(doc, "n").number == 48);
  CHECK(member(doc, "nrhs").number == 1);
  check_solve_members(doc, false);
  CHECK(member(doc, "variant").string == "ec-fp16");
  CHECK(member(doc, "resolved_variant").string == "ec-fp16");
  CHECK(member(doc, "backend").string == "cpu");
  CHECK(member(doc, "converged").boolean);
  CHECK(member(doc, "forward_error").type == Json::Type::number);

  const Solution s = read_solution(output);
  CHECK(s.x_is_vector);
  REQUIRE(s.x.rows() == 48);
  CHECK((s.x - *sys.x_true).lpNorm<Eigen::Infinity>() <= 1e-12);
  CHECK(s.attributes.variant == "ec-fp16");
  CHECK(s.attributes.backend == "cpu");
  CHECK(s.attributes.converged);
  CHECK(s.attributes.iterations == static_cast<int>(member(doc, "iterations").number));
  CHECK(s.attributes.backward_error == member(doc, "backward_error").number);

  // The output exists now: refused without --force (before solving), replaced with it.
  r = run_tcsolve("solve --input '" + input + "' --backend cpu --output '" + output + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("exists") != std::string::npos);
  r = run_tcsolve("solve --input '" + input + "' --backend cpu --output '" + output + "' --force");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("converged") != std::string::npos);
}

TEST_CASE("tcsolve solve exits 3 when it does not converge, still printing and writing the result",
          "[solver]") {
  TempDir dir;
  const std::string input = dir.path("hard.h5"), output = dir.path("x.h5");
  write_system(input, randsvd(64, 1e8, 2), false);
  const CommandResult r =
      run_tcsolve("solve --input '" + input + "' --backend cpu --variant fp16-tc --block-size 16 " +
                  "--max-iter 2 --no-fallback --json --output '" + output + "'");
  INFO(r);
  CHECK(r.exit_code == 3);
  const Json doc = require_one_object(r);
  check_solve_members(doc, false);
  CHECK_FALSE(member(doc, "converged").boolean);
  CHECK_FALSE(member(doc, "fallback").boolean);
  CHECK(member(doc, "iterations").number <= 2);
  const Solution s = read_solution(output);
  CHECK_FALSE(s.attributes.converged);
  CHECK(s.attributes.variant == "fp16-tc");
}

TEST_CASE("tcsolve solve exits 2 for a singular matrix and 4 for an unavailable variant or backend",
          "[solver]") {
  TempDir dir;
  const std::string input = dir.path("singular.h5");
  LinearSystem sys = randsvd(24, 10, 1);
  sys.A.col(6).setZero();
  sys.x_true.reset();
  write_system(input, sys, false);
  CommandResult r = run_tcsolve("solve --input '" + input + "' --backend cpu --json");
  INFO(r);
  CHECK(r.exit_code == 2);
  // --json: one error object on stdout (docs/architecture.md, JSON), one line on stderr.
  const Json doc = require_one_object(r);
  const Json& error = member(doc, "error");
  CHECK(member(error, "exit_code").number == 2);
  CHECK(contains(member(error, "message").string, "column 7"));
  CHECK(count_lines(r.err) == 1);
  CHECK(contains(r.err, "column 7"));

  // Two equal rows of a consistent system (issue #14: exited 0 "converged", forward error 0.26).
  const std::string equal_rows = dir.path("equal_rows.h5");
  sys = randsvd(48, 10, 1);
  sys.A.row(40) = sys.A.row(3);
  sys.b = sys.A * *sys.x_true;
  write_system(equal_rows, sys, false);
  r = run_tcsolve("solve --input '" + equal_rows + "' --backend cpu --block-size 16");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "exactly singular"));
  CHECK(contains(r.err, "rows 4 and 41"));

  r = run_tcsolve("solve --input '" + input + "' --backend cpu --variant cublas-tf32");
  INFO(r);
  CHECK(r.exit_code == 4);
  CHECK(contains(r.err, "cublas-tf32"));
  r = run_tcsolve("solve --input '" + input + "' --backend cpu --refine newton");
  INFO(r);
  CHECK(r.exit_code == 2);
  r = run_tcsolve("solve --backend cpu");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--input"));
}

TEST_CASE("tcsolve compare prints one object with a result per variant plus the fp64-lu baseline",
          "[solver]") {
  TempDir dir;
  const std::string input = dir.path("sys.h5"), csv = dir.path("rows.csv");
  write_system(input, randsvd(48, 1e4, 8), false);
  CommandResult r = run_tcsolve("compare --input '" + input + "' --backend cpu --block-size 16 " +
                                "--variants fp32-simt,ec-tf32,fp16-tc --json --csv '" + csv + "'");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json doc = require_one_object(r);
  CHECK(member(doc, "command").string == "compare");
  CHECK(member(doc, "input").string == input);
  CHECK(member(doc, "n").number == 48);
  const Json& results = member(doc, "results");
  REQUIRE(results.items.size() == 4);
  const char* names[] = {"fp32-simt", "ec-tf32", "fp16-tc"};
  for (int i = 0; i < 3; ++i) {
    check_solve_members(results.items[static_cast<std::size_t>(i)], false);
    CHECK(member(results.items[static_cast<std::size_t>(i)], "variant").string == names[i]);
  }
  const Json& baseline = results.items[3];
  check_solve_members(baseline, true);
  CHECK(baseline.find("variant") == nullptr);
  CHECK(member(baseline, "method").string == "fp64-lu");
  CHECK(member(baseline, "converged").boolean);
  CHECK(count_lines(read_file(csv)) == 5);  // header + 4 rows

  // A named variant the backend lacks: exit 4; from "all" it is skipped and named.
  r = run_tcsolve("compare --input '" + input + "' --backend cpu --variants fp32-simt,cublas-fp16");
  INFO(r);
  CHECK(r.exit_code == 4);
  CHECK(contains(r.err, "cublas-fp16"));
}

TEST_CASE("tcsolve compare prints a table and --plot makes a PNG when gnuplot is present", "[solver]") {
  TempDir dir;
  const std::string input = dir.path("sys.h5"), png = dir.path("history.png");
  write_system(input, randsvd(32, 1e2, 8), false);
  const CommandResult r = run_tcsolve("compare --input '" + input + "' --backend cpu " +
                                      "--block-size 8 --variants all --plot '" + png + "'");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  for (const VariantInfo& v : kVariants) {
    INFO(v.name);
    if (v.on_cpu)
      CHECK(contains(r.out, "\n" + std::string(v.name) + " "));  // its row
    else
      CHECK(contains(r.out, "skipped " + std::string(v.name) + ":"));
  }
  CHECK(contains(r.out, "fp64-lu"));
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    WARN("gnuplot is not installed: --plot is not checked");
    CHECK(contains(r.err, "gnuplot"));
    return;
  }
  const std::string head = read_file(png).substr(0, 8);
  CHECK(head == "\x89PNG\r\n\x1a\n");
}

TEST_CASE("cuda_solve_bytes counts A, the FP32 factors, the fallback's FP64 LU and the vectors", "[solver]") {
  // The check that refuses a cuda solve before it allocates (solver_cuda.cpp) and the CLI's
  // (app/input.cpp) use this count: 8 n^2 (A) + 4 p^2 (the factors) + 8 n^2 with the fallback.
  SolveOptions o;
  const double mib64 = 64.0 * 1024 * 1024;
  const double n = 32768, vectors = 16 * n * 8;
  CHECK(cuda_solve_bytes(32768, 1, o) == 20 * n * n + vectors + mib64);
  o.fallback = false;
  CHECK(cuda_solve_bytes(32768, 1, o) == 12 * n * n + vectors + mib64);
  o.pivoting = Pivoting::rbt;  // the factors of order p = n rounded up to a multiple of 4
  CHECK(cuda_solve_bytes(1001, 2, o) == 8.0 * 1001 * 1001 + 4.0 * 1004 * 1004 + 16.0 * 1001 * 2 * 8 + mib64);
  // the figure: n of about 57000 fits an 80 GB H100 (79.2 GiB usable), with the fallback
  o = SolveOptions{};
  CHECK(cuda_solve_bytes(57000, 1, o) < 79.2 * 1024 * 1024 * 1024);
  CHECK(cuda_solve_bytes(66000, 1, o) > 79.2 * 1024 * 1024 * 1024);
}

TEST_CASE("fp64_below: auto solves small systems by an FP64 LU refined to dsgesv's criterion, and says so; "
          "other variants and larger systems run the mixed path", "[solver]") {
  CHECK(fp64_below_default(Backend::cpu) == 0);
  CHECK(fp64_below_default(Backend::cuda) == kFp64BelowCuda);
  {  // the defaults: cuda's small systems take the FP64 LU (the measured crossover), cpu's never
    SolveOptions d;
    d.variant = Variant::auto_;
    CHECK(uses_fp64_lu(d, Backend::cuda, kFp64BelowCuda - 1));
    CHECK_FALSE(uses_fp64_lu(d, Backend::cuda, kFp64BelowCuda));
    CHECK_FALSE(uses_fp64_lu(d, Backend::cpu, 64));
    d.variant = Variant::ec_fp16;
    CHECK_FALSE(uses_fp64_lu(d, Backend::cuda, 64));
  }
  SolveOptions o = cpu_options(Variant::auto_);
  o.fallback = true;
  const LinearSystem small = randsvd(96, 1e6, 21);
  // the default: the mixed path on the cpu
  const SolveResult mixed = solve(small, o);
  CHECK_FALSE(mixed.fp64_lu);
  CHECK(mixed.resolved_variant == Variant::ec_fp16);
  // n = 96 < 100: the FP64 LU, refined in FP64 (and the estimate through it)
  o.fp64_below = 100;
  o.condition_estimate = ConditionEstimate::always;
  CHECK(uses_fp64_lu(o, Backend::cpu, 96));
  const SolveResult r = solve(small, o);
  INFO(r.note);
  CHECK(r.fp64_lu);
  CHECK(r.resolved_variant == Variant::fp64);
  CHECK(r.converged);
  CHECK(dsgesv_criterion(small, r.x));
  CHECK(r.iterations <= 1);  // backward stable in FP64: the first solve, or one step
  CHECK_FALSE(r.fallback_used);
  REQUIRE(r.condition_estimate.has_value());
  CHECK(*r.condition_estimate >= 1e5);  // cond_2 = 1e6, and cond_1 within a factor n of it
  CHECK(*r.condition_estimate <= 1e6 * 96 * 10);
  REQUIRE(r.forward_error.has_value());
  CHECK(*r.forward_error <= 1e6 * 96 * kEps64 * 10);  // cond * n * eps64: FP64 accuracy
  CHECK(r.note.find("below fp64_below = 100") != std::string::npos);
  // n = 96 is not below 96; ec-fp16 is never replaced
  o.fp64_below = 96;
  CHECK_FALSE(solve(small, o).fp64_lu);
  o.fp64_below = 100;
  o.variant = Variant::ec_fp16;
  CHECK_FALSE(solve(small, o).fp64_lu);
  // an exactly singular A is refused as on the mixed path; a bad value is refused
  o.variant = Variant::auto_;
  LinearSystem singular = small;
  singular.A.row(5) = singular.A.row(7);
  CHECK_THROWS_AS(solve(singular, o), InvalidInput);
  o.fp64_below = -2;
  CHECK_THROWS_AS(solve(small, o), InvalidInput);
}

TEST_CASE("cuda fp64_below: the FP64 LU path on the device converges like the cpu's", "[solver][gpu]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device: skipping the cuda fp64_below test (" << cuda::device_name() << ")");
    return;
  }
  SolveOptions o = cpu_options(Variant::auto_);
  o.fallback = true;
  o.fp64_below = 1000;
  o.condition_estimate = ConditionEstimate::always;  // compared below
  for (const double cond : {1e2, 1e8}) {
    const LinearSystem sys = randsvd(300, cond, 31, 2);
    INFO("cond " << cond);
    o.backend = Backend::cpu;
    const SolveResult cpu = solve(sys, o);
    o.backend = Backend::cuda;
    const SolveResult gpu = solve(sys, o);
    INFO(gpu.note);
    CHECK(gpu.fp64_lu);
    CHECK(gpu.resolved_variant == Variant::fp64);
    CHECK(gpu.converged);
    CHECK(dsgesv_criterion(sys, gpu.x));
    CHECK(gpu.iterations <= cpu.iterations + 1);
    REQUIRE(gpu.condition_estimate.has_value());
    CHECK(*gpu.condition_estimate == Approx(*cpu.condition_estimate).epsilon(0.5));
  }
  LinearSystem singular = randsvd(200, 10, 3);
  singular.A.col(4) = singular.A.col(9);
  o.backend = Backend::cuda;
  CHECK_THROWS_AS(solve(singular, o), InvalidInput);
}
