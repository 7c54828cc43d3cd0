// Pivoting beam on the cpu backend (the reference; solver.hpp, Pivoting; cpu/beam.hpp):
//   - the modifications reconstruct the factored matrix: P (A_s + E) = L U within the LU's
//     rounding bound gamma_n |L| |U| (plus A_s's rounding to FP32), E from the recorded
//     modifications, checked in FP64 on small n; the count is the number of pivots the block's
//     threshold caught (zero diagonal blocks: at least one per block column whose rows are zero);
//   - beam alone (no fallback) converges to dsgesv's criterion on random and randsvd 1e2..1e6
//     systems, with x within 2 cond eta of x_true's dense FP64 solution;
//   - randsvd up to 1e10, systems built to need pivoting (a zero diagonal block, a permuted
//     diagonally dominant matrix, rows scaled over 1e+-30) and the committed inputs: converged,
//     by beam or by a reported fallback (pivoting partial, the note naming beam's failure);
//   - GMRES-IR runs when there are modifications, the requested refinement when there are none;
//   - factorize with beam solves whole; the distributed solver refuses beam by name.
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cpu/beam.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve;
using test::dsgesv_criterion;
using test::with_ones;

constexpr double kEps64 = 0x1p-53, kU32 = 0x1p-24;

SolveOptions beam_options(int nb, bool fallback = true) {
  SolveOptions o;
  o.backend = Backend::cpu;
  o.variant = Variant::fp32_simt;
  o.block_size = nb;
  o.pivoting = Pivoting::beam;
  o.fallback = fallback;
  return o;
}

Eigen::MatrixXd uniform(int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::MatrixXd a(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) a(i, j) = u(rng);
  return a;
}

double cond_inf(const Eigen::MatrixXd& A) {
  return A.cwiseAbs().rowwise().sum().maxCoeff() * A.inverse().cwiseAbs().rowwise().sum().maxCoeff();
}

/// Converged by beam itself, or by the fallback with the reason in the note.
void check_converged_or_reported(const LinearSystem& sys, const SolveResult& r, const std::string& name) {
  INFO(name << ": pivoting " << to_string(r.pivoting) << ", " << r.modifications << " modifications: " << r.note);
  CHECK(r.converged);
  CHECK(dsgesv_criterion(sys, r.x));
  if (r.pivoting != Pivoting::beam) {
    CHECK(r.pivoting == Pivoting::partial);
    CHECK(r.note.find("beam") != std::string::npos);
    CHECK(r.note.find("partial pivoting used") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("beam's modifications reconstruct the factored matrix: P (A_s + E) = L U in FP64", "[solver][beam]") {
  const int n = 96, nb = 16;
  for (const bool zero_blocks : {false, true}) {
    Eigen::MatrixXd A = uniform(n, 41) + 4.0 * Eigen::MatrixXd::Identity(n, n);
    if (zero_blocks) {  // two diagonal blocks zero: their pivots must be modified
      A.block(0, 0, nb, nb).setZero();
      A.block(2 * nb, 2 * nb, nb, nb).setZero();
    }
    const cpu::BeamAttempt t = cpu::try_factorize_beam(A, Variant::fp32_simt, nb, GemmOptions{});
    INFO("zero blocks " << zero_blocks << ": " << t.breakdown);
    REQUIRE(t.factors.has_value());
    const LuFactorization& f = *t.factors;
    if (zero_blocks)
      CHECK(t.modifications.size() >= 1);
    else
      CHECK(t.modifications.empty());  // 4 I: every in-block pivot is well above the threshold
    // A_s + E in FP64 (A_s rounded to FP32, as the LU took it), rows in the LU's order
    const Eigen::MatrixXd as =
        (f.row_scale.asDiagonal() * A * f.col_scale.asDiagonal()).cast<float>().cast<double>();
    Eigen::MatrixXd pae(n, n);
    for (int i = 0; i < n; ++i) pae.row(i) = as.row(f.perm[static_cast<std::size_t>(i)]);
    for (const cpu::BeamModification& m : t.modifications) pae(m.column, m.column) += m.delta;
    const Eigen::MatrixXd lu = f.lu.cast<double>();
    const Eigen::MatrixXd L = lu.triangularView<Eigen::UnitLower>(), U = lu.triangularView<Eigen::Upper>();
    const Eigen::MatrixXd bound = L.cwiseAbs() * U.cwiseAbs() * (n * kU32 / (1 - n * kU32));
    CHECK(((L * U - pae).cwiseAbs().array() <= bound.array() + 4 * kU32 * as.cwiseAbs().array()).all());
    // each modification replaced a pivot not above its block's threshold by that threshold:
    // |old| = |pivot - delta| <= |pivot|, and one magnitude per block
    for (const cpu::BeamModification& m : t.modifications) {
      const double pivot = lu(m.column, m.column);
      CHECK(std::abs(pivot) > 0);
      CHECK(std::abs(pivot - m.delta) <= std::abs(pivot));
      for (const cpu::BeamModification& o : t.modifications)
        if (o.column / nb == m.column / nb) CHECK(std::abs(lu(o.column, o.column)) == std::abs(pivot));
    }
    // the pivots stay in their blocks: perm maps each block of nb rows onto itself
    for (int i = 0; i < n; ++i) CHECK(f.perm[static_cast<std::size_t>(i)] / nb == i / nb);
  }
}

TEST_CASE("beam alone converges to dsgesv's criterion on random and randsvd 1e2..1e6 systems", "[solver][beam]") {
  const int n = 300;
  std::vector<std::pair<std::string, LinearSystem>> systems;
  systems.emplace_back("U(-1,1)", generate_random_system(n, 5));
  for (const double cond : {1e2, 1e4, 1e6})
    systems.emplace_back("randsvd " + std::to_string(cond), generate_system(n, cond, SpectrumMode::geometric, 7));
  for (const auto& [name, sys] : systems)
    for (const int nb : {32, 64}) {
      const SolveResult r = solve(sys, beam_options(nb, false));
      INFO(name << " nb " << nb << ": " << r.note);
      CHECK(r.pivoting == Pivoting::beam);
      CHECK(r.converged);
      CHECK_FALSE(r.fallback_used);
      CHECK(dsgesv_criterion(sys, r.x));
      // x within 2 cond eta of the true solution (eta the backward error at dsgesv's criterion)
      const double eta = std::sqrt(static_cast<double>(n)) * kEps64;
      const double fe = (r.x - *sys.x_true).cwiseAbs().maxCoeff() / sys.x_true->cwiseAbs().maxCoeff();
      CHECK(fe <= 2 * cond_inf(sys.A) * eta + 4 * kEps64);
      if (r.modifications == 0) CHECK(r.note.find("GMRES") == std::string::npos);  // classical asked
    }
}

TEST_CASE("beam converges or reports its fallback on randsvd 1e8, 1e10 and systems built to need pivoting",
          "[solver][beam]") {
  const int n = 256, nb = 32;
  for (const double cond : {1e8, 1e10}) {
    const LinearSystem sys = generate_system(n, cond, SpectrumMode::geometric, 9);
    check_converged_or_reported(sys, solve(sys, beam_options(nb)), "randsvd " + std::to_string(cond));
  }
  {  // a zero diagonal block (and the diagonal of another): modified pivots, GMRES-IR against A
    Eigen::MatrixXd A = uniform(n, 12);
    A.block(0, 0, nb, nb).setZero();
    A.diagonal().segment(3 * nb, nb).setZero();
    const LinearSystem sys = with_ones(A);
    const SolveResult r = solve(sys, beam_options(nb));
    check_converged_or_reported(sys, r, "zero diagonal block");
    CHECK(r.modifications >= 1);
    if (r.pivoting == Pivoting::beam) CHECK(r.note.find("GMRES-IR against A") != std::string::npos);
  }
  {  // a diagonally dominant matrix with its rows permuted: the dominant entries leave the blocks
    Eigen::MatrixXd D = uniform(n, 13);
    D.diagonal().array() += 2.0 * n;
    std::vector<int> p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), std::mt19937_64(14));
    Eigen::MatrixXd A(n, n);
    for (int i = 0; i < n; ++i) A.row(i) = D.row(p[static_cast<std::size_t>(i)]);
    const LinearSystem sys = with_ones(A);
    check_converged_or_reported(sys, solve(sys, beam_options(nb)), "permuted diagonally dominant");
  }
  {  // rows scaled over 1e+-30 (the equilibration's job)
    Eigen::MatrixXd A = uniform(n, 15);
    for (int i = 0; i < n; ++i) A.row(i) *= std::pow(10.0, 60.0 * i / (n - 1) - 30);
    const LinearSystem sys = with_ones(A);
    check_converged_or_reported(sys, solve(sys, beam_options(nb)), "rows scaled 1e+-30");
  }
}

TEST_CASE("beam on every committed system: converged, by beam or by a reported fallback", "[solver][beam]") {
  for (const char* file : {"inputs/olm500.h5", "inputs/randsvd_n256_c1e4.h5", "inputs/random_n512.h5",
                           "inputs/west0067.h5", "inputs/bfwa62.h5", "inputs/gr_900_900_crg.h5"}) {
    const LinearSystem sys = read_system(test::test_data_path(file));
    check_converged_or_reported(sys, solve(sys, beam_options(64)), file);
  }
}

TEST_CASE("factorize with beam solves whole; the distributed solver refuses beam by name", "[solver][beam]") {
  const LinearSystem sys = generate_random_system(120, 3);
  const Factorization f = factorize(sys.A, beam_options(32));
  const SolveResult r = solve(f, sys.b);
  CHECK(r.converged);
  CHECK_FALSE(r.factorization_reused);
  CHECK(r.note.find("solved whole") != std::string::npos);
  CHECK(r.pivoting == Pivoting::beam);
  CHECK(parse_pivoting("beam") == Pivoting::beam);
  CHECK(to_string(Pivoting::beam) == "beam");
  CHECK_THROWS_WITH(parse_pivoting("beams"), Catch::Contains("partial, rbt, auto, beam"));
}
