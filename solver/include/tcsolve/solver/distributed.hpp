// The distributed solver (issue 33, step 1: cpu ranks over MPI): A x = b with A and b in
// ScaLAPACK's 2D block-cyclic layout (block_cyclic.hpp) on a P x Q grid of the ranks of an mpi()
// DeviceGroup of host members (group.hpp). Every rank calls with its local pieces.
//
//   1. blocked right-looking LU with partial pivoting in FP32 of the local pieces, nb = the
//      descriptor's MB = NB: per column of the panel (the process column that holds it) the pivot
//      search is a reduction over that process column (max |a|, ties to the lowest global row, as
//      isamax takes the first), the pivot row and the row it replaces are broadcast in it and
//      the column is eliminated; then the panel's interchanges go to every rank (with the panel,
//      broadcast along the process rows) and are applied to the rest of the rows (the L of
//      earlier panels and the columns to the right) across the process rows; U12 = L11^-1 A12
//      in the process row of the diagonal block, broadcast along the process columns; the
//      trailing update A22 -= L21 U12 on every rank through tcsolve::gemm(Where(), variant), the
//      only place the variant enters;
//   2. classical iterative refinement against the original FP64 A (left untouched), the
//      residual r = b - A x in FP64, the corrections by the FP32 factors (distributed triangular
//      solves with the vectors replicated on every rank), until LAPACK dsgesv's criterion
//      ||r||_inf <= sqrt(n) ||x||_inf ||A||_inf eps64 holds, at most max_iterations, with the
//      single-process solve's stagnation rule and best-iterate choice (one implementation:
//      refinement_rules.hpp).
//
// Not yet (later steps of issue 33): equilibration (the LU factors A itself, so the pivots are
// those of the single-process LU of an A that its equilibration leaves unchanged, or of R A C),
// GMRES-IR and refine auto, rbt pivoting, the FP64 fallback (a solve that does not converge
// returns converged = false), the condition estimate and its warnings, look-ahead, NCCL and GPU
// members, the interrupt flag and progress. Those options are refused (Unavailable) where
// running without them would change the answer (refinement, pivoting); the fallback and the
// condition estimate are skipped and the note says so.
//
// Errors end every rank the same way (runtime::agreed; thrown as runtime::Agreed<E>): a bad
// descriptor on any rank, a grid whose P x Q differs from the ranks, a non-finite entry, an
// exactly singular A (an exact zero pivot: InvalidInput "matrix is exactly singular: zero pivot
// in column j", as the single-process solve).
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "tcsolve/solver/block_cyclic.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve {

namespace runtime {
class Communicator;
class DeviceGroup;
}  // namespace runtime

/// One rank's part of a distributed system: A (n x n, square blocks MB = NB) and B (n x nrhs,
/// MB = A's MB, any NB) as local column-major pieces with ScaLAPACK descriptors.
struct DistributedSystem {
  Grid grid;
  Descriptor desc_a;
  const double* A = nullptr;  ///< desc_a.lld x (local columns)
  Descriptor desc_b;
  const double* B = nullptr;  ///< desc_b.lld x (local columns)
};

/// The distributed factors P A = L U in T: this rank's local piece of L (unit lower) and U
/// packed as A was, and the interchanges, the same on every rank. T = float: the solver's LU
/// (DistributedLu); T = double: the FP64 fallback's (DistributedLu64).
template <class T>
struct DistributedFactors {
  Grid grid;
  Descriptor desc;          ///< A's, with lld = max(1, local rows)
  std::vector<T> lu;        ///< desc.lld x (local columns), column-major
  /// LAPACK's ipiv, zero-based and global: at step k row k was interchanged with ipiv[k] >= k.
  std::vector<int> ipiv;
  /// What the trailing updates ran (auto resolved); fp64 for the FP64 factors.
  Variant resolved_variant = Variant::fp32_simt;

  /// perm[i] = the original row at position i (LuFactorization::perm's convention).
  std::vector<int> perm() const;
};
extern template struct DistributedFactors<float>;
extern template struct DistributedFactors<double>;
using DistributedLu = DistributedFactors<float>;
using DistributedLu64 = DistributedFactors<double>;

/// The FP32 LU of the distributed A (rounded from FP64), every rank of `comm` (rank r the grid's
/// process (r / Q, r mod Q)) calling. Throws (agreed) InvalidInput for a bad descriptor or
/// grid, non-square blocks or A, a non-finite entry, an exact zero pivot.
DistributedLu distributed_lu_factorize(runtime::Communicator& comm, const Grid& grid, const Descriptor& desc_a,
                                       const double* A, Variant variant, const GemmOptions& gemm = {});

/// R and C of the exact power-of-two equilibration A_s = R A C of the distributed A (n each, the
/// same on every rank): bitwise the single-process LU's LuFactorization::row_scale and col_scale
/// (maxima over the ranks are exact). The distributed solve factors this rank's piece of A_s.
/// Every rank of `comm` calls; the checks are distributed_lu_factorize's.
struct DistributedScaling {
  Eigen::VectorXd row_scale, col_scale;
};
DistributedScaling distributed_equilibrate(runtime::Communicator& comm, const Grid& grid, const Descriptor& desc_a,
                                           const double* A);

/// Solves the distributed system on the ranks of `group` (DeviceGroup::mpi(Memory::host); every
/// rank calls). options.block_size must be 0 or the descriptor's NB (the LU's block size);
/// refinement classical, pivoting partial (else Unavailable). SolveResult::x is the whole
/// solution n x nrhs on every rank (scatter() gives the local piece of B's layout).
SolveResult solve(const DistributedSystem& system, const SolveOptions& options, runtime::DeviceGroup& group);

/// The same for a system every rank holds whole (solve(sys, options, Where(group)) with an mpi()
/// group of host members): each rank takes its pieces of sys on a 1 x size() grid, or on
/// `grid`, in blocks of options.block_size (0: kDefaultBlockSizeCpu); x_true, when known, gives
/// the forward error.
SolveResult solve_on_ranks(const LinearSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group,
                           const Grid* grid = nullptr);

}  // namespace tcsolve
