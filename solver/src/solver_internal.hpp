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

/// "matrix is exactly singular: zero pivot in column <column + 1> (1-based)".
std::string zero_pivot_message(int column);

/// Throws InvalidInput unless A is square and non-empty, b has n rows and >= 1 column, both are
/// finite, and x_true (when present) has b's shape.
void check_system(const LinearSystem& sys);

/// Throws InvalidInput for a block size < 1 or max_iterations < 0.
void check_solve_options(const SolveOptions& options);

/// max over columns of ||x - x_true||_inf / ||x_true||_inf, when x_true is known.
std::optional<double> forward_error(const LinearSystem& sys, const Eigen::MatrixXd& x);

/// Per-column quantities of one iterate against the system.
struct Assessment {
  double backward_error = 0;   ///< max over columns (inf when x is not finite)
  std::vector<bool> done;      ///< the dsgesv criterion holds for column j
  std::vector<double> x_norm;  ///< ||x_j||_inf
  bool all_done = false;
};

/// The backward error and dsgesv's criterion per column from the norms of r = b - A x, x and b
/// (each ||.||_inf per column) and ||A||_inf:
///   eta_j = ||r_j|| / (||A|| ||x_j|| + ||b_j||),  done_j = ||r_j|| <= sqrt(n) ||x_j|| ||A|| eps64.
inline Assessment assess_columns(const std::vector<double>& r_norm, const std::vector<double>& x_norm,
                                 const std::vector<double>& b_norm, double norm_a, int n) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double sqrt_n = std::sqrt(static_cast<double>(n));
  Assessment a;
  a.done.resize(x_norm.size());
  a.x_norm = x_norm;
  a.all_done = true;
  for (std::size_t j = 0; j < x_norm.size(); ++j) {
    const double rn = r_norm[j], xn = x_norm[j], bn = b_norm[j];
    const double denominator = norm_a * xn + bn;
    double eta = denominator > 0 ? rn / denominator : (rn == 0 ? 0.0 : kInf);
    if (!std::isfinite(eta)) eta = kInf;
    a.backward_error = std::max(a.backward_error, eta);
    const bool ok = std::isfinite(rn) && std::isfinite(xn) && rn <= sqrt_n * xn * norm_a * kEps64;
    a.done[j] = ok;
    a.all_done = a.all_done && ok;
  }
  return a;
}

/// delta = max over the columns not done of ||d_j|| / ||x_j|| (the relative size of a
/// correction); NaN when some ||d_j|| is not finite.
inline double correction_size(const std::vector<double>& d_norm, const std::vector<double>& x_norm,
                              const std::vector<bool>& done) {
  double delta = 0;
  for (std::size_t j = 0; j < d_norm.size(); ++j) {
    if (done[j]) continue;
    const double xn = x_norm[j], dn = d_norm[j];
    delta = std::max(delta, xn > 0 ? dn / xn : (dn == 0 ? 0.0 : std::numeric_limits<double>::infinity()));
    if (!std::isfinite(dn)) delta = std::numeric_limits<double>::quiet_NaN();
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
