// Issue #31, the solver's part: an easy system in FP64's subnormal range converges (it is solved
// as its exactly scaled copy, prescale.hpp), a badly scaled system is judged by the condition of
// its equilibrated matrix (condition.hpp), a solve stops when the caller's interrupt flag is
// set (SolveOptions::interrupt, GemmOptions::interrupt), and SolveOptions::progress reports the
// LU's share of flops. [solver]: the cpu path; [gpu]: the subnormal systems on the cuda path,
// compared with the cpu's result (skipped, with a warning, without a device).
#include <Eigen/Dense>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/solver/system.hpp"
#include "temp_dir.hpp"

namespace {

using namespace tcsolve;

constexpr double kEps64 = 0x1p-53;  ///< LAPACK dlamch('E')

#define TCSOLVE_TRUST_SKIP_WITHOUT_GPU(what)                                            \
  if (!tcsolve::cuda::device_available()) {                                             \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                             \
  }

/// The report's system: A = U(-1,1) * scale (48 x 48; below about 2.2e-308 the products round to
/// FP64's subnormal grid), x = U(-1,1), b = A x formed in FP64 (rounded there too). The system
/// is what the file would hold: A and b as rounded, whatever x solves them exactly.
LinearSystem subnormal_system(int n, double scale, unsigned seed) {
  std::srand(seed);
  LinearSystem s;
  s.A = Eigen::MatrixXd::Random(n, n) * scale;
  const Eigen::VectorXd x = Eigen::VectorXd::Random(n);
  s.b = s.A * x;
  s.b_is_vector = true;
  return s;
}

/// The same system times 2^k with k the exponent that brings max|A| to [1, 2): exact (scaling a
/// subnormal up by a power of two keeps all its bits), so its residuals are in the normal range.
LinearSystem scaled_up(const LinearSystem& s) {
  int e = 0;
  std::frexp(s.A.cwiseAbs().maxCoeff(), &e);
  LinearSystem u = s;
  u.A = s.A.unaryExpr([e](double v) { return std::ldexp(v, 1 - e); });
  u.b = s.b.unaryExpr([e](double v) { return std::ldexp(v, 1 - e); });
  REQUIRE((u.A.unaryExpr([e](double v) { return std::ldexp(v, e - 1); }).array() == s.A.array()).all());
  return u;
}

/// dsgesv's ratio ||r|| / (sqrt(n) ||x|| ||A|| eps64) on the normal-range copy u (<= 1: met).
double dsgesv_ratio(const LinearSystem& u, const Eigen::MatrixXd& x) {
  const double norm_a = u.A.cwiseAbs().rowwise().sum().maxCoeff();
  return (u.b - u.A * x).lpNorm<Eigen::Infinity>() /
         (std::sqrt(static_cast<double>(u.n())) * x.lpNorm<Eigen::Infinity>() * norm_a * kEps64);
}

/// Solves the subnormal systems at scales 1e-300 .. 1e-315 on `backend` with fp32-simt and auto;
/// each must converge to dsgesv's criterion on the scaled copy, and x must be the FP64 solution
/// of the scaled copy (Eigen's partial-pivot LU) within the forward error that criterion allows,
/// cond_inf(A) sqrt(n) eps64 (times 4 for the rounding of the two solutions).
void check_subnormal(Backend backend) {
  const int n = 48;
  for (const double scale : {1e-300, 1e-305, 1e-309, 1e-310, 1e-312, 1e-315}) {
    const LinearSystem s = subnormal_system(n, scale, 11);
    const LinearSystem u = scaled_up(s);
    const Eigen::VectorXd x_ref = u.A.partialPivLu().solve(u.b);
    const double cond_inf = u.A.cwiseAbs().rowwise().sum().maxCoeff() *
                            u.A.inverse().cwiseAbs().rowwise().sum().maxCoeff();
    for (const Variant v : {Variant::fp32_simt, Variant::auto_}) {
      SolveOptions o;
      o.backend = backend;
      o.variant = v;
      o.block_size = 16;
      const SolveResult r = solve(s, o);
      INFO("scale " << scale << ", " << to_string(v) << ", " << to_string(backend) << ": " << r.note);
      CHECK(r.converged);
      CHECK_FALSE(r.fallback_used);
      CHECK(r.x.allFinite());
      // x is the scaled copy's solution times 2^0 (b and A scaled alike): the same numbers.
      CHECK(dsgesv_ratio(u, r.x) <= 1.0);
      const double fe = (r.x - x_ref).lpNorm<Eigen::Infinity>() / x_ref.lpNorm<Eigen::Infinity>();
      CHECK(fe <= 4 * cond_inf * std::sqrt(static_cast<double>(n)) * kEps64);
      CHECK(r.note.find("exactly scaled") != std::string::npos);
    }
  }
}

/// Rows of a random 60 x 60 system scaled by 10^-300 .. 10^300 (cond_1(A) overflows): the
/// equilibrated A_s = R A C is the random matrix up to powers of two. The solve converges, its x
/// is accurate, and it is not called untrustworthy: cond_1(A)'s estimate is at the warning's
/// level, cond_1(A_s)'s (condition_estimate_equilibrated) is that of the random matrix, and the
/// note says the system is badly scaled. With a column equal to the sum of two others (A_s
/// singular to FP64's precision), the same scaling still warns.
void check_badly_scaled(Backend backend) {
  const int n = 60;
  LinearSystem base = subnormal_system(n, 1.0, 13);
  const Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(n, -1.0, 1.0);
  const double cond_random = base.A.cwiseAbs().colwise().sum().maxCoeff() *
                             base.A.inverse().cwiseAbs().colwise().sum().maxCoeff();
  for (const bool singular : {false, true}) {
    LinearSystem s = base;
    if (singular) s.A.col(10) = s.A.col(3) + s.A.col(4);
    for (int i = 0; i < n; ++i) s.A.row(i) *= std::pow(10.0, -300.0 + 600.0 * i / (n - 1));
    s.b = s.A * x;
    s.x_true = x;
    SolveOptions o;
    o.backend = backend;
    o.variant = Variant::fp32_simt;
    o.block_size = 16;
    o.condition_estimate = ConditionEstimate::always;
    const SolveResult r = solve(s, o);
    INFO(to_string(backend) << (singular ? ", singular" : "") << ": " << r.note);
    for (const std::string& w : r.warnings) INFO("warning: " << w);
    REQUIRE(r.condition_estimate.has_value());
    CHECK(*r.condition_estimate * kEps64 >= 1e-3);  // cond_1(A) alone would warn
    REQUIRE(r.condition_estimate_equilibrated.has_value());
    const bool warned = !r.warnings.empty() && r.warnings.front().find("cannot be trusted") != std::string::npos;
    if (!singular) {
      CHECK(r.converged);
      // Hager's estimate of the equilibrated matrix: a lower bound, within a factor 10 of the
      // random matrix's cond_1 (A_s differs from it by powers of two per row and column).
      CHECK(*r.condition_estimate_equilibrated <= 10 * cond_random);
      CHECK(*r.condition_estimate_equilibrated >= cond_random / 100);
      CHECK_FALSE(warned);
      CHECK(r.note.find("badly scaled") != std::string::npos);
      REQUIRE(r.forward_error.has_value());
      CHECK(*r.forward_error <= *r.condition_estimate_equilibrated * n * kEps64 * 10);
    } else {
      CHECK(*r.condition_estimate_equilibrated * kEps64 >= 1e-3);
      CHECK(warned);
    }
  }
}

TEST_CASE("cpu: rows scaled 1e-300..1e300 are badly scaled, not untrustworthy: the equilibrated condition is estimated",
          "[solver]") {
  check_badly_scaled(Backend::cpu);
}

TEST_CASE("cuda: rows scaled 1e-300..1e300 are badly scaled, not untrustworthy: the equilibrated condition is estimated",
          "[gpu]") {
  TCSOLVE_TRUST_SKIP_WITHOUT_GPU("the cuda badly scaled system");
  check_badly_scaled(Backend::cuda);
}

TEST_CASE("cpu: an easy 48 x 48 system scaled by 1e-300 .. 1e-315 converges (solved as its exact scaled copy)",
          "[solver]") {
  check_subnormal(Backend::cpu);
}

TEST_CASE("cpu: a system away from underflow is solved as given, bitwise as its 2^-20 scaled copy's x",
          "[solver]") {
  // max|A| = 2^-20 is far above 2^-511: no prescaling (the note says nothing), and the solve is
  // scale-invariant: the same x for A and 2^-20 A with b scaled alike.
  LinearSystem s = subnormal_system(40, 1.0, 3);
  LinearSystem t = s;
  t.A *= 0x1p-20;
  t.b *= 0x1p-20;
  SolveOptions o;
  o.backend = Backend::cpu;
  o.variant = Variant::fp32_simt;
  o.block_size = 16;
  const SolveResult a = solve(s, o), b = solve(t, o);
  CHECK(b.note.find("exactly scaled") == std::string::npos);
  CHECK((a.x.array() == b.x.array()).all());
}

TEST_CASE("cpu: SolveOptions::interrupt set before the solve stops it with Interrupted", "[solver]") {
  const LinearSystem s = subnormal_system(64, 1.0, 5);
  std::atomic<bool> stop{true};
  SolveOptions o;
  o.backend = Backend::cpu;
  o.variant = Variant::ec_fp16;
  o.block_size = 16;
  o.interrupt = &stop;
  CHECK_THROWS_AS(solve(s, o), Interrupted);
  stop = false;  // the same options without the flag set: a normal solve
  CHECK(solve(s, o).converged);
}

TEST_CASE("cpu: a flag set during the LU stops the solve at the next block, and progress reports the LU's share",
          "[solver]") {
  const LinearSystem s = subnormal_system(96, 1.0, 7);
  std::atomic<bool> stop{false};
  std::vector<double> lu_done;
  SolveOptions o;
  o.backend = Backend::cpu;
  o.variant = Variant::ec_fp16;
  o.block_size = 16;  // 6 blocks
  o.progress = [&](std::string_view stage, double done) {
    if (stage == "lu") lu_done.push_back(done);
  };
  // Without the flag: one report per block, increasing, the last 1.
  const SolveResult r = solve(s, o);
  CHECK(r.converged);
  REQUIRE(lu_done.size() == 6);
  for (std::size_t i = 1; i < lu_done.size(); ++i) CHECK(lu_done[i] > lu_done[i - 1]);
  CHECK(lu_done.front() == Approx(1 - std::pow(80.0 / 96, 3)));
  CHECK(lu_done.back() == 1.0);
  // The flag raised from the first report: the next check (the next block's product, polled per
  // output column) throws, so no second report comes.
  lu_done.clear();
  o.interrupt = &stop;
  o.progress = [&](std::string_view stage, double done) {
    if (stage == "lu") lu_done.push_back(done);
    stop = true;
  };
  CHECK_THROWS_AS(solve(s, o), Interrupted);
  CHECK(lu_done.size() == 1);
}

TEST_CASE("cpu: an emulated product with GemmOptions::interrupt set throws Interrupted", "[solver]") {
  const int m = 64, n = 48, k = 32;
  std::vector<float> a(m * k, 1.0f), b(k * n, 1.0f), c(m * n, 0.0f);
  std::atomic<bool> stop{true};
  GemmOptions g;
  g.interrupt = &stop;
  for (const Variant v : {Variant::ec_fp16, Variant::ootomo_fp16, Variant::fp32_simt})
    CHECK_THROWS_AS(gemm(Backend::cpu, v, Op::n, Op::n, m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f, c.data(), m, g),
                    Interrupted);
  stop = false;
  gemm(Backend::cpu, Variant::ec_fp16, Op::n, Op::n, m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f, c.data(), m, g);
  CHECK(c[0] == static_cast<float>(k));
}

TEST_CASE("cuda: the subnormal systems converge as on the cpu, to the FP64 solution of the exact scaled copy", "[gpu]") {
  TCSOLVE_TRUST_SKIP_WITHOUT_GPU("the cuda subnormal systems");
  // Each x is checked against the FP64 solution of the exact scaled copy within the bound the
  // dsgesv criterion allows (check_subnormal), on both backends: the same result.
  check_subnormal(Backend::cuda);
}

/// A Matrix Market file of A (column by column, every entry).
void write_mtx(const std::string& path, const Eigen::MatrixXd& A) {
  std::ofstream f(path);
  f << "%%MatrixMarket matrix coordinate real general\n" << A.rows() << ' ' << A.cols() << ' ' << A.size() << '\n';
  char line[96];
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    for (Eigen::Index i = 0; i < A.rows(); ++i) {
      std::snprintf(line, sizeof line, "%d %d %.17g\n", static_cast<int>(i + 1), static_cast<int>(j + 1), A(i, j));
      f << line;
    }
}

/// The report's case through the CLI: the subnormal A written to a Matrix Market file (solve
/// takes it with x = ones, b = A x), solved with fp32-simt and the default variant on `backend`:
/// exit 0, converged, and a forward error against x = ones within the dsgesv bound's
/// cond sqrt(n) eps64 (cond_inf of the scaled copy).
void check_subnormal_cli(const std::string& backend) {
  const int n = 48;
  test::TempDir dir("subnormal");
  for (const double scale : {1e-300, 1e-309, 1e-315}) {
    const LinearSystem s = subnormal_system(n, scale, 17);
    const std::string mtx = dir.path("sub.mtx");
    write_mtx(mtx, s.A);
    const LinearSystem u = scaled_up(s);
    const double cond_inf = u.A.cwiseAbs().rowwise().sum().maxCoeff() *
                            u.A.inverse().cwiseAbs().rowwise().sum().maxCoeff();
    for (const std::string variant : {"fp32-simt", "auto"}) {
      const test::CommandResult r =
          test::run_tcsolve("solve --input " + mtx + " --backend " + backend + " --variant " + variant + " --json");
      INFO(r);
      CHECK(r.exit_code == 0);
      const test::Json j = test::require_one_object(r);
      REQUIRE(j.find("converged") != nullptr);
      REQUIRE(j.find("forward_error") != nullptr);
      CHECK(j.find("converged")->boolean);
      CHECK(j.find("forward_error")->number <= 4 * cond_inf * std::sqrt(static_cast<double>(n)) * kEps64);
    }
  }
}

TEST_CASE("cli: a cpu solve's progress gives the LU's share and an end estimate, and names the fast variant",
          "[cli]") {
  // generate's random 256 x 256 system, block size 32: 8 blocks, each reported (--progress
  // always prints every detail at once; auto shows it on the 30 s heartbeat of long runs).
  test::TempDir dir("progress");
  const std::string sys = dir.path("sys.h5");
  REQUIRE(test::run_tcsolve("generate --backend cpu --n 256 --output " + sys).exit_code == 0);
  const test::CommandResult r =
      test::run_tcsolve("solve --input " + sys + " --backend cpu --variant ec-fp16 --block-size 32 --progress always");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(test::contains(r.err, "LU 100% done, about 0 s left"));
  CHECK(test::contains(r.err, "% done, about "));
  CHECK(test::contains(r.err, "--variant fp32-simt is its fast path"));
  const test::CommandResult fast =
      test::run_tcsolve("solve --input " + sys + " --backend cpu --variant fp32-simt --block-size 32 --progress always");
  INFO(fast);
  CHECK(fast.exit_code == 0);
  CHECK(test::contains(fast.err, "LU 100% done"));
  CHECK_FALSE(test::contains(fast.err, "fast path"));
}

TEST_CASE("cli: solve --json of a badly scaled system gives condition_estimate_equilibrated and no warning", "[cli]") {
  const int n = 40;
  LinearSystem s = subnormal_system(n, 1.0, 19);
  for (int i = 0; i < n; ++i) s.A.row(i) *= std::pow(10.0, -300.0 + 600.0 * i / (n - 1));
  test::TempDir dir("badly_scaled");
  const std::string mtx = dir.path("scaled.mtx");
  write_mtx(mtx, s.A);
  const test::CommandResult r = test::run_tcsolve(
      "solve --input " + mtx + " --backend cpu --variant fp32-simt --json --condition-estimate always");
  INFO(r);
  CHECK(r.exit_code == 0);
  const test::Json j = test::require_one_object(r);
  REQUIRE(j.find("condition_estimate_equilibrated") != nullptr);
  REQUIRE(j.find("condition_estimate_equilibrated")->type == test::Json::Type::number);
  CHECK(j.find("condition_estimate_equilibrated")->number * kEps64 < 1e-3);
  CHECK(j.find("warnings")->items.empty());
  CHECK(test::contains(j.find("note")->string, "badly scaled"));
  CHECK_FALSE(test::contains(r.err, "cannot be trusted"));
}

TEST_CASE("cli: a Matrix Market file's warnings are in solve's and compare's JSON as input_warnings", "[cli]") {
  // A diagonal 24 x 24 matrix with (3, 5) given twice (summed, and said), and the same without.
  const int n = 24;
  test::TempDir dir("input_warnings");
  auto write = [&](const std::string& path, bool repeat) {
    std::ofstream f(path);
    f << "%%MatrixMarket matrix coordinate real general\n" << n << ' ' << n << ' ' << n + (repeat ? 2 : 1) << '\n';
    for (int i = 1; i <= n; ++i) f << i << ' ' << i << " 2\n";
    f << "3 5 0.25\n";
    if (repeat) f << "3 5 0.25\n";
  };
  const std::string mtx = dir.path("repeated.mtx"), clean = dir.path("clean.mtx");
  write(mtx, true);
  write(clean, false);
  for (const std::string command : {"solve", "compare"}) {
    const test::CommandResult r = test::run_tcsolve(command + " --input " + mtx + " --backend cpu --json");
    INFO(r);
    CHECK(r.exit_code == 0);
    const test::Json j = test::require_one_object(r);
    REQUIRE(j.find("input_warnings") != nullptr);
    REQUIRE(j.find("input_warnings")->items.size() == 1);
    CHECK(test::contains(j.find("input_warnings")->items[0].string, "(3, 5)"));
  }
  // The clean file: an empty list.
  const test::CommandResult r = test::run_tcsolve("solve --input " + clean + " --backend cpu --json");
  INFO(r);
  CHECK(test::require_one_object(r).find("input_warnings")->items.empty());
}

TEST_CASE("cli: solve of an easy 48 x 48 system at 1e-300 .. 1e-315 exits 0 on the cpu", "[cli]") {
  check_subnormal_cli("cpu");
}

TEST_CASE("cli: solve of an easy 48 x 48 system at 1e-300 .. 1e-315 exits 0 on cuda", "[gpu]") {
  TCSOLVE_TRUST_SKIP_WITHOUT_GPU("the cuda CLI subnormal systems");
  check_subnormal_cli("cuda");
}

}  // namespace
