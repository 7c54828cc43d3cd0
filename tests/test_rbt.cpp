// rbt pivoting on the cpu (butterfly.hpp, cpu/rbt.hpp): the depth-2 random butterfly applied and
// undone is the identity to rounding and equals its dense matrices; the transformed LU without
// pivoting, refined against A, meets dsgesv's criterion on generated systems; on systems built to
// break an LU without pivoting and on every committed system it converges, with rbt or after
// falling back to partial pivoting with the reason in the note. [solver]
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "butterfly.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve;

constexpr double kEps64 = 0x1p-53;

using test::dsgesv_criterion;

SolveOptions rbt_options(Variant v) {
  SolveOptions o;
  o.variant = v;
  o.backend = Backend::cpu;
  o.block_size = 32;
  o.pivoting = Pivoting::rbt;
  return o;
}

/// b = A x_true with x_true = ones.
LinearSystem with_ones(Eigen::MatrixXd A) {
  LinearSystem sys;
  sys.x_true = Eigen::MatrixXd::Ones(A.rows(), 1);
  sys.b = A * *sys.x_true;
  sys.A = std::move(A);
  return sys;
}

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

TEST_CASE("rbt pivoting meets dsgesv's criterion on random and randsvd systems, without pivoting", "[solver]") {
  for (Variant v : {Variant::ec_fp16, Variant::fp32_simt}) {
    for (double cond : {0.0, 1e2, 1e4, 1e6}) {
      const LinearSystem sys = cond == 0 ? generate_system(150, 1, SpectrumMode::random, 3)
                                         : generate_system(150, cond, SpectrumMode::geometric, 3);
      const SolveResult r = solve(sys, rbt_options(v));
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
  CHECK(to_string(Pivoting::partial) == "partial");
  CHECK_THROWS_AS(parse_pivoting("complete"), InvalidInput);
}
