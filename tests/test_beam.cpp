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
//   - the Woodbury correction: the formula in the factors' frames (perm, R, C, each
//     modification's entry) resolves M - U_E V_E^T in dense FP64, and that matrix is A_s within
//     the LU's rounding bound; apply() is lu_apply without modifications;
//   - where there are modifications, GMRES-IR (automatic, gmres) or the Woodbury correction
//     (woodbury) runs and converges, the requested refinement when there are none;
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
    if (r.pivoting == Pivoting::beam) {  // automatic: GMRES-IR
      CHECK(r.beam_correction == BeamCorrection::gmres);
      CHECK(r.note.find("GMRES-IR against A") != std::string::npos);
    }
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

TEST_CASE("beam's Woodbury correction: the formula in the factors' frames against dense FP64, and "
          "apply() through the factors",
          "[solver][beam]") {
  const int n = 96, nb = 16;
  Eigen::MatrixXd A = uniform(n, 51) + 4.0 * Eigen::MatrixXd::Identity(n, n);
  A.block(0, 0, nb, nb).setZero();
  const cpu::BeamAttempt t = cpu::try_factorize_beam(A, Variant::fp32_simt, nb, GemmOptions{});
  REQUIRE(t.factors.has_value());
  REQUIRE(t.modifications.size() == static_cast<std::size_t>(nb));  // the zero block's every pivot
  const LuFactorization& f = *t.factors;
  // Dense FP64 of the FP32 factors: M = P^T L U; U_E, V_E as BeamWoodbury builds them (in A_s's
  // frame); then C (M^-1 + M^-1 U_E K^-1 V_E^T M^-1) R must be A^-1, to FP64 rounding amplified
  // by the conditioning of M and K (M is the exact matrix of the factors; the rounding of A_s
  // to FP32 and of the LU are in M - A_s = E only where the modifications are, elsewhere
  // within gamma_n |L||U|, so the check is against A_s rebuilt from M: A_s' = M - U_E V_E^T).
  const Eigen::MatrixXd lu = f.lu.cast<double>();
  const Eigen::MatrixXd L = lu.triangularView<Eigen::UnitLower>(), U = lu.triangularView<Eigen::Upper>();
  Eigen::MatrixXd M(n, n);
  const Eigen::MatrixXd LU = L * U;
  for (int i = 0; i < n; ++i) M.row(f.perm[static_cast<std::size_t>(i)]) = LU.row(i);
  const int r = static_cast<int>(t.modifications.size());
  Eigen::MatrixXd UE = Eigen::MatrixXd::Zero(n, r), VE = Eigen::MatrixXd::Zero(n, r);
  for (int k = 0; k < r; ++k) {
    const cpu::BeamModification& m = t.modifications[static_cast<std::size_t>(k)];
    UE(f.perm[static_cast<std::size_t>(m.column)], k) = m.delta;
    VE(m.column, k) = 1.0;
  }
  const Eigen::MatrixXd As = M - UE * VE.transpose();  // the matrix the correction resolves
  const Eigen::MatrixXd Minv = M.inverse();
  const Eigen::MatrixXd K = Eigen::MatrixXd::Identity(r, r) - VE.transpose() * Minv * UE;
  const Eigen::MatrixXd W = Minv + Minv * UE * K.inverse() * VE.transpose() * Minv;
  const double kappa = cond_inf(As);
  const double residual = (Eigen::MatrixXd::Identity(n, n) - W * As).cwiseAbs().rowwise().sum().maxCoeff();
  INFO("kappa(A_s') " << kappa << ", ||I - W A_s'|| " << residual);
  CHECK(residual <= 64 * n * kappa * kEps64);
  // ... and A_s' is A_s up to the LU's rounding (so the correction targets the right matrix):
  const Eigen::MatrixXd as = (f.row_scale.asDiagonal() * A * f.col_scale.asDiagonal()).cast<float>().cast<double>();
  Eigen::MatrixXd bound(n, n);
  for (int i = 0; i < n; ++i)
    bound.row(f.perm[static_cast<std::size_t>(i)]) = (L.cwiseAbs() * U.cwiseAbs()).row(i);
  CHECK(((As - as).cwiseAbs().array() <= bound.array() * (n * kU32 / (1 - n * kU32)) +
                                             4 * kU32 * as.cwiseAbs().array()).all());
  // apply() is that formula through the FP32 solves: with no modifications, lu_apply bit for
  // bit; with them, the Woodbury term is added (checked in the refinement tests below)
  std::mt19937_64 rng(52);
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::MatrixXd b(n, 2);
  for (Eigen::Index j = 0; j < b.cols(); ++j)
    for (Eigen::Index i = 0; i < n; ++i) b(i, j) = u(rng);
  const cpu::BeamWoodbury none(f, {});
  CHECK(none.apply(b) == lu_apply(f, b));
  const cpu::BeamWoodbury woodbury(f, t.modifications);
  CHECK(woodbury.capacitance_rcond() > 0);
  CHECK(woodbury.apply(b).allFinite());
}

TEST_CASE("beam's correction: automatic, gmres and woodbury asked for", "[solver][beam]") {
  {  // the first diagonal block zero: rank nb = 32; automatic and gmres take GMRES-IR, woodbury Woodbury
    const int n = 256, nb = 32;
    Eigen::MatrixXd A = uniform(n, 61);
    A.block(0, 0, nb, nb).setZero();
    const LinearSystem sys = with_ones(A);
    for (const BeamCorrection asked : {BeamCorrection::automatic, BeamCorrection::woodbury, BeamCorrection::gmres}) {
      SolveOptions o = beam_options(nb, false);
      o.beam_correction = asked;
      const SolveResult r = solve(sys, o);
      INFO(to_string(asked) << ": " << r.note);
      CHECK(r.pivoting == Pivoting::beam);
      CHECK(r.modifications == nb);
      CHECK(r.converged);
      CHECK(dsgesv_criterion(sys, r.x));
      const BeamCorrection ran = asked == BeamCorrection::woodbury ? BeamCorrection::woodbury : BeamCorrection::gmres;
      CHECK(r.beam_correction == ran);
      CHECK(r.note.find(ran == BeamCorrection::gmres ? "GMRES-IR against A" : "Woodbury correction of rank 32") !=
            std::string::npos);
    }
  }
  {  // the first block zero at nb = 96: rank >= 96, both corrections (or a reported fallback)
    const int n = 288, nb = 96;
    Eigen::MatrixXd A = uniform(n, 62);
    A.block(0, 0, nb, nb).setZero();
    const LinearSystem sys = with_ones(A);
    const SolveResult r = solve(sys, beam_options(nb));
    INFO(r.note);
    CHECK(r.modifications >= nb);  // the zero block's, and more where the updates leave tiny pivots
    check_converged_or_reported(sys, r, "rank 96+, automatic");
    if (r.pivoting == Pivoting::beam) CHECK(r.beam_correction == BeamCorrection::gmres);
    SolveOptions o = beam_options(nb);
    o.beam_correction = BeamCorrection::woodbury;
    const SolveResult w = solve(sys, o);
    check_converged_or_reported(sys, w, "rank 96+, woodbury");
    if (w.pivoting == Pivoting::beam) CHECK(w.beam_correction == BeamCorrection::woodbury);
  }
  {  // no modifications: no correction, the requested refinement
    const LinearSystem sys = generate_random_system(200, 64);
    Eigen::MatrixXd A = sys.A + 8.0 * Eigen::MatrixXd::Identity(200, 200);
    const LinearSystem dominant = with_ones(A);
    const SolveResult r = solve(dominant, beam_options(32));
    CHECK(r.modifications == 0);
    CHECK(r.beam_correction == BeamCorrection::none);
  }
  CHECK(parse_beam_correction("woodbury") == BeamCorrection::woodbury);
  CHECK(parse_beam_correction("auto") == BeamCorrection::automatic);
  CHECK(to_string(BeamCorrection::none) == "none");
  CHECK_THROWS_WITH(parse_beam_correction("dense"), Catch::Contains("auto, gmres, woodbury"));
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

TEST_CASE("beam on cuda: the default block size capped at one window, a wider one refused",
          "[solver][beam]") {
  SolveOptions o = beam_options(0);  // block size 0: the default
  CHECK(default_block_size(Backend::cuda, 32768) == 1024);
  CHECK(resolve_block_size(o, Backend::cuda, 32768) == kMaxBeamBlockCuda);
  CHECK(resolve_block_size(o, Backend::cpu, 32768) == kDefaultBlockSizeCpu);
  o.block_size = 256;
  CHECK(resolve_block_size(o, Backend::cuda, 32768) == 256);
  o.block_size = 1024;
  CHECK_THROWS_WITH(resolve_block_size(o, Backend::cuda, 32768), Catch::Contains("at most 512, got 1024"));
  CHECK(resolve_block_size(o, Backend::cpu, 32768) == 1024);  // the cpu beam takes any
  o.block_size = 512;
  o.beam_correction = BeamCorrection::woodbury;  // the correction passes (cuda has it too)
  CHECK(resolve_block_size(o, Backend::cuda, 32768) == 512);
  SolveOptions partial = o;  // other pivotings pass untouched
  partial.pivoting = Pivoting::partial;
  partial.block_size = 1024;
  CHECK(resolve_block_size(partial, Backend::cuda, 32768) == 1024);
  partial.block_size = 0;
  CHECK(resolve_block_size(partial, Backend::cuda, 32768) == 1024);
}
