// The refinement's rules, shared by the cpu path (cpu/) and the cuda path (cuda/), so that both
// run one implementation of the stopping criterion, the stagnation rule, the refinement loop, the
// fallback's keep-the-better rule and the end of a solve. Host code only.
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
// is the iterate with the smallest backward error (the history shows every one). The norms and
// both tests are evaluated in frexp form (scaled_norm.hpp, ScaledNorm), so that neither overflow
// (||x|| ||A|| near 1e306 makes the bound inf, which every ||r|| would meet) nor underflow (near
// 1e-310 the bound flushes to 0) decides them.
//
// After refinement (both paths; solver.cpp's file comment gives the order):
//   fallback   when refinement did not converge (options.fallback): the FP64 LU of the
//              equilibrated A_s = R A C, y = A_s^-1 (R b), x = C y, the scalings in exponent
//              arithmetic (condition.hpp, EquilibratedInverse): a system near 1e-310, whose
//              unscaled FP64 LU divides by subnormal pivots and returns NaN, is solved as its
//              scaled copy. x is the fallback's solution when it meets dsgesv's criterion or
//              has the smaller backward error, else the best iterate stays (the note says so;
//              take_fallback).
//   finish     a non-finite x is never "converged" (note); the forward error; the warnings:
//              cond_1(A) eps64 >= kConditionWarning (1e-3: a converged solution's forward error
//              bound cond eps64 leaves fewer than 3 digits) unless the equilibrated A_s = R A C
//              is below it (a badly scaled A: the note says so, condition.hpp), and with x_true a forward error >
//              kForwardWarning while refinement converged, naming ill-conditioning (with the
//              estimate; "does not explain it" when the estimate bounds the forward error by
//              n cond_1 max(eta, eps64), 10 times below it) and a column-major file read as
//              row-major (A transposed) (finish_result).
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "scaled_norm.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve::detail {

inline constexpr double kEps64 = 0x1p-53;    ///< LAPACK dlamch('E'): unit roundoff of FP64
inline constexpr int kStagnationWindow = 3;  ///< stop when delta_k > kStagnationFactor delta_{k-3}
inline constexpr double kStagnationFactor = 0.5;
inline constexpr int kGmresCycle = 100;          ///< GMRES-IR: inner iterations per outer step (at most n)
inline constexpr double kGmresTolerance = 1e-4;  ///< inner stop: ||M^-1 (r - A d)||_2 <= tol ||M^-1 r||_2

/// Warnings (SolveResult::warnings). A solution that meets dsgesv's criterion has a normwise
/// backward error of about eps64, so its relative forward error is bounded by about
/// cond(A) eps64 (Higham, ASNA 2nd ed., Thm 7.2): at cond_1(A) eps64 >= 1e-3 fewer than three
/// digits are guaranteed, and the warning says that the forward error cannot be trusted.
inline constexpr double kConditionWarning = 1e-3;
/// With the system's x known: a forward error above this while refinement converged (small
/// backward error) is named, with its likely causes.
inline constexpr double kForwardWarning = 1e-3;

/// v as printf's "%.2g" (numbers in notes and warnings).
std::string brief(double v);

/// Throws Interrupted when the caller's flag (SolveOptions::interrupt) is set.
inline void check_interrupt(const std::atomic<bool>* interrupt) { tcsolve::check_interrupt(interrupt, "the solve"); }

/// The refinement loop's step hook for `options` (refinement_loop's step): the interrupt check,
/// then SolveOptions::progress("refinement", iterations / max_iterations).
inline std::function<void(int)> refinement_step_hook(const SolveOptions& options) {
  return [&options](int iterations) {
    check_interrupt(options.interrupt);
    if (options.progress && options.max_iterations > 0)
      options.progress("refinement", std::min(1.0, static_cast<double>(iterations) / options.max_iterations));
  };
}

/// max over columns of ||x - x_true||_inf / ||x_true||_inf, when x_true is known (the quotient
/// in the frexp form of ScaledNorm: no underflow to 0/0 for a tiny x_true).
std::optional<double> forward_error(const LinearSystem& sys, const Eigen::MatrixXd& x);

/// SolveOptions::condition_estimate's automatic rule: a classical step that contracts the
/// backward error by less than this factor (from an iterate above kDoubtLevel sqrt(n) eps64, so
/// that the last steps near dsgesv's level do not count) leaves the conditioning in doubt.
inline constexpr double kDoubtContraction = 0.1;
inline constexpr double kDoubtLevel = 16;
/// The automatic rule on every path: U's diagonal spanning more than this (max |u_ii| / min
/// |u_ii|, a lower bound on cond(U)) leaves the conditioning in doubt. Partial pivoting's U of a
/// U(-1,1) matrix spans 36-86 at n = 1024..4096 (LAPACK sgetrf, four seeds each); two rows equal
/// up to a power of two leave a pivot at FP32's roundoff (or exactly zero), which spans 1e6 and
/// more, and which only the estimate's FP64 LU and its search for equal rows then report as
/// exactly singular.
inline constexpr double kDoubtPivotSpan = 0x1p20;

/// max |d_i| / min |d_i| of an LU's diagonal d (pivot_span of decide_condition_estimate): inf when
/// a pivot is zero or not finite, 1 for an empty one.
template <class Diagonal>
double pivot_span(const Diagonal& d) {
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (Eigen::Index i = 0; i < d.size(); ++i) {
    const double v = std::abs(static_cast<double>(d[i]));
    if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
    low = std::min(low, v);
    high = std::max(high, v);
  }
  if (d.size() == 0) return 1;
  return low > 0 ? high / low : std::numeric_limits<double>::infinity();
}

/// detail::exact_singularity of the system's host A (input_checks.hpp), or empty where A is in
/// device memory only.
using SingularitySearch = std::function<std::optional<std::string>()>;

/// Whether the condition estimate runs after a solve's refinement (SolveOptions::
/// condition_estimate; solver.hpp's ConditionEstimate gives the rules), with why written to
/// res.condition_estimate_reason. Reads res's converged, fallback_used, gmres_from,
/// modifications, fp64_lu and history; n is the order; span the LU's pivot_span (of the FP64 LU
/// on its path; NaN where the diagonal is not gathered: then it estimates), asked for only when
/// the automatic rule gets that far (the overload with a function: a device read, a collective
/// of the distributed solve). Unless the mode is never, `search` runs first (when given) and an exactly singular
/// A throws InvalidInput with its message: two rows or columns equal up to sign and a power of
/// two, which the blocked LUs meet as a tiny pivot, not a zero, and which refinement of a
/// consistent b then "solves" (input_checks.hpp); the estimate's FP64 LU used to be the only
/// place that looked. Without a search (A in device memory only) automatic estimates, as its FP64
/// LU then searches. Every path (cpu, cuda, distributed, the factorization's solves) asks this
/// one function.
bool decide_condition_estimate(const SolveOptions& options, SolveResult& res, std::int64_t n, double span,
                               const SingularitySearch& search);
bool decide_condition_estimate(const SolveOptions& options, SolveResult& res, std::int64_t n,
                               const std::function<double()>& span, const SingularitySearch& search);

/// The end of every solve on both paths: the forward error (when x_true is known); a result
/// whose x is not finite is not converged (the note says so, backward_error = inf); and the
/// warnings (this file's opening comment, kConditionWarning, kForwardWarning).
void finish_result(const LinearSystem& sys, SolveResult& res);

/// Per-column quantities of one iterate against the system.
struct Assessment {
  double backward_error = 0;   ///< max over columns (inf when x is not finite)
  std::vector<bool> done;      ///< the dsgesv criterion holds for column j
  std::vector<double> x_norm;  ///< ||x_j||_inf
  bool all_done = false;
};

/// The backward error and dsgesv's criterion per column from the norms of r = b - A x, x and b
/// (each ||.||_inf per column, exact: maxima of |entries|) and ||A||_inf:
///   eta_j = ||r_j|| / (||A|| ||x_j|| + ||b_j||),  done_j = ||r_j|| <= sqrt(n) ||x_j|| ||A|| eps64,
/// both evaluated on the frexp forms (ScaledNorm): the right-hand side sqrt(n) ||x|| ||A||
/// eps64 is the product of the mantissas (in [2^-2 sqrt(n) 2^-53, sqrt(n) 2^-53): no
/// underflow) times 2 to the sum of the exponents, compared with ||r|| exponent first; eta is
/// the quotient of the mantissas scaled by the difference of the exponents. So the test holds
/// only when it holds mathematically: it never becomes true through an overflow to inf (a
/// system near 1e306), nor false through an underflow to 0 (near 1e-310), and eta of a tiny
/// system is not 0 / 0. A column with ||r_j|| or ||x_j|| not finite (or ||A|| not finite) is
/// not done and has eta = inf. ||r_j|| = 0 is done.
inline Assessment assess_columns(const std::vector<double>& r_norm, const std::vector<double>& x_norm,
                                 const std::vector<double>& b_norm, ScaledNorm norm_a, int n) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double sqrt_n_eps = std::sqrt(static_cast<double>(n)) * kEps64;  // a normal number
  Assessment a;
  a.done.resize(x_norm.size());
  a.x_norm = x_norm;
  a.all_done = true;
  for (std::size_t j = 0; j < x_norm.size(); ++j) {
    const double rn = r_norm[j], xn = x_norm[j], bn = b_norm[j];
    double eta = kInf;
    bool ok = false;
    if (std::isfinite(rn) && std::isfinite(xn) && norm_a.finite()) {
      const ScaledNorm r = scaled_norm(rn), x = scaled_norm(xn), b = scaled_norm(bn);
      const ScaledNorm ax = times(norm_a, x);
      const ScaledNorm denominator = plus(ax, b);
      eta = denominator.zero() ? (r.zero() ? 0.0 : kInf) : quotient(r, denominator);
      if (!std::isfinite(eta)) eta = kInf;
      ok = r.zero() || less_equal(r, times(ax, scaled_norm(sqrt_n_eps)));
    }
    a.backward_error = std::max(a.backward_error, eta);
    a.done[j] = ok;
    a.all_done = a.all_done && ok;
  }
  return a;
}

/// Whether the assessment `a` of the FP64 fallback's x beats the result so far (the fallback's
/// rule on both paths): dsgesv's criterion first, then the smaller backward error.
inline bool better(const Assessment& a, const SolveResult& res) {
  if (a.all_done != res.converged) return a.all_done;
  return a.backward_error < res.backward_error;
}

/// After the FP64 fallback has run with assessment `a`: when its x is better(), keep() adopts it
/// as the result's x and the result takes its backward error and convergence; the note says
/// which x was kept either way (both paths).
template <typename Keep>
void take_fallback(const Assessment& a, SolveResult& res, Keep keep) {
  res.fallback_used = true;
  if (better(a, res)) {
    keep();
    res.backward_error = a.backward_error;
    res.converged = a.all_done;
    res.note += "; FP64 LU fallback used";
  } else {
    res.note += "; FP64 LU fallback ran, but its x (backward error " + brief(a.backward_error) +
                ") was no better: the best iterate kept";
  }
}

/// delta = max over the columns not done of ||d_j|| / ||x_j|| (the relative size of a
/// correction; the quotient in frexp form); NaN when some ||d_j|| is not finite.
inline double correction_size(const std::vector<double>& d_norm, const std::vector<double>& x_norm,
                              const std::vector<bool>& done) {
  double delta = 0;
  for (std::size_t j = 0; j < d_norm.size(); ++j) {
    if (done[j]) continue;
    if (!std::isfinite(d_norm[j])) return std::numeric_limits<double>::quiet_NaN();
    delta = std::max(delta, quotient(scaled_norm(d_norm[j]), scaled_norm(x_norm[j])));
  }
  return delta;
}

/// GMRES-IR's correction d for the columns of r not yet done (zero for the done ones): d(:, j) =
/// column(r(:, j), inner) with `column` one GMRES cycle on that column, its inner iterations added
/// to inner_total. The cpu solve and the distributed one differ only in the cycle they pass.
template <class Column>
Eigen::MatrixXd gmres_corrections(const Eigen::MatrixXd& r, const std::vector<bool>& done, Column&& column,
                                  long& inner_total) {
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(r.rows(), r.cols());
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    if (done[static_cast<std::size_t>(j)]) continue;
    int inner = 0;
    d.col(j) = column(Eigen::VectorXd(r.col(j)), inner);
    inner_total += inner;
  }
  return d;
}

/// The host side of one GMRES cycle (Saad & Schultz 1986), shared by the cpu and the cuda
/// GMRES-IR: the (k+1) x k Hessenberg matrix H of the Arnoldi process, reduced to upper
/// triangular form by Givens rotations as its columns arrive, and the rotated right-hand side
/// g = Q^T (beta e_1), whose last entry |g_k| is the 2-norm of the current GMRES residual
/// (here of the preconditioned system M^-1 A d = M^-1 r, beta = ||M^-1 r||_2). The vectors
/// (the Krylov basis V, the products) live with the caller; this holds only O(m^2) numbers.
///
///   GmresLeastSquares ls(m, beta);
///   while (ls.size() < m) {   // Arnoldi step k = ls.size(): w = M^-1 A v_k orthogonalized
///     ...                     // against v_0..v_k, h[i] = <v_i, w>, h_next = ||w||_2
///     if (ls.add_column(h, h_next)) break;
///   }
///   d = V(:, 0..k-1) * ls.solve();   // k = ls.size()
class GmresLeastSquares {
 public:
  /// At most m columns; beta = ||M^-1 r||_2 > 0, finite.
  GmresLeastSquares(int m, double beta)
      : h_(Eigen::MatrixXd::Zero(m + 1, m)), g_(Eigen::VectorXd::Zero(m + 1)), cs_(m), sn_(m), beta_(beta) {
    g_[0] = beta;
  }

  /// Columns added so far (the inner iterations done).
  int size() const { return k_; }

  /// Appends column k = size(): h[0..k] the orthogonalization coefficients of w against
  /// v_0..v_k, h_next = ||w||_2 after it. Applies the earlier rotations to the column, forms the
  /// rotation that zeroes h_next and applies it to g. Returns true when the cycle must stop:
  /// |g_{k+1}| <= kGmresTolerance beta (converged), h_next == 0 (the Krylov space is invariant:
  /// the least-squares solution is exact), or g not finite. The caller stops at m columns too.
  bool add_column(const double* h, double h_next) {
    const int k = k_;
    for (int i = 0; i <= k; ++i) h_(i, k) = h[i];
    h_(k + 1, k) = h_next;
    for (int i = 0; i < k; ++i) {  // earlier rotations on the new column
      const double t = cs_[i] * h_(i, k) + sn_[i] * h_(i + 1, k);
      h_(i + 1, k) = -sn_[i] * h_(i, k) + cs_[i] * h_(i + 1, k);
      h_(i, k) = t;
    }
    const double rho = std::hypot(h_(k, k), h_(k + 1, k));
    cs_[k] = rho > 0 ? h_(k, k) / rho : 1.0;
    sn_[k] = rho > 0 ? h_(k + 1, k) / rho : 0.0;
    h_(k, k) = rho;
    h_(k + 1, k) = 0;
    g_[k + 1] = -sn_[k] * g_[k];
    g_[k] = cs_[k] * g_[k];
    k_ = k + 1;
    return !std::isfinite(g_[k_]) || std::abs(g_[k_]) <= kGmresTolerance * beta_ || h_next == 0;
  }

  /// y (size() entries) minimizing ||beta e_1 - H y||_2: R y = g(0..k-1), R the rotated H.
  Eigen::VectorXd solve() const {
    return h_.topLeftCorner(k_, k_).triangularView<Eigen::Upper>().solve(g_.head(k_));
  }

 private:
  Eigen::MatrixXd h_;  ///< H, rotated in place to R (upper triangular) column by column
  Eigen::VectorXd g_, cs_, sn_;
  double beta_;
  int k_ = 0;
};

/// The refinement loop of both paths and all methods (this file's opening comment states the
/// rules). `ops` holds the iterate x and provides
///   Assessment assess()                              r = b - A x and its assessment;
///   std::vector<double> correct(const std::vector<bool>& done)
///                                                    d from the current r, returns ||d_j||_inf;
///   void apply(const std::vector<bool>& done)        x_j += d_j for the columns not done;
///   void keep_best()                                 remember the current x as res.x;
///   void switch_to_gmres()                           (auto_switch) x = the kept best iterate,
///                                                    and GMRES-IR makes the corrections from now.
/// With auto_switch (refine auto, classical corrections so far): a step whose iterate's backward
/// error exceeds kAutoSwitchFactor times the previous one's, or a non-finite correction, switches
/// once: x goes back to the best iterate, its residual is computed again (not a new history
/// entry), res.gmres_from is the next iteration, and the stagnation window starts afresh.
/// step(iterations), when given, runs before each correction is tested for and made (it may
/// throw Interrupted: refinement_step_hook).
/// Fills res.history, res.backward_error, res.iterations, res.converged, res.gmres_from and res.note.
template <typename Ops>
void refinement_loop(int max_iterations, Ops& ops, SolveResult& res, bool auto_switch = false,
                     const std::function<void(int)>& step = {}) {
  Assessment a = ops.assess();
  res.history.push_back(a.backward_error);
  ops.keep_best();
  res.backward_error = a.backward_error;
  std::vector<double> deltas;  // delta_k of every correction (since the switch)
  std::string why;
  bool switchable = auto_switch;
  std::string switched;  // the note's account of the switch
  auto switch_to_gmres = [&](const char* reason) {
    switchable = false;
    ops.switch_to_gmres();
    res.gmres_from = res.iterations + 1;
    switched = std::string("refine auto: GMRES-IR from iteration ") + std::to_string(res.gmres_from) +
                      " (" + reason + ")";
    a = ops.assess();
    deltas.clear();
  };
  while (true) {
    if (step) step(res.iterations);
    if (a.all_done) {
      res.converged = true;
      why = "converged: dsgesv criterion holds after " + std::to_string(res.iterations) + " iteration(s)";
      break;
    }
    if (res.iterations >= max_iterations) {
      why = "not converged after max_iterations = " + std::to_string(max_iterations);
      break;
    }
    const std::vector<double> d_norm = ops.correct(a.done);
    const double delta = correction_size(d_norm, a.x_norm, a.done);
    if (std::isnan(delta)) {
      if (switchable) {
        switch_to_gmres("a non-finite classical correction");
        continue;
      }
      why = "diverged: non-finite correction at iteration " + std::to_string(res.iterations + 1);
      break;
    }
    ops.apply(a.done);
    ++res.iterations;
    const double previous = a.backward_error;
    a = ops.assess();
    res.history.push_back(a.backward_error);
    if (a.backward_error < res.backward_error || a.all_done) {
      ops.keep_best();
      res.backward_error = a.backward_error;
    }
    if (switchable && !a.all_done && !(a.backward_error <= kAutoSwitchFactor * previous)) {
      if (res.iterations >= max_iterations) {
        why = "not converged after max_iterations = " + std::to_string(max_iterations);
        break;
      }
      switch_to_gmres("a classical step reduced the backward error by less than 10x");
      continue;
    }
    deltas.push_back(delta);
    const std::size_t k = deltas.size() - 1;
    if (!a.all_done && k >= static_cast<std::size_t>(kStagnationWindow) &&
        deltas[k] > kStagnationFactor * deltas[k - kStagnationWindow]) {
      std::ostringstream s;
      s << (deltas[k] > deltas[k - kStagnationWindow] ? "diverging" : "stagnated")
        << ": the correction did not halve over the last " << kStagnationWindow << " steps (iteration "
        << res.iterations << ")";
      why = s.str();
      break;
    }
  }
  res.note = switched.empty() ? why : switched + "; " + why;
}

}  // namespace tcsolve::detail
