// [gpu] tests of the tournament-pivoting leaf (solver/src/cuda/leaf_tournament.cu,
// CudaLuPlan::Leaf::tournament): one leaf against a host emulation of the same two rounds (the
// same fmaf, the same reciprocal, the same tie rule), bitwise: its pivots, its factored rows in
// their places, its pairs, its zero-pivot report; P A = L U within the substitution's bound;
// and the LU and the solver with tournament leaves: pivots of a row-permuted diagonally
// dominant matrix, P R A C = L U within the bound, convergence to dsgesv's criterion in partial
// pivoting's iterations or one more. Skipped, with a warning, without a GPU.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <Eigen/Dense>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/kernels.hpp"
#include "leaf_test_util.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve;
using test::destinations;
using test::eliminate_host;
using test::host_vector;
using test::RowMajorF;

#define TCSOLVE_TOURNAMENT_SKIP_WITHOUT_GPU(what)                                       \
  if (!tcsolve::cuda::device_available()) {                                             \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                             \
  }

constexpr int kCtaRows = 1024;  ///< rows per CTA of the kernel's first round (256 threads x 4)
constexpr double kU32 = 0x1p-24;

struct HostLeaf {
  std::vector<int> pivots;  ///< step i's pivot row (relative to c0)
  RowMajorF factored;       ///< row r (relative to c0): its multipliers and, for a pivot row, its U
};

/// The kernel's two rounds and substitution on the m x 32 leaf (columns >= w zero).
HostLeaf tournament_host(const RowMajorF& leaf, int w) {
  const int m = static_cast<int>(leaf.rows());
  std::vector<int> candidates;
  for (int first = 0; first < m; first += kCtaRows) {
    const int rows = std::min(kCtaRows, m - first);
    RowMajorF work = leaf.middleRows(first, rows);
    std::vector<int> ids(static_cast<std::size_t>(rows));
    for (int j = 0; j < rows; ++j) ids[static_cast<std::size_t>(j)] = first + j;
    for (int q : eliminate_host(work, ids, w, nullptr, nullptr, nullptr))
      if (q >= 0) candidates.push_back(q);
  }
  RowMajorF work(static_cast<Eigen::Index>(candidates.size()), 32);
  for (std::size_t j = 0; j < candidates.size(); ++j)
    work.row(static_cast<Eigen::Index>(j)) = leaf.row(candidates[j]);
  RowMajorF u = RowMajorF::Zero(32, 32);
  HostLeaf h;
  h.pivots = eliminate_host(work, candidates, w, nullptr, nullptr, &u);
  h.factored = leaf;
  std::vector<int> all(static_cast<std::size_t>(m));
  for (int r = 0; r < m; ++r) all[static_cast<std::size_t>(r)] = r;
  eliminate_host(h.factored, all, w, &h.pivots, &u, nullptr);
  return h;
}

}  // namespace

TEST_CASE(
    "the device tournament leaf gives bitwise the host emulation's pivots, factors, places and pairs, "
    "and P A = L U within the substitution's bound",
    "[gpu]") {
  TCSOLVE_TOURNAMENT_SKIP_WITHOUT_GPU("the tournament leaf");
  if (cuda::kernels::tournament_leaf_width(2500) == 0) {
    WARN("the tournament leaf kernel does not run on " << cuda::device_name() << " (Hopper only): skipped");
    return;
  }
  struct Case {
    int n, c0, w;
    int zero_column;  ///< a leaf column made zero in every row (its pivot then 0), or -1
    const char* what;
  };
  // 2500 - 40: three CTAs (the last 412 rows), whole aligned rows (bulk copies); c0 = 41, w = 20:
  // unaligned, narrow (row by row); 600 - 580 = 20 rows: one CTA with fewer rows than 32; a zero
  // column: the first zero pivot reported as its 1-based global column.
  const Case cases[] = {{2500, 40, 32, -1, "three CTAs, aligned"},
                        {2500, 41, 20, -1, "three CTAs, unaligned, narrow"},
                        {600, 580, 20, -1, "one CTA, 20 rows"},
                        {5000, 1000, 32, 7, "four CTAs, a zero column"}};
  for (const Case& t : cases) {
    INFO(t.what << ": n = " << t.n << ", c0 = " << t.c0 << ", w = " << t.w);
    std::mt19937 rng(static_cast<unsigned>(t.n + t.c0));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    RowMajorF a(t.n, t.n);
    for (int i = 0; i < t.n; ++i)
      for (int j = 0; j < t.n; ++j) a(i, j) = dist(rng) * std::ldexp(1.0f, (i * 7) % 13 - 6);
    if (t.zero_column >= 0) a.col(t.c0 + t.zero_column).segment(t.c0, t.n - t.c0).setZero();
    const int m = t.n - t.c0;
    RowMajorF leaf = RowMajorF::Zero(m, 32);
    leaf.leftCols(t.w) = a.block(t.c0, t.c0, m, t.w);
    const HostLeaf want = tournament_host(leaf, t.w);
    const std::vector<int> dest = destinations(want.pivots, m, t.w);

    cuda::DeviceBuffer<float> d_a(host_vector(a.data(), a.size()));
    cuda::DeviceBuffer<int> info(std::vector<int>{0}), pairs(cuda::kernels::interchange_scratch_ints(t.w));
    cuda::kernels::factor_leaf_tournament(nullptr, d_a.data(), t.n, t.n, t.c0, t.w, pairs.data(),
                                          info.data());
    const std::vector<float> got = d_a.download();
    const Eigen::Map<const RowMajorF> f(got.data(), t.n, t.n);

    CHECK(info.download()[0] == (t.zero_column >= 0 ? t.c0 + t.zero_column + 1 : 0));
    // every row of the leaf in its place, bitwise; nothing else moved
    RowMajorF expected = a;
    for (int r = 0; r < m; ++r)
      expected.block(t.c0 + dest[static_cast<std::size_t>(r)], t.c0, 1, t.w) =
          want.factored.block(r, 0, 1, t.w);
    CHECK(std::memcmp(expected.data(), f.data(), got.size() * sizeof(float)) == 0);
    // the pairs say the same: row dst receives the original row src
    const std::vector<int> pr = pairs.download();
    const int count = pr[0];
    CHECK(count <= 2 * t.w);
    int moved = 0;
    for (int r = 0; r < m; ++r) moved += dest[static_cast<std::size_t>(r)] != r;
    CHECK(count == moved);
    for (int k = 0; k < count; ++k) {
      const int dst = pr[static_cast<std::size_t>(1 + k)],
                src = pr[static_cast<std::size_t>(1 + 2 * t.w + k)];
      REQUIRE(src >= t.c0);
      CHECK(dest[static_cast<std::size_t>(src - t.c0)] == dst - t.c0);
    }
    if (t.zero_column >= 0) continue;
    // P leaf = L U within twice gamma_w |L||U| (each entry a w-term dot product rounded in FP32)
    Eigen::MatrixXd panel(m, t.w);
    for (int r = 0; r < m; ++r)
      panel.row(dest[static_cast<std::size_t>(r)]) = leaf.row(r).head(t.w).cast<double>();
    Eigen::MatrixXd L = f.block(t.c0, t.c0, m, t.w).cast<double>();
    const Eigen::MatrixXd U = L.topRows(t.w).triangularView<Eigen::Upper>();
    for (int i = 0; i < t.w; ++i)
      for (int j = i; j < t.w; ++j) L(i, j) = i == j ? 1.0 : 0.0;
    const double gamma = t.w * kU32 / (1 - t.w * kU32);
    const Eigen::MatrixXd residual = (panel - L * U).cwiseAbs();
    const Eigen::MatrixXd bound = 2 * gamma * (L.cwiseAbs() * U.cwiseAbs());
    CHECK((residual - bound).maxCoeff() <= 0);
    // the first pivot is the column's largest (a CTA's largest is a candidate, and the final
    // round's first step compares the candidates' original values)
    CHECK(std::abs(f(t.c0, t.c0)) == leaf.col(0).cwiseAbs().maxCoeff());
    std::printf("tournament leaf %-30s max |L| = %.3g\n", t.what, L.cwiseAbs().maxCoeff());
  }
}

TEST_CASE(
    "the cuda solver with tournament leaves meets dsgesv's criterion in partial pivoting's iterations or one "
    "more, and reports the leaves that ran",
    "[gpu]") {
  TCSOLVE_TOURNAMENT_SKIP_WITHOUT_GPU("the solver with tournament leaves");
  const bool hopper = cuda::kernels::tournament_leaf_width(1500) > 0;
  for (double cond : {0.0, 1e2, 1e4, 1e6}) {
    const int n = 1500;
    const LinearSystem sys = cond == 0 ? generate_system(n, 1, SpectrumMode::random, 23)
                                       : generate_system(n, cond, SpectrumMode::geometric, 23);
    INFO("n = " << n << (cond == 0 ? ", U(-1,1)" : ", randsvd geometric cond ") << cond);
    SolveOptions o;
    o.backend = Backend::cuda;
    o.fallback = false;
    const SolveResult partial = solve(sys, o);
    o.cuda_plan.leaf = CudaLuPlan::Leaf::tournament;
    const SolveResult tournament = solve(sys, o);
    std::printf("n = %d cond %.0e: iterations partial %d, tournament %d; backward error %.2e / %.2e\n", n,
                cond, partial.iterations, tournament.iterations, partial.backward_error,
                tournament.backward_error);
    REQUIRE(tournament.cuda_plan.has_value());
    CHECK(tournament.cuda_plan->leaf == (hopper ? CudaLuPlan::Leaf::tournament : CudaLuPlan::Leaf::cusolver));
    CHECK(tournament.converged);
    CHECK(test::dsgesv_criterion(sys, tournament.x));
    CHECK(tournament.iterations <= partial.iterations + 1);
  }
  // n above the kernel's 16 x 1024 rows: the cluster kernel's leaves, reported
  if (hopper) {
    CHECK(cuda::kernels::tournament_leaf_width(16385) == 0);
    CHECK(cuda::kernels::tournament_leaf_width(16384) == 32);
  }
}

#endif  // TCSOLVE_HAVE_CUDA
