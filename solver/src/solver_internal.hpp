// Internal to tcsolve::solver: what the cpu path (solver.cpp) and the cuda path
// (cuda/solver_cuda.cpp) share, so that both run one implementation of the input checks, the
// stopping criterion, the stagnation rule and the refinement loop (the rules are stated in
// solver.cpp's file comment). Host code only.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

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

/// "matrix is exactly singular: zero pivot in column <column + 1> (1-based)".
std::string zero_pivot_message(int column);

/// Throws InvalidInput unless A is square and non-empty, b has n rows and >= 1 column, both are
/// finite, and x_true (when present) has b's shape.
void check_system(const LinearSystem& sys);

/// Throws InvalidInput for a block size < 1 or max_iterations < 0.
void check_solve_options(const SolveOptions& options);

/// max over columns of ||x - x_true||_inf / ||x_true||_inf, when x_true is known (the quotient
/// in the frexp form of ScaledNorm: no underflow to 0/0 for a tiny x_true).
std::optional<double> forward_error(const LinearSystem& sys, const Eigen::MatrixXd& x);

/// A certificate of exact singularity that needs no factorization: two rows, or two columns,
/// of A that are equal up to sign and a power of two (a_rj = s 2^k a_ij for all j, s = +-1;
/// rows or columns that are entirely zero are left to the LU's zero pivot). Returns the message
/// of the InvalidInput to throw ("matrix is exactly singular: rows 3 and 7 (1-based) are equal
/// up to sign and a power of two"), or nullopt. Exact: entries are compared by their frexp
/// parts (mantissa, sign, exponent difference), never by a rounded quotient. O(n^2) at most:
/// rows (columns) are grouped by a hash of 64 sampled columns (rows), only groups of two or
/// more are hashed in full, and only equal full hashes are compared entry by entry.
///
/// Why it is needed: the blocked LU does not meet an exact zero pivot for two equal rows. Inside
/// a panel the second row's update a_rj - 1 * u_j is exactly 0, but outside it the row receives
/// A22 - L21 U12, where U12 came from a triangular solve and the product from the GEMM (the
/// variant's rounding and order): the two round differently and leave O(u |a|) instead of 0, so
/// the LU goes on with a tiny pivot, refinement of a consistent b converges (the null-space
/// component of x is invisible to the residual) and the forward error is O(1). Equal columns
/// do not cancel exactly even unblocked ((a / p) p != a in floating point).
std::optional<std::string> exact_singularity(const Eigen::MatrixXd& A);

/// The end of every solve on both paths: the forward error (when x_true is known); a result
/// whose x is not finite is not converged (the note says so, backward_error = inf); and the
/// warnings (solver.cpp's file comment, kConditionWarning, kForwardWarning).
void finish_result(const LinearSystem& sys, SolveResult& res);

// ---------------------------------------------------------------------------------------------
// Overflow- and underflow-safe norms
// ---------------------------------------------------------------------------------------------

/// A non-negative number m 2^e kept as its frexp parts (m in [1/2, 1), or m = 0, or m inf/NaN
/// for a norm that is not finite), so that products and quotients of norms neither overflow
/// nor underflow: ||A|| ||x|| eps64 of a system near 1e306, or of one near 1e-310, is a pair
/// of a moderate mantissa and an integer exponent, and comparisons are exact.
struct ScaledNorm {
  double m = 0;
  int e = 0;
  bool finite() const { return std::isfinite(m); }
  bool zero() const { return m == 0; }
  /// The value as a double (saturates to inf or flushes toward 0 when out of range).
  double value() const { return std::isfinite(m) ? std::ldexp(m, e) : m; }
};

/// v >= 0 (or inf/NaN) in frexp form (exact).
inline ScaledNorm scaled_norm(double v) {
  ScaledNorm s;
  if (!std::isfinite(v)) {
    s.m = std::isnan(v) ? v : std::numeric_limits<double>::infinity();
    return s;
  }
  s.m = std::frexp(std::abs(v), &s.e);
  return s;
}

/// a b (one rounding of the mantissas' product, exponents added exactly).
inline ScaledNorm times(ScaledNorm a, ScaledNorm b) {
  if (!a.finite() || !b.finite()) return scaled_norm(a.m * b.m);
  ScaledNorm p = scaled_norm(a.m * b.m);  // in [1/4, 1): no underflow
  p.e += a.e + b.e;
  return p;
}

/// a + b (the smaller mantissa aligned to the larger exponent: at most one rounding).
inline ScaledNorm plus(ScaledNorm a, ScaledNorm b) {
  if (!a.finite() || !b.finite()) return scaled_norm(a.m + b.m);
  if (a.zero()) return b;
  if (b.zero()) return a;
  const int k = std::max(a.e, b.e);
  ScaledNorm s = scaled_norm(std::ldexp(a.m, a.e - k) + std::ldexp(b.m, b.e - k));  // in [1/2, 2)
  s.e += k;
  return s;
}

/// a <= b, exactly (not finite: false).
inline bool less_equal(ScaledNorm a, ScaledNorm b) {
  if (!a.finite() || !b.finite()) return false;
  if (a.zero()) return true;
  if (b.zero()) return false;
  return a.e != b.e ? a.e < b.e : a.m <= b.m;
}

/// a / b as a double (inf when b is 0 and a is not, or when out of range; 0 / 0 = 0).
inline double quotient(ScaledNorm a, ScaledNorm b) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!a.finite() || !b.finite()) return kInf;
  if (a.zero()) return 0;
  if (b.zero()) return kInf;
  return std::ldexp(a.m / b.m, a.e - b.e);
}

/// ||A||_inf (max row sum of |a_ij|) and ||A||_1 (max column sum) without overflow for entries
/// near DBL_MAX and without losing a matrix of subnormals: summed as they are when the largest
/// |a_ij| lies in [2^-900, 2^900] (a sum of n < 2^100 terms cannot overflow, and the largest
/// row sum, at least max |a_ij|, is far from the subnormals), else summed scaled by 2^-E with
/// 2^E the largest |a_ij| (exact; entries far below it may flush, which changes the largest
/// sum, at least 2^(E-1), by less than n 2^-1074).
ScaledNorm norm_inf(const Eigen::MatrixXd& A);
ScaledNorm norm_1(const Eigen::MatrixXd& A);

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

/// The refinement loop of both paths and both methods (solver.cpp's file comment states the
/// rules). `ops` holds the iterate x and provides
///   Assessment assess()                              r = b - A x and its assessment;
///   std::vector<double> correct(const std::vector<bool>& done)
///                                                    d from the current r, returns ||d_j||_inf;
///   void apply(const std::vector<bool>& done)        x_j += d_j for the columns not done;
///   void keep_best()                                 remember the current x as res.x.
/// Fills res.history, res.backward_error, res.iterations, res.converged and res.note.
template <typename Ops>
void refinement_loop(int max_iterations, Ops& ops, SolveResult& res) {
  Assessment a = ops.assess();
  res.history.push_back(a.backward_error);
  ops.keep_best();
  res.backward_error = a.backward_error;
  std::vector<double> deltas;  // delta_k of every correction
  std::string why;
  while (true) {
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
      why = "diverged: non-finite correction at iteration " + std::to_string(res.iterations + 1);
      break;
    }
    ops.apply(a.done);
    ++res.iterations;
    a = ops.assess();
    res.history.push_back(a.backward_error);
    if (a.backward_error < res.backward_error || a.all_done) {
      ops.keep_best();
      res.backward_error = a.backward_error;
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
  res.note = why;
}

}  // namespace tcsolve::detail
