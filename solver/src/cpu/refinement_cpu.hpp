// The cpu refinement: the host side of detail::refinement_loop (refinement_rules.hpp, shared with
// the cuda path) with x, r, d as Eigen matrices. Checker: r = b - A x in FP64 and its assessment;
// CpuRefinement and refine(): the loop's operations, with the correction supplied by the caller
// (classical: lu_apply; GMRES-IR: gmres() per column). Internal to tcsolve::solver.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cpu {

/// r = b - A x in FP64 and the assessment of x (detail::assess_columns).
class Checker {
 public:
  Checker(const Eigen::MatrixXd& A, const Eigen::MatrixXd& b)
      : A_(A), b_(b), norm_a_(detail::norm_inf(A)), b_norm_(column_norms(b)) {}

  detail::Assessment assess(const Eigen::MatrixXd& x, Eigen::MatrixXd& r) const {
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
  detail::ScaledNorm norm_a_;
  std::vector<double> b_norm_;
};

/// GMRES on M^-1 A d = M^-1 r (left preconditioned by the LU M, FP64 arithmetic, x0 = 0): one
/// cycle of at most `cycle` iterations, stopping when the preconditioned residual norm drops to
/// kGmresTolerance times its initial value (detail::GmresLeastSquares: Givens rotations).
/// Modified Gram-Schmidt run twice. `iterations` receives the inner iterations done;
/// `interrupt` (SolveOptions::interrupt) is polled before each (Interrupted).
/// The preconditioner M^-1 v of GMRES-IR (lu_apply, or rbt_apply).
using Preconditioner = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

Eigen::VectorXd gmres(const Eigen::MatrixXd& A, const Preconditioner& m, const Eigen::VectorXd& r, int cycle,
                      int& iterations, const std::atomic<bool>* interrupt = nullptr);

/// The product A v of gmres_with (the distributed solver's is a sum over the ranks).
using Operator = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

/// gmres with A given as the product `times_a` (the same operations in the same order: gmres is
/// gmres_with [&](v) { return A * v; }).
Eigen::VectorXd gmres_with(const Operator& times_a, const Preconditioner& m, const Eigen::VectorXd& r, int cycle,
                           int& iterations, const std::atomic<bool>* interrupt = nullptr);

/// A correction: d from r (the columns not done are the ones that matter).
using Correction = std::function<Eigen::MatrixXd(const Eigen::MatrixXd& r, const std::vector<bool>& done)>;

/// The host side of detail::refinement_loop: x, r, d as Eigen matrices; `correct` computes d
/// from r; `then` (refine auto: GMRES-IR) replaces it at switch_to_gmres().
class CpuRefinement {
 public:
  CpuRefinement(const Checker& checker, Eigen::MatrixXd x0, SolveResult& res, Correction correct, Correction then)
      : checker_(checker), x_(std::move(x0)), res_(res), correct_(std::move(correct)), then_(std::move(then)) {}

  detail::Assessment assess() { return checker_.assess(x_, r_); }
  std::vector<double> correct(const std::vector<bool>& done) {
    d_ = correct_(r_, done);
    return Checker::column_norms(d_);
  }
  void apply(const std::vector<bool>& done) {
    for (Eigen::Index j = 0; j < x_.cols(); ++j)
      if (!done[static_cast<std::size_t>(j)]) x_.col(j) += d_.col(j);
  }
  void keep_best() { res_.x = x_; }
  void switch_to_gmres() {
    x_ = res_.x;
    correct_ = then_;
  }

 private:
  const Checker& checker_;
  Eigen::MatrixXd x_, r_, d_;
  SolveResult& res_;
  Correction correct_, then_;
};

/// Refines x with `correct`; with `then` (refine auto), switches to it as refinement_loop says.
inline void refine(const SolveOptions& options, const Checker& checker, Eigen::MatrixXd x, SolveResult& res,
                   Correction correct, Correction then = {}) {
  const bool auto_switch = static_cast<bool>(then);
  CpuRefinement ops(checker, std::move(x), res, std::move(correct), std::move(then));
  detail::refinement_loop(options.max_iterations, ops, res, auto_switch, detail::refinement_step_hook(options));
}

}  // namespace tcsolve::cpu
