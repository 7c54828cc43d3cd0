// The mixed-precision solver (solver.hpp): power-of-two equilibration, blocked FP32 LU whose
// trailing updates run through tcsolve::gemm, FP64 iterative refinement (classical or GMRES-IR),
// FP64 LU fallback, condition estimate and warnings. The cpu path, and the rules both paths share.
//
// Stopping rules of the refinement (classical and GMRES-IR alike). After the initial solve and
// after every correction x += d, the residual r = b - A x is computed in FP64, and per right-hand
// side j
//   backward error  eta_j = ||r_j||_inf / (||A||_inf ||x_j||_inf + ||b_j||_inf),
//   converged when  ||r_j||_inf <= sqrt(n) ||x_j||_inf ||A||_inf eps64     (LAPACK dsgesv),
// with eps64 = 2^-53 (dlamch('E')). The solve has converged when every column has. Otherwise,
// with delta_k = max_j ||d_j||_inf / ||x_j||_inf the relative size of the k-th correction (over
// the columns not yet converged), the refinement stops when the correction has not halved over
// the last 3 steps, delta_k > 0.5 delta_{k-3}: "diverging" when delta_k > delta_{k-3}, else
// "stagnated". A contraction slower than 2^(-1/3) = 0.79 per step gains less than 3 digits in
// 30 steps, far from the ~8 an FP32 LU leaves to gain; 3 steps, not 1, because the first
// contractions of a slow but converging refinement (cond ~ 1/u32) are erratic. A non-finite
// correction stops it at once ("diverged"). At most max_iterations corrections. The returned x
// is the iterate with the smallest backward error (the history shows every one). These rules
// are implemented once, in solver_internal.hpp, for this file and the cuda path (cuda/). The
// norms and both tests are evaluated in frexp form (solver_internal.hpp, ScaledNorm), so that
// neither overflow (||x|| ||A|| near 1e306 makes the bound inf, which every ||r|| would meet) nor
// underflow (near 1e-310 the bound flushes to 0) decides them.
//
// After refinement (both paths, in this order):
//   fallback   when refinement did not converge (options.fallback): the FP64 LU of the
//              equilibrated A_s = R A C, y = A_s^-1 (R b), x = C y, the scalings in exponent
//              arithmetic (condition.hpp, EquilibratedInverse): a system near 1e-310, whose
//              unscaled FP64 LU divides by subnormal pivots and returns NaN, is solved as its
//              scaled copy. x is the fallback's solution when it meets dsgesv's criterion or
//              has the smaller backward error, else the best iterate stays (the note says so).
//   exactly singular  InvalidInput, with zero_pivot_message, when the FP32 LU meets an exact
//              zero pivot and the FP64 LU of A_s a zero or non-finite one, or when any FP64 LU
//              (fallback, condition estimate) does; and, before any FP64 LU, when two rows or two
//              columns are equal up to sign and a power of two (exact_singularity: the blocked LU
//              meets no exact zero for them; solver_internal.hpp says why).
//   condition  cond_1(A) ~= ||A||_1 est(||A^-1||_1) (condition.hpp) with A^-1 = C U^-1 L^-1 P R
//              from the FP32 factors, checked by up to two refinement steps along the estimate's
//              vector; where the FP32 factors do not resolve A^-1 there (cond_1(A) u32 near 1 or
//              beyond: the estimate would saturate near 1/u32 however singular A is), from the
//              FP64 LU of A_s instead (the fallback's, or one made for it).
//   finish     a non-finite x is never "converged" (note); the forward error; the warnings:
//              cond_1(A) eps64 >= kConditionWarning (1e-3: a converged solution's forward error
//              bound cond eps64 leaves fewer than 3 digits), and with x_true a forward error >
//              kForwardWarning while refinement converged, naming ill-conditioning (with the
//              estimate; "does not explain it" when the estimate bounds the forward error by
//              n cond_1 max(eta, eps64), 10 times below it) and a column-major file read as
//              row-major (A transposed).
#include "tcsolve/solver/solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "condition.hpp"
#include "equilibration.hpp"
#include "solver_cuda.hpp"
#include "solver_internal.hpp"
#include "tcsolve/gemm/error.hpp"

namespace tcsolve {

namespace detail {

std::string zero_pivot_message(int column) {
  return "matrix is exactly singular: zero pivot in column " + std::to_string(column + 1) + " (1-based)";
}

void check_system(const LinearSystem& sys) {
  if (sys.A.rows() < 1 || sys.A.rows() != sys.A.cols())
    throw InvalidInput("A must be square and non-empty, got " + std::to_string(sys.A.rows()) + " x " +
                       std::to_string(sys.A.cols()));
  if (sys.b.rows() != sys.A.rows() || sys.b.cols() < 1)
    throw InvalidInput("b must have n = " + std::to_string(sys.A.rows()) +
                       " rows and at least one column, got " + std::to_string(sys.b.rows()) + " x " +
                       std::to_string(sys.b.cols()));
  if (!sys.A.allFinite() || !sys.b.allFinite()) throw InvalidInput("A or b has NaN or infinite entries");
  if (sys.x_true && (sys.x_true->rows() != sys.b.rows() || sys.x_true->cols() != sys.b.cols()))
    throw InvalidInput("x_true's shape differs from b's");
  // A zero row or column: exactly singular, found in O(n^2) before an LU of O(n^3) (an all-zero
  // A of n = 20000 ran for minutes before).
  const Eigen::Index n = sys.A.rows();
  for (Eigen::Index j = 0; j < n; ++j)
    if ((sys.A.col(j).array() == 0.0).all())
      throw InvalidInput("matrix is exactly singular: column " + std::to_string(j + 1) + " (1-based) is zero");
  Eigen::VectorXi row_nonzero = Eigen::VectorXi::Zero(n);
  for (Eigen::Index j = 0; j < n; ++j) row_nonzero += (sys.A.col(j).array() != 0.0).cast<int>().matrix();
  for (Eigen::Index i = 0; i < n; ++i)
    if (row_nonzero[i] == 0)
      throw InvalidInput("matrix is exactly singular: row " + std::to_string(i + 1) + " (1-based) is zero");
}

void check_solve_options(const SolveOptions& options) {
  if (options.block_size < 0)
    throw InvalidInput("block size must be a positive integer (0: the backend's default), got " +
                       std::to_string(options.block_size));
  if (options.max_iterations < 0)
    throw InvalidInput("max_iterations must be >= 0, got " + std::to_string(options.max_iterations));
}

std::optional<double> forward_error(const LinearSystem& sys, const Eigen::MatrixXd& x) {
  if (!sys.x_true) return std::nullopt;
  double worst = 0;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const double tn = sys.x_true->col(j).lpNorm<Eigen::Infinity>();
    const double en = (x.col(j) - sys.x_true->col(j)).lpNorm<Eigen::Infinity>();
    double e = quotient(scaled_norm(en), scaled_norm(tn));
    if (!std::isfinite(e)) e = std::numeric_limits<double>::infinity();
    worst = std::max(worst, e);
  }
  return worst;
}

namespace {

/// max over lines of sum |a|, rows (lines = rows) or columns (solver_internal.hpp: norm_inf).
ScaledNorm max_line_sum(const Eigen::MatrixXd& A, bool rows) {
  const double largest = A.cwiseAbs().maxCoeff();
  int e = 0;
  if (largest > 0) std::frexp(largest, &e);
  const bool scale = e > 900 || e < -900;
  const Eigen::MatrixXd scaled = scale ? Eigen::MatrixXd(A.unaryExpr([e](double v) { return std::ldexp(v, -e); }))
                                       : Eigen::MatrixXd();
  const Eigen::MatrixXd& m = scale ? scaled : A;
  const double sum = rows ? m.cwiseAbs().rowwise().sum().maxCoeff() : m.cwiseAbs().colwise().sum().maxCoeff();
  ScaledNorm out = scaled_norm(sum);
  if (scale && !out.zero()) out.e += e;
  return out;
}

// --- exact singularity: lines equal up to sign and a power of two ------------------------------

/// splitmix64's finalizer.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A line's hash, normalized by its first non-zero entry in position order (which two lines
/// equal up to s 2^k share): each non-zero entry contributes its frexp mantissa's bits, its
/// exponent minus the reference's, whether its sign differs from the reference's, and its
/// position. The contributions are added (mod 2^64), so the order does not matter.
struct LineHash {
  bool started = false;
  int ref_exp = 0;
  bool ref_negative = false;
  std::uint64_t hash = 0;
  int count = 0;  ///< non-zero entries absorbed

  void absorb(int pos, double value) {
    if (value == 0) return;
    int e = 0;
    const double m = std::frexp(value, &e);
    const bool negative = m < 0;
    if (!started) {
      started = true;
      ref_exp = e;
      ref_negative = negative;
    }
    std::uint64_t bits = 0;
    const double a = std::abs(m);
    std::memcpy(&bits, &a, sizeof bits);
    hash += mix(bits ^ mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(e - ref_exp)) * 2 +
                           (negative != ref_negative ? 1 : 0)) ^
                mix(0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(pos)));
    ++count;
  }
  bool operator<(const LineHash& o) const { return hash != o.hash ? hash < o.hash : count < o.count; }
  bool operator==(const LineHash& o) const { return hash == o.hash && count == o.count; }
};

/// Two lines equal up to sign and a power of two, and neither zero, compared entry by entry.
template <typename At>
bool proportional(const At& at, int n, int a, int b) {
  bool started = false, flip = false;
  int shift = 0;
  for (int pos = 0; pos < n; ++pos) {
    const double u = at(a, pos), v = at(b, pos);
    if ((u == 0) != (v == 0)) return false;
    if (u == 0) continue;
    int eu = 0, ev = 0;
    const double mu = std::frexp(u, &eu), mv = std::frexp(v, &ev);
    if (std::abs(mu) != std::abs(mv)) return false;
    const bool f = (mu < 0) != (mv < 0);
    if (!started) {
      started = true;
      flip = f;
      shift = eu - ev;
    } else if (f != flip || eu - ev != shift) {
      return false;
    }
  }
  return started;
}

/// The first pair (in a deterministic order) of lines of A equal up to sign and a power of two.
std::optional<std::pair<int, int>> proportional_lines(const Eigen::MatrixXd& A, bool rows) {
  const int n = static_cast<int>(A.rows());
  auto at = [&](int line, int pos) { return rows ? A(line, pos) : A(pos, line); };
  constexpr int kSample = 64;
  std::vector<int> sample;
  for (int k = 0; k < std::min(n, kSample); ++k) {
    const int pos = static_cast<int>(static_cast<long long>(k) * n / std::min(n, kSample));
    if (sample.empty() || sample.back() != pos) sample.push_back(pos);
  }
  // Hashes of every line over the sampled positions, each loop in the matrix's storage order.
  std::vector<LineHash> h(static_cast<std::size_t>(n));
  if (rows) {
    for (int pos : sample)
      for (int line = 0; line < n; ++line) h[static_cast<std::size_t>(line)].absorb(pos, A(line, pos));
  } else {
    for (int line = 0; line < n; ++line)
      for (int pos : sample) h[static_cast<std::size_t>(line)].absorb(pos, A(pos, line));
  }
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&h](int a, int b) {
    const LineHash &x = h[static_cast<std::size_t>(a)], &y = h[static_cast<std::size_t>(b)];
    return x == y ? a < b : x < y;
  });
  for (std::size_t g0 = 0; g0 < order.size();) {
    std::size_t g1 = g0 + 1;
    while (g1 < order.size() && h[static_cast<std::size_t>(order[g1])] == h[static_cast<std::size_t>(order[g0])]) ++g1;
    if (g1 - g0 >= 2) {
      // Full hashes of the group's lines, then entry by entry where they agree.
      std::vector<std::pair<LineHash, int>> full;
      for (std::size_t g = g0; g < g1; ++g) full.emplace_back(LineHash{}, order[g]);
      if (rows) {
        for (int pos = 0; pos < n; ++pos)
          for (auto& [hash, line] : full) hash.absorb(pos, A(line, pos));
      } else {
        for (auto& [hash, line] : full)
          for (int pos = 0; pos < n; ++pos) hash.absorb(pos, A(pos, line));
      }
      std::sort(full.begin(), full.end(), [](const auto& x, const auto& y) {
        return x.first == y.first ? x.second < y.second : x.first < y.first;
      });
      for (std::size_t a = 0; a < full.size(); ++a) {
        if (full[a].first.count == 0) continue;  // a zero line: the LU's zero pivot reports it
        for (std::size_t b = a + 1; b < full.size() && full[b].first == full[a].first; ++b)
          if (proportional(at, n, full[a].second, full[b].second))
            return std::make_pair(std::min(full[a].second, full[b].second), std::max(full[a].second, full[b].second));
      }
    }
    g0 = g1;
  }
  return std::nullopt;
}

}  // namespace

std::string brief(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", v);
  return text;
}

ScaledNorm norm_inf(const Eigen::MatrixXd& A) { return max_line_sum(A, true); }
ScaledNorm norm_1(const Eigen::MatrixXd& A) { return max_line_sum(A, false); }

std::optional<std::string> exact_singularity(const Eigen::MatrixXd& A) {
  for (const bool rows : {true, false})
    if (const auto pair = proportional_lines(A, rows))
      return "matrix is exactly singular: " + std::string(rows ? "rows " : "columns ") +
             std::to_string(pair->first + 1) + " and " + std::to_string(pair->second + 1) +
             " (1-based) are equal up to sign and a power of two";
  return std::nullopt;
}

void finish_result(const LinearSystem& sys, SolveResult& res) {
  res.forward_error = forward_error(sys, res.x);
  if (!res.x.allFinite()) {
    res.converged = false;
    res.backward_error = std::numeric_limits<double>::infinity();
    res.note += std::string(res.note.empty() ? "" : "; ") + "no finite solution: x has NaN or infinite entries";
  }
  const std::optional<double> cond = res.condition_estimate;
  if (cond && !(*cond * kEps64 < kConditionWarning))
    res.warnings.push_back("A is ill-conditioned: cond_1(A) estimate " + brief(*cond) +
                           ", so the forward error may be as large as cond * eps64 = " + brief(*cond * kEps64) +
                           " and cannot be trusted");
  if (res.forward_error && res.converged && *res.forward_error > kForwardWarning) {
    const double fe = *res.forward_error, eta = res.backward_error;
    // To first order the forward error is at most cond_inf(A) eta (Higham, ASNA Thm 7.2), and
    // cond_inf(A) <= n cond_1(A).
    const double bound = cond ? sys.n() * *cond * std::max(eta, kEps64) : 0;
    std::string w = "forward error " + brief(fe) + " against the system's x although the backward error is " +
                    brief(eta);
    const std::string transposed =
        "a file written column-major (MATLAB, Fortran, Julia) read as row-major, i.e. A transposed";
    if (cond && fe > 10 * bound)
      w += ": ill-conditioning does not explain it (cond_1(A) estimate " + brief(*cond) + " bounds it by about " +
           brief(bound) + "); likely " + transposed + ", or an x that does not solve the system";
    else
      w += ": likely causes: ill-conditioning (cond_1(A) estimate " + (cond ? brief(*cond) : "not computed") +
           "), or " + transposed;
    res.warnings.push_back(w);
  }
}

}  // namespace detail

namespace {

using Clock = std::chrono::steady_clock;
using detail::Assessment;
using detail::check_system;
using detail::forward_error;
using detail::zero_pivot_message;

using detail::kGmresCycle;
using detail::ScaledNorm;
constexpr std::string_view kFp64Baseline = "fp64-lu";  ///< Eigen FP64 PartialPivLU

double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

/// R and C of A_s = R A C (LAPACK dgeequ with powers of two): rows first, then the columns of
/// the row-scaled matrix.
void equilibrate(const Eigen::MatrixXd& A, Eigen::VectorXd& row_scale, Eigen::VectorXd& col_scale) {
  const Eigen::Index n = A.rows();
  row_scale.resize(n);
  col_scale.resize(n);
  const Eigen::VectorXd row_max = A.cwiseAbs().rowwise().maxCoeff();
  for (Eigen::Index i = 0; i < n; ++i)
    row_scale[i] = detail::pow2(detail::equilibration_exponent(row_max[i]));
  for (Eigen::Index j = 0; j < n; ++j) {
    const double col_max = (row_scale.cwiseProduct(A.col(j).cwiseAbs())).maxCoeff();
    col_scale[j] = detail::pow2(detail::equilibration_exponent(col_max));
  }
}

/// Blocked right-looking LU with partial pivoting of `a` (n x n, column-major FP32) in place;
/// `perm` starts as the identity and follows the row swaps. Returns the zero-based column of
/// the first exactly zero pivot (the factorization stops there), or -1. `resolved` receives the
/// variant the first trailing update ran (unchanged when there is none).
int factorize_in_place(Eigen::MatrixXf& a, std::vector<int>& perm, Variant variant, int nb,
                       const GemmOptions& gemm_options, Variant& resolved) {
  const int n = static_cast<int>(a.rows());
  bool first_update = true;
  for (int j0 = 0; j0 < n; j0 += nb) {
    const int w = std::min(nb, n - j0);  // panel width
    // Panel: unblocked partial-pivot LU of columns j0..j0+w-1 (rows j0..n-1); each swap
    // exchanges whole rows, so the L of earlier panels and the columns to the right follow.
    for (int k = j0; k < j0 + w; ++k) {
      Eigen::Index p = 0;
      const float pivot_abs = a.col(k).tail(n - k).cwiseAbs().maxCoeff(&p);
      if (!(pivot_abs != 0.0f)) return k;
      p += k;
      if (p != k) {
        a.row(k).swap(a.row(p));
        std::swap(perm[k], perm[p]);
      }
      const int below = n - k - 1, right = j0 + w - k - 1;
      if (below == 0) continue;
      a.col(k).tail(below) /= a(k, k);
      if (right > 0)
        a.block(k + 1, k + 1, below, right).noalias() -=
            a.col(k).tail(below) * a.row(k).segment(k + 1, right);
    }
    const int rest = n - j0 - w;
    if (rest == 0) break;
    // U12 = L11^-1 A12.
    auto a12 = a.block(j0, j0 + w, w, rest);
    a.block(j0, j0, w, w).triangularView<Eigen::UnitLower>().solveInPlace(a12);
    // A22 -= L21 U12: the only place the variant enters.
    const GemmInfo info = gemm(Backend::cpu, variant, Op::n, Op::n, rest, rest, w, -1.0f, &a(j0 + w, j0), n,
                               &a(j0, j0 + w), n, 1.0f, &a(j0 + w, j0 + w), n, gemm_options);
    if (first_update) resolved = info.resolved;
    first_update = false;
  }
  return -1;
}

/// The factorization, or the zero-based column of an exact zero pivot of the FP32 LU.
struct FactorAttempt {
  LuFactorization f;
  int zero_pivot = -1;
};

FactorAttempt try_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                            const GemmOptions& gemm_options) {
  if (A.rows() != A.cols() || A.rows() < 1)
    throw InvalidInput("lu_factorize: A must be square and non-empty, got " + std::to_string(A.rows()) +
                       " x " + std::to_string(A.cols()));
  if (block_size < 1)
    throw InvalidInput("block size must be a positive integer, got " + std::to_string(block_size));
  if (!A.allFinite()) throw InvalidInput("matrix A has NaN or infinite entries");
  const int n = static_cast<int>(A.rows());
  FactorAttempt t;
  LuFactorization& f = t.f;
  equilibrate(A, f.row_scale, f.col_scale);
  // Powers of two: the scaling is exact in FP64; the FP32 conversion is the only rounding.
  f.lu = (f.row_scale.asDiagonal() * A * f.col_scale.asDiagonal()).cast<float>();
  f.perm.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) f.perm[static_cast<std::size_t>(i)] = i;
  f.resolved_variant = variant;  // the requested one when no trailing update runs (n <= nb)
  t.zero_pivot = factorize_in_place(f.lu, f.perm, variant, block_size, gemm_options, f.resolved_variant);
  return t;
}

/// Zero-based column of the first zero or non-finite diagonal entry of an FP64 LU's U, or -1.
int first_bad_pivot(const Eigen::PartialPivLU<Eigen::MatrixXd>& lu) {
  const Eigen::VectorXd d = lu.matrixLU().diagonal();
  for (Eigen::Index i = 0; i < d.size(); ++i)
    if (d[i] == 0.0 || !std::isfinite(d[i])) return static_cast<int>(i);
  return -1;
}

using Fp64Lu = Eigen::PartialPivLU<Eigen::MatrixXd>;

/// The FP64 LU of the equilibrated A_s = R A C (exact: powers of two), for the fallback and the
/// condition estimate. Throws InvalidInput when A is exactly singular: first the check of equal
/// rows and columns (detail::exact_singularity), then a zero or non-finite pivot.
Fp64Lu fp64_equilibrated_lu(const Eigen::MatrixXd& A, const Eigen::VectorXd& row_scale,
                            const Eigen::VectorXd& col_scale) {
  if (const auto why = detail::exact_singularity(A)) throw InvalidInput(*why);
  Fp64Lu lu(row_scale.asDiagonal() * A * col_scale.asDiagonal());
  const int bad = first_bad_pivot(lu);
  if (bad >= 0) throw InvalidInput(zero_pivot_message(bad));
  return lu;
}

/// A^-1, A^-T through the FP64 LU of A_s.
detail::EquilibratedInverse fp64_inverse(const Fp64Lu& lu, const LuFactorization& f) {
  return detail::EquilibratedInverse(
      f.row_scale, f.col_scale, [&lu](Eigen::MatrixXd& w) { w = lu.solve(w); },
      [&lu](Eigen::MatrixXd& w) { w = lu.transpose().solve(w); });
}

/// A^-1, A^-T through the FP32 factors P A_s = L U: A_s^-1 w = U^-1 L^-1 P w and A_s^-T w =
/// P^T L^-T U^-T w, the triangular solves in FP32 (w rounded to FP32 first, as lu_apply does).
detail::EquilibratedInverse fp32_inverse(const LuFactorization& f) {
  return detail::EquilibratedInverse(
      f.row_scale, f.col_scale,
      [&f](Eigen::MatrixXd& w) {
        Eigen::MatrixXf y(w.rows(), w.cols());
        for (Eigen::Index i = 0; i < w.rows(); ++i)
          y.row(i) = w.row(f.perm[static_cast<std::size_t>(i)]).cast<float>();
        f.lu.triangularView<Eigen::UnitLower>().solveInPlace(y);
        f.lu.triangularView<Eigen::Upper>().solveInPlace(y);
        w = y.cast<double>();
      },
      [&f](Eigen::MatrixXd& w) {
        Eigen::MatrixXf y = w.cast<float>();
        f.lu.triangularView<Eigen::Upper>().transpose().solveInPlace(y);
        f.lu.triangularView<Eigen::UnitLower>().transpose().solveInPlace(y);
        for (Eigen::Index i = 0; i < w.rows(); ++i)
          w.row(f.perm[static_cast<std::size_t>(i)]) = y.row(i).cast<double>();
      });
}

/// x = A^-1 b through an inverse (the fallback's solve).
Eigen::MatrixXd solve_with(const detail::EquilibratedInverse& inverse, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd x = b;
  inverse.apply(x);
  return x;
}

/// r = b - A x in FP64 and the assessment of x (detail::assess_columns).
class Checker {
 public:
  Checker(const Eigen::MatrixXd& A, const Eigen::MatrixXd& b)
      : A_(A), b_(b), norm_a_(detail::norm_inf(A)), b_norm_(column_norms(b)) {}

  Assessment assess(const Eigen::MatrixXd& x, Eigen::MatrixXd& r) const {
    r.noalias() = b_ - A_ * x;
    return detail::assess_columns(column_norms(r), column_norms(x), b_norm_, norm_a_,
                                  static_cast<int>(A_.rows()));
  }

  /// ||m_j||_inf per column.
  static std::vector<double> column_norms(const Eigen::MatrixXd& m) {
    std::vector<double> norms(static_cast<std::size_t>(m.cols()));
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      norms[static_cast<std::size_t>(j)] = m.col(j).lpNorm<Eigen::Infinity>();
    return norms;
  }

 private:
  const Eigen::MatrixXd& A_;
  const Eigen::MatrixXd& b_;
  ScaledNorm norm_a_;
  std::vector<double> b_norm_;
};

/// GMRES on M^-1 A d = M^-1 r (left preconditioned by the LU M, FP64 arithmetic, x0 = 0): one
/// cycle of at most `cycle` iterations, stopping when the preconditioned residual norm drops to
/// kGmresTolerance times its initial value (detail::GmresLeastSquares: Givens rotations).
/// Modified Gram-Schmidt run twice. `iterations` receives the inner iterations done.
Eigen::VectorXd gmres(const Eigen::MatrixXd& A, const LuFactorization& f, const Eigen::VectorXd& r, int cycle,
                      int& iterations) {
  const Eigen::Index n = A.rows();
  iterations = 0;
  const Eigen::VectorXd z = lu_apply(f, r);
  const double beta = z.norm();
  if (!(beta > 0) || !std::isfinite(beta)) return z;  // r == 0 gives 0; non-finite propagates
  const int m = static_cast<int>(std::min<Eigen::Index>(cycle, n));
  Eigen::MatrixXd V(n, m + 1);
  V.col(0) = z / beta;
  detail::GmresLeastSquares ls(m, beta);
  while (ls.size() < m) {
    const int k = ls.size();
    Eigen::VectorXd w = lu_apply(f, A * V.col(k));
    Eigen::VectorXd h = Eigen::VectorXd::Zero(k + 1);
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 0; i <= k; ++i) {
        const double c = V.col(i).dot(w);
        h[i] += c;
        w -= c * V.col(i);
      }
    const double h_next = w.norm();
    if (h_next > 0) V.col(k + 1) = w / h_next;
    if (ls.add_column(h.data(), h_next)) break;
  }
  iterations = ls.size();
  return V.leftCols(iterations) * ls.solve();
}

/// The host side of detail::refinement_loop: x, r, d as Eigen matrices; `correct` computes d
/// from r (the columns not done are the ones that matter).
template <typename Correct>
class CpuRefinement {
 public:
  CpuRefinement(const Checker& checker, Eigen::MatrixXd x0, SolveResult& res, Correct correct)
      : checker_(checker), x_(std::move(x0)), res_(res), correct_(std::move(correct)) {}

  Assessment assess() { return checker_.assess(x_, r_); }
  std::vector<double> correct(const std::vector<bool>& done) {
    d_ = correct_(r_, done);
    return Checker::column_norms(d_);
  }
  void apply(const std::vector<bool>& done) {
    for (Eigen::Index j = 0; j < x_.cols(); ++j)
      if (!done[static_cast<std::size_t>(j)]) x_.col(j) += d_.col(j);
  }
  void keep_best() { res_.x = x_; }

 private:
  const Checker& checker_;
  Eigen::MatrixXd x_, r_, d_;
  SolveResult& res_;
  Correct correct_;
};

template <typename Correct>
void refine(const SolveOptions& options, const Checker& checker, Eigen::MatrixXd x, SolveResult& res,
            Correct correct) {
  CpuRefinement<Correct> ops(checker, std::move(x), res, std::move(correct));
  detail::refinement_loop(options.max_iterations, ops, res);
}

}  // namespace

Refinement parse_refinement(std::string_view name) {
  if (name == "classical") return Refinement::classical;
  if (name == "gmres") return Refinement::gmres;
  throw InvalidInput("unknown refinement '" + std::string(name) + "' (valid: classical, gmres)");
}

std::string_view to_string(Refinement r) { return r == Refinement::gmres ? "gmres" : "classical"; }

LuFactorization lu_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm) {
  FactorAttempt t = try_factorize(A, variant, block_size, gemm);
  if (t.zero_pivot >= 0) throw InvalidInput(zero_pivot_message(t.zero_pivot));
  return std::move(t.f);
}

LuFactorization lu_factorize(Backend backend, const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm) {
  if (resolve_backend(backend) != Backend::cuda) return lu_factorize(A, variant, block_size, gemm);
  if (A.rows() != A.cols() || A.rows() < 1)
    throw InvalidInput("lu_factorize: A must be square and non-empty, got " + std::to_string(A.rows()) +
                       " x " + std::to_string(A.cols()));
  if (block_size < 1)
    throw InvalidInput("block size must be a positive integer, got " + std::to_string(block_size));
  if (!A.allFinite()) throw InvalidInput("matrix A has NaN or infinite entries");
  return cuda::lu_factorize(A, variant, block_size, gemm);
}

Eigen::MatrixXd lu_apply(const LuFactorization& f, const Eigen::MatrixXd& r) {
  const Eigen::Index n = f.lu.rows();
  if (r.rows() != n)
    throw InvalidInput("lu_apply: r has " + std::to_string(r.rows()) + " rows, the factorization " +
                       std::to_string(n));
  // Per column: t = R r scaled by a power of two to ||t||_inf in [1/2, 1) so that the FP32
  // conversion neither overflows nor flushes a small residual to zero; permuted by P.
  Eigen::MatrixXf y(n, r.cols());
  std::vector<int> exponents(static_cast<std::size_t>(r.cols()), 0);
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    const Eigen::VectorXd t = f.row_scale.cwiseProduct(r.col(j));
    const double s = t.cwiseAbs().maxCoeff();
    int e = 0;
    if (std::isfinite(s) && s > 0) std::frexp(s, &e);
    exponents[static_cast<std::size_t>(j)] = e;
    for (Eigen::Index i = 0; i < n; ++i)
      y(i, j) = static_cast<float>(std::ldexp(t[f.perm[static_cast<std::size_t>(i)]], -e));
  }
  f.lu.triangularView<Eigen::UnitLower>().solveInPlace(y);
  f.lu.triangularView<Eigen::Upper>().solveInPlace(y);
  Eigen::MatrixXd x = y.cast<double>();
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    x.col(j) = f.col_scale.cwiseProduct(x.col(j)) * std::ldexp(1.0, exponents[static_cast<std::size_t>(j)]);
  return x;
}

int default_block_size(Backend backend) {
  return resolve_backend(backend) == Backend::cuda ? kDefaultBlockSizeCuda : kDefaultBlockSizeCpu;
}

SolveResult solve(const LinearSystem& sys, const SolveOptions& requested) {
  const auto t_start = Clock::now();
  check_system(sys);
  detail::check_solve_options(requested);
  SolveOptions options = requested;
  if (options.block_size == 0) options.block_size = default_block_size(options.backend);
  // The one switch between the backends; cuda::solve times its own phases.
  if (resolve_backend(options.backend) == Backend::cuda) {
    SolveResult r = cuda::solve(sys, options);
    r.block_size = options.block_size;
    return r;
  }
  if (!available(options.variant, Backend::cpu))
    throw Unavailable("variant " + std::string(to_string(options.variant)) +
                      " has no implementation on the cpu backend");

  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = options.block_size;
  const Checker checker(sys.A, sys.b);

  FactorAttempt t = try_factorize(sys.A, options.variant, options.block_size, options.gemm);
  const auto t_factored = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  res.resolved_variant = t.f.resolved_variant;
  const LuFactorization& f = t.f;

  // The FP64 LU of A_s, made at most once: for the fallback, or for the condition estimate.
  std::optional<Fp64Lu> lu64;
  auto fp64 = [&]() -> const Fp64Lu& {
    if (!lu64) lu64 = fp64_equilibrated_lu(sys.A, f.row_scale, f.col_scale);
    return *lu64;
  };

  if (t.zero_pivot >= 0) {
    // Exactly singular, or singular only to FP32 precision: the FP64 LU decides.
    const Fp64Lu& lu = fp64();
    const std::string why = "the FP32 LU hit a zero pivot in column " + std::to_string(t.zero_pivot + 1) +
                            " (singular to FP32 precision)";
    if (options.fallback) {
      res.x = solve_with(fp64_inverse(lu, f), sys.b);
      res.fallback_used = true;
      res.note = why + "; FP64 LU fallback used";
    } else {
      res.x = Eigen::MatrixXd::Zero(sys.A.rows(), sys.b.cols());
      res.note = why + "; no fallback: x = 0";
    }
    Eigen::MatrixXd r;
    const Assessment a = checker.assess(res.x, r);
    res.backward_error = a.backward_error;
    res.converged = options.fallback && a.all_done;
    res.history.push_back(res.backward_error);
  } else {
    const Eigen::MatrixXd x0 = lu_apply(f, sys.b);
    if (options.refinement == Refinement::classical) {
      refine(options, checker, x0, res,
             [&](const Eigen::MatrixXd& r, const std::vector<bool>&) { return lu_apply(f, r); });
    } else {
      long inner_total = 0;
      refine(options, checker, x0, res, [&](const Eigen::MatrixXd& r, const std::vector<bool>& done) {
        Eigen::MatrixXd d = Eigen::MatrixXd::Zero(r.rows(), r.cols());
        for (Eigen::Index j = 0; j < r.cols(); ++j) {
          if (done[static_cast<std::size_t>(j)]) continue;
          int inner = 0;
          d.col(j) = gmres(sys.A, f, r.col(j), kGmresCycle, inner);
          inner_total += inner;
        }
        return d;
      });
      res.note += "; GMRES inner iterations: " + std::to_string(inner_total);
    }
    if (!res.converged && options.fallback) {
      Eigen::MatrixXd x = solve_with(fp64_inverse(fp64(), f), sys.b), r;
      detail::take_fallback(checker.assess(x, r), res, [&] { res.x = std::move(x); });
    }
  }

  if (options.estimate_condition) {
    const ScaledNorm norm1 = detail::norm_1(sys.A);
    if (!lu64) {
      const detail::ConditionEstimate c =
          detail::estimate_condition(norm1, fp32_inverse(f), [&](Eigen::MatrixXd& y) { y = sys.A * y; });
      if (c.resolved)
        res.condition_estimate = c.estimate;
      else
        res.note += "; condition estimate from an FP64 LU (the FP32 factors do not resolve A^-1)";
    }
    if (!res.condition_estimate) res.condition_estimate = detail::estimate_condition(norm1, fp64_inverse(fp64(), f)).estimate;
  }
  detail::finish_result(sys, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

SolveResult solve_fp64_baseline(const LinearSystem& sys) {
  const auto t_start = Clock::now();
  check_system(sys);
  SolveResult res;
  res.backend = Backend::cpu;
  res.resolved_variant = Variant::fp64;
  const Eigen::PartialPivLU<Eigen::MatrixXd> lu(sys.A);
  const auto t_factored = Clock::now();
  const int bad = first_bad_pivot(lu);
  if (bad >= 0) throw InvalidInput(zero_pivot_message(bad));
  const Checker checker(sys.A, sys.b);
  res.x = lu.solve(sys.b);
  Eigen::MatrixXd r;
  const Assessment a = checker.assess(res.x, r);
  res.backward_error = a.backward_error;
  res.converged = a.all_done;
  res.history.push_back(res.backward_error);
  res.forward_error = forward_error(sys, res.x);
  res.note = res.converged ? "Eigen FP64 PartialPivLU; dsgesv criterion holds"
                           : "Eigen FP64 PartialPivLU; dsgesv criterion does not hold";
  const auto t_end = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

std::vector<std::string> baseline_methods(Backend backend) {
  if (resolve_backend(backend) == Backend::cuda)
    return {"cusolver-dgetrf", "cusolver-dsgesv", "cusolver-dhgesv", "cusolver-dbgesv", "cusolver-dxgesv"};
  return {std::string(kFp64Baseline)};
}

SolveResult solve_baseline(const LinearSystem& sys, std::string_view method) {
  if (method == kFp64Baseline) return solve_fp64_baseline(sys);
  const std::vector<std::string> on_cuda = baseline_methods(Backend::cuda);
  if (std::find(on_cuda.begin(), on_cuda.end(), method) == on_cuda.end())
    throw InvalidInput("unknown baseline method '" + std::string(method) +
                       "' (valid: fp64-lu, cusolver-dgetrf, cusolver-dsgesv, cusolver-dhgesv, "
                       "cusolver-dbgesv, cusolver-dxgesv)");
  check_system(sys);
  return cuda::solve_baseline(sys, method);
}

}  // namespace tcsolve
