// The reference of the GPU LU's diagonal-block solves (solver/src/cpu/trsm_leaf.hpp), which the
// cuda kernels match bitwise (test_trsm_leaf_cuda.cpp): its x solves M x = b within forward
// substitution's bound, and the plan field that chooses the kernel (CudaLuPlan::trsm_leaves)
// parses, lists and defaults as documented.
//
// Bound. Forward substitution in any order of its sums, with fma or not, gives (M + dM) x = b with
// |dM| <= gamma_w |M| (Higham, Thm 8.5), so |b - M x| <= gamma_w |M| |x| componentwise. The
// exact residual is formed in long double (its own error 2^-40 of the bound's unit, allowed for
// by the factor 1 + 1/64). A skipped product, a wrong stride, a transposed M or a missing
// division leaves an error of the order of |M| |x|, far above the bound.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/trsm_leaf.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"

TEST_CASE("trsm_leaf_substitute: forward substitution within gamma_w |M| |x|, unit and non-unit") {
  const double u = std::numeric_limits<float>::epsilon() / 2;
  std::mt19937_64 g(7);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int w : {1, 2, 7, 32, 63, 64}) {
    for (bool unit : {true, false}) {
      CAPTURE(w, unit);
      // M column-major (w x w, leading dimension w + 3); the diagonal away from zero
      const int ld = w + 3;
      std::vector<float> m(static_cast<std::size_t>(ld) * w);
      for (auto& v : m) v = d(g);
      for (int k = 0; k < w; ++k) m[k + static_cast<std::size_t>(k) * ld] = (k % 2 ? -1.0f : 1.0f) * (1 + std::fabs(d(g)));
      auto entry = [&](int e, int k) { return m[e + static_cast<std::size_t>(k) * ld]; };
      auto diag = [&](int k) { return entry(k, k); };
      // one vector with stride 3 (its entries apart in memory, as a row of B in the kernel's rows case)
      std::vector<float> b(3 * static_cast<std::size_t>(w));
      for (auto& v : b) v = d(g);
      std::vector<float> x = b;
      tcsolve::cpu::trsm_leaf_substitute(x.data(), 3, w, unit, entry, diag);
      const double gamma = w * u / (1 - w * u);
      double worst = 0;
      for (int e = 0; e < w; ++e) {
        long double exact = b[3 * static_cast<std::size_t>(e)], magnitude = 0;
        for (int k = 0; k <= e; ++k) {
          const float mk = k == e ? (unit ? 1.0f : diag(e)) : entry(e, k);
          const long double p = static_cast<long double>(mk) * x[3 * static_cast<std::size_t>(k)];
          exact -= p;
          magnitude += std::fabs(p);
        }
        const double bound = gamma * static_cast<double>(magnitude) * (1 + 1.0 / 64);
        const double error = static_cast<double>(std::fabs(exact));
        worst = std::max(worst, bound > 0 ? error / bound : (error > 0 ? 1e300 : 0));
      }
      CHECK(worst <= 1.0);
      // the entries between the vector's stay as they were
      for (std::size_t i = 0; i < b.size(); ++i)
        if (i % 3 != 0) CHECK(x[i] == b[i]);
    }
  }
  // a zero pivot gives infinities, as IEEE division does
  float x[2] = {1.0f, 1.0f};
  tcsolve::cpu::trsm_leaf_substitute(x, 1, 2, false, [](int, int) { return 1.0f; },
                                     [](int k) { return k == 0 ? 0.0f : 1.0f; });
  CHECK(std::isinf(x[0]));
  CHECK_FALSE(std::isfinite(x[1]));
}

TEST_CASE("trsm_leaves: defaults to automatic, parses kernel and cublas, is listed and reported") {
  using tcsolve::CudaLuPlan;
  CudaLuPlan plan;
  CHECK(plan.trsm_leaves == CudaLuPlan::TrsmLeaves::automatic);
  tcsolve::set_plan_fields(plan, "trsm_leaves=cublas");
  CHECK(plan.trsm_leaves == CudaLuPlan::TrsmLeaves::cublas);
  tcsolve::set_plan_fields(plan, "trsm_leaves=kernel");
  CHECK(plan.trsm_leaves == CudaLuPlan::TrsmLeaves::kernel);
  CHECK_THROWS_AS(tcsolve::set_plan_fields(plan, "trsm_leaves=fast"), tcsolve::InvalidInput);
  bool listed = false;
  for (const auto& [name, value] : tcsolve::plan_fields(plan)) listed = listed || (name == "trsm_leaves" && value == "kernel");
  CHECK(listed);
  try {
    tcsolve::set_plan_fields(plan, "no_such_field=1");
    FAIL("an unknown field was accepted");
  } catch (const tcsolve::InvalidInput& e) {
    CHECK(std::string(e.what()).find("trsm_leaves") != std::string::npos);  // the error lists the fields
  }
}
