// rbt pivoting on the cpu (butterfly.hpp, cpu/rbt.hpp): the depth-2 random butterfly applied and
// undone is the identity to rounding and equals its dense matrices; the windowed LU of U^T A V
// picks each pivot as the largest of its window and keeps the growth that the LU without
// pivoting shows on U(-1,1) systems away; the transformed LU, refined against A, meets
// dsgesv's criterion on generated systems; on systems built to
// break an LU without pivoting and on every committed system it converges, with rbt or after
// falling back to partial pivoting with the reason in the note. [solver]
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "butterfly.hpp"
#include "cpu/blocked_lu.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve;

constexpr double kEps64 = 0x1p-53;

using test::dsgesv_criterion;

/// The cpu rbt solve with blocks of 32.
SolveOptions rbt_options(Variant v) { return test::rbt_options(Backend::cpu, v, 32); }

using test::with_ones;

}  // namespace

TEST_CASE("the random butterfly applied and undone is the identity to rounding, and is its dense matrix",
          "[solver]") {
  for (int n : {1, 4, 6, 13, 64}) {
    INFO("n = " << n);
    const detail::RandomButterfly w(n, 7);
    const int p = w.padded();
    CHECK(p % 4 == 0);
    CHECK(p >= n);
    CHECK(p < n + 4);
    const Eigen::MatrixXd x = Eigen::MatrixXd::Random(p, 3);
    // each level: entries exp(u/10) in [0.95, 1.052], one product and one sum per entry and
    // level; two levels forward and two back: a few units of eps64 relative to |x|
    const double tol = 16 * kEps64 * x.cwiseAbs().maxCoeff();
    Eigen::MatrixXd y = x;
    w.apply(y);
    w.apply_inverse(y);
    CHECK((y - x).cwiseAbs().maxCoeff() <= tol);
    y = x;
    w.apply_transpose(y);
    w.apply_inverse_transpose(y);
    CHECK((y - x).cwiseAbs().maxCoeff() <= tol);
    // the dense W from its columns: W^T's application is the transpose's
    Eigen::MatrixXd dense = Eigen::MatrixXd::Identity(p, p), dense_t = dense;
    w.apply(dense);
    w.apply_transpose(dense_t);
    CHECK((dense.transpose() - dense_t).cwiseAbs().maxCoeff() <= 4 * kEps64);
    // orthogonal up to the diagonals near 1: well conditioned
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(dense);
    CHECK(svd.singularValues()(0) / svd.singularValues()(p - 1) < 1.25);
    // the transform of A is U^T [A 0; 0 I] V
    const detail::RandomButterfly v(n, 8);
    const Eigen::MatrixXd A = Eigen::MatrixXd::Random(n, n);
    Eigen::MatrixXd u_dense = Eigen::MatrixXd::Identity(p, p), v_dense = u_dense, padded = u_dense;
    w.apply(u_dense);
    v.apply(v_dense);
    padded.topLeftCorner(n, n) = A;
    const Eigen::MatrixXd want = u_dense.transpose() * padded * v_dense;
    CHECK((detail::butterfly_transform(A, w, v) - want).cwiseAbs().maxCoeff() <= 64 * kEps64 * (n + 4));
  }
}

TEST_CASE("rbt's windowed LU takes each pivot as its window's largest and keeps the growth of the LU without "
          "pivoting away", "[solver]") {
  // A_r = U^T A V of a U(-1,1) A, n = 700 (p = 700): factored with windows of 128 rows and
  // without pivoting, nb = 128 (leaves of 32 from each block's first column).
  constexpr double kU32 = 0x1p-24;
  const int n = 700, nb = 128, window = 128;
  const LinearSystem sys = generate_system(n, 1, SpectrumMode::random, 3);
  const detail::RandomButterfly u(n, 1), v(n, 2);
  const Eigen::MatrixXf a_r = detail::butterfly_transform(sys.A, u, v).cast<float>();
  const double a_max = a_r.cwiseAbs().maxCoeff();
  auto factor = [&](int w, std::vector<int>& perm) {
    Eigen::MatrixXf lu = a_r;
    perm.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
    Variant resolved = Variant::fp32_simt;
    CHECK(cpu::factorize_rbt_lu(lu, perm, w, Variant::fp32_simt, nb, GemmOptions{}, resolved, 1e-30f) == -1);
    return lu;
  };
  std::vector<int> perm, none;
  const Eigen::MatrixXf lu = factor(window, perm);
  const Eigen::MatrixXf lu0 = factor(0, none);
  for (int i = 0; i < n; ++i) CHECK(none[static_cast<std::size_t>(i)] == i);
  // |l_ik| <= 1 for the rows of column k's leaf (later windows start below them, so no later
  // exchange brings a row from below column k's window there; further down they may)
  for (int k = 0; k < n; ++k) {
    const int leaf0 = k / nb * nb + (k % nb) / detail::kRbtLeafWidth * detail::kRbtLeafWidth;
    const int end = std::min(n, leaf0 + detail::kRbtLeafWidth);
    if (end > k + 1) CHECK(lu.col(k).segment(k + 1, end - k - 1).cwiseAbs().maxCoeff() <= 1.0f);
  }
  // P A_r = L U within u |A_r| + 2 gamma_n |L||U| (Frobenius), perm a permutation
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < n; ++i) REQUIRE(sorted[static_cast<std::size_t>(i)] == i);
  const Eigen::MatrixXd f = lu.cast<double>();
  Eigen::MatrixXd L = f.triangularView<Eigen::StrictlyLower>();
  L.diagonal().setOnes();
  const Eigen::MatrixXd U = f.triangularView<Eigen::Upper>();
  Eigen::MatrixXd pa(n, n);
  for (int i = 0; i < n; ++i) pa.row(i) = a_r.row(perm[static_cast<std::size_t>(i)]).cast<double>();
  const double gamma_n = n * kU32 / (1 - n * kU32);
  CHECK((pa - L * U).norm() <= kU32 * pa.norm() + 2 * gamma_n * (L.cwiseAbs() * U.cwiseAbs()).norm());
  // the growth: the windowed LU's stays near partial pivoting's, the LU without pivoting's does not
  const double growth = lu.cwiseAbs().maxCoeff() / a_max, growth0 = lu0.cwiseAbs().maxCoeff() / a_max;
  std::printf("rbt growth at n = %d: windows of %d rows %.1f, no pivoting %.1f\n", n, window, growth, growth0);
  CHECK(growth < 64);
  CHECK(growth < growth0);
}

TEST_CASE("rbt pivoting meets dsgesv's criterion on random and randsvd systems", "[solver]") {
  for (Variant v : {Variant::ec_fp16, Variant::fp32_simt}) {
    for (double cond : {0.0, 1e2, 1e4, 1e6}) {
      const LinearSystem sys = cond == 0 ? generate_system(150, 1, SpectrumMode::random, 3)
                                         : generate_system(150, cond, SpectrumMode::geometric, 3);
      SolveOptions o = rbt_options(v);
      o.condition_estimate = ConditionEstimate::always;  // checked below
      const SolveResult r = solve(sys, o);
      INFO(to_string(v) << ", cond " << cond << ": " << r.note);
      CHECK(r.pivoting == Pivoting::rbt);
      CHECK(r.converged);
      CHECK_FALSE(r.fallback_used);
      CHECK(dsgesv_criterion(sys, r.x));
      CHECK(r.note.find("rbt: LU of U^T A V with pivoting in windows of 128 rows") == 0);
      // the condition estimate through the rbt factors: cond_1 within n of the 2-norm condition
      if (cond > 0) {
        REQUIRE(r.condition_estimate.has_value());
        CHECK(*r.condition_estimate >= cond / 150);
        CHECK(*r.condition_estimate <= cond * 150);
      }
    }
  }
  // n = 701 U(-1,1) (cond ~ 1e6): windows of 128 rows converge in partial pivoting's iterations; the
  // LU without pivoting needs twice as many (the H100 saw its growth reach 8e6 at n = 16384)
  {
    const LinearSystem big = generate_system(701, 1, SpectrumMode::random, 3);
    SolveOptions o = rbt_options(Variant::fp32_simt);
    o.block_size = 128;
    const SolveResult windowed = solve(big, o);
    o.rbt_window = 0;
    const SolveResult none = solve(big, o);
    o.pivoting = Pivoting::partial;
    const SolveResult partial = solve(big, o);
    INFO(windowed.note << " | " << none.note);
    CHECK(windowed.pivoting == Pivoting::rbt);
    CHECK(windowed.converged);
    CHECK(windowed.iterations <= partial.iterations + 1);
    CHECK((none.pivoting == Pivoting::partial || none.iterations > windowed.iterations));
    o.pivoting = Pivoting::auto_;  // auto: partial pivoting, bitwise
    const SolveResult automatic = solve(big, o);
    CHECK(automatic.pivoting == Pivoting::partial);
    CHECK(automatic.x == partial.x);
    o.rbt_window = 300;
    o.pivoting = Pivoting::rbt;
    CHECK_THROWS_AS(solve(big, o), InvalidInput);
  }
  // reproducible: the same seed, the same bits
  const LinearSystem sys = generate_system(97, 1e3, SpectrumMode::geometric, 4);
  CHECK(solve(sys, rbt_options(Variant::ec_fp16)).x == solve(sys, rbt_options(Variant::ec_fp16)).x);
}

TEST_CASE("rbt converges, or falls back to partial pivoting with the reason, on systems that break an LU "
          "without pivoting, and on every committed system", "[solver]") {
  const int n = 120;
  // a zero diagonal: A = a cyclic shift of a well-conditioned diagonally dominant matrix
  Eigen::MatrixXd dominant = Eigen::MatrixXd::Random(n, n);
  dominant.diagonal().array() += 2.0 * n;
  Eigen::MatrixXd shifted(n, n);
  for (int i = 0; i < n; ++i) shifted.row((i + 1) % n) = dominant.row(i);
  // rows scaled over 1e-30 .. 1e30
  Eigen::MatrixXd scaled = Eigen::MatrixXd::Random(n, n);
  for (int i = 0; i < n; ++i) scaled.row(i) *= std::pow(10.0, -30.0 + 60.0 * i / (n - 1));
  // an exactly zero leading pivot: LU without pivoting would divide by 0 without the transform
  Eigen::MatrixXd zero_corner = Eigen::MatrixXd::Random(n, n);
  zero_corner(0, 0) = 0;
  int checked = 0;
  const Eigen::MatrixXd permuted = shifted.transpose();
  const std::vector<std::pair<const char*, Eigen::MatrixXd>> hard = {
      {"zero diagonal", shifted}, {"permuted dominant", permuted}, {"rows 1e-30..1e30", scaled},
      {"zero corner", zero_corner}};
  for (const auto& [name, A] : hard) {
    const LinearSystem sys = with_ones(A);
    const SolveResult r = solve(sys, rbt_options(Variant::ec_fp16));
    INFO(name << ": " << r.note);
    CHECK(r.converged);
    CHECK(dsgesv_criterion(sys, r.x));
    if (r.pivoting == Pivoting::partial) CHECK(r.note.find("rbt: ") == 0);  // the reason first
    ++checked;
  }
  for (const char* file : {"bfwa62.h5", "gr_900_900_crg.h5", "olm500.h5", "west0067.h5", "randsvd_n256_c1e4.h5",
                           "random_n512.h5"}) {
    const LinearSystem sys = read_system(tcsolve::test::test_data_path(std::string("inputs/") + file));
    SolveOptions o = rbt_options(Variant::ec_fp16);
    o.block_size = 64;
    const SolveResult r = solve(sys, o);
    const SolveResult partial = solve(sys, [&] {
      SolveOptions p = o;
      p.pivoting = Pivoting::partial;
      return p;
    }());
    INFO(file << ": rbt " << to_string(r.pivoting) << ": " << r.note);
    CHECK(r.converged);
    // never worse than partial pivoting's answer
    CHECK(r.backward_error <= std::max(partial.backward_error, std::sqrt(static_cast<double>(sys.n())) * kEps64));
    std::printf("rbt on %-22s %-7s %d iterations, backward error %.2e (partial: %d, %.2e)\n", file,
                std::string(to_string(r.pivoting)).c_str(), r.iterations, r.backward_error, partial.iterations,
                partial.backward_error);
    ++checked;
  }
  CHECK(checked == 10);
  CHECK(parse_pivoting("rbt") == Pivoting::rbt);
  CHECK(parse_pivoting("auto") == Pivoting::auto_);
  CHECK(to_string(Pivoting::auto_) == "auto");
  CHECK(resolve_pivoting(Pivoting::auto_, Backend::cuda, 16384) == Pivoting::partial);
  CHECK(resolve_pivoting(Pivoting::rbt, Backend::cpu, 10) == Pivoting::rbt);
  CHECK(to_string(Pivoting::partial) == "partial");
  CHECK_THROWS_AS(parse_pivoting("complete"), InvalidInput);
}
