// Factor once, solve many (solver.hpp: factorize, solve(const Factorization&, b, trans)): bitwise
// the x of solve() on committed and generated systems, over the refinements, fp64_below and the
// fallback; a second right-hand side reuses the factors (no LU); transposed solves refined to
// dsgesv's criterion on A^T and within the perturbation bound of solve() of A^T; bad inputs.
// [gpu]: on cuda the factors stay on the device and each solve is solve()'s x bitwise (a second
// right-hand side, the kept fallback LU, an FP32-singular A); A^T and fp64_below solve whole.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve;
using namespace tcsolve::test;

constexpr double kEps64 = 0x1p-53;  ///< LAPACK dlamch('E')

/// Bitwise equality of two matrices (NaN payloads aside: the solver never returns NaN here).
bool bitwise_equal(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      if (std::memcmp(&a(i, j), &b(i, j), sizeof(double)) != 0) return false;
  return true;
}

Eigen::MatrixXd uniform(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = u(rng);
  return m;
}

/// cond_inf(M) = ||M||_inf ||M^-1||_inf in FP64 (small M only).
double cond_inf(const Eigen::MatrixXd& M) {
  const Eigen::MatrixXd inv = M.partialPivLu().inverse();
  return M.cwiseAbs().rowwise().sum().maxCoeff() * inv.cwiseAbs().rowwise().sum().maxCoeff();
}

SolveOptions cpu_options(Variant variant, int nb = 32) {
  SolveOptions o;
  o.backend = Backend::cpu;
  o.variant = variant;
  o.block_size = nb;
  return o;
}

/// factorize + solve against solve() for the same A, b and options: bitwise the same x and the
/// same outcome.
void check_same_as_solve(const LinearSystem& sys, const SolveOptions& options) {
  const SolveResult whole = solve(sys, options);
  const Factorization f = factorize(sys.A, options);
  const SolveResult parts = solve(f, sys.b);
  CHECK(bitwise_equal(parts.x, whole.x));
  CHECK(parts.converged == whole.converged);
  CHECK(parts.iterations == whole.iterations);
  CHECK(parts.fallback_used == whole.fallback_used);
  CHECK(parts.history == whole.history);
  CHECK(parts.condition_estimate == whole.condition_estimate);
  CHECK(parts.resolved_variant == whole.resolved_variant);
  CHECK(parts.factorization_reused);
  CHECK(parts.time_s.factorization == 0);
}

}  // namespace

TEST_CASE("factorize + solve gives bitwise solve()'s x on the committed systems", "[solver][factor]") {
  struct Case {
    const char* file;
    Variant variant;
  };
  // the emulated tensor-core variants on the small ones, fp32-simt (Eigen) on the larger
  const Case cases[] = {{"inputs/west0067.h5", Variant::auto_},
                        {"inputs/bfwa62.h5", Variant::ec_fp16},
                        {"inputs/randsvd_n256_c1e4.h5", Variant::fp32_simt},
                        {"inputs/olm500.h5", Variant::fp32_simt},
                        {"inputs/random_n512.h5", Variant::fp32_simt}};
  for (const Case& c : cases) {
    INFO(c.file);
    const LinearSystem sys = read_system(test_data_path(c.file));
    check_same_as_solve(sys, cpu_options(c.variant));
  }
}

TEST_CASE(
    "factorize + solve gives bitwise solve()'s x with every refinement, rbt, fp64_below and no fallback",
    "[solver][factor]") {
  const LinearSystem sys = with_ones(uniform(96, 96, 7));
  for (const Refinement r : {Refinement::classical, Refinement::gmres, Refinement::auto_}) {
    SolveOptions o = cpu_options(Variant::ec_tf32);
    o.refinement = r;
    INFO(to_string(r));
    check_same_as_solve(sys, o);
  }
  SolveOptions fp64 = cpu_options(Variant::auto_);
  fp64.fp64_below = 128;  // n = 96: the FP64 LU path
  check_same_as_solve(sys, fp64);
  CHECK(factorize(sys.A, fp64).fp64_lu());
  SolveOptions rbt = cpu_options(Variant::ec_fp16);
  rbt.pivoting = Pivoting::rbt;
  check_same_as_solve(sys, rbt);  // the transformed LU holds
  CHECK(solve(factorize(sys.A, rbt), sys.b).pivoting == Pivoting::rbt);
  rbt.max_iterations = 0;  // its refinement cannot converge: partial pivoting's LU, made then
  check_same_as_solve(sys, rbt);
  {
    const Factorization f = factorize(sys.A, rbt);
    CHECK(solve(f, sys.b).note.find("rbt: ") == 0);
    CHECK(bitwise_equal(solve(f, sys.b).x, solve(sys, rbt).x));  // the partial LU kept
    rbt.max_iterations = 30;
    LinearSystem t;
    t.A = sys.A.transpose();
    t.b = sys.b;
    const SolveResult rt =
        solve(factorize(sys.A, rbt), t.b, Transpose::yes);  // through A_s^-T = U A_r^-T V^T
    CHECK(rt.pivoting == Pivoting::rbt);
    CHECK(rt.converged);
    CHECK(dsgesv_criterion(t, rt.x));
  }
  SolveOptions no_estimate = cpu_options(Variant::fp32_simt);
  no_estimate.condition_estimate = ConditionEstimate::never;
  check_same_as_solve(sys, no_estimate);

  // ill-conditioned (cond 1e12): classical refinement with FP32 factors fails, the FP64
  // fallback (made on first need by the factorization) decides
  LinearSystem hard = with_ones(uniform(64, 64, 3));
  {
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(hard.A, Eigen::ComputeFullU | Eigen::ComputeFullV);
    Eigen::VectorXd s(64);
    for (int i = 0; i < 64; ++i) s[i] = std::pow(1e-12, i / 63.0);
    hard = with_ones(svd.matrixU() * s.asDiagonal() * svd.matrixV().transpose());
  }
  SolveOptions classical = cpu_options(Variant::fp32_simt);
  classical.max_iterations = 5;
  check_same_as_solve(hard, classical);
  CHECK(solve(factorize(hard.A, classical), hard.b).fallback_used);
  classical.fallback = false;
  check_same_as_solve(hard, classical);
}

TEST_CASE("a factorization solves new right-hand sides without a new LU, each as solve() would",
          "[solver][factor]") {
  const int n = 80;
  const Eigen::MatrixXd A = uniform(n, n, 11);
  const SolveOptions o = cpu_options(Variant::ec_fp16);
  const Factorization f = factorize(A, o);
  CHECK(f.n() == n);
  CHECK(f.seconds() > 0);
  CHECK(f.options().block_size == 32);
  for (unsigned seed : {21u, 22u}) {
    LinearSystem sys;
    sys.A = A;
    sys.b = uniform(n, 3, seed);  // three right-hand sides at once
    const SolveResult r = solve(f, sys.b);
    CHECK(r.factorization_reused);
    CHECK(r.time_s.factorization == 0);
    CHECK(r.converged);
    CHECK(dsgesv_criterion(sys, r.x));
    CHECK(bitwise_equal(r.x, solve(sys, o).x));
  }
}

TEST_CASE("a transposed solve meets dsgesv's criterion on A^T and solve()'s x of A^T within the bound",
          "[solver][factor]") {
  for (const Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
    for (const Refinement r : {Refinement::classical, Refinement::gmres}) {
      INFO(to_string(v) << " " << to_string(r));
      const int n = 70;
      Eigen::MatrixXd A = uniform(n, n, 5);
      A.row(3) *= 0x1p40;  // badly scaled rows: R and C differ, so A^T's equilibration is exercised
      A.col(9) *= 0x1p-30;
      SolveOptions o = cpu_options(v);
      o.refinement = r;
      o.condition_estimate = ConditionEstimate::always;
      const Factorization f = factorize(A, o);
      LinearSystem t;
      t.A = A.transpose();
      t.b = uniform(n, 2, 6);
      const SolveResult rt = solve(f, t.b, Transpose::yes);
      CHECK(rt.converged);
      CHECK(rt.factorization_reused);
      CHECK(dsgesv_criterion(t, rt.x));
      REQUIRE(rt.condition_estimate);
      // cond_1(A^T) estimated: a lower bound, usually within 3x (solver.hpp)
      const double cond1_t = cond_inf(A);  // ||A^T||_1 ||A^-T||_1 = cond_inf(A)
      CHECK(*rt.condition_estimate <= cond1_t * (1 + 1e-10));
      CHECK(*rt.condition_estimate >= cond1_t / 10);
      // Both x meet ||r|| <= sqrt(n) ||x|| ||A^T|| eps64, and x - x* = A^-T r: each within
      // cond_inf(A^T) sqrt(n) eps64 ||x|| of x* per column, so within twice that of each other.
      const SolveResult whole = solve(t, o);
      REQUIRE(whole.converged);
      const double bound = 2 * cond_inf(t.A) * std::sqrt(double(n)) * kEps64;
      for (Eigen::Index j = 0; j < t.b.cols(); ++j) {
        const double scale =
            std::max(rt.x.col(j).lpNorm<Eigen::Infinity>(), whole.x.col(j).lpNorm<Eigen::Infinity>());
        CHECK((rt.x.col(j) - whole.x.col(j)).lpNorm<Eigen::Infinity>() <= bound * scale * (1 + 1e-6));
      }
      // and the same factorization still solves A x = b as solve() does
      LinearSystem s;
      s.A = A;
      s.b = t.b;
      CHECK(bitwise_equal(solve(f, s.b).x, solve(s, o).x));
    }
  }
}

TEST_CASE("a transposed solve of an FP32-singular matrix takes the FP64 LU transposed", "[solver][factor]") {
  // 1 + 2^-30 rounds to 1 in FP32: the FP32 LU meets an exact zero pivot, the FP64 LU does not
  Eigen::MatrixXd A = uniform(40, 40, 9);
  A.row(1) = A.row(0);
  A(1, 5) += 0x1p-30 * A(1, 5);
  const Factorization f = factorize(A, cpu_options(Variant::fp32_simt));
  LinearSystem t;
  t.A = A.transpose();
  t.b = uniform(40, 1, 10);
  const SolveResult r = solve(f, t.b, Transpose::yes);
  CHECK(r.fallback_used);
  CHECK(dsgesv_criterion(t, r.x));
  LinearSystem s;
  s.A = A;
  s.b = t.b;
  CHECK(bitwise_equal(solve(f, s.b).x, solve(s, cpu_options(Variant::fp32_simt)).x));
}

TEST_CASE("factorize and solve(Factorization) refuse bad inputs as solve() does", "[solver][factor]") {
  const SolveOptions o = cpu_options(Variant::fp32_simt);
  CHECK_THROWS_AS(factorize(Eigen::MatrixXd(3, 4), o), InvalidInput);
  CHECK_THROWS_AS(factorize(Eigen::MatrixXd(0, 0), o), InvalidInput);
  Eigen::MatrixXd nan = uniform(8, 8, 1);
  nan(2, 3) = std::nan("");
  CHECK_THROWS_AS(factorize(nan, o), InvalidInput);
  Eigen::MatrixXd zero_column = uniform(8, 8, 1);
  zero_column.col(4).setZero();
  CHECK_THROWS_WITH(factorize(zero_column, o), Catch::Contains("exactly singular"));
  Eigen::MatrixXd equal_rows = uniform(8, 8, 1);
  equal_rows.row(5) = -4 * equal_rows.row(2);
  CHECK_THROWS_WITH(factorize(equal_rows, o), Catch::Contains("exactly singular"));

  const Factorization f = factorize(uniform(8, 8, 1), o);
  CHECK_THROWS_AS(solve(f, uniform(7, 1, 2)), InvalidInput);
  CHECK_THROWS_AS(solve(f, Eigen::MatrixXd(8, 0)), InvalidInput);
  Eigen::MatrixXd bad_b = uniform(8, 1, 2);
  bad_b(0, 0) = INFINITY;
  CHECK_THROWS_AS(solve(f, bad_b, Transpose::yes), InvalidInput);
  Factorization moved = factorize(uniform(8, 8, 1), o);
  const Factorization g = std::move(moved);
  CHECK(g.n() == 8);
  CHECK_THROWS_AS(solve(moved, uniform(8, 1, 2)), InvalidInput);  // NOLINT(bugprone-use-after-move)
}

TEST_CASE("a system near FP64's underflow is solved whole, bitwise as solve()", "[solver][factor]") {
  LinearSystem sys = with_ones(uniform(48, 48, 4) * 1e-309);
  const SolveOptions o = cpu_options(Variant::fp32_simt);
  const SolveResult r = solve(factorize(sys.A, o), sys.b);
  CHECK(r.converged);
  CHECK_FALSE(r.factorization_reused);
  CHECK(bitwise_equal(r.x, solve(sys, o).x));
}

TEST_CASE("factorize on cuda keeps the factors on the device; each solve is solve()'s x bitwise", "[gpu][factor]") {
  TCSOLVE_SKIP_WITHOUT_GPU("factorize on cuda");
  const int n = 700;
  const Eigen::MatrixXd A = uniform(n, n, 31);
  SolveOptions o;
  o.backend = Backend::cuda;
  o.block_size = 128;
  o.fp64_below = 0;  // the FP32 LU, kept
  const Factorization f = factorize(A, o);
  CHECK(f.n() == n);
  CHECK_FALSE(f.fp64_lu());
  for (unsigned seed : {41u, 42u}) {  // a second right-hand side reuses the factors
    LinearSystem sys;
    sys.A = A;
    sys.b = uniform(n, 2, seed);
    const SolveResult r = solve(f, sys.b);
    INFO(r.note);
    CHECK(r.backend == Backend::cuda);
    CHECK(r.factorization_reused);
    CHECK(r.time_s.factorization == 0);
    CHECK(r.converged);
    CHECK(dsgesv_criterion(sys, r.x));
    const SolveResult whole = solve(sys, o);
    CHECK(bitwise_equal(r.x, whole.x));
    CHECK(r.iterations == whole.iterations);
    CHECK(r.resolved_variant == whole.resolved_variant);
  }
  // A^T: solved whole (a new LU), refined to dsgesv's criterion on A^T
  LinearSystem t;
  t.A = A.transpose();
  t.b = uniform(n, 1, 43);
  const SolveResult rt = solve(f, t.b, Transpose::yes);
  CHECK(rt.converged);
  CHECK_FALSE(rt.factorization_reused);
  CHECK(dsgesv_criterion(t, rt.x));
  CHECK(rt.note.find("A^T solved whole on cuda") != std::string::npos);
}

TEST_CASE("factorize on cuda: the fallback's FP64 LU is kept; an FP32-singular A; fp64_below solves whole",
          "[gpu][factor]") {
  TCSOLVE_SKIP_WITHOUT_GPU("factorize on cuda");
  SolveOptions o;
  o.backend = Backend::cuda;
  o.variant = Variant::fp32_simt;
  o.block_size = 64;
  {
    // cond 1e12: the FP32 factors contract nothing; each solve falls back to the FP64 LU
    const LinearSystem sys = generate_system(300, 1e12, SpectrumMode::geometric, 8);
    SolveOptions few = o;
    few.max_iterations = 5;
    const Factorization f = factorize(sys.A, few);
    for (int k = 0; k < 2; ++k) {
      const SolveResult r = solve(f, sys.b);
      INFO("solve " << k << ": " << r.note);
      CHECK(r.fallback_used);
      CHECK(r.factorization_reused);
      CHECK(bitwise_equal(r.x, solve(sys, few).x));
    }
  }
  {
    // 1 + 2^-30 rounds to 1 in FP32: the FP32 LU meets an exact zero pivot, the FP64 LU does not
    Eigen::MatrixXd A = uniform(300, 300, 9);
    A.row(1) = A.row(0);
    A(1, 5) += 0x1p-30 * A(1, 5);
    const Factorization f = factorize(A, o);
    LinearSystem sys;
    sys.A = A;
    sys.b = uniform(300, 1, 10);
    const SolveResult r = solve(f, sys.b);
    INFO(r.note);
    CHECK(r.fallback_used);
    CHECK(bitwise_equal(r.x, solve(sys, o).x));
  }
  {
    SolveOptions a = o;
    a.variant = Variant::auto_;
    a.block_size = 0;
    const Eigen::MatrixXd A = uniform(100, 100, 12);  // below fp64_below (3072 on cuda)
    const Factorization f = factorize(A, a);
    CHECK(f.fp64_lu());
    LinearSystem sys;
    sys.A = A;
    sys.b = uniform(100, 1, 13);
    const SolveResult r = solve(f, sys.b);
    CHECK(r.converged);
    CHECK_FALSE(r.factorization_reused);
    CHECK(bitwise_equal(r.x, solve(sys, a).x));
  }
  // Two equal rows: exactly singular. The cuda FP32 LU need not meet an exact zero pivot (its
  // leaves' rounding differs by row position), so the refusal may come from factorize or from
  // the solve's FP64 LU, as solve() refuses it: InvalidInput either way, never an x.
  Eigen::MatrixXd singular = uniform(300, 300, 14);
  singular.row(7) = singular.row(3);
  LinearSystem s;
  s.A = singular;
  s.b = uniform(300, 1, 15);
  CHECK_THROWS_AS(solve(s, o), InvalidInput);
  bool refused = false;
  try {
    const Factorization f = factorize(singular, o);
    solve(f, s.b);
  } catch (const InvalidInput&) {
    refused = true;
  }
  CHECK(refused);
}
