// The mixed-precision solver (solver.hpp): power-of-two equilibration, blocked FP32 LU whose
// trailing updates run through tcsolve::gemm, FP64 iterative refinement (classical or GMRES-IR),
// FP64 LU fallback.
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
// are implemented once, in solver_internal.hpp, for this file and the cuda path (cuda/).
#include "tcsolve/solver/solver.hpp"

#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

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
}

void check_solve_options(const SolveOptions& options) {
  if (options.block_size < 1)
    throw InvalidInput("block size must be a positive integer, got " + std::to_string(options.block_size));
  if (options.max_iterations < 0)
    throw InvalidInput("max_iterations must be >= 0, got " + std::to_string(options.max_iterations));
}

std::optional<double> forward_error(const LinearSystem& sys, const Eigen::MatrixXd& x) {
  if (!sys.x_true) return std::nullopt;
  double worst = 0;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const double tn = sys.x_true->col(j).lpNorm<Eigen::Infinity>();
    const double en = (x.col(j) - sys.x_true->col(j)).lpNorm<Eigen::Infinity>();
    double e = tn > 0 ? en / tn : (en == 0 ? 0.0 : std::numeric_limits<double>::infinity());
    if (!std::isfinite(e)) e = std::numeric_limits<double>::infinity();
    worst = std::max(worst, e);
  }
  return worst;
}

}  // namespace detail

namespace {

using Clock = std::chrono::steady_clock;
using detail::Assessment;
using detail::check_system;
using detail::forward_error;
using detail::zero_pivot_message;

using detail::kGmresCycle;
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

/// Zero-based column of the first exactly zero diagonal entry of an FP64 LU's U, or -1.
int first_zero_pivot(const Eigen::PartialPivLU<Eigen::MatrixXd>& lu) {
  const Eigen::VectorXd d = lu.matrixLU().diagonal();
  for (Eigen::Index i = 0; i < d.size(); ++i)
    if (d[i] == 0.0) return static_cast<int>(i);
  return -1;
}

/// r = b - A x in FP64 and the assessment of x (detail::assess_columns).
class Checker {
 public:
  Checker(const Eigen::MatrixXd& A, const Eigen::MatrixXd& b)
      : A_(A), b_(b), norm_a_(A.cwiseAbs().rowwise().sum().maxCoeff()), b_norm_(column_norms(b)) {}

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
  double norm_a_;
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

void fill_fp64_solution(const LinearSystem& sys, const Eigen::PartialPivLU<Eigen::MatrixXd>& lu,
                        const Checker& checker, SolveResult& res) {
  res.x = lu.solve(sys.b);
  Eigen::MatrixXd r;
  const Assessment a = checker.assess(res.x, r);
  res.backward_error = a.backward_error;
  res.converged = a.all_done;
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

SolveResult solve(const LinearSystem& sys, const SolveOptions& options) {
  const auto t_start = Clock::now();
  check_system(sys);
  detail::check_solve_options(options);
  // The one switch between the backends; cuda::solve times its own phases.
  if (resolve_backend(options.backend) == Backend::cuda) return cuda::solve(sys, options);
  if (!available(options.variant, Backend::cpu))
    throw Unavailable("variant " + std::string(to_string(options.variant)) +
                      " has no implementation on the cpu backend");

  SolveResult res;
  res.backend = Backend::cpu;
  const Checker checker(sys.A, sys.b);

  FactorAttempt t = try_factorize(sys.A, options.variant, options.block_size, options.gemm);
  const auto t_factored = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  res.resolved_variant = t.f.resolved_variant;

  if (t.zero_pivot >= 0) {
    // Exactly singular, or singular only to FP32 precision: the FP64 LU decides.
    Eigen::PartialPivLU<Eigen::MatrixXd> lu(sys.A);
    const int zero64 = first_zero_pivot(lu);
    if (zero64 >= 0) throw InvalidInput(zero_pivot_message(zero64));
    const std::string why = "the FP32 LU hit a zero pivot in column " + std::to_string(t.zero_pivot + 1) +
                            " (singular to FP32 precision)";
    if (options.fallback) {
      fill_fp64_solution(sys, lu, checker, res);
      res.fallback_used = true;
      res.note = why + "; FP64 LU fallback used";
    } else {
      res.x = Eigen::MatrixXd::Zero(sys.A.rows(), sys.b.cols());
      Eigen::MatrixXd r;
      res.backward_error = checker.assess(res.x, r).backward_error;
      res.note = why + "; no fallback: x = 0";
    }
    res.history.push_back(res.backward_error);
  } else {
    const LuFactorization& f = t.f;
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
      const std::string why = res.note;
      Eigen::PartialPivLU<Eigen::MatrixXd> lu(sys.A);
      fill_fp64_solution(sys, lu, checker, res);
      res.fallback_used = true;
      res.note = why + "; FP64 LU fallback used";
    }
  }
  res.forward_error = forward_error(sys, res.x);
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
  const int zero = first_zero_pivot(lu);
  if (zero >= 0) throw InvalidInput(zero_pivot_message(zero));
  const Checker checker(sys.A, sys.b);
  fill_fp64_solution(sys, lu, checker, res);
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

std::string hdf5_library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace tcsolve
