// The reference of the one-launch residual (solver/src/cpu/small_residual.hpp), which the cuda
// kernel matches bitwise (test_small_residual_cuda.cpp): its r is b - A x within the bound of its
// order of operations, its norms are r's and x's largest magnitudes (a NaN kept), and the plan
// field that chooses it (CudaLuPlan::residuals) resolves and parses as documented.
//
// Bound. Each part's inner product is a chain of at most 32 fmas from 0, and r_i then takes one
// subtraction per part: |r_i - (b - A x)_i| <= gamma_{32 + parts} (|b_i| + (|A| |x|)_i) (Higham,
// Thm 3.4, with the subtractions as terms of the sum). The exact residual is formed in long
// double (an x86 64-bit significand: its own error 2^-11 of the bound's unit, allowed for by the
// factor 1 + 1/64). A dropped part, a wrong column stride or a sign slip leaves an error of the
// order of |A| |x|, far above the bound.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "cpu/small_residual.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

/// max_i |r_i - (b - A x)_i| / (gamma_{32 + parts} (|b_i| + (|A| |x|)_i)).
double bound_ratio(int n, const std::vector<double>& a, const std::vector<double>& b,
                   const std::vector<double>& x, const std::vector<double>& r) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const int k = tcsolve::cpu::kSmallResidualPart + tcsolve::cpu::small_residual_parts(n);
  const double gamma = k * u / (1 - k * u);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    long double exact = b[i], magnitude = std::fabs(b[i]);
    for (int j = 0; j < n; ++j) {
      const long double p = static_cast<long double>(a[i + static_cast<std::size_t>(j) * n]) * x[j];
      exact -= p;
      magnitude += std::fabs(p);
    }
    const double bound = gamma * static_cast<double>(magnitude) * (1 + 1.0 / 64);
    const double error = static_cast<double>(std::fabs(static_cast<long double>(r[i]) - exact));
    worst = std::max(worst, bound > 0 ? error / bound : (error > 0 ? 1e300 : 0));
  }
  return worst;
}

}  // namespace

TEST_CASE("the one-launch residual's reference: r within its rounding-error bound, the norms r's and x's") {
  for (int n : {1, 31, 32, 33, 200, 1023}) {
    CAPTURE(n);
    std::mt19937_64 g(static_cast<unsigned>(n));
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<double> a(static_cast<std::size_t>(n) * n), x(n), b(n), r(n);
    for (auto& v : a) v = d(g);
    for (auto& v : x) v = d(g) * 1e3;
    for (int i = 0; i < n; ++i) {  // b near A x: the residual is mostly cancellation
      long double s = 0;
      for (int j = 0; j < n; ++j)
        s += static_cast<long double>(a[i + static_cast<std::size_t>(j) * n]) * x[j];
      b[i] = static_cast<double>(s) * (1 + 1e-12 * d(g));
    }
    double norms[2];
    tcsolve::cpu::small_residual_reference(n, a.data(), n, b.data(), x.data(), r.data(), norms);
    CHECK(bound_ratio(n, a, b, x, r) <= 1.0);
    double r_max = 0, x_max = 0;
    for (int i = 0; i < n; ++i)
      r_max = std::max(r_max, std::fabs(r[i])), x_max = std::max(x_max, std::fabs(x[i]));
    CHECK(norms[0] == r_max);
    CHECK(norms[1] == x_max);
    if (n >= 2) {  // the residual is not trivially b: it cancels
      double b_max = 0;
      for (int i = 0; i < n; ++i) b_max = std::max(b_max, std::fabs(b[i]));
      CHECK(r_max < 1e-6 * b_max);
    }
  }
  // a NaN in x reaches both norms' readers (r's through the products)
  std::vector<double> a{1, 2, 3, 4}, b{1, 1}, x{std::nan(""), 0}, r(2);
  double norms[2];
  tcsolve::cpu::small_residual_reference(2, a.data(), 2, b.data(), x.data(), r.data(), norms);
  CHECK(std::isnan(norms[0]));
  CHECK(std::isnan(norms[1]));
}

TEST_CASE("residuals: automatic resolves by n and right-hand sides; the field parses and lists") {
  using tcsolve::CudaLuPlan;
  CudaLuPlan plan;
  REQUIRE(plan.residuals == CudaLuPlan::Residuals::automatic);
  REQUIRE(tcsolve::residuals_for(plan, 1, 1) == CudaLuPlan::Residuals::kernel);
  REQUIRE(tcsolve::residuals_for(plan, 200, 1) == CudaLuPlan::Residuals::kernel);
  REQUIRE(tcsolve::residuals_for(plan, tcsolve::kResidualKernelBelow - 1, 1) ==
          CudaLuPlan::Residuals::kernel);
  REQUIRE(tcsolve::residuals_for(plan, tcsolve::kResidualKernelBelow, 1) == CudaLuPlan::Residuals::cublas);
  REQUIRE(tcsolve::residuals_for(plan, 16384, 1) == CudaLuPlan::Residuals::cublas);
  REQUIRE(tcsolve::residuals_for(plan, 200, 3) == CudaLuPlan::Residuals::kernel);
  REQUIRE(tcsolve::residuals_for(plan, 200, tcsolve::kResidualKernelMaxRhs + 1) ==
          CudaLuPlan::Residuals::cublas);
  tcsolve::set_plan_field(plan, "residuals", "kernel");
  REQUIRE(tcsolve::residuals_for(plan, tcsolve::kResidualKernelMaxN, 1) == CudaLuPlan::Residuals::kernel);
  REQUIRE(tcsolve::residuals_for(plan, tcsolve::kResidualKernelMaxN + 1, 1) == CudaLuPlan::Residuals::cublas);
  tcsolve::set_plan_fields(plan, "residuals=cublas");
  REQUIRE(tcsolve::residuals_for(plan, 10, 1) == CudaLuPlan::Residuals::cublas);
  bool listed = false;
  for (const auto& [name, value] : tcsolve::plan_fields(plan))
    listed |= name == "residuals" && value == "cublas";
  REQUIRE(listed);
  REQUIRE_THROWS_WITH(tcsolve::set_plan_field(plan, "residuals", "dgemv"),
                      Catch::Matchers::Contains("residuals") && Catch::Matchers::Contains("cublas"));
}
