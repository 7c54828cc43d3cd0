// SolveOptions::condition_estimate (issue 35, item 4): when the 1-norm condition estimate runs.
// always and never do what they say; automatic skips it where the solve's own figures show the
// conditioning (a classical refinement contracting at least 10x per step, a narrow U diagonal),
// and never loses a warning that always gives: over random and randsvd systems from cond 1e2 to
// 1e15, on the mixed and the FP64 LU paths, automatic warns "cannot be trusted" exactly where
// always does. An exactly singular A (two equal rows with a consistent b, which the blocked LU
// meets as a tiny pivot and refinement "solves") is refused under automatic too, without an
// estimate. The rule itself (detail::decide_condition_estimate) on made-up results: each trigger.
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "input_checks.hpp"
#include "refinement_rules.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve;

SolveOptions cpu_options(Variant v, ConditionEstimate mode, int fp64_below = 0) {
  SolveOptions o;
  o.backend = Backend::cpu;
  o.variant = v;
  o.block_size = 32;
  o.condition_estimate = mode;
  o.fp64_below = fp64_below;
  return o;
}

bool warns_untrusted(const SolveResult& r) {
  for (const std::string& w : r.warnings)
    if (w.find("cannot be trusted") != std::string::npos) return true;
  return false;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("condition estimate: always and never do what they say, auto skips it on a well-conditioned system",
          "[solver]") {
  const LinearSystem sys = generate_system(128, 1, SpectrumMode::random, 5);
  for (const Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
    INFO(to_string(v));
    const SolveResult always = solve(sys, cpu_options(v, ConditionEstimate::always));
    const SolveResult never = solve(sys, cpu_options(v, ConditionEstimate::never));
    const SolveResult automatic = solve(sys, cpu_options(v, ConditionEstimate::automatic));
    REQUIRE(always.condition_estimate.has_value());
    CHECK(always.condition_estimate_reason == "always");
    CHECK_FALSE(never.condition_estimate.has_value());
    CHECK(never.condition_estimate_reason == "never");
    INFO(automatic.condition_estimate_reason);
    CHECK_FALSE(automatic.condition_estimate.has_value());
    CHECK(starts_with(automatic.condition_estimate_reason, "automatic: not needed"));
    // the estimate changes nothing else: x bitwise, the same iterations
    CHECK((automatic.x.array() == always.x.array()).all());
    CHECK(automatic.iterations == always.iterations);
  }
  // the FP64 LU path (fp64_below): its first solve meets the criterion
  const SolveResult fp64 = solve(sys, cpu_options(Variant::auto_, ConditionEstimate::automatic, 1000));
  CHECK(fp64.fp64_lu);
  INFO(fp64.condition_estimate_reason);
  CHECK_FALSE(fp64.condition_estimate.has_value());
  CHECK(starts_with(fp64.condition_estimate_reason, "automatic: not needed (the FP64 LU's refinement"));
}

TEST_CASE("condition estimate: auto warns exactly where always does, from cond 1e2 to 1e15", "[solver]") {
  int warned = 0;
  for (const double cond : {1e2, 1e5, 1e8, 1e11, 1e13, 1e15}) {
    for (const SpectrumMode mode : {SpectrumMode::geometric, SpectrumMode::clustered}) {
      const LinearSystem sys = generate_system(96, cond, mode, 11);
      for (const int fp64_below : {0, 1000}) {
        const Variant v = fp64_below ? Variant::auto_ : Variant::ec_fp16;
        const SolveResult always = solve(sys, cpu_options(v, ConditionEstimate::always, fp64_below));
        const SolveResult automatic = solve(sys, cpu_options(v, ConditionEstimate::automatic, fp64_below));
        INFO("cond " << cond << (fp64_below ? ", FP64 LU path" : ", mixed path") << ": " << automatic.note
                     << " / " << automatic.condition_estimate_reason);
        CHECK(warns_untrusted(automatic) == warns_untrusted(always));
        CHECK(automatic.converged == always.converged);
        if (warns_untrusted(always)) {
          ++warned;
          REQUIRE(automatic.condition_estimate.has_value());
          CHECK(*automatic.condition_estimate == *always.condition_estimate);
        }
      }
    }
  }
  CHECK(warned >= 4);  // the test reaches the warning (cond 1e13 and 1e15, both paths, both spectra)
}

TEST_CASE("condition estimate: auto refuses two equal rows of a consistent system without an estimate",
          "[solver]") {
  LinearSystem sys = generate_system(96, 1e2, SpectrumMode::geometric, 7);
  sys.A.row(70) = -0.125 * sys.A.row(5);
  sys.b = sys.A * *sys.x_true;
  for (const Variant v : {Variant::fp32_simt, Variant::ec_fp16})
    CHECK_THROWS_WITH(
        solve(sys, cpu_options(v, ConditionEstimate::automatic)),
        Catch::Matchers::Contains("exactly singular") && Catch::Matchers::Contains("rows 6 and 71"));
}

TEST_CASE("exact singularity from sampled entries (the device's search) answers as from the host A",
          "[solver]") {
  const LinearSystem base = generate_system(150, 1e2, SpectrumMode::geometric, 3);
  // cases 4 and 5: sparse (a tridiagonal matrix: many lines' samples are all zero, so those
  // lines fall into one group), without and with a pair of equal rows
  Eigen::MatrixXd sparse = Eigen::MatrixXd::Zero(150, 150);
  for (int i = 0; i < 150; ++i) {
    sparse(i, i) = 4.0 + i % 7;
    if (i > 0) sparse(i, i - 1) = -1.0 - i % 3;
    if (i + 1 < 150) sparse(i, i + 1) = -0.5;
  }
  for (int which = 0; which < 6; ++which) {
    Eigen::MatrixXd A = which >= 4 ? sparse : base.A;
    if (which == 1) A.row(120) = -4.0 * A.row(9);
    if (which == 2) A.col(77) = 0.5 * A.col(76);
    if (which == 3) A.row(3) = A.row(140);  // an equal pair with the sampled entries of others too
    if (which == 5) A.row(101) = 2.0 * A.row(100);
    const int n = static_cast<int>(A.rows());
    const std::vector<int> p = detail::sample_positions(n);
    CHECK(p.size() == 64);
    std::vector<double> rows(p.size() * n), columns(p.size() * n);
    for (std::size_t k = 0; k < p.size(); ++k)
      for (int i = 0; i < n; ++i) {
        rows[k * n + i] = A(i, p[k]);
        columns[k * n + i] = A(p[k], i);
      }
    int fetched = 0;
    const auto sampled =
        detail::exact_singularity(n, rows, columns, [&](bool row, int line, std::vector<double>& out) {
          ++fetched;
          out.resize(n);
          for (int k = 0; k < n; ++k) out[k] = row ? A(line, k) : A(k, line);
        });
    // the same with the whole matrix on the host (the device's search where A is small enough):
    // no line fetched
    int fetched_whole = 0;
    const auto whole = detail::exact_singularity(
        n, rows, columns, [&](bool, int, std::vector<double>&) { ++fetched_whole; },
        [&]() -> const double* { return A.data(); });
    const auto host = detail::exact_singularity(A);
    INFO("case " << which << ": " << host.value_or("none"));
    CHECK(sampled == host);
    CHECK(whole == host);
    CHECK(fetched_whole == 0);
    CHECK(host.has_value() == (which != 0 && which != 4));
    if (which == 0) CHECK(fetched == 0);  // whole lines only for samples that agree
    if (which == 4) CHECK(fetched > 50);  // many of the sparse matrix's lines fall into groups (78 of 300)
  }
}

TEST_CASE("condition estimate: auto's rule, trigger by trigger", "[solver]") {
  SolveOptions o;
  o.condition_estimate = ConditionEstimate::automatic;
  const detail::SingularitySearch none_found = [] { return std::optional<std::string>(); };
  const int n = 100;
  const double level = std::sqrt(100.0) * 0x1p-53;
  auto fresh = [] {
    SolveResult r;
    r.converged = true;
    r.history = {1e-7, 1e-12, 1e-17};  // 1e5 per step
    return r;
  };
  SolveResult r = fresh();
  CHECK_FALSE(detail::decide_condition_estimate(o, r, n, 50, none_found));
  // each trigger alone
  r = fresh();
  r.converged = false;
  CHECK(detail::decide_condition_estimate(o, r, n, 50, none_found));
  r = fresh();
  r.fallback_used = true;
  CHECK(detail::decide_condition_estimate(o, r, n, 50, none_found));
  r = fresh();
  r.gmres_from = 1;
  CHECK(detail::decide_condition_estimate(o, r, n, 50, none_found));
  r = fresh();
  CHECK(detail::decide_condition_estimate(o, r, n, 0x1p20 * 1.01, none_found));
  CHECK_FALSE(detail::decide_condition_estimate(o, r, n, 0x1p20, none_found));
  r = fresh();
  CHECK(detail::decide_condition_estimate(o, r, n, std::numeric_limits<double>::quiet_NaN(), none_found));
  r = fresh();
  CHECK(detail::decide_condition_estimate(o, r, n, 50, {}));  // A on the device only: estimate
  // a slow step counts above 16 sqrt(n) eps64 only (the last steps near dsgesv's level do not)
  r = fresh();
  r.history = {1e-7, 2e-8, 1e-15};
  CHECK(detail::decide_condition_estimate(o, r, n, 50, none_found));
  CHECK(r.condition_estimate_reason.find("contracted the backward error by 5x only") != std::string::npos);
  r = fresh();
  r.history = {1e-7, 1e-12, 10 * level, 8 * level};
  CHECK_FALSE(detail::decide_condition_estimate(o, r, n, 50, none_found));
  // the FP64 LU path: the same rules
  r = fresh();
  r.fp64_lu = true;
  r.history = {1e-13, 1e-16};
  CHECK_FALSE(detail::decide_condition_estimate(o, r, n, 50, none_found));
  r.history = {1e-13, 5e-14};
  CHECK(detail::decide_condition_estimate(o, r, n, 50, none_found));
  // the search's finding is thrown unless never
  const detail::SingularitySearch found = [] {
    return std::optional<std::string>("matrix is exactly singular: x");
  };
  r = fresh();
  CHECK_THROWS_AS(detail::decide_condition_estimate(o, r, n, 50, found), InvalidInput);
  o.condition_estimate = ConditionEstimate::always;
  CHECK_THROWS_AS(detail::decide_condition_estimate(o, r, n, 50, found), InvalidInput);
  o.condition_estimate = ConditionEstimate::never;
  CHECK_FALSE(detail::decide_condition_estimate(o, r, n, 50, found));
  CHECK(parse_condition_estimate("auto") == ConditionEstimate::automatic);
  CHECK(to_string(ConditionEstimate::always) == "always");
  CHECK_THROWS_AS(parse_condition_estimate("sometimes"), InvalidInput);
}
