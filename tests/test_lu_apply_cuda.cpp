// [gpu] tests of the FP64 LU's one-launch solve (kernels::lu_apply, solver/src/cuda/lu_apply.cu):
// its solutions bitwise those of its reference (cpu/lu_apply.hpp, itself checked against the
// triangular solves' backward error bound in test_lu_apply.cpp) for n below, at and past a
// multiple of its 32-row blocks up to its largest n, one and several right-hand sides, out equal
// to rhs, a zero pivot and NaN (compared as NaN: the device's and the host's NaN bits differ);
// U's diagonal and info written for the caller; dgetrf's interchanges composed into a permutation
// (kernels::pivots_to_permutation, bitwise the host's composition); and the solver's FP64 path on
// every fp64_solves, residuals and equilibration.
// Skipped, with a warning, without a GPU (and empty in a build without CUDA).
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "cpu/coop_lu.hpp"
#include "cpu/lu_apply.hpp"
#include "cuda/kernels.hpp"
#include "cuda_test_util.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

struct Case {
  int n, cols;
  std::vector<double> lu, row, col, rhs;
  std::vector<int> ipiv;
  int info = 0;
};

Case make(int n, int cols, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::uniform_int_distribution<int> e(-6, 6);
  Case c{n, cols, std::vector<double>(static_cast<std::size_t>(n) * n), std::vector<double>(n), std::vector<double>(n),
         std::vector<double>(static_cast<std::size_t>(n) * cols), std::vector<int>(n)};
  for (int i = 0; i < n; ++i) c.row[i] = std::ldexp(1.0, e(g)), c.col[i] = std::ldexp(1.0, e(g));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) c.lu[i + static_cast<std::size_t>(j) * n] = c.row[i] * d(g) * c.col[j];
  for (double& v : c.rhs) v = d(g);
  return c;
}

void factor(Case& c) { c.info = tcsolve::cpu::coop_lu_reference(c.lu.data(), c.n, c.n, 32, c.ipiv.data()); }

template <class T>
T* upload(const std::vector<T>& v) {
  T* p = nullptr;
  REQUIRE(cudaMalloc(&p, std::max<std::size_t>(v.size(), 1) * sizeof(T)) == cudaSuccess);
  REQUIRE(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  return p;
}

bool same(double x, double y) { return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0; }

/// The device's solution (in place when in_place) and, with diagonal, U's diagonal and info.
struct Solved {
  std::vector<double> x, diagonal;
  int info = -1;
};

Solved on_device(const Case& c, bool in_place, bool diagonal) {
  tcsolve::test::Stream stream;
  double *lu = upload(c.lu), *row = upload(c.row), *col = upload(c.col), *rhs = upload(c.rhs), *out = rhs;
  int* ipiv = upload(c.ipiv);
  int* info = upload(std::vector<int>{c.info});
  double* diag = nullptr;
  if (!in_place) REQUIRE(cudaMalloc(&out, c.rhs.size() * sizeof(double)) == cudaSuccess);
  if (diagonal) REQUIRE(cudaMalloc(&diag, (c.n + 1) * sizeof(double)) == cudaSuccess);
  tcsolve::cuda::kernels::lu_apply(stream.get(), lu, c.n, ipiv, row, col, rhs, c.cols, out, diag, info);
  Solved s{std::vector<double>(c.rhs.size()), std::vector<double>(c.n + 1), -1};
  REQUIRE(cudaMemcpyAsync(s.x.data(), out, s.x.size() * sizeof(double), cudaMemcpyDeviceToHost, stream.get()) ==
          cudaSuccess);
  if (diagonal)
    REQUIRE(cudaMemcpyAsync(s.diagonal.data(), diag, (c.n + 1) * sizeof(double), cudaMemcpyDeviceToHost,
                            stream.get()) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream.get()) == cudaSuccess);
  if (diagonal) std::memcpy(&s.info, &s.diagonal[c.n], sizeof(int));
  for (void* p : {static_cast<void*>(lu), static_cast<void*>(row), static_cast<void*>(col), static_cast<void*>(rhs),
                  static_cast<void*>(ipiv), static_cast<void*>(info), static_cast<void*>(diag)})
    cudaFree(p);
  if (!in_place) cudaFree(out);
  return s;
}

void check(const Case& c, bool in_place = false, bool diagonal = false) {
  CAPTURE(c.n, c.cols, in_place, diagonal);
  const Solved s = on_device(c, in_place, diagonal);
  std::size_t differ = 0;
  for (int j = 0; j < c.cols; ++j) {
    std::vector<double> ref(c.n);
    const std::size_t at = static_cast<std::size_t>(j) * c.n;
    tcsolve::cpu::lu_apply_reference(c.lu.data(), c.n, c.ipiv.data(), c.row.data(), c.col.data(), c.rhs.data() + at,
                                     ref.data());
    for (int i = 0; i < c.n; ++i) differ += same(s.x[at + i], ref[i]) ? 0 : 1;
  }
  REQUIRE(differ == 0);
  if (diagonal) {
    REQUIRE(s.info == c.info);
    for (int i = 0; i < c.n; ++i) REQUIRE(same(s.diagonal[i], c.lu[i + static_cast<std::size_t>(i) * c.n]));
  }
}

}  // namespace

TEST_CASE("lu_apply on the device: bitwise its reference, any n up to its largest, one or several columns",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the FP64 LU's one-launch solve");
  using tcsolve::cuda::kernels::kLuApplyMaxN;
  for (int n : {1, 2, 31, 32, 33, 100, 200, 511, 1000, 2560, kLuApplyMaxN}) {
    Case c = make(n, n <= 1000 ? 3 : 1, 17 + n);
    factor(c);
    REQUIRE(c.info == 0);
    check(c);
  }
  Case c = make(77, 2, 4);
  factor(c);
  check(c, true, true);
  tcsolve::test::Stream stream;  // refused before any launch (nothing is read)
  REQUIRE_THROWS(tcsolve::cuda::kernels::lu_apply(stream.get(), nullptr, kLuApplyMaxN + 1, nullptr, nullptr, nullptr,
                                                  nullptr, 1, nullptr));
}

TEST_CASE("lu_apply on the device: a zero pivot and NaN as its reference, info and U's diagonal written",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the FP64 LU's one-launch solve");
  Case z = make(90, 1, 8);
  for (int i = 0; i < z.n; ++i) z.lu[i + 40 * static_cast<std::size_t>(z.n)] = 0;  // column 41: a zero pivot
  factor(z);
  REQUIRE(z.info == 41);
  check(z, false, true);
  Case nan = make(90, 2, 9);
  factor(nan);
  nan.rhs[17] = std::nan("");
  check(nan, false, true);
}

TEST_CASE("pivots_to_permutation on the device: dgetrf's interchanges composed as LAPACK applies them, bitwise the "
          "host's, any n up to its largest; refused beyond",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the composition of dgetrf's interchanges");
  using tcsolve::cuda::kernels::kMaxPermutationN;
  for (int n : {1, 2, 33, 700, 2560, kMaxPermutationN}) {
    CAPTURE(n);
    std::mt19937 g(3 + n);
    std::vector<int> ipiv(n);  // 1-based, ipiv[i] - 1 >= i; some rows left in place
    for (int i = 0; i < n; ++i) ipiv[i] = i % 5 == 0 ? i + 1 : std::uniform_int_distribution<int>(i, n - 1)(g) + 1;
    std::vector<double> v(n), w(n);  // the permutation as LAPACK's dlaswp moves a vector: w = P v
    for (int i = 0; i < n; ++i) v[i] = w[i] = i;
    for (int i = 0; i < n; ++i) std::swap(w[i], w[ipiv[i] - 1]);
    tcsolve::test::Stream stream;
    int* d_ipiv = upload(ipiv);
    int* d_perm = upload(std::vector<int>(n, -1));
    tcsolve::cuda::kernels::pivots_to_permutation(stream.get(), d_ipiv, n, d_perm);
    std::vector<int> perm(n);
    REQUIRE(cudaMemcpyAsync(perm.data(), d_perm, n * sizeof(int), cudaMemcpyDeviceToHost, stream.get()) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream.get()) == cudaSuccess);
    cudaFree(d_ipiv);
    cudaFree(d_perm);
    std::size_t differ = 0;
    for (int i = 0; i < n; ++i) differ += perm[i] == static_cast<int>(w[i]) ? 0 : 1;
    REQUIRE(differ == 0);
  }
  tcsolve::test::Stream stream;  // refused before any launch
  REQUIRE_THROWS(tcsolve::cuda::kernels::pivots_to_permutation(stream.get(), nullptr, kMaxPermutationN + 1, nullptr));
  REQUIRE_THROWS(tcsolve::cuda::kernels::pivots_to_permutation(stream.get(), nullptr, 0, nullptr));
}

TEST_CASE("the FP64 path on every fp64_solves, residuals and equilibration: converged, within the bound, reported",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the FP64 path's solves");
  using tcsolve::CudaLuPlan;
  const double eps = std::numeric_limits<double>::epsilon();
  for (int n : {60, 200, 700, 1100}) {
    CAPTURE(n);
    const tcsolve::LinearSystem sys = tcsolve::generate_system(n, 1e3, tcsolve::SpectrumMode::geometric, 5 + n);
    // dsgesv's criterion, ||b - A x|| <= sqrt(n) eps ||A|| ||x||, and b = fl(A x_true), within
    // gamma_n |A| |x_true| of A x_true, bound the forward error by e / (1 - e), e = kappa_inf(A)
    // (sqrt(n) eps + gamma_n) (normwise; Higham, Thm 7.2)
    const double kappa = sys.A.cwiseAbs().rowwise().sum().maxCoeff() *
                         sys.A.inverse().cwiseAbs().rowwise().sum().maxCoeff();
    const double gamma_n = n * eps / 2 / (1 - n * eps / 2);
    const double e = kappa * (std::sqrt(static_cast<double>(n)) * eps + gamma_n);
    REQUIRE(e < 0.5);
    tcsolve::SolveOptions o;
    o.backend = tcsolve::Backend::cuda;
    o.fp64_below = 1 << 20;
    using F = CudaLuPlan::Fp64Solves;
    using R = CudaLuPlan::Residuals;
    using E = CudaLuPlan::Equilibration;
    for (const auto& [asked, residuals, equilibration] : std::vector<std::tuple<F, R, E>>{
             {F::automatic, R::automatic, E::automatic},
             {F::kernel, R::automatic, E::automatic},
             {F::dgetrs, R::automatic, E::automatic},
             {F::trsm, R::automatic, E::automatic},
             {F::automatic, R::kernel, E::cluster},
             {F::automatic, R::cublas, E::cooperative},
             {F::automatic, R::automatic, E::kernels}}) {
      o.cuda_plan.fp64_solves = asked;
      o.cuda_plan.residuals = residuals;
      o.cuda_plan.equilibration = equilibration;
      const tcsolve::SolveResult r = tcsolve::solve(sys, o);
      INFO(r.note);
      REQUIRE(r.fp64_lu);
      REQUIRE(r.converged);
      const F ran = asked != F::automatic ? asked : n < tcsolve::kFp64SolveKernelBelow ? F::kernel : F::trsm;
      REQUIRE(r.cuda_plan->fp64_solves == ran);
      const R residuals_ran = n > tcsolve::kResidualKernelMaxN ? R::cublas
                              : residuals != R::automatic     ? residuals
                              : n < tcsolve::kResidualKernelBelow ? R::kernel
                                                                  : R::cublas;
      REQUIRE(r.cuda_plan->residuals == residuals_ran);
      // the way the equilibration ran (an H200 has cooperative launches)
      REQUIRE(r.cuda_plan->equilibration == tcsolve::equilibration_for(o.cuda_plan, n));
      const Eigen::MatrixXd& x_true = *sys.x_true;
      CHECK((r.x - x_true).cwiseAbs().maxCoeff() <= e / (1 - e) * x_true.cwiseAbs().maxCoeff());
    }
  }
}

#endif
