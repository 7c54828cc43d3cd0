// The cpu blocked LU (blocked_lu.cpp): try_factorize(), the equilibration and the FP32 LU that
// reports a zero pivot instead of throwing, and fp32_inverse(), A^-1 and A^-T through its
// factors (the condition estimate). The public lu_factorize(A, ...) and lu_apply() (solver.hpp)
// are defined beside them. Internal to tcsolve::solver.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

#include "../condition.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cpu {

/// The factorization, or the zero-based column of an exact zero pivot of the FP32 LU.
struct FactorAttempt {
  LuFactorization f;
  int zero_pivot = -1;
};

/// Called after each block of the LU with the share of its flops done, 1 - (rest/n)^3 for the
/// rest columns still to factor (the trailing updates dominate; 1 after the last block); it may
/// throw (Interrupted) to stop the LU. Empty: nothing.
using BlockHook = std::function<void(double done)>;

/// Equilibration and the blocked LU of A; throws InvalidInput for a non-square, empty or
/// non-finite A or a block size < 1.
FactorAttempt try_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                            const GemmOptions& gemm_options, const BlockHook& after_block = {});

/// R and C of A_s = R A C (LAPACK dgeequ with powers of two): rows first, then the columns of
/// the row-scaled matrix.
void equilibrate(const Eigen::MatrixXd& A, Eigen::VectorXd& row_scale, Eigen::VectorXd& col_scale);

/// The blocked LU of rbt's A_r in place, trailing updates through tcsolve::gemm(cpu, variant):
/// windowed pivoting (SolveOptions::rbt_window: column k's pivot is the first largest of the
/// rows [k, min(n, k0 + window)), k0 the first column of k's leaf, the leaves kRbtLeafWidth
/// columns from the first of its block of nb), its interchanges in `perm` (the identity on
/// entry); window 0: no pivoting. Returns the zero-based column of the first pivot not above
/// `tiny` in magnitude (or not finite), where it stopped, or -1.
int factorize_rbt_lu(Eigen::MatrixXf& a, std::vector<int>& perm, int window, Variant variant, int nb,
                     const GemmOptions& gemm_options, Variant& resolved, float tiny,
                     const BlockHook& after_block = {});

/// A pivot beam modified: A_s(perm[column], column) changed by delta (P (A_s + E) = L U).
struct BeamModification {
  int column;
  double delta;
};

/// The blocked LU of `a` in place with beam's pivoting (Pivoting::beam): column k's pivot is the
/// first largest of the rows [k, end of k's block of nb) only; a pivot not above the block's
/// threshold -- kBeamThreshold times the largest |entry| of the block's panel (its columns, rows
/// from its first down) when the block starts, `threshold` for a zero panel -- becomes that
/// threshold with its sign (0: +), recorded in `modifications`; the
/// rest as try_factorize's LU (interchanges in perm, the identity on entry; trailing updates
/// through tcsolve::gemm(cpu, variant)). Returns the zero-based column of the first non-finite
/// pivot candidate, where it stopped, or -1.
int factorize_beam_lu(Eigen::MatrixXf& a, std::vector<int>& perm, Variant variant, int nb,
                      const GemmOptions& gemm_options, Variant& resolved, float threshold,
                      std::vector<BeamModification>& modifications, const BlockHook& after_block = {});

/// A^-1, A^-T through the FP32 factors P A_s = L U: A_s^-1 w = U^-1 L^-1 P w and A_s^-T w =
/// P^T L^-T U^-T w, the triangular solves in FP32 (w rounded to FP32 first, as lu_apply does).
detail::EquilibratedInverse fp32_inverse(const LuFactorization& f);

}  // namespace tcsolve::cpu
