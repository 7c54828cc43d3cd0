// The random butterfly transform of the rbt pivoting (Parker 1995; Baboulin, Dongarra, Herrmann,
// Tomov, ACM TOMS 39(2), 2013): A_r = U^T A V with U, V recursive butterflies of depth 2, so that
// an LU without pivoting of A_r is safe with high probability. Host code, shared by the paths.
//
// A butterfly of size m (even) is B = (1/sqrt 2) [R0 R1; R0 -R1], R0 and R1 random diagonal
// matrices of m/2 entries exp(u / 10), u uniform in [-1/2, 1/2] (the paper's choice: entries near
// 1, so the transform is well conditioned). Depth 2: W = diag(B_top, B_bot) B with B of size p and
// B_top, B_bot of size p/2, where p is n rounded up to a multiple of 4; the system is padded to p
// with an identity block ([A 0; 0 I], b padded with zeros, so the padding of x is 0). The
// transforms are applied as vectors (O(p) per column), never formed as matrices:
//   W x:     B first, then the halves;   W^T x:  the halves' transposes, then B^T;
//   W^-1 x:  the halves' inverses first; W^-T x: B^-T, then the halves'.
// Each level is exact up to one rounding per entry (a product and a sum), so W^-1 W x = x to
// rounding (tests/test_rbt.cpp).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

namespace tcsolve::detail {

/// Breakdown of the LU without pivoting (both backends): a pivot not above kRbtTinyPivot
/// max|A_r| (relative to FP32's unit roundoff: the step has lost every digit), or factors grown
/// beyond kRbtGrowth max|A_r| (the refinement could not recover what the growth destroyed).
inline constexpr double kRbtTinyPivot = 0x1p-24;
inline constexpr double kRbtGrowth = 0x1p20;

/// rbt's LU works in leaves of this many columns (cuda: leaf_rbt.cu's kernels); with
/// windowed pivoting a column's pivot is searched in the SolveOptions::rbt_window rows from its
/// leaf's first row.
inline constexpr int kRbtLeafWidth = 32;

/// The note's first words for a solve that rbt gave: "rbt: LU of U^T A V with pivoting in
/// windows of W rows", or "rbt: LU without pivoting of U^T A V" (window 0).
std::string rbt_description(int window);

/// The breakdown's reason, as the note gives it: the tiny pivot's 0-based column (>= 0), else
/// the growth max|LU| / max|A_r| when above kRbtGrowth (or not finite); empty when neither.
std::string rbt_breakdown(int tiny_column, double growth);

class RandomButterfly {
 public:
  /// A depth-2 butterfly for systems of size n >= 1, its entries drawn from `seed`.
  RandomButterfly(int n, std::uint64_t seed);

  int n() const { return n_; }
  /// n rounded up to a multiple of 4: the size the transforms act on.
  int padded() const { return p_; }

  /// x = W x, W^T x, W^-1 x, W^-T x for the padded() rows of x (every column).
  void apply(Eigen::MatrixXd& x) const;
  void apply_transpose(Eigen::MatrixXd& x) const;
  void apply_inverse(Eigen::MatrixXd& x) const;
  void apply_inverse_transpose(Eigen::MatrixXd& x) const;

  /// The entries (padded() each): B's R0 then R1 (outer), B_top's then B_bot's (inner), for a
  /// device copy (cuda/butterfly.cu applies the same operations in the same order).
  const std::vector<double>& outer() const { return outer_; }
  const std::vector<double>& inner() const { return inner_; }

 private:
  int n_, p_;
  std::vector<double> outer_;  ///< B (size p): R0 = the first p/2 entries, R1 the last p/2
  std::vector<double> inner_;  ///< B_top (entries 0..p/2) and B_bot (p/2..p), each R0 then R1
};

/// U^T [A 0; 0 I] V for the n x n A (p x p, p = u.padded() = v.padded()).
Eigen::MatrixXd butterfly_transform(const Eigen::MatrixXd& A, const RandomButterfly& u, const RandomButterfly& v);

/// The rows of x padded with zeros to p, or cut back to n (the first n rows).
Eigen::MatrixXd pad_rows(const Eigen::MatrixXd& x, int p);

}  // namespace tcsolve::detail
