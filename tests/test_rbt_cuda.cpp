// [gpu] tests of the rbt pivoting on the device (solver/src/cuda/butterfly.cu, leaf_rbt.cu,
// blocked_lu.cpp's factorize_rbt, the rbt branches of the refinement and the condition
// estimate): the transform of A and of the correction's vectors bitwise the host's
// (butterfly.hpp); the leaf, with and without its pivot window, within the LU's bound with its
// tiny pivot reported; solves that meet dsgesv's criterion in about the cpu rbt's iterations; and, on systems built to break an LU without pivoting and on every committed
// system, convergence with rbt or after the reported fall back to partial pivoting, never worse
// than partial pivoting. Skipped, with a warning, without a GPU.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "butterfly.hpp"
#include "cuda/kernels.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve;

#define TCSOLVE_RBT_SKIP_WITHOUT_GPU(what)                                              \
  if (!tcsolve::cuda::device_available()) {                                             \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                             \
  }

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename T>
std::vector<T> host_vector(const T* data, std::size_t count) {
  return std::vector<T>(data, data + count);
}

float from_bits(unsigned bits) {
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

using test::rbt_options;
using test::with_ones;

}  // namespace

TEST_CASE("the device butterfly transforms of A and of the correction's vectors are bitwise the host's", "[gpu]") {
  TCSOLVE_RBT_SKIP_WITHOUT_GPU("the device butterfly transforms");
  // n = 1001: p = 1004, q = 251, which no tile of the matrix kernel (32 x 16 groups) divides;
  // power-of-two scales over 2^-20..2^20 so that R and C matter.
  for (int n : {5, 1001}) {
    INFO("n = " << n);
    const detail::RandomButterfly u(n, 11), v(n, 12);
    const int p = u.padded();
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    Eigen::MatrixXd A(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) A(i, j) = dist(rng);
    Eigen::VectorXd row(n), col(n);
    for (int i = 0; i < n; ++i) {
      row[i] = std::ldexp(1.0, (i * 7) % 41 - 20);
      col[i] = std::ldexp(1.0, (i * 13) % 37 - 18);
    }
    const Eigen::MatrixXd As = row.asDiagonal() * A * col.asDiagonal();
    const RowMajorF want = detail::butterfly_transform(As, u, v).cast<float>();

    cuda::DeviceBuffer<double> a(host_vector(A.data(), A.size())), r(host_vector(row.data(), n)),
        c(host_vector(col.data(), n));
    cuda::DeviceBuffer<double> uo(u.outer()), ui(u.inner()), vo(v.outer()), vi(v.inner());
    cuda::DeviceBuffer<float> a_r(static_cast<std::size_t>(p) * p);
    cuda::DeviceBuffer<unsigned> bits(1);
    cuda::kernels::butterfly_matrix(nullptr, a.data(), n, p, r.data(), c.data(), uo.data(), ui.data(), vo.data(),
                                    vi.data(), a_r.data(), bits.data());
    const std::vector<float> got = a_r.download();
    REQUIRE(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
    CHECK(from_bits(bits.download()[0]) == want.cwiseAbs().maxCoeff());
    cuda::kernels::max_abs(nullptr, a_r.data(), a_r.size(), bits.data());
    CHECK(from_bits(bits.download()[0]) == want.cwiseAbs().maxCoeff());

    // the correction's right-hand side t = U^T pad(R rhs), two columns
    const int k = 2;
    Eigen::MatrixXd rhs(n, k);
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < n; ++i) rhs(i, j) = dist(rng) * std::ldexp(1.0, j * 30);
    Eigen::MatrixXd t = detail::pad_rows(row.asDiagonal() * rhs, p);
    u.apply_transpose(t);
    cuda::DeviceBuffer<double> d_rhs(host_vector(rhs.data(), rhs.size())), d_t(static_cast<std::size_t>(p) * k);
    cuda::kernels::butterfly_rhs(nullptr, d_rhs.data(), n, n, p, k, r.data(), uo.data(), ui.data(), d_t.data());
    const std::vector<double> got_t = d_t.download();
    CHECK(std::memcmp(got_t.data(), t.data(), got_t.size() * sizeof(double)) == 0);

    // the solution x = C (V double(y))[0, n) 2^e
    Eigen::MatrixXf y(p, k);
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < p; ++i) y(i, j) = static_cast<float>(dist(rng));
    const std::vector<int> exponents = {3, -7};
    Eigen::MatrixXd z = y.cast<double>();
    v.apply(z);
    Eigen::MatrixXd x = z.topRows(n);
    for (int j = 0; j < k; ++j)
      x.col(j) = col.cwiseProduct(x.col(j)) * std::ldexp(1.0, exponents[static_cast<std::size_t>(j)]);
    cuda::DeviceBuffer<float> d_y(host_vector(y.data(), y.size()));
    cuda::DeviceBuffer<int> d_e(exponents);
    cuda::DeviceBuffer<double> d_x(static_cast<std::size_t>(n) * k);
    cuda::kernels::butterfly_solution(nullptr, d_y.data(), n, p, k, vo.data(), vi.data(), c.data(), d_e.data(),
                                      d_x.data(), n);
    const std::vector<double> got_x = d_x.download();
    CHECK(std::memcmp(got_x.data(), x.data(), got_x.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("the device rbt leaf factors within the LU bound, its pivots the window's largest, and reports a tiny "
          "pivot", "[gpu]") {
  TCSOLVE_RBT_SKIP_WITHOUT_GPU("the rbt leaf");
  // a 600 x 600 row-major matrix, the leaf at c0 = 40 of width 32 (rows 40..599), windows of 0
  // (no pivoting: a dominant diagonal), 64 and 256 rows; checked: P panel = L U within twice
  // gamma_w |L||U| (the leaf's w-term dot products, rounded in FP32), |L| <= 1 inside the window,
  // each pivot the largest of its column's window rows, nothing outside the leaf's columns moved.
  constexpr double kU32 = 0x1p-24;
  const int n = 600, c0 = 40, w = 32;
  for (int window : {0, 64, 256}) {
    INFO("window " << window);
    std::mt19937 rng(9 + window);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    RowMajorF a(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) a(i, j) = dist(rng) + (window == 0 && i == j ? 4.0f : 0.0f);
    cuda::DeviceBuffer<float> d_a(host_vector(a.data(), a.size()));
    cuda::DeviceBuffer<int> info(std::vector<int>{0}), pairs(cuda::kernels::interchange_scratch_ints(w));
    cuda::kernels::factor_rbt_window(nullptr, d_a.data(), n, n, c0, w, window, 1e-3f, pairs.data(), info.data());
    cuda::kernels::factor_rbt_below(nullptr, d_a.data(), n, n, c0, w, window);
    const std::vector<float> got = d_a.download();
    CHECK(info.download()[0] == 0);
    const Eigen::Map<const RowMajorF> f(got.data(), n, n);
    // the panel's rows in the order the exchanges leave them: pairs (dst, src) inside the window
    Eigen::MatrixXd panel = a.block(c0, c0, n - c0, w).cast<double>();
    if (window > 0) {
      const std::vector<int> pr = pairs.download();
      const int count = pr[0];
      CHECK(count <= 2 * w);
      const Eigen::MatrixXd before = panel;
      std::vector<int> seen(static_cast<std::size_t>(n), 0);
      for (int m = 0; m < count; ++m) {
        const int dst = pr[static_cast<std::size_t>(1 + m)], src = pr[static_cast<std::size_t>(1 + 2 * w + m)];
        REQUIRE(dst >= c0);
        REQUIRE(dst < c0 + window);
        REQUIRE(src >= c0);
        REQUIRE(src < c0 + window);
        ++seen[static_cast<std::size_t>(dst)];
        --seen[static_cast<std::size_t>(src)];
        panel.row(dst - c0) = before.row(src - c0);
      }
      for (int v : seen) REQUIRE(v == 0);  // a permutation of the moved rows
    }
    Eigen::MatrixXd L = f.block(c0, c0, n - c0, w).cast<double>();
    Eigen::MatrixXd U = L.topRows(w).triangularView<Eigen::Upper>();
    for (int i = 0; i < w; ++i)
      for (int j = i; j < w; ++j) L(i, j) = (i == j) ? 1.0 : 0.0;
    if (window > 0) CHECK(L.topRows(window).cwiseAbs().maxCoeff() <= 1.0);
    // substitution everywhere (the window's right-looking LU and the rows below): twice
    // gamma_w |L||U| (Higham Thm 9.3 with the FMA's single rounding inside it)
    const double gamma = w * kU32 / (1 - w * kU32);
    const Eigen::MatrixXd residual = (panel - L * U).cwiseAbs();
    const Eigen::MatrixXd bound = 2 * gamma * (L.cwiseAbs() * U.cwiseAbs());
    CHECK((residual - bound).maxCoeff() <= 0);
    // the first pivot is the window's largest of column c0 (no arithmetic before it)
    if (window > 0) {
      Eigen::Index p = 0;
      a.col(c0).segment(c0, window).cwiseAbs().maxCoeff(&p);
      CHECK(std::abs(f(c0, c0)) == std::abs(a(c0 + p, c0)));
    }
    CHECK(f.leftCols(c0) == a.leftCols(c0));
    CHECK(f.rightCols(n - c0 - w) == a.rightCols(n - c0 - w));
    CHECK(f.block(0, c0, c0, w) == a.block(0, c0, c0, w));
  }

  // a zero in the 6th diagonal entry: without pivoting the column is reported (1-based); with a
  // window the identity's rows are exchanged past it and nothing is reported
  RowMajorF b = RowMajorF::Identity(128, 128);
  b(5, 5) = 0;
  b(70, 5) = 1;
  for (int window : {0, 64, 128}) {
    cuda::DeviceBuffer<float> d_b(host_vector(b.data(), b.size()));
    cuda::DeviceBuffer<int> info_b(std::vector<int>{0}), pairs(cuda::kernels::interchange_scratch_ints(32));
    cuda::kernels::factor_rbt_window(nullptr, d_b.data(), 128, 128, 0, 32, window, 1e-6f, pairs.data(),
                                     info_b.data());
    INFO("window " << window);
    CHECK(info_b.download()[0] == (window == 128 ? 0 : 6));  // row 70 lies in the 128-row window only
  }
}

TEST_CASE("cuda rbt meets dsgesv's criterion on random and randsvd systems, as the cpu rbt does",
          "[gpu]") {
  TCSOLVE_RBT_SKIP_WITHOUT_GPU("the cuda rbt solves");
  // n = 701: p = 704, nb = 128: five full blocks and a last one of 64 columns (look-ahead on)
  for (Variant v : {Variant::ec_fp16, Variant::auto_, Variant::fp32_simt}) {
    for (double cond : {0.0, 1e2, 1e4, 1e6}) {
      const LinearSystem sys = cond == 0 ? generate_system(701, 1, SpectrumMode::random, 3)
                                         : generate_system(701, cond, SpectrumMode::geometric, 3);
      SolveOptions og = rbt_options(Backend::cuda, v, 128), oc = rbt_options(Backend::cpu, v, 128);
      og.condition_estimate = oc.condition_estimate = ConditionEstimate::always;  // checked below
      og.fp64_below = 0;  // auto's FP64 LU below 3072 on cuda would take the place of rbt
      const SolveResult g = solve(sys, og);
      const SolveResult c = solve(sys, oc);
      INFO(to_string(v) << ", cond " << cond << ": cuda: " << g.note << "; cpu: " << c.note);
      CHECK(g.pivoting == Pivoting::rbt);
      CHECK(g.converged);
      CHECK_FALSE(g.fallback_used);
      CHECK(test::dsgesv_criterion(sys, g.x));
      CHECK(g.note.find("rbt: LU of U^T A V with pivoting in windows of 128 rows") == 0);
      // the same transform, the same LU up to the order of the roundings: about the same steps
      CHECK(c.pivoting == Pivoting::rbt);
      CHECK(std::abs(g.iterations - c.iterations) <= 1);
      if (cond > 0) {
        REQUIRE(g.condition_estimate.has_value());
        CHECK(*g.condition_estimate >= cond / 701);
        CHECK(*g.condition_estimate <= cond * 701);
      }
      CHECK(g.iterations <= 5);
      bool butterfly = false;
      for (const auto& [name, seconds] : g.time_s.phases) butterfly = butterfly || (name == "butterfly" && seconds > 0);
      CHECK(butterfly);
    }
  }
  // reproducible: the same seed, the same bits; another seed, another transform
  const LinearSystem sys = generate_system(300, 1e3, SpectrumMode::geometric, 4);
  SolveOptions o = rbt_options(Backend::cuda, Variant::ec_fp16, 64);
  const SolveResult first = solve(sys, o);
  CHECK(first.x == solve(sys, o).x);
  o.rbt_seed = 99;
  CHECK(solve(sys, o).converged);
  // GMRES-IR and refine auto through the rbt factors
  for (Refinement method : {Refinement::gmres, Refinement::auto_}) {
    SolveOptions m = rbt_options(Backend::cuda, Variant::fp16_tc, 64);
    m.refinement = method;
    const LinearSystem hard = generate_system(300, 1e6, SpectrumMode::geometric, 5);
    const SolveResult r = solve(hard, m);
    INFO(to_string(method) << ": " << r.note);
    CHECK(r.converged);
    CHECK(test::dsgesv_criterion(hard, r.x));
  }
}

TEST_CASE("cuda rbt converges, or falls back to partial pivoting with the reason, on systems that break an LU "
          "without pivoting and on every committed system", "[gpu]") {
  TCSOLVE_RBT_SKIP_WITHOUT_GPU("the cuda rbt fall back");
  constexpr double kEps64 = 0x1p-53;
  const int n = 120;
  Eigen::MatrixXd dominant = Eigen::MatrixXd::Random(n, n);
  dominant.diagonal().array() += 2.0 * n;
  Eigen::MatrixXd shifted(n, n);
  for (int i = 0; i < n; ++i) shifted.row((i + 1) % n) = dominant.row(i);
  Eigen::MatrixXd scaled = Eigen::MatrixXd::Random(n, n);
  for (int i = 0; i < n; ++i) scaled.row(i) *= std::pow(10.0, -30.0 + 60.0 * i / (n - 1));
  Eigen::MatrixXd zero_corner = Eigen::MatrixXd::Random(n, n);
  zero_corner(0, 0) = 0;
  std::vector<std::pair<std::string, LinearSystem>> systems = {
      {"zero diagonal", with_ones(shifted)}, {"permuted dominant", with_ones(shifted.transpose())},
      {"rows 1e-30..1e30", with_ones(scaled)}, {"zero corner", with_ones(zero_corner)}};
  for (const char* file : {"bfwa62.h5", "gr_900_900_crg.h5", "olm500.h5", "west0067.h5", "randsvd_n256_c1e4.h5",
                           "random_n512.h5"})
    systems.emplace_back(file, read_system(test::test_data_path(std::string("inputs/") + file)));
  int fell_back = 0;
  for (const auto& [name, sys] : systems) {
    const SolveResult r = solve(sys, rbt_options(Backend::cuda, Variant::ec_fp16, 64));
    SolveOptions p = rbt_options(Backend::cuda, Variant::ec_fp16, 64);
    p.pivoting = Pivoting::partial;
    const SolveResult partial = solve(sys, p);
    INFO(name << ": rbt " << to_string(r.pivoting) << ": " << r.note);
    CHECK(r.converged);
    CHECK(test::dsgesv_criterion(sys, r.x));
    CHECK(r.backward_error <= std::max(partial.backward_error, std::sqrt(static_cast<double>(sys.n())) * kEps64));
    if (r.pivoting == Pivoting::partial) {
      ++fell_back;
      CHECK(r.note.find("rbt: ") == 0);
      bool attempt = false;
      for (const auto& [phase, seconds] : r.time_s.phases) attempt = attempt || phase == "rbt_attempt";
      CHECK(attempt);
    }
    std::printf("cuda rbt on %-20s %-7s %d iterations, backward error %.2e (partial: %d, %.2e)\n", name.c_str(),
                std::string(to_string(r.pivoting)).c_str(), r.iterations, r.backward_error, partial.iterations,
                partial.backward_error);
  }
  std::printf("cuda rbt fell back on %d of %zu systems\n", fell_back, systems.size());
}

#endif  // TCSOLVE_HAVE_CUDA
