// The reference of the FP64 LU's one-launch solve (solver/src/cpu/lu_apply.hpp), which the cuda
// kernel matches bitwise (test_lu_apply_cuda.cpp): its solutions are the triangular solves' of
// dgetrf's factors, within their backward error bound.
//
// Bound. With w the scaled, permuted right-hand side c = P ldexp(b, log2 R - k) (exact: powers of
// two) and y the vector after the U solve (x = ldexp(y, log2 C + k), exact), substitution in any
// order of the sums gives (L + dL) z = c and (U + dU) y = z with |dL| <= gamma_n |L| and |dU| <=
// gamma_{n+1} |U| (Higham, Thm 8.5; U's diagonal through a reciprocal and a product: one rounding
// more), so |c - L U y| <= gamma_{2n+2} |L| |U| |y| elementwise (2 gamma_k + gamma_k^2 <=
// gamma_2k). The residual is formed in long double (an x86 64-bit significand: its own error
// 2^-11 of the bound's unit, allowed for by the factor 1 + 1/64). A wrong interchange, a missed
// block update or a misplaced reciprocal leaves a residual of order |L| |U| |y|.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/coop_lu.hpp"
#include "cpu/lu_apply.hpp"
#include "cuda/interchanges.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

struct Factored {
  int n;
  std::vector<double> lu, row, col;
  std::vector<int> ipiv;
};

/// dgetrf's factors (coop_lu_reference) of A_s = R A C, A U(-1,1), R and C powers of two in
/// [2^-6, 2^6].
Factored factored(int n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::uniform_int_distribution<int> e(-6, 6);
  Factored f{n, std::vector<double>(static_cast<std::size_t>(n) * n), std::vector<double>(n), std::vector<double>(n),
             std::vector<int>(n)};
  for (int i = 0; i < n; ++i) f.row[i] = std::ldexp(1.0, e(g)), f.col[i] = std::ldexp(1.0, e(g));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) f.lu[i + static_cast<std::size_t>(j) * n] = f.row[i] * d(g) * f.col[j];
  REQUIRE(tcsolve::cpu::coop_lu_reference(f.lu.data(), n, n, 32, f.ipiv.data()) == 0);
  return f;
}

/// max_i |c - L U y|_i / (gamma_{2n+2} (|L| |U| |y|)_i), y and c recovered from x and b exactly.
double bound_ratio(const Factored& f, const std::vector<double>& b, const std::vector<double>& x) {
  const int n = f.n;
  auto a = [&](int i, int j) { return static_cast<long double>(f.lu[i + static_cast<std::size_t>(j) * n]); };
  double m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(f.row[i] * b[i]));
  int k = 0;
  if (m > 0) std::frexp(m, &k);
  std::vector<double> c(n), y(n);
  for (int i = 0; i < n; ++i) c[i] = std::ldexp(b[i], std::ilogb(f.row[i]) - k);
  for (int i = 0; i < n; ++i) std::swap(c[i], c[f.ipiv[i] - 1]);
  for (int i = 0; i < n; ++i) y[i] = std::ldexp(x[i], -std::ilogb(f.col[i]) - k);
  std::vector<long double> uy(n), auy(n);
  for (int i = 0; i < n; ++i)
    for (int j = i; j < n; ++j) uy[i] += a(i, j) * y[j], auy[i] += std::fabs(a(i, j)) * std::fabs(y[j]);
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const double gamma = (2 * n + 2) * u / (1 - (2 * n + 2) * u) * (1 + 1.0 / 64);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    long double luy = uy[i], bound = auy[i];
    for (int j = 0; j < i; ++j) luy += a(i, j) * uy[j], bound += std::fabs(a(i, j)) * auy[j];
    const double r = static_cast<double>(std::fabs(c[i] - luy)), scale = gamma * static_cast<double>(bound);
    worst = std::max(worst, r == 0 ? 0.0 : r / scale);
  }
  return worst;
}

std::vector<double> uniform_vector(int n, unsigned seed, double scale) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> v(n);
  for (double& e : v) e = scale * d(g);
  return v;
}

}  // namespace

TEST_CASE("lu_apply_reference: the triangular solves of dgetrf's factors within gamma_{2n+2} |L| |U| |y|",
          "[solver]") {
  for (int n : {1, 2, 31, 32, 33, 64, 97, 200, 300}) {
    CAPTURE(n);
    const Factored f = factored(n, 7 + n);
    for (double scale : {1.0, 1e-200, 3e250}) {
      CAPTURE(scale);
      const std::vector<double> b = uniform_vector(n, 3 + n, scale);
      std::vector<double> x(n);
      tcsolve::cpu::lu_apply_reference(f.lu.data(), n, f.ipiv.data(), f.row.data(), f.col.data(), b.data(), x.data());
      for (double v : x) REQUIRE(std::isfinite(v));
      CHECK(bound_ratio(f, b, x) <= 1.0);
    }
  }
}

TEST_CASE("lu_apply_reference: out may be rhs, and a zero right-hand side gives zero", "[solver]") {
  const int n = 70;
  const Factored f = factored(n, 5);
  const std::vector<double> b = uniform_vector(n, 9, 1.0);
  std::vector<double> x(n), in_place = b;
  tcsolve::cpu::lu_apply_reference(f.lu.data(), n, f.ipiv.data(), f.row.data(), f.col.data(), b.data(), x.data());
  tcsolve::cpu::lu_apply_reference(f.lu.data(), n, f.ipiv.data(), f.row.data(), f.col.data(), in_place.data(),
                                   in_place.data());
  REQUIRE(std::memcmp(x.data(), in_place.data(), n * sizeof(double)) == 0);
  std::vector<double> zero(n, 0.0), z(n, 1.0);
  tcsolve::cpu::lu_apply_reference(f.lu.data(), n, f.ipiv.data(), f.row.data(), f.col.data(), zero.data(), z.data());
  for (double v : z) REQUIRE(v == 0.0);
}

TEST_CASE("fp64_solves: automatic takes the kernel below the measured crossover, then trsm up to its largest n, "
          "then dgetrs; kernel and trsm up to their largest n; the field parsed and listed",
          "[solver]") {
  using tcsolve::CudaLuPlan;
  CudaLuPlan plan;
  REQUIRE(plan.fp64_solves == CudaLuPlan::Fp64Solves::automatic);
  REQUIRE(tcsolve::fp64_solves_for(plan, 200) == CudaLuPlan::Fp64Solves::kernel);
  REQUIRE(tcsolve::fp64_solves_for(plan, tcsolve::kFp64SolveKernelBelow - 1) == CudaLuPlan::Fp64Solves::kernel);
  REQUIRE(tcsolve::fp64_solves_for(plan, tcsolve::kFp64SolveKernelBelow) == CudaLuPlan::Fp64Solves::trsm);
  REQUIRE(tcsolve::fp64_solves_for(plan, tcsolve::kFp64SolveTrsmMaxN) == CudaLuPlan::Fp64Solves::trsm);
  REQUIRE(tcsolve::fp64_solves_for(plan, tcsolve::kFp64SolveTrsmMaxN + 1) == CudaLuPlan::Fp64Solves::dgetrs);
  tcsolve::set_plan_field(plan, "fp64_solves", "trsm");
  REQUIRE(tcsolve::fp64_solves_for(plan, 10) == CudaLuPlan::Fp64Solves::trsm);
  REQUIRE(tcsolve::fp64_solves_for(plan, tcsolve::kFp64SolveTrsmMaxN + 1) == CudaLuPlan::Fp64Solves::dgetrs);
  tcsolve::set_plan_field(plan, "fp64_solves", "kernel");
  REQUIRE(tcsolve::fp64_solves_for(plan, tcsolve::kFp64SolveKernelMaxN) == CudaLuPlan::Fp64Solves::kernel);
  REQUIRE(tcsolve::fp64_solves_for(plan, tcsolve::kFp64SolveKernelMaxN + 1) == CudaLuPlan::Fp64Solves::dgetrs);
  tcsolve::set_plan_fields(plan, "fp64_solves=dgetrs");
  REQUIRE(tcsolve::fp64_solves_for(plan, 10) == CudaLuPlan::Fp64Solves::dgetrs);
  bool listed = false;
  for (const auto& [name, value] : tcsolve::plan_fields(plan)) listed |= name == "fp64_solves" && value == "dgetrs";
  REQUIRE(listed);
  REQUIRE_THROWS_WITH(tcsolve::set_plan_field(plan, "fp64_solves", "trsv"),
                      Catch::Matchers::Contains("fp64_solves") && Catch::Matchers::Contains("dgetrs"));
}

TEST_CASE("compose_pivots: row i of the vector swapped in LAPACK's order is row perm[i] of the original",
          "[solver]") {
  // the composition both device solves use (interchanges.hpp), against the exchanges done one
  // by one on values, for pivot sequences with repeats, no-ops and the last row
  for (int n : {1, 2, 7, 200, 1000}) {
    CAPTURE(n);
    std::mt19937 g(static_cast<unsigned>(n));
    std::vector<int> pivots(n), perm(n);
    std::vector<double> v(n), swapped(n);
    for (int i = 0; i < n; ++i) {
      pivots[i] = std::uniform_int_distribution<int>(i, n - 1)(g);  // ipiv[i] - 1 >= i
      if (i % 5 == 0) pivots[i] = i;
      perm[i] = i;
      v[i] = swapped[i] = 10.0 * i + 7;
    }
    for (int i = 0; i < n; ++i) std::swap(swapped[i], swapped[pivots[i]]);
    tcsolve::cuda::interchanges::compose_pivots(pivots.data(), n, perm.data());
    std::size_t wrong = 0;
    for (int i = 0; i < n; ++i) wrong += swapped[i] == v[perm[i]] ? 0 : 1;
    REQUIRE(wrong == 0);
  }
}

TEST_CASE("equilibration: automatic resolves by n (cluster, cooperative, kernels); the field parsed and listed",
          "[solver]") {
  using tcsolve::CudaLuPlan;
  using E = CudaLuPlan::Equilibration;
  CudaLuPlan plan;
  REQUIRE(plan.equilibration == E::automatic);
  REQUIRE(tcsolve::equilibration_for(plan, 1) == E::cluster);
  REQUIRE(tcsolve::equilibration_for(plan, tcsolve::kEquilibrationClusterBelow - 1) == E::cluster);
  REQUIRE(tcsolve::equilibration_for(plan, tcsolve::kEquilibrationClusterBelow) == E::cooperative);
  REQUIRE(tcsolve::equilibration_for(plan, tcsolve::kEquilibrationOneLaunchBelow - 1) == E::cooperative);
  REQUIRE(tcsolve::equilibration_for(plan, tcsolve::kEquilibrationOneLaunchBelow) == E::kernels);
  tcsolve::set_plan_field(plan, "equilibration", "cluster");
  REQUIRE(tcsolve::equilibration_for(plan, 1000) == E::cluster);
  REQUIRE(tcsolve::equilibration_for(plan, 5000) == E::kernels);
  tcsolve::set_plan_fields(plan, "equilibration=kernels");
  REQUIRE(tcsolve::equilibration_for(plan, 10) == E::kernels);
  bool listed = false;
  for (const auto& [name, value] : tcsolve::plan_fields(plan)) listed |= name == "equilibration" && value == "kernels";
  REQUIRE(listed);
  REQUIRE_THROWS_WITH(tcsolve::set_plan_field(plan, "equilibration", "grid"),
                      Catch::Matchers::Contains("equilibration") && Catch::Matchers::Contains("cooperative"));
}
