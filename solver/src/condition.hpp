// Internal to tcsolve::solver: A^-1 and A^-T through the factors of the equilibrated matrix, and
// the 1-norm condition estimate from them, shared by the cpu path (cpu/) and the cuda path
// (cuda/). Host code; the backends supply only the solves with A_s = R A C.
//
//   EquilibratedInverse  A^-1 = C A_s^-1 R and A^-T = R A_s^-T C with R, C the powers of two of
//                        the equilibration, applied in exponent arithmetic (ldexp by the sum of
//                        the integer exponents: one rounding, no intermediate overflow or
//                        underflow), the vector handed to the A_s solve scaled to ||w||_inf in
//                        [1/2, 1) (what an FP32 solve needs). The FP64 fallback solves with it too.
//   estimate_norm1       Hager (1984) / Higham (1988, ACM TOMS 14, Alg. 4.1), as LAPACK's dlacn2:
//                        a lower bound of ||B||_1 from products with B and B^T, at most 5
//                        iterations, and the alternative estimate with x_i = (-1)^i (1 + i/(n-1)).
//   estimate_condition   cond_1(A) ~= ||A||_1 est(||A^-1||_1), and whether the factors resolve
//                        A^-1 in the estimate's direction (below).
//   estimate_condition_equilibrated
//                        the same for A_s = R A C, the equilibrated matrix the solver factors:
//                        asked for when cond_1(A) looks too large to trust x and the scalings are
//                        not uniform (needs_equilibrated_estimate), as LAPACK's xGESVX reports
//                        the condition of the equilibrated matrix. A system with rows scaled
//                        1e-300..1e300 has cond_1(A) = inf but an easy A_s.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <optional>
#include <vector>

#include "scaled_norm.hpp"

namespace tcsolve::detail {

/// Y := M Y for an n x n operator M on the columns of a host matrix Y (n x k, k >= 1, FP64): one
/// call for several columns, so that a backend solves them in one pass over its factors.
using VectorMap = std::function<void(Eigen::MatrixXd&)>;

/// A^-1 and A^-T of A = R^-1 A_s C^-1 from solves with A_s.
class EquilibratedInverse {
 public:
  /// row_scale, col_scale: R and C (powers of two, n each); solve: W := A_s^-1 W, solve_transpose:
  /// W := A_s^-T W, each called with every column's ||w||_inf in [1/2, 1) (or w = 0, or not finite).
  EquilibratedInverse(const Eigen::VectorXd& row_scale, const Eigen::VectorXd& col_scale, VectorMap solve,
                      VectorMap solve_transpose);

  int n() const { return static_cast<int>(row_exp_.size()); }

  /// V := 2^shift A^-1 V = 2^shift C A_s^-1 R V, column by column scaled on the way in and out.
  void apply(Eigen::MatrixXd& v, int shift = 0) const;
  /// V := 2^shift A^-T V = 2^shift R A_s^-T C V.
  void apply_transpose(Eigen::MatrixXd& v, int shift = 0) const;

  /// Whether R or C is not a multiple of the identity (then cond_1(A_s) may differ from cond_1(A)).
  bool nonuniform() const;
  /// A_s^-1 itself: the same solves without R and C.
  EquilibratedInverse equilibrated() const;
  /// Y := A_s Y = R A C Y from `times_a` (Y := A Y), the scalings in exponent arithmetic (an
  /// overflow shows as a non-finite product).
  VectorMap equilibrated_product(VectorMap times_a) const;
  /// ||A_s||_1 = max_j c_j sum_i r_i |a_ij| of the host A (n x n).
  ScaledNorm equilibrated_norm1(const Eigen::MatrixXd& A) const;

 private:
  std::vector<int> row_exp_, col_exp_;  ///< log2 of R and C
  VectorMap solve_, solve_transpose_;
};

/// What estimate_norm1 found: estimate = ||B v||_1 / ||v||_1 <= ||B||_1.
struct Norm1Estimate {
  double estimate = 0;  ///< not finite when a product was not
  Eigen::VectorXd v;    ///< the vector that attains it (e/n, e_j or the alternative vector)
  Eigen::VectorXd bv;   ///< B v
  int products = 0;     ///< calls of B and of B^T (the first holds two columns)
};

/// ||B||_1 of an n x n operator (n >= 1) by Hager's method as LAPACK's dlacn2 runs it: x = B e/n;
/// then, up to 5 times, xi = sign(x), z = B^T xi, j = argmax |z_j|, x = B e_j, stopping when the
/// sign vector repeats, the estimate does not grow, or z_j does not exceed z at the previous j;
/// and the alternative x = B (-1)^i (1 + i/(n-1)), worth 2 ||x||_1 / (3n), which depends on
/// nothing else and so shares the first call with e/n (two columns, one pass over the factors).
/// Typically 4 calls (3 with B, 1 with B^T) to 5, at most 10. The estimate is the largest
/// ||B v||_1 / ||v||_1 seen.
Norm1Estimate estimate_norm1(int n, const VectorMap& times_b, const VectorMap& times_bt);

/// How many refinement steps the resolution check may take, and the contraction it needs.
inline constexpr int kResolutionSteps = 2;
inline constexpr double kResolutionContraction = 0.5;

struct ConditionEstimate {
  double estimate = 0;   ///< cond_1(A) estimate (inf when not finite: A singular to the factors' precision)
  bool resolved = true;  ///< false: the factors do not resolve A^-1 (estimate is then a lower bound only)
  int products = 0;      ///< solves with the factors (products with A not counted)
};

/// cond_1(A) ~= ||A||_1 est(||A^-1||_1) with the estimator run on B = 2^e A^-1, e the frexp
/// exponent of ||A||_1 (so that ||B||_1 ~ cond_1(A) stays in range even for A near 1e-310 or
/// 1e306, where ||A^-1|| itself would overflow or underflow).
///
/// times_a (y := A y in FP64 with the original A; empty: no check): the resolution check for
/// factors of lower precision (the FP32 LU). Such factors are the exact LU of A_s + E, ||E|| ~
/// u32 ||A_s||, and the estimate is that of A_s + E: once cond(A) u32 approaches 1 it saturates
/// near 1/u32 however singular A is. The check refines the estimator's final x = B v (x_0) by
/// classical refinement in FP64: d_k = B (v - B^-1 x_{k-1}), x_k = x_{k-1} + d_k. With F = I -
/// B_approx B^-1, B v = sum_k F^k x_0, d_k ~ F^k x_0: the corrections contract by q_k =
/// ||d_k||_1 / ||d_{k-1}||_1 (d_0 = x_0). The first k <= kResolutionSteps with q_k <=
/// kResolutionContraction resolves it: the remaining terms sum to at most ||d_k|| q_k / (1 -
/// q_k) <= ||d_k|| <= 2^-k ||x_0||, and the estimate becomes ||x_k||_1 / ||v||_1. Otherwise
/// resolved = false: along the direction that dominates A^-1 the factors are no better than a
/// guess (an exactly singular A gives q_k ~ 1: each step adds about x_0 along the null vector).
/// The estimate's products stay in the solves' precision: this is an estimate of cond_1(A), not
/// a bound.
ConditionEstimate estimate_condition(ScaledNorm norm1_a, const EquilibratedInverse& inverse,
                                     const VectorMap& times_a = {});

/// Whether the solve should also estimate cond_1(A_s) (SolveResult::condition_estimate_equilibrated):
/// cond_1(A)'s estimate is at the warning's level (cond eps64 >= kConditionWarning,
/// refinement_rules.hpp) and the equilibration's scalings are not uniform.
bool needs_equilibrated_estimate(const std::optional<double>& cond_a, const EquilibratedInverse& inverse);

/// cond_1(A_s) ~= ||A_s||_1 est(||A_s^-1||_1) of A_s = R A C, as estimate_condition (with the
/// resolution check through times_a, y := A y, when given), the host A giving ||A_s||_1.
ConditionEstimate estimate_condition_equilibrated(const Eigen::MatrixXd& A, const EquilibratedInverse& inverse,
                                                  const VectorMap& times_a = {});

}  // namespace tcsolve::detail
