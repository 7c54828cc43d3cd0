// The distributed solver (issue 33): A x = b with A and b in ScaLAPACK's 2D block-cyclic layout
// (block_cyclic.hpp) on a P x Q grid of the ranks of an mpi() DeviceGroup of host members
// (group.hpp), or on a 1 x Q grid of GPU members (a gpus() group in one process, or an
// mpi(Memory::device) group: "GPU members" below). Every rank calls with its local pieces. It tells the
// single-process solve's story (solver.cpp) with the same shared rules, and reports the same way:
//
//   1. equilibration: R and C of the exact power-of-two equilibration A_s = R A C from the
//      distributed A (row maxima, then the column maxima of R A, each a maximum over the ranks:
//      exact, so bitwise the single process' R and C and hence its A_s), always, as on one
//      process; the refinement runs against the original A;
//   2. blocked right-looking LU with partial pivoting in FP32 of the local pieces of A_s, nb =
//      the descriptor's MB = NB: per column of the panel (the process column that holds it) the
//      pivot search is a reduction over that process column (max |a|, ties to the lowest global
//      row, as isamax takes the first), the pivot row and the row it replaces are broadcast in it
//      and the column is eliminated; then the panel's interchanges go to every rank (with the
//      panel, broadcast along the process rows) and are applied to the rest of the rows (the L of
//      earlier panels and the columns to the right) across the process rows; U12 = L11^-1 A12 in
//      the process row of the diagonal block, broadcast along the process columns; the trailing
//      update A22 -= L21 U12 on every rank through tcsolve::gemm(Where(), variant), the only
//      place the variant enters. Its pivots and factors are bitwise the single-process LU's;
//   3. iterative refinement against the original FP64 A (left untouched), the residual r = b - A x
//      in FP64 by the distributed product, until LAPACK dsgesv's criterion
//      ||r||_inf <= sqrt(n) ||x||_inf ||A||_inf eps64 holds, at most max_iterations, with the
//      single-process solve's stagnation rule, best-iterate choice and switching rule (one
//      implementation: refinement_rules.hpp): refine classical (corrections by the distributed
//      FP32 triangular solves), gmres (GMRES-IR in FP64, the FP32 LU as preconditioner, the
//      same cycle and inner tolerance) and auto (classical, switching to GMRES-IR);
//   4. the FP64 fallback (SolveOptions::fallback): when refinement does not converge, or the
//      FP32 LU meets an exact zero pivot, the same distributed LU in FP64 of A_s (the trailing
//      update an FP64 product; A_s's FP64 piece, kept for it, and its factors each take as much
//      memory as A's piece), x the better of its solution and the best iterate
//      (detail::take_fallback), SolveResult::fallback_used;
//   5. the condition estimate (SolveOptions::condition_estimate): condition.hpp's Hager/Higham
//      estimator of cond_1(A) with solves by the distributed factors, (L U)^-1 P and
//      P^T (L U)^-T, and its resolution check by the distributed product; where the FP32
//      factors do not resolve A^-1, from the FP64 LU; cond_1(A_s) where the single process
//      estimates it; then the same warnings and notes (detail::finish_result);
//   SolveOptions::fp64_below (variant auto, small n) runs the FP64 LU refined in FP64, as on one
//   process (the cpu default, 0: never).
// The vectors (b, x, r, d, GMRES's basis, the estimator's vectors) are held whole on every rank
// and are bitwise the same there (diagonal blocks solved by their owner and broadcast, sums over
// ranks in rank order), so every rank takes the same decisions and returns the same result.
//
// SolveOptions::interrupt is read before each refinement step on every rank and agreed (one
// rank's flag stops all of them: Agreed<Interrupted>), progress("refinement", ...) is called
// there on every rank; neither is looked at inside the LU or GMRES's inner steps yet.
//
// GPU members (cuda/distributed_lu_cuda.hpp, distributed/device_piece.hpp; docs/several-gpus.md):
// the same story with each member's columns on its GPU, the one-GPU LU's panel on the block's
// owner, the panel and its interchanges broadcast over NCCL, the updates through cuda::gemm,
// look-ahead; the residual and the triangular sweeps on the GPUs (the vectors whole on every
// member, the same bits there). 1 x Q grids only (P > 1: Unavailable); the FP64 LU there too
// (cuda/distributed_lu64_cuda.hpp: the fallback, fp64_below, the FP64 condition estimate);
// pivoting beam without modifications; threads and processes give the same x bitwise.
//
// Not yet (later steps of issue 33): look-ahead in the cpu ranks' LU, rbt pivoting
// (refused: Unavailable), the interrupt flag and progress inside the LU, the prescaling of a system
// near FP64's underflow (prescale.hpp: the single process solves such a system as its scaled
// copy), and the check for rows or columns equal up to sign and a power of two before an FP64
// LU (input_checks.hpp, exact_singularity: it needs the whole A; an exact zero pivot is still
// reported).
//
// Errors end every rank the same way (runtime::agreed; thrown as runtime::Agreed<E>): a bad
// descriptor on any rank, a grid whose P x Q differs from the ranks, a non-finite entry, an
// exactly singular A (an exact zero pivot of the FP32 LU and then of the FP64 LU: InvalidInput
// "matrix is exactly singular: zero pivot in column j", as the single-process solve).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
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
  /// GPU members: A points to the member's device memory (else the host's); B is on the host.
  bool a_on_device = false;
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

/// The FP32 LU of the distributed A as it is (rounded from FP64; no equilibration: give it R A C
/// from distributed_equilibrate for the solve's factors), every rank of `comm` (rank r the grid's
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
/// pivoting partial or auto (rbt: Unavailable); every refinement, the fallback and the condition
/// estimate as on one process. SolveResult::x is the whole solution n x nrhs on every rank
/// (scatter() gives the local piece of B's layout); the same result on every rank.
SolveResult solve(const DistributedSystem& system, const SolveOptions& options, runtime::DeviceGroup& group);

/// The same for a system every rank holds whole (solve(sys, options, Where(group)) with an mpi()
/// group of host members): each rank takes its pieces of sys on a 1 x size() grid, or on
/// `grid`, in blocks of options.block_size (0: kDefaultBlockSizeCpu); x_true, when known, gives
/// the forward error.
SolveResult solve_on_ranks(const LinearSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group,
                           const Grid* grid = nullptr);

/// The random-mode system `tcsolve generate --n n --seed seed` writes (generate.hpp, by blocks:
/// A and x_true ~ U(-1, 1), b = A x_true) made on the GPU members themselves, each its columns of
/// A and all of b, with the generator's bits, and solved there on a 1 x size() grid (or `grid`):
/// systems beyond a host's memory or a disk. x_true gives the forward error. A gpus() group (one
/// call) or an mpi(Memory::device) group (every rank calls); host members: Unavailable.
SolveResult solve_generated(int n, std::uint64_t seed, const SolveOptions& options, runtime::DeviceGroup& group,
                            const Grid* grid = nullptr);

/// The multi-GPU baseline on the same system: cuSOLVER's cusolverMg getrf + getrs (FP64, 1 x G
/// column block-cyclic over `devices`, tile `tile`, as NVIDIA's samples use it), the system made
/// on the GPUs as solve_generated does. time_s: factorization = getrf, refinement = getrs, total
/// both (every GPU synchronized); backward_error (b - A x with A made again), forward_error
/// against x_true, converged = dsgesv's criterion. Unavailable where libcusolverMg cannot be
/// opened (it is loaded at run time) or without CUDA; InvalidInput when a GPU lacks the memory.
SolveResult solve_generated_cusolvermg(int n, std::uint64_t seed, const std::vector<int>& devices, int tile = 256);

}  // namespace tcsolve
