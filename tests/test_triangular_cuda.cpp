// [gpu] tests of the row-major LU triangular solves of the cuda path (kernels::lu_solve,
// solver/src/cuda/triangular.cu; kernels::trsm_lower_unit, trsm.cu, at the end): backward
// stability against the FP64 solution of the same triangular systems, bitwise repeatability, and
// the scratch's reset. Skipped, with a warning,
// without a GPU (and empty in a build without CUDA, which has no lu_solve).
//
// Bound. lu_solve computes every entry of z = L^-1 b and y = U^-1 z with at most n + 2 roundings
// along any term (its comment counts them), so (Higham, Thm 8.5, with gamma_{n+2} for gamma_n)
// (L + dL) z = b and (U + dU) y = z with |dL| <= g |L|, |dU| <= g |U|, g = gamma_{n+2}. Then
// b - L U y = (dL U + L dU + dL dU) y, hence the normwise backward error
//   ||b - L U y||_inf / (|| |L| |U| ||_inf ||y||_inf + ||b||_inf) <= 2 g + g^2 <= 6.5 n u
// since n + 2 <= 3n for n >= 1 and g <= 1.001 (n + 2) u for every n tested (u = 2^-24). A wrong
// element, a missed block or a race shows as an error of order one, far above the bound.
//
// With the diagonal blocks' inverses (CudaLuPlan::Trsv::inverse) the bound is normwise in the
// blocks' conditioning instead. lu_solve then forms y_I = X c - M_2 y_J2 - M_1 y_J1 with X =
// fl(T_II^-1) (columns by substitution: T_II X - I = -dT X, |dT| <= gamma_64 |T_II|), M_q =
// fl(X T(I, Jq)) (|M_q - X T(I, Jq)| <= gamma_64 |X| |T(I, Jq)|), c = fl(b_I - the older blocks'
// sums) (error <= gamma_{n+1} (|b_I| + |T(I, older)| |y|)), and products of two 32-term halves
// and two subtractions (gamma_35). So y_I = X w + d, w = c - T(I, J2) y_J2 - T(I, J1) y_J1,
// |d| <= gamma_100 |X| (|c| + |T(I, J)| |y_J|), and the block row's residual is
//   b_I - T(I, :) y = (b_I - older - c) + dT X w - T_II d,
//   |.| <= gamma_{n+1} (|b_I| + |T(I, older)| |y|) + gamma_164 (1 + gamma_{n+1}) |T_II| |X| (|b_I| + |T(I, off)| |y|).
// Normwise: ||r - T w|| <= e_T (||r|| + || |T| || ||w||), e_T = gamma_{n+1} + gamma_164 (1 +
// gamma_{n+1}) k_T with k_T = max_I || |T_II| |X_I| ||_inf (from the device's X, in FP64). For
// b - L U y = f_L + L f_U (z the forward solve's result, ||z|| <= Z = (1 + e_U) / (1 - e_U)
// || |U| || ||y||):
//   ||b - L U y|| <= e_L ||b|| + (e_L + e_U) || |L| || Z + e_U || |L| || || |U| || ||y||.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cuda/kernels.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"

namespace {

using namespace tcsolve;

#define TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU(what)                                   \
  if (!tcsolve::cuda::device_available()) {                                             \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                             \
  }

constexpr double kU32 = 0x1p-24;  ///< unit roundoff of FP32
constexpr double kC = 6.5;        ///< the backward error bound is kC n u (see the top)

Eigen::MatrixXf uniform(int rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Eigen::MatrixXf m(rows, cols);
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i) m(i, j) = dist(rng);
  return m;
}

/// The packed LU of a random n x n matrix by partial pivoting (column-major, as Eigen keeps it).
Eigen::MatrixXf random_lu(int n, unsigned seed) {
  return Eigen::PartialPivLU<Eigen::MatrixXf>(uniform(n, n, seed)).matrixLU();
}

/// lu stored row-major with leading dimension ld; the gap columns hold NaN, which would
/// poison any result that read them.
std::vector<float> row_major(const Eigen::MatrixXf& lu, int ld) {
  const int n = static_cast<int>(lu.rows());
  std::vector<float> out(static_cast<std::size_t>(n) * ld, std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) out[static_cast<std::size_t>(i) * ld + j] = lu(i, j);
  return out;
}

std::vector<float> to_vector(const Eigen::MatrixXf& m) { return {m.data(), m.data() + m.size()}; }

/// A device LU, right-hand sides and scratch (with `inverse`, the diagonal blocks' inverses);
/// solve() runs lu_solve on a fresh copy of b.
struct DeviceSystem {
  int n, ld, cols;
  cuda::DeviceBuffer<float> lu;
  cuda::DeviceBuffer<float> y;
  cuda::DeviceBuffer<int> scratch;
  cuda::DeviceBuffer<float> inverses;
  std::vector<float> b;

  DeviceSystem(const Eigen::MatrixXf& packed, int ld_, const Eigen::MatrixXf& rhs, bool inverse = false)
      : n(static_cast<int>(packed.rows())),
        ld(ld_),
        cols(static_cast<int>(rhs.cols())),
        lu(row_major(packed, ld_)),
        y(rhs.size()),
        scratch(cuda::kernels::lu_solve_scratch_ints(n, cols)),
        inverses(inverse ? cuda::kernels::lu_block_inverse_floats(n) : 0),
        b(to_vector(rhs)) {
    if (inverse) cuda::kernels::lu_block_inverses(nullptr, lu.data(), ld, n, inverses.data());
  }

  const float* inverse_data() const { return inverses.size() > 0 ? inverses.data() : nullptr; }

  std::vector<float> solve() {
    y.upload(b);
    cuda::kernels::lu_solve(nullptr, lu.data(), ld, n, y.data(), cols, scratch.data(), inverse_data());
    return y.download();
  }
};

constexpr int kBlock = 64;    ///< lu_solve's diagonal blocks (triangular.cu)
constexpr int kMatrices = 3;  ///< lu_block_inverses' matrices per block and triangle: X, M_1, M_2
constexpr std::size_t kBlockFloats = static_cast<std::size_t>(kBlock) * kBlock;

/// Matrix q of block b, triangle `upper`, in lu_block_inverses' output.
std::size_t matrix_offset(int b, bool upper, int q) {
  return ((2 * static_cast<std::size_t>(b) + (upper ? 1 : 0)) * kMatrices + q) * kBlockFloats;
}

/// block_inverse_kernel on the host, the same operations in the same order (fmaf, correctly
/// rounded reciprocals).
std::vector<float> host_block_inverses(const Eigen::MatrixXf& packed) {
  const int n = static_cast<int>(packed.rows()), blocks = (n + kBlock - 1) / kBlock;
  std::vector<float> out(2 * static_cast<std::size_t>(blocks) * kMatrices * kBlockFloats);
  auto entry = [&](int row, int col) { return row < n && col < n ? packed(row, col) : 0.0f; };
  for (int b = 0; b < blocks; ++b) {
    std::vector<float> t(kBlockFloats);
    for (int r = 0; r < kBlock; ++r)
      for (int c = 0; c < kBlock; ++c) {
        const int row = b * kBlock + r, col = b * kBlock + c;
        t[r * kBlock + c] = row < n && col < n ? packed(row, col) : (r == c ? 1.0f : 0.0f);
      }
    for (bool upper : {false, true}) {
      float* x = out.data() + matrix_offset(b, upper, 0);  // row-major
      for (int c = 0; c < kBlock; ++c) {
        if (!upper) {
          for (int i = 0; i < kBlock; ++i) {
            float v = i == c ? 1.0f : 0.0f;
            if (i > c) {
              v = 0.0f;
              for (int m = c; m < i; ++m) v = std::fma(-t[i * kBlock + m], x[m * kBlock + c], v);
            }
            x[i * kBlock + c] = v;
          }
        } else {
          for (int i = kBlock - 1; i >= 0; --i) {
            float v = 0.0f;
            if (i == c) {
              v = 1.0f / t[i * kBlock + i];
            } else if (i < c) {
              for (int m = i + 1; m <= c; ++m) v = std::fma(-t[i * kBlock + m], x[m * kBlock + c], v);
              v *= 1.0f / t[i * kBlock + i];
            }
            x[i * kBlock + c] = v;
          }
        }
      }
      for (int q = 1; q < kMatrices; ++q) {  // M_q = X T(I, Jq), Jq solved q steps before I
        const int other = upper ? b + q : b - q;
        float* m = out.data() + matrix_offset(b, upper, q);
        for (int i = 0; i < kBlock; ++i)
          for (int c = 0; c < kBlock; ++c) {
            float v = 0.0f;
            for (int k = 0; k < kBlock; ++k) {
              const float tk = other >= 0 && other < blocks ? entry(b * kBlock + k, other * kBlock + c) : 0.0f;
              v = std::fma(x[i * kBlock + k], tk, v);
            }
            m[i * kBlock + c] = v;
          }
      }
    }
  }
  return out;
}

/// k_T = max over the diagonal blocks of || |T_II| |X_I| ||_inf (see the top), for T = L
/// (upper = false, unit diagonal) or U.
double block_conditioning(const Eigen::MatrixXf& packed, const std::vector<float>& inverses, bool upper) {
  const int n = static_cast<int>(packed.rows()), blocks = (n + kBlock - 1) / kBlock;
  double worst = 0;
  for (int b = 0; b < blocks; ++b) {
    const int r0 = b * kBlock, w = std::min(kBlock, n - r0);
    Eigen::MatrixXd t = Eigen::MatrixXd::Zero(w, w), x(w, w);
    for (int i = 0; i < w; ++i)
      for (int j = 0; j < w; ++j) {
        if (upper ? j >= i : j < i) t(i, j) = std::abs(packed(r0 + i, r0 + j));
        if (!upper && i == j) t(i, j) = 1;
        x(i, j) = std::abs(inverses[matrix_offset(b, upper, 0) + static_cast<std::size_t>(i) * kBlock + j]);
      }
    worst = std::max(worst, (t * x).rowwise().sum().maxCoeff());
  }
  return worst;
}

double gamma32(int k) { return k * kU32 / (1 - k * kU32); }

struct Errors {
  double backward = 0;  ///< the largest normwise backward error over the columns
  double forward = 0;   ///< the largest ||y - y64||_inf / ||y64||_inf (information only)
};

/// y (n x cols, column-major) against the FP64 solution of L U y = b with the same factors.
Errors errors(const Eigen::MatrixXf& packed, const Eigen::MatrixXf& b, const std::vector<float>& y_device) {
  const Eigen::MatrixXd lu = packed.cast<double>();
  const Eigen::MatrixXd L = lu.triangularView<Eigen::UnitLower>();
  const Eigen::MatrixXd U = lu.triangularView<Eigen::Upper>();
  const Eigen::MatrixXd rhs = b.cast<double>();
  const Eigen::MatrixXd y =
      Eigen::Map<const Eigen::MatrixXf>(y_device.data(), b.rows(), b.cols()).cast<double>();
  const Eigen::MatrixXd y64 =
      U.triangularView<Eigen::Upper>().solve(L.triangularView<Eigen::UnitLower>().solve(rhs));
  const double norm_lu = (L.cwiseAbs() * (U.cwiseAbs() * Eigen::VectorXd::Ones(U.cols()))).maxCoeff();
  const Eigen::MatrixXd residual = rhs - L * (U * y);
  Errors e;
  for (Eigen::Index j = 0; j < y.cols(); ++j) {
    const double scale = norm_lu * y.col(j).lpNorm<Eigen::Infinity>() + rhs.col(j).lpNorm<Eigen::Infinity>();
    const double backward = residual.col(j).lpNorm<Eigen::Infinity>() / scale;
    if (std::isnan(backward) || backward > e.backward) e.backward = backward;  // a NaN stays
    e.forward = std::max(
        e.forward, (y.col(j) - y64.col(j)).lpNorm<Eigen::Infinity>() / y64.col(j).lpNorm<Eigen::Infinity>());
  }
  return e;
}

/// The inverse path's bound (see the top): the residual against || |L| || || |U| || ||y||.
void check_inverse_bound(const Eigen::MatrixXf& packed, int ld, const Eigen::MatrixXf& b) {
  const int n = static_cast<int>(packed.rows());
  DeviceSystem sys(packed, ld, b, true);
  const std::vector<float> inverses = sys.inverses.download();
  const std::vector<float> host = host_block_inverses(packed);
  REQUIRE(inverses.size() == host.size());
  CHECK(std::memcmp(inverses.data(), host.data(), host.size() * sizeof(float)) == 0);  // bitwise
  const std::vector<float> y_device = sys.solve();
  const Eigen::MatrixXd lu = packed.cast<double>();
  const Eigen::MatrixXd L = lu.triangularView<Eigen::UnitLower>();
  const Eigen::MatrixXd U = lu.triangularView<Eigen::Upper>();
  const Eigen::MatrixXd y = Eigen::Map<const Eigen::MatrixXf>(y_device.data(), n, b.cols()).cast<double>();
  const Eigen::MatrixXd rhs = b.cast<double>();
  const Eigen::MatrixXd residual = rhs - L * (U * y);
  const double norm_l = L.cwiseAbs().rowwise().sum().maxCoeff(), norm_u = U.cwiseAbs().rowwise().sum().maxCoeff();
  const double k_l = block_conditioning(packed, inverses, false), k_u = block_conditioning(packed, inverses, true);
  const double e_l = gamma32(n + 1) + gamma32(164) * (1 + gamma32(n + 1)) * k_l;
  const double e_u = gamma32(n + 1) + gamma32(164) * (1 + gamma32(n + 1)) * k_u;
  double worst = 0, bound = 0;  // the largest ratio of residual to bound over the columns
  for (Eigen::Index j = 0; j < y.cols(); ++j) {
    const double ny = y.col(j).lpNorm<Eigen::Infinity>(), nb = rhs.col(j).lpNorm<Eigen::Infinity>();
    const double z = (1 + e_u) / (1 - e_u) * norm_u * ny;
    const double limit = e_l * nb + (e_l + e_u) * norm_l * z + e_u * norm_l * norm_u * ny;
    const double e = residual.col(j).lpNorm<Eigen::Infinity>() / limit;
    if (std::isnan(e) || e > worst) worst = e, bound = limit;
  }
  INFO("n = " << n << ", ld = " << ld << ", cols = " << b.cols() << ": residual / bound " << worst << " (bound "
              << bound << "; e_L " << e_l << ", e_U " << e_u << ", k_L " << k_l << ", k_U " << k_u << ")");
  CHECK(worst <= 1.0);
}

void check_backward_stable(const Eigen::MatrixXf& packed, int ld, const Eigen::MatrixXf& b) {
  const int n = static_cast<int>(packed.rows());
  DeviceSystem sys(packed, ld, b);
  const Errors e = errors(packed, b, sys.solve());
  INFO("n = " << n << ", ld = " << ld << ", cols = " << b.cols() << ": backward error " << e.backward << " = "
              << e.backward / (n * kU32) << " n u, forward error vs FP64 " << e.forward);
  CHECK(e.backward <= kC * n * kU32);
}

}  // namespace

TEST_CASE("lu_solve is backward stable on partial-pivoting LU factors, row-major, any n and ld", "[gpu]") {
  TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU("the triangular solve test");
  // n = 1 and 7: one partial row block; 100, 1000, 3000: several blocks, the last one partial
  // (1000 = 15 * 64 + 40); ld = n + 5 takes the scalar path, ld = n the float4 path when n % 4 == 0.
  for (int n : {1, 7, 100, 1000, 3000}) {
    const Eigen::MatrixXf packed = random_lu(n, 1000u + static_cast<unsigned>(n));
    for (int ld : {n, n + 5})
      for (int cols : {1, 3}) check_backward_stable(packed, ld, uniform(n, cols, 7u * n + cols));
  }
}

TEST_CASE("lu_solve with the diagonal blocks' inverses: inverses bitwise the host's, solves within their bound",
          "[gpu]") {
  TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU("the triangular solve test with inverses");
  for (int n : {1, 7, 100, 1000, 3000}) {
    const Eigen::MatrixXf packed = random_lu(n, 1000u + static_cast<unsigned>(n));
    for (int ld : {n, n + 5})
      for (int cols : {1, 3, 9}) check_inverse_bound(packed, ld, uniform(n, cols, 7u * n + cols));
  }
}

TEST_CASE("lu_solve runs more columns than one launch takes in chunks", "[gpu]") {
  TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU("the chunked triangular solve test");
  // 9 columns: launches of 4, 4 and 1 columns that share the scratch through their tags.
  const Eigen::MatrixXf packed = random_lu(300, 17u);
  for (int ld : {300, 305}) check_backward_stable(packed, ld, uniform(300, 9, 18u));
}

TEST_CASE("lu_solve gives the same bits on every call and clears its scratch itself", "[gpu]") {
  TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU("the triangular solve repeatability test");
  for (int ld : {1000, 1003, -1000}) {  // -1000: ld 1000 with the inverses
    const bool inverse = ld < 0;
    ld = std::abs(ld);
    const Eigen::MatrixXf packed = random_lu(1000, 5u);
    const Eigen::MatrixXf b = uniform(1000, 3, 6u);
    DeviceSystem sys(packed, ld, b, inverse);
    // Scratch of all ones: every flag and LL word carries the first launch's tag, which only the
    // launcher's reset keeps from being taken for solved blocks.
    sys.scratch.upload(std::vector<int>(sys.scratch.size(), 1));
    const std::vector<float> first = sys.solve();
    const std::vector<float> second = sys.solve();
    INFO("ld = " << ld << (inverse ? ", inverses" : ""));
    CHECK(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)) == 0);
    if (!inverse) CHECK(errors(packed, b, first).backward <= kC * 1000 * kU32);  // the inverses' bound: above
  }
}

/// Back to back, as in the refinement (the host enqueues while the device works); y is solved
/// again and again, which changes nothing in the work done.
void print_solve_time(const char* what, const Eigen::MatrixXf& packed, bool inverse) {
  constexpr int kCalls = 20;
  const int n = static_cast<int>(packed.rows());
  DeviceSystem sys(packed, n, uniform(n, 1, 10u), inverse);
  sys.solve();  // warm-up (module load, first touch)
  cuda::EventTimer timer;
  timer.start();
  for (int i = 0; i < kCalls; ++i)
    cuda::kernels::lu_solve(nullptr, sys.lu.data(), sys.ld, n, sys.y.data(), 1, sys.scratch.data(),
                            sys.inverse_data());
  const float ms = timer.stop_ms();
  std::printf("\nlu_solve, n = %d (%s), 1 column, %s: %.1f us per call (both triangles, scratch reset included)\n",
              n, what, inverse ? "inverses" : "substitution", 1000.0 * ms / kCalls);
}

TEST_CASE("lu_solve time per call at n = 3000 and 16384 (information only)", "[gpu]") {
  TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU("the triangular solve timing");
  const Eigen::MatrixXf lu3000 = random_lu(3000, 9u);
  for (bool inverse : {false, true}) print_solve_time("a random LU", lu3000, inverse);
  // n = 16384, the solver's benchmark size: factors shaped like partial pivoting's without an
  // LU on the host (u_ii in [1, 2), the rest U(-1, 1) / n: the solution stays of order one).
  constexpr int kBig = 16384;
  Eigen::MatrixXf big = uniform(kBig, kBig, 11u);
  for (int i = 0; i < kBig; ++i) {
    for (int j = 0; j < kBig; ++j)
      if (j != i) big(i, j) /= kBig;
    big(i, i) = 1.5f + 0.5f * big(i, i);
  }
  for (bool inverse : {false, true}) print_solve_time("synthetic factors", big, inverse);
}

// trsm.cu: B := L^-1 B for the LU's small solves (U12 of the next block, the panel's joins).
// Forward substitution by blocks (trsm.cu's comment): every entry of X is b minus dot products
// with one rounding per term, at most w + 1 roundings along any term, so (Higham, Thm 8.5) |B -
// L X| <= gamma_{w+1} |L| |X| elementwise (|L| with the unit diagonal). A wrong element or a
// missed block shows as an error of order one; NaN on L's diagonal and above it, and in B's
// columns beside the solved ones, would poison any result that read them.
TEST_CASE("trsm_lower_unit solves row-major unit lower systems in place within forward substitution's bound",
          "[gpu][trsm]") {
  TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU("trsm_lower_unit");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Shape {
    int w, cols, ld;
  };
  // ld multiple of 4 (16-byte loads) and odd (scalar loads); w across the 64-row blocks
  for (const Shape& sh : {Shape{1, 1, 9}, Shape{37, 5, 50}, Shape{64, 8, 76}, Shape{100, 13, 117},
                          Shape{256, 256, 520}, Shape{512, 512, 1028}, Shape{512, 19, 533},
                          Shape{1024, 24, 1052}}) {
    const int w = sh.w, cols = sh.cols, ld = sh.ld;
    INFO("w = " << w << ", cols = " << cols << ", ld = " << ld);
    std::printf("trsm_lower_unit w=%4d cols=%3d ld=%4d: ", w, cols, ld);
    std::fflush(stdout);
    // L: |l_ij| < 1 below the diagonal (as partial pivoting leaves it) at (0, 0) of the buffer;
    // B: at column w + 2 of the same rows, NaN elsewhere.
    // (Random unit lower triangles grow exponentially with w: with U(-1, 1) at w = 1024 the
    // solution overflows FP32, so that one gets U(-1/4, 1/4).)
    const Eigen::MatrixXf lower = uniform(w, w, 300u + static_cast<unsigned>(w)) * (w > 512 ? 0.25f : 1.0f);
    const Eigen::MatrixXf rhs = uniform(w, cols, 400u + static_cast<unsigned>(cols));
    const int b0 = w + 2;
    REQUIRE(b0 + cols <= ld);
    std::vector<float> host(static_cast<std::size_t>(w) * ld, nan);
    for (int i = 0; i < w; ++i) {
      for (int j = 0; j < i; ++j) host[static_cast<std::size_t>(i) * ld + j] = lower(i, j);
      for (int j = 0; j < cols; ++j) host[static_cast<std::size_t>(i) * ld + b0 + j] = rhs(i, j);
    }
    cuda::DeviceBuffer<float> a(host);
    REQUIRE(cuda::kernels::trsm_lower_unit(nullptr, a.data(), a.data() + b0, ld, w, cols));
    const std::vector<float> first = a.download();
    Eigen::MatrixXd L = Eigen::MatrixXd::Identity(w, w), X(w, cols);
    for (int i = 0; i < w; ++i) {
      for (int j = 0; j < i; ++j) L(i, j) = lower(i, j);
      for (int j = 0; j < cols; ++j) X(i, j) = first[static_cast<std::size_t>(i) * ld + b0 + j];
    }
    const double gamma = (w + 1) * kU32 / (1 - (w + 1) * kU32);
    const Eigen::MatrixXd err = (rhs.cast<double>() - L * X).cwiseAbs();
    const Eigen::MatrixXd bound = gamma * (L.cwiseAbs() * X.cwiseAbs());
    CHECK(X.allFinite());
    CHECK((err.array() <= bound.array()).all());
    double worst = 0;
    for (Eigen::Index j = 0; j < err.cols(); ++j)
      for (Eigen::Index i = 0; i < err.rows(); ++i)
        if (bound(i, j) > 0) worst = std::max(worst, err(i, j) / bound(i, j));
    std::printf("max |B - L X| / (gamma_{w+1} |L||X|) = %.3f\n", worst);
    std::fflush(stdout);
    // Nothing outside X written: L's part and the NaN gaps are as they were.
    std::size_t changed = 0;
    for (int i = 0; i < w; ++i)
      for (int j = 0; j < ld; ++j)
        if (j < b0 || j >= b0 + cols) {
          const float before = host[static_cast<std::size_t>(i) * ld + j];
          const float after = first[static_cast<std::size_t>(i) * ld + j];
          changed += std::memcmp(&before, &after, sizeof(float)) != 0;
        }
    CHECK(changed == 0);
    // The same bits on a second solve of the same system.
    cuda::DeviceBuffer<float> again(host);
    REQUIRE(cuda::kernels::trsm_lower_unit(nullptr, again.data(), again.data() + b0, ld, w, cols));
    const std::vector<float> second = again.download();  // NaN gaps: compare the bits
    CHECK(std::memcmp(second.data(), first.data(), first.size() * sizeof(float)) == 0);
  }
  cuda::DeviceBuffer<float> big(static_cast<std::size_t>(cuda::kernels::kTrsmMaxRows + 1) * 8);
  CHECK_FALSE(cuda::kernels::trsm_lower_unit(nullptr, big.data(), big.data(), cuda::kernels::kTrsmMaxRows + 1,
                                       cuda::kernels::kTrsmMaxRows + 1, 1));
}

// GPU members (distributed_lu_cuda.cpp) solve U12 of the next block with L11 in the broadcast
// panel (leading dimension w) and B in their factors (leading dimension ldt): the kernel with
// two leading dimensions does the same arithmetic as with one, so the bits must equal those of
// the shared-ld call on the same L and B (odd ldl: the scalar loads; ldl = w: the 16-byte ones).
TEST_CASE("trsm_lower_unit with L and B at leading dimensions of their own gives the shared-ld call's bits",
          "[gpu][trsm]") {
  TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU("trsm_lower_unit with two leading dimensions");
  struct Shape {
    int w, cols, ldl, ldb;
  };
  for (const Shape& sh : {Shape{1024, 1024, 1024, 1056}, Shape{1024, 300, 1024, 4100}, Shape{200, 37, 201, 64},
                          Shape{64, 8, 64, 8}}) {
    const int w = sh.w, cols = sh.cols;
    INFO("w = " << w << ", cols = " << cols << ", ldl = " << sh.ldl << ", ldb = " << sh.ldb);
    const Eigen::MatrixXf lower = uniform(w, w, 500u + static_cast<unsigned>(w)) * (w > 512 ? 0.25f : 1.0f);
    const Eigen::MatrixXf rhs = uniform(w, cols, 600u + static_cast<unsigned>(cols));
    // one buffer, ld = w + cols (L, then B beside it), as the one-GPU LU calls it
    const int ld = w + cols;
    std::vector<float> shared(static_cast<std::size_t>(w) * ld, 0.0f), l(static_cast<std::size_t>(w) * sh.ldl, 0.0f),
        b(static_cast<std::size_t>(w) * sh.ldb, 0.0f);
    for (int i = 0; i < w; ++i) {
      for (int j = 0; j < i; ++j)
        shared[static_cast<std::size_t>(i) * ld + j] = l[static_cast<std::size_t>(i) * sh.ldl + j] = lower(i, j);
      for (int j = 0; j < cols; ++j)
        shared[static_cast<std::size_t>(i) * ld + w + j] = b[static_cast<std::size_t>(i) * sh.ldb + j] = rhs(i, j);
    }
    cuda::DeviceBuffer<float> one(shared), ld_l(l), ld_b(b);
    REQUIRE(cuda::kernels::trsm_lower_unit(nullptr, one.data(), one.data() + w, ld, w, cols));
    REQUIRE(cuda::kernels::trsm_lower_unit(nullptr, ld_l.data(), sh.ldl, ld_b.data(), sh.ldb, w, cols));
    const std::vector<float> x1 = one.download(), x2 = ld_b.download();
    std::size_t differ = 0, nonfinite = 0;
    for (int i = 0; i < w; ++i)
      for (int j = 0; j < cols; ++j) {
        const float u = x1[static_cast<std::size_t>(i) * ld + w + j], v = x2[static_cast<std::size_t>(i) * sh.ldb + j];
        differ += std::memcmp(&u, &v, sizeof(float)) != 0;
        nonfinite += !std::isfinite(v);
      }
    CHECK(differ == 0);
    CHECK(nonfinite == 0);
  }
  // B narrower than its columns, L narrower than w: refused (nothing enqueued)
  cuda::DeviceBuffer<float> buf(static_cast<std::size_t>(64) * 64);
  CHECK_FALSE(cuda::kernels::trsm_lower_unit(nullptr, buf.data(), 63, buf.data(), 64, 64, 8));
  CHECK_FALSE(cuda::kernels::trsm_lower_unit(nullptr, buf.data(), 64, buf.data(), 7, 64, 8));
}

TEST_CASE("trsm_lower_unit time at w = 512, 512 columns (information only)", "[gpu][trsm]") {
  TCSOLVE_GPU_TRIANGULAR_SKIP_WITHOUT_GPU("the trsm_lower_unit timing");
  constexpr int kW = 512, kLd = 16384, kCalls = 50;
  // |l_ij| < 1 / 512: L^-1 is close to I, so 50 solves in place stay of order one.
  const Eigen::MatrixXf lower = uniform(kW, kW, 77) / static_cast<float>(kW);
  std::vector<float> host(static_cast<std::size_t>(kW) * kLd, 0.5f);
  for (int i = 0; i < kW; ++i)
    for (int j = 0; j < i; ++j) host[static_cast<std::size_t>(i) * kLd + j] = lower(i, j);
  cuda::DeviceBuffer<float> a(host);
  float* b = a.data() + kW;
  REQUIRE(cuda::kernels::trsm_lower_unit(nullptr, a.data(), b, kLd, kW, kW));  // warm-up
  cuda::EventTimer timer;
  timer.start();
  for (int i = 0; i < kCalls; ++i) cuda::kernels::trsm_lower_unit(nullptr, a.data(), b, kLd, kW, kW);
  const double us = 1000.0 * timer.stop_ms() / kCalls;
  std::printf("\ntrsm_lower_unit, 512 x 512 unit lower, 512 columns, ld 16384: %.1f us per call\n", us);
  const std::vector<float> out = a.download();
  std::size_t bad = 0;
  for (int i = 0; i < kW; ++i)
    for (int j = 0; j < kW; ++j) {
      const float v = out[static_cast<std::size_t>(i) * kLd + kW + j];
      bad += !(std::abs(v) < 4.0f);
    }
  CHECK(bad == 0);
}

#endif  // TCSOLVE_HAVE_CUDA
