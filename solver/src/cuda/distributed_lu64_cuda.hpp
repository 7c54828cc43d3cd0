// The FP64 LU on GPU members (distributed_lu64_cuda.cpp): the distributed solve's FP64 LU of
// A_s on a 1 x Q grid (the fallback, fp64_below, the condition estimate where the FP32 factors do
// not resolve A^-1), as the cpu ranks' factorize<double> (distributed_lu.cpp): right-looking,
// partial pivoting, no look-ahead (it runs when the FP32 path did not serve). Column-major
// factors (ScaLAPACK's local layout) so that the panel is cuSOLVER dgetrf's; and the triangular
// solves with them. Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <cstddef>
#include <vector>

#include "device_run.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/solver/block_cyclic.hpp"

namespace tcsolve::cuda {

/// One member's FP64 factors P A_s = L U: its columns of L and U (column-major n x local,
/// leading dimension n), and the permutation (the same on every member).
struct DeviceFactors64 {
  int n = 0, nb = 0;
  CyclicMap cols;  ///< the columns' block-cyclic map over the Q members
  int member = 0;  ///< this member's process column
  int local = 0;   ///< its local columns
  DeviceBuffer<double> a;      ///< A_s on entry (the caller fills it: kernels::scaled_piece), L\U after
  std::vector<int> perm_host;  ///< perm[i] = the original row at position i
};

/// Bytes distributed_lu64 allocates on a member with `local` columns of an order-n system with
/// blocks of nb, besides f.a's n x local doubles (the broadcast panel, the pivots, dgetrf's
/// workspace estimate).
std::size_t lu64_workspace_bytes(int n, int nb);

/// The LU of the A_s in f.a, every member of `comm` calling with its own f and run: per block of
/// nb columns the owner factors the panel (rows j..n-1) by cusolverDnDgetrf, NCCL broadcasts the
/// panel and its pivots, every member swaps the rows of its other columns (LAPACK's dlaswp
/// order), solves U12 = L11^-1 A12 (cublasDtrsm) and updates A22 -= L21 U12 (cublasDgemm).
/// Returns the first column whose pivot is exactly zero or not finite, or -1, agreed over the
/// members (the factorization runs to the end either way). Ends synchronized.
int distributed_lu64(DeviceRun& run, runtime::Communicator& comm, DeviceFactors64& f);

/// v := (L U)^-1 v (transpose: (L U)^-T v) for the device vector v (n doubles), the same on every
/// member on entry and on return: per block its owner solves the diagonal block (cublasDtrsv) and
/// updates the rest (cublasDgemv), then broadcasts what changed. The caller applies P (perm_host).
void solve_lu64(DeviceRun& run, runtime::Communicator& comm, const DeviceFactors64& f, double* v, bool transpose);

}  // namespace tcsolve::cuda
