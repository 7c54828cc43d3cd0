// Honest numbers at the edges (issue #14): the overflow- and underflow-safe stopping test and
// backward error, systems near 1e306 and near 1e-310, the FP64 fallback on the equilibrated
// system that never returns a worse x than the best iterate, exactly singular matrices (equal
// rows or columns), the 1-norm condition estimate against cond_1 from Eigen's inverse, and the
// warnings. [solver]: the cpu path; [gpu]: the same claims on the cuda path (skipped, with a
// warning, without a device).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "condition.hpp"
#include "solver_internal.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/solver/system.hpp"

namespace {

using namespace tcsolve;

constexpr double kEps64 = 0x1p-53;  ///< LAPACK dlamch('E')

#define TCSOLVE_EDGE_SKIP_WITHOUT_GPU(what)                                             \
  if (!tcsolve::cuda::device_available()) {                                             \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                             \
  }

SolveOptions options(Backend backend, Variant v = Variant::fp32_simt, bool fallback = true) {
  SolveOptions o;
  o.variant = v;
  o.backend = backend;
  o.block_size = 32;  // n = 64..96: two or three panels, trailing updates through the variant
  o.fallback = fallback;
  o.condition_estimate = ConditionEstimate::always;  // the claims below include the estimate's
  return o;
}

/// A system 2^k (A_hat x = b_hat) whose every number is exact: A_hat is a randsvd matrix (cond
/// `cond`) divided by its largest |entry| and rounded to multiples of 2^-20 (|a| <= 1: at most
/// 21 significant bits), x_true rounded to multiples of 2^-10, b_hat = A_hat x_true (n terms
/// that are multiples of 2^-30 below 1 in size: exact in FP64 for n < 2^22), then all scaled
/// by 2^k. For k = -1030 the entries are multiples of 2^-1050 (FP64 subnormals reach 2^-1074:
/// exact, near 1e-310); for k = 1017 they stay below 2^1017 (near 1e306). `hat` keeps the
/// unscaled system, on which the tests judge x: scaling by 2^k is exact, so it is the same
/// system with every residual computed in the normal range.
struct ScaledSystem {
  LinearSystem sys, hat;
  int k = 0;
};

ScaledSystem scaled_system(int n, double cond, std::uint64_t seed, int k) {
  LinearSystem g = generate_system(n, cond, SpectrumMode::geometric, seed);
  ScaledSystem s;
  s.k = k;
  const double largest = g.A.cwiseAbs().maxCoeff();
  s.hat.A = g.A.unaryExpr([&](double a) { return std::round(a / largest * 0x1p20) * 0x1p-20; });
  s.hat.x_true = g.x_true->unaryExpr([](double x) { return std::round(x * 0x1p10) * 0x1p-10; });
  s.hat.b = s.hat.A * *s.hat.x_true;
  s.hat.b_is_vector = true;
  s.sys.A = s.hat.A.unaryExpr([k](double a) { return std::ldexp(a, k); });
  s.sys.b = s.hat.b.unaryExpr([k](double b) { return std::ldexp(b, k); });
  s.sys.x_true = s.hat.x_true;
  s.sys.b_is_vector = true;
  REQUIRE((s.sys.A.unaryExpr([k](double a) { return std::ldexp(a, -k); }).array() == s.hat.A.array()).all());
  REQUIRE((s.sys.b.unaryExpr([k](double b) { return std::ldexp(b, -k); }).array() == s.hat.b.array()).all());
  return s;
}

/// ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf), and the dsgesv ratio ||r|| / (sqrt(n)
/// ||x|| ||A|| eps64) (<= 1: the criterion holds), in plain FP64: for a system in the normal range.
struct Judged {
  double backward_error, dsgesv_ratio;
};

Judged judge(const LinearSystem& sys, const Eigen::MatrixXd& x) {
  const double norm_a = sys.A.cwiseAbs().rowwise().sum().maxCoeff();
  const double r = (sys.b - sys.A * x).lpNorm<Eigen::Infinity>(), xn = x.lpNorm<Eigen::Infinity>();
  return {r / (norm_a * xn + sys.b.lpNorm<Eigen::Infinity>()),
          r / (std::sqrt(static_cast<double>(sys.n())) * xn * norm_a * kEps64)};
}

/// cond_1(A) = ||A||_1 ||A^-1||_1 from Eigen's FP64 inverse (small n: its error, about cond eps64
/// relative, is far below the factors the tests allow).
double cond_1(const Eigen::MatrixXd& A) {
  return A.cwiseAbs().colwise().sum().maxCoeff() * A.inverse().cwiseAbs().colwise().sum().maxCoeff();
}

bool any_warning(const SolveResult& r, const std::string& needle) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}

std::string warnings_of(const SolveResult& r) {
  std::string all;
  for (const std::string& w : r.warnings) all += "[" + w + "] ";
  return all;
}

// --- the claims, for one backend ------------------------------------------------------------------

/// Near 1e306: sqrt(n) ||x|| ||A|| eps64 overflowed before (||A||_inf ~ 2^1021.6 here, times
/// sqrt(64) = 2^3), and every residual met an infinite bound: "converged after 0 iterations"
/// at FP32 accuracy. Now the test holds only once it holds on the scaled copy.
void check_near_overflow(Backend backend) {
  const int n = 64;
  const ScaledSystem s = scaled_system(n, 1e2, 3, 1017);
  const double sqrt_n = std::sqrt(static_cast<double>(n));
  REQUIRE(!std::isfinite(sqrt_n * s.sys.A.cwiseAbs().rowwise().sum().maxCoeff() *
                         s.sys.x_true->lpNorm<Eigen::Infinity>() * kEps64 / kEps64));  // the old overflow
  const SolveResult r = solve(s.sys, options(backend));
  const Judged j = judge(s.hat, r.x);
  std::printf(
      "near 1e306 (%s): converged %d after %d, backward %.2e (on the scaled copy %.2e, dsgesv ratio %.2f)\n",
      std::string(to_string(backend)).c_str(), r.converged, r.iterations, r.backward_error, j.backward_error,
      j.dsgesv_ratio);
  INFO(r.note);
  CHECK(r.x.allFinite());
  CHECK(r.converged);
  CHECK_FALSE(r.fallback_used);
  CHECK(r.iterations >= 1);  // an FP32 LU's x: backward error about u32, far above the bound
  CHECK(r.history.front() > 1e3 * kEps64);
  CHECK(j.dsgesv_ratio <= 1.0);
  // The solver's own backward error (a power of two cancels in the quotient, so it is the scaled
  // copy's up to the residual's rounding, here its whole size) meets the bound too.
  CHECK(r.backward_error <= std::sqrt(static_cast<double>(n)) * kEps64);
  REQUIRE(r.condition_estimate.has_value());
  CHECK(*r.condition_estimate <= 2 * cond_1(s.hat.A));
  CHECK(*r.condition_estimate >= cond_1(s.hat.A) / 10);
  CHECK(r.warnings.empty());
}

/// Near 1e-310 (entries multiples of 2^-1050, subnormal): the FP64 LU of the unscaled A divides
/// by subnormal pivots and returned NaN, which replaced a good iterate. The residual r = b - A x
/// computed with subnormal numbers carries an absolute error up to n 2^-1075 per entry (each
/// product and sum rounds to the 2^-1074 grid): the solver can judge x only to
///   floor = n 2^-1074 / (||A||_inf ||x||_inf + ||b||_inf)
/// in backward error. Achievable, then: the dsgesv bound widened by that floor; x never NaN.
void check_near_underflow(Backend backend) {
  const int n = 64;
  const ScaledSystem s = scaled_system(n, 1e2, 5, -1030);
  for (const bool fallback : {true, false}) {
    const SolveResult r = solve(s.sys, options(backend, Variant::fp32_simt, fallback));
    const Judged j = judge(s.hat, r.x);
    const double norm_a = s.sys.A.cwiseAbs().rowwise().sum().maxCoeff();
    const double floor =
        n * 0x1p-1074 / (norm_a * r.x.lpNorm<Eigen::Infinity>() + s.sys.b.lpNorm<Eigen::Infinity>());
    const double bound = std::sqrt(static_cast<double>(n)) * kEps64 + floor;
    std::printf(
        "near 1e-310 (%s, fallback %d): converged %d after %d, backward %.2e (scaled copy %.2e; floor %.2e, "
        "bound %.2e)\n  %s\n",
        std::string(to_string(backend)).c_str(), fallback, r.converged, r.iterations, r.backward_error,
        j.backward_error, floor, bound, r.note.c_str());
    INFO("fallback " << fallback << ": " << r.note);
    CHECK(r.x.allFinite());
    CHECK(std::isfinite(r.backward_error));
    CHECK(j.backward_error <= 2 * bound);
    // Never worse than the best iterate (the history holds every iterate's backward error).
    CHECK(r.backward_error <= *std::min_element(r.history.begin(), r.history.end()));
    REQUIRE(r.forward_error.has_value());
    CHECK(*r.forward_error <= 1e2 * 1e3 * bound);  // cond_inf <= n cond_2 = 6.4e3 times the bound
  }
}

/// Two equal rows (or a row equal to -2^-3 times another, or two equal columns) of a consistent
/// system: exactly singular, InvalidInput. The blocked FP32 LU meets no exact zero pivot for
/// them (solver_internal.hpp, exact_singularity, says why): refinement used to converge with an
/// arbitrary null-space component (forward error 0.26 in the report).
void check_equal_lines(Backend backend) {
  const int n = 96;
  const LinearSystem base = generate_system(n, 1e2, SpectrumMode::geometric, 7);
  struct Case {
    const char* what;
    int a, b;
    bool rows;
    double factor;
  };
  for (const Case c : {Case{"rows", 20, 70, true, 1.0}, Case{"rows", 5, 90, true, -0.125},
                       Case{"columns", 33, 34, false, 1.0}}) {
    LinearSystem sys = base;
    if (c.rows)
      sys.A.row(c.b) = c.factor * sys.A.row(c.a);
    else
      sys.A.col(c.b) = c.factor * sys.A.col(c.a);
    sys.b = sys.A * *sys.x_true;  // consistent: refinement alone would "converge"
    const std::string expected =
        std::string(c.what) + " " + std::to_string(c.a + 1) + " and " + std::to_string(c.b + 1);
    INFO(expected << ", factor " << c.factor);
    if (backend == Backend::cpu && c.rows)  // the reason: no exact zero pivot in the FP32 LU
      CHECK_NOTHROW(lu_factorize(sys.A, Variant::ec_fp16, 32));
    for (Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
      INFO(to_string(v));
      CHECK_THROWS_AS(solve(sys, options(backend, v)), InvalidInput);
      CHECK_THROWS_WITH(solve(sys, options(backend, v)),
                        Catch::Matchers::Contains("exactly singular") && Catch::Matchers::Contains(expected));
      CHECK_THROWS_WITH(solve(sys, options(backend, v, false)), Catch::Matchers::Contains(expected));
    }
  }
}

/// A column equal to the sum of two others: singular in exact arithmetic, its rounding leaves
/// cond_1 ~ 1/eps64. The FP32 factors saturate near 1/u32; the estimate comes from the FP64 LU.
void check_sum_column(Backend backend) {
  const int n = 96;
  LinearSystem sys = generate_system(n, 1e2, SpectrumMode::geometric, 9);
  sys.A.col(50) = sys.A.col(10) + sys.A.col(30);
  sys.b = sys.A * *sys.x_true;
  const SolveResult r = solve(sys, options(backend));
  const double exact = cond_1(sys.A);  // Eigen's FP64 inverse: itself only an estimate this close to singular
  std::printf(
      "column = sum of two (%s): estimate %.2e, cond_1 from Eigen's inverse %.2e; %s\n  warnings: %s\n",
      std::string(to_string(backend)).c_str(), r.condition_estimate.value_or(-1), exact, r.note.c_str(),
      warnings_of(r).c_str());
  INFO(r.note << " / " << warnings_of(r));
  REQUIRE(r.condition_estimate.has_value());
  CHECK(*r.condition_estimate >= 1 / (16 * kEps64));  // 5.6e14: the 1/eps64 scale
  CHECK(any_warning(r, "ill-conditioned"));
  CHECK(any_warning(r, "cannot be trusted"));
}

/// randsvd with known cond_2: the estimate against cond_1 from Eigen's inverse. Hager's estimate
/// is a lower bound of ||A_f^-1||_1 for the factored A_f (usually within a factor 3; Higham
/// 1988); A_f = A + E differs from A by ||E|| ~ u ||A||, moving cond_1 by a relative cond u:
/// for cond 1e6 and FP32 factors (u32 = 6e-8) up to 6%, which the resolution check refines
/// to below its 2^-k. Allowed: [cond_1 / 10, 2 cond_1].
void check_condition_estimates(Backend backend) {
  std::printf("condition estimate (%s): randsvd geometric, n = 80\n",
              std::string(to_string(backend)).c_str());
  for (const double cond : {1e1, 1e3, 1e6, 1e10, 1e13}) {
    const LinearSystem sys = generate_system(80, cond, SpectrumMode::geometric, 21);
    const SolveResult r = solve(sys, options(backend));
    const double exact = cond_1(sys.A);
    std::printf("  cond_2 %.0e: cond_1 %.3e, estimate %.3e (ratio %.3f)  warnings %zu  %s\n", cond, exact,
                r.condition_estimate.value_or(-1), r.condition_estimate.value_or(-1) / exact,
                r.warnings.size(), r.note.c_str());
    INFO("cond " << cond << ": " << r.note << " / " << warnings_of(r));
    REQUIRE(r.condition_estimate.has_value());
    CHECK(*r.condition_estimate >= exact / 10);
    CHECK(*r.condition_estimate <= 2 * exact);
    // Warned exactly when cond_1 eps64 >= 1e-3 (cond 1e13 only), give or take the factor.
    CHECK(any_warning(r, "ill-conditioned") == (*r.condition_estimate * kEps64 >= detail::kConditionWarning));
    if (cond <= 1e6) CHECK(r.warnings.empty());
    if (cond >= 1e13) CHECK_FALSE(r.warnings.empty());
  }
  SolveOptions off = options(backend);
  off.condition_estimate = ConditionEstimate::never;
  const SolveResult r = solve(generate_system(80, 1e3, SpectrumMode::geometric, 21), off);
  CHECK_FALSE(r.condition_estimate.has_value());
}

/// A file written column-major and read as row-major gives A^T: the solver solves A^T x = b
/// to FP64 accuracy, and x is not the file's x.
void check_transposed(Backend backend) {
  const int n = 64;
  LinearSystem sys = generate_system(n, 1e2, SpectrumMode::geometric, 13);
  const LinearSystem plain = sys;
  sys.A.transposeInPlace();  // b = A x_true of the untransposed A
  const SolveResult r = solve(sys, options(backend));
  std::printf("transposed (%s): forward error %.2e, warnings: %s\n", std::string(to_string(backend)).c_str(),
              r.forward_error.value_or(-1), warnings_of(r).c_str());
  INFO(r.note << " / " << warnings_of(r));
  CHECK(r.converged);
  REQUIRE(r.forward_error.has_value());
  CHECK(*r.forward_error > detail::kForwardWarning);
  CHECK(any_warning(r, "column-major"));
  CHECK(any_warning(r, "does not explain"));  // cond_1 ~ 1e2: ill-conditioning cannot explain O(1)
  const SolveResult p = solve(plain, options(backend));
  CHECK(p.converged);
  CHECK(p.warnings.empty());
}

/// The fallback never returns a worse x than the best iterate, and on a failed refinement (an
/// FP16 LU of cond 1e8) it rescues the solve; without it the best iterate stays.
void check_fallback_keeps_best(Backend backend) {
  const LinearSystem hard = generate_system(96, 1e8, SpectrumMode::geometric, 7);
  for (const bool fallback : {true, false}) {
    const SolveResult r = solve(hard, options(backend, Variant::fp16_tc, fallback));
    INFO("fallback " << fallback << ": " << r.note);
    CHECK(r.x.allFinite());
    CHECK(r.backward_error <= *std::min_element(r.history.begin(), r.history.end()));
    CHECK(r.converged == fallback);
    CHECK(r.fallback_used == fallback);
    REQUIRE(r.condition_estimate.has_value());
    CHECK(*r.condition_estimate >= cond_1(hard.A) / 10);
  }
}

}  // namespace

// --- the arithmetic ------------------------------------------------------------------------------

TEST_CASE("ScaledNorm compares, multiplies and divides norms near 1e306 and 1e-310 exactly", "[solver]") {
  using detail::scaled_norm;
  const double big = 0x1p1017, tiny = 0x1p-1060;  // tiny is subnormal
  // big * big overflows and tiny * tiny underflows in FP64; the frexp form keeps both.
  CHECK(detail::times(scaled_norm(big), scaled_norm(big)).e == 2035);
  CHECK(detail::times(scaled_norm(tiny), scaled_norm(tiny)).e == -2119);
  const detail::ScaledNorm below_range{0.5, -1999};  // 2^-2000: no double holds it
  CHECK(detail::less_equal(scaled_norm(tiny),
                           detail::times(scaled_norm(big), below_range)));  // 2^-1060 <= 2^-983
  CHECK_FALSE(detail::less_equal(detail::times(scaled_norm(big), scaled_norm(big)),
                                 scaled_norm(std::numeric_limits<double>::max())));
  CHECK(detail::quotient(scaled_norm(tiny), scaled_norm(0x1p-1070)) == 0x1p10);
  CHECK(detail::quotient(scaled_norm(0), scaled_norm(0)) == 0);
  CHECK(std::isinf(detail::quotient(scaled_norm(1), scaled_norm(0))));
  CHECK(detail::plus(scaled_norm(0x1p-1074), scaled_norm(0x1p-1074)).value() == 0x1p-1073);
  CHECK_FALSE(detail::less_equal(scaled_norm(std::nan("")), scaled_norm(1)));
}

TEST_CASE(
    "dsgesv's test never holds through an overflowed bound nor fails through an underflowed one; "
    "a non-finite iterate has backward error inf",
    "[solver]") {
  const int n = 64;
  const double inf = std::numeric_limits<double>::infinity();
  // ||A|| ~ 2^1022, ||x|| = 4: the bound sqrt(n) ||x|| ||A|| eps64 = 2^1024 2^3 2^-53 is finite
  // mathematically (2^974) but its left-to-right product overflows first.
  const detail::ScaledNorm norm_a = detail::scaled_norm(0x1p1022);
  auto a = detail::assess_columns({0x1p990}, {4.0}, {0x1p1000}, norm_a, n);
  CHECK_FALSE(a.all_done);  // 2^990 > 2^(1022 + 2 + 3 - 53) = 2^974
  a = detail::assess_columns({0x1p970}, {4.0}, {0x1p1000}, norm_a, n);
  CHECK(a.all_done);
  // eta = 2^970 / (2^1024 + 2^1000) = 2^-54 / (1 + 2^-24), whose denominator overflows in FP64.
  CHECK(a.backward_error == Approx(0x1p-54 / (1 + 0x1p-24)).epsilon(4 * kEps64));
  // Underflow: ||A|| ||x|| = 2^-1060 2^-20 flushes to 0 in FP64 and, with b = 0, eta became 0 / 0
  // or r / 0; it is 2^-1074 / 2^-1080 = 64. The bound 2^(3 - 1080 - 53) is below every non-zero r.
  const detail::ScaledNorm tiny_a = detail::scaled_norm(0x1p-1060);
  CHECK(detail::assess_columns({0x1p-1074}, {0x1p-20}, {0.0}, tiny_a, n).backward_error == 64);
  CHECK_FALSE(detail::assess_columns({0x1p-1074}, {0x1p-20}, {0.0}, tiny_a, n).all_done);
  CHECK(detail::assess_columns({0.0}, {0x1p-20}, {0.0}, tiny_a, n).all_done);
  CHECK(detail::assess_columns({0.0}, {0.0}, {0.0}, tiny_a, n).backward_error == 0);
  // Not finite: never done, backward error inf.
  for (const double bad : {inf, std::nan("")}) {
    CHECK_FALSE(detail::assess_columns({bad}, {1.0}, {1.0}, detail::scaled_norm(1.0), n).all_done);
    CHECK(detail::assess_columns({1.0}, {bad}, {1.0}, detail::scaled_norm(1.0), n).backward_error == inf);
  }
}

TEST_CASE("finish_result never reports a non-finite x as converged", "[solver]") {
  LinearSystem sys = generate_system(8, 10, SpectrumMode::geometric, 1);
  SolveResult r;
  r.x = *sys.x_true;
  r.x(3, 0) = std::nan("");
  r.converged = true;
  r.backward_error = 1e-17;
  detail::finish_result(sys, r);
  CHECK_FALSE(r.converged);
  CHECK(std::isinf(r.backward_error));
  CHECK(r.note.find("NaN") != std::string::npos);
}

TEST_CASE("Hager's 1-norm estimate is a lower bound within a factor 3 of ||B||_1 on random matrices",
          "[solver]") {
  // Higham (1988) reports the estimate within a factor 3 in practice; exact for many matrices.
  for (const int n : {1, 2, 7, 50}) {
    for (int seed = 0; seed < 5; ++seed) {
      std::srand(static_cast<unsigned>(seed + 1));
      const Eigen::MatrixXd B = Eigen::MatrixXd::Random(n, n);
      const double exact = B.cwiseAbs().colwise().sum().maxCoeff();
      const detail::Norm1Estimate e = detail::estimate_norm1(
          n, [&](Eigen::MatrixXd& y) { y = B * y; }, [&](Eigen::MatrixXd& y) { y = B.transpose() * y; });
      INFO("n " << n << ", seed " << seed);
      CHECK(e.estimate <= exact * (1 + n * kEps64));
      CHECK(e.estimate >= exact / 3);
      CHECK(e.products <= 10);
      CHECK((B * e.v).lpNorm<1>() / e.v.lpNorm<1>() == Approx(e.estimate).epsilon(n * kEps64));
    }
  }
}

// --- the cpu path ---------------------------------------------------------------------------------

TEST_CASE("cpu: a system near 1e306 converges by the scaled test, not after 0 iterations", "[solver]") {
  check_near_overflow(Backend::cpu);
}

TEST_CASE("cpu: a system near 1e-310 solves to the achievable accuracy and never returns NaN", "[solver]") {
  check_near_underflow(Backend::cpu);
}

TEST_CASE("cpu: two equal rows, a row -2^-3 times another, two equal columns throw InvalidInput",
          "[solver]") {
  check_equal_lines(Backend::cpu);
}

TEST_CASE("cpu: a column equal to the sum of two others gives a warning and cond_1 of the 1/eps64 scale",
          "[solver]") {
  check_sum_column(Backend::cpu);
}

TEST_CASE("cpu: the condition estimate of randsvd matrices lies within [cond_1 / 10, 2 cond_1]", "[solver]") {
  check_condition_estimates(Backend::cpu);
}

TEST_CASE("cpu: a transposed A (column-major file read as row-major) gives the column-major warning",
          "[solver]") {
  check_transposed(Backend::cpu);
}

TEST_CASE("cpu: the FP64 fallback keeps the best iterate and rescues a failed refinement", "[solver]") {
  check_fallback_keeps_best(Backend::cpu);
}

// --- the cuda path ------------------------------------------------------------------------------

TEST_CASE("cuda: a system near 1e306 converges by the scaled test, not after 0 iterations", "[gpu]") {
  TCSOLVE_EDGE_SKIP_WITHOUT_GPU("the cuda solver near 1e306");
  check_near_overflow(Backend::cuda);
}

TEST_CASE("cuda: a system near 1e-310 solves to the achievable accuracy and never returns NaN", "[gpu]") {
  TCSOLVE_EDGE_SKIP_WITHOUT_GPU("the cuda solver near 1e-310");
  check_near_underflow(Backend::cuda);
}

TEST_CASE("cuda: two equal rows, a row -2^-3 times another, two equal columns throw InvalidInput", "[gpu]") {
  TCSOLVE_EDGE_SKIP_WITHOUT_GPU("equal rows on the cuda solver");
  check_equal_lines(Backend::cuda);
}

TEST_CASE("cuda: a column equal to the sum of two others gives a warning and cond_1 of the 1/eps64 scale",
          "[gpu]") {
  TCSOLVE_EDGE_SKIP_WITHOUT_GPU("a sum column on the cuda solver");
  check_sum_column(Backend::cuda);
}

TEST_CASE("cuda: the condition estimate of randsvd matrices lies within [cond_1 / 10, 2 cond_1]", "[gpu]") {
  TCSOLVE_EDGE_SKIP_WITHOUT_GPU("the cuda condition estimate");
  check_condition_estimates(Backend::cuda);
  // The device's estimate against the cpu's on one matrix: both estimate the same cond_1 from
  // FP32 factors that differ in rounding only.
  const LinearSystem sys = generate_system(300, 1e5, SpectrumMode::geometric, 4);
  const SolveResult cpu = solve(sys, options(Backend::cpu)), gpu = solve(sys, options(Backend::cuda));
  REQUIRE(cpu.condition_estimate.has_value());
  REQUIRE(gpu.condition_estimate.has_value());
  CHECK(*gpu.condition_estimate == Approx(*cpu.condition_estimate).epsilon(0.5));
  double condition = -1;
  for (const auto& [name, s] : gpu.time_s.phases)
    if (name == "condition") condition = s;
  CHECK(condition > 0);
}

TEST_CASE("cuda: a transposed A (column-major file read as row-major) gives the column-major warning",
          "[gpu]") {
  TCSOLVE_EDGE_SKIP_WITHOUT_GPU("the column-major warning on the cuda solver");
  check_transposed(Backend::cuda);
}

TEST_CASE("cuda: the FP64 fallback keeps the best iterate and rescues a failed refinement", "[gpu]") {
  TCSOLVE_EDGE_SKIP_WITHOUT_GPU("the cuda fallback");
  check_fallback_keeps_best(Backend::cuda);
}
