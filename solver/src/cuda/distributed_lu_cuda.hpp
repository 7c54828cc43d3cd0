// The distributed LU on GPU members (distributed_lu_cuda.cpp): one member's part of the FP32 LU
// with partial pivoting of A_s on a 1 x Q grid (columns block-cyclic over the members, every
// member all n rows of its columns), over the group's NCCL communicator. Internal to
// tcsolve::solver; host code built with CUDA only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "device_run.hpp"
#include "phase_clock.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/solver/block_cyclic.hpp"

namespace tcsolve::cuda {

/// One member's FP32 factors P A_s = L U: its columns of L and U, ROW-MAJOR (A(r, c) of its
/// local column c at t + r ldt + c), and the permutation (the same on every member).
struct DeviceFactors {
  int n = 0, nb = 0;
  CyclicMap cols;   ///< the columns' block-cyclic map over the Q members
  int member = 0;   ///< this member's process column
  int local = 0;    ///< its local columns
  int ldt = 1;      ///< t's leading dimension (local rounded up to 32)
  DeviceBuffer<float> t;
  DeviceBuffer<int> perm;      ///< perm[i] = the original row at position i (device)
  std::vector<int> perm_host;  ///< the same on the host, after the LU
  /// The inverses of the diagonal blocks this member owns, for the triangular sweeps: per block
  /// X = (L11^-1)^T then Y = (U11^-1)^T, column-major nb x nb each (w x w used), at
  /// inverses + inverse_of(j) 2 nb^2; made on the update stream as soon as the block's panel is
  /// factored (distributed_lu), where that stream waits for the panels anyway.
  DeviceBuffer<float> inverses;
  std::vector<int> inverse_index;  ///< by block (j / nb): its place in `inverses`, or -1
  int zero_pivot = -1;         ///< the first exactly zero pivot's column, or -1 (the same on every member)
  /// Pivoting::beam (set by the caller): each block's pivots searched in its diagonal block's
  /// rows only (no modifications on GPU members yet: an exactly zero pivot is reported as
  /// zero_pivot and the caller pivots), L21 by a TRSM with U11.
  bool beam = false;
  Variant resolved = Variant::fp32_simt;  ///< the first trailing update's
  std::string note;
};

/// Leading dimension of the member's row-major factors for `local` columns.
inline int factors_ld(int local) { return (std::max(local, 1) + 31) / 32 * 32; }

/// The LU of the A_s in f.t (filled by the caller: kernels::piece_columns), every member of
/// `comm` calling with its own f and run (its context). Per block of nb columns: the owner
/// factors the panel (BlockPanel: the one-GPU LU's leaves and joins, its rows moved in the block
/// only) and copies it out; the panel and its composed interchanges are broadcast (NCCL) from
/// the owner; every member moves the rows of its other columns, solves U12 = L11^-1 A12 for its
/// trailing columns (cublasStrsm) and updates A22 -= L21 U12 through cuda::gemm(variant). With
/// look-ahead (CudaLuPlan::lookahead and the context's look-ahead streams): the owner of the
/// next block updates those columns first, on the panel's stream, and factors the next panel
/// there while the rest of the update runs on the update stream (every member's broadcasts go
/// on the panel's stream, so a member waits for the next panel beside its update). Phases on
/// `clock` (the panel's stream): "bcast" (includes waiting for the owner's panel), "swap",
/// "update_next", "panel", "copy"; the update stream's "swap_rest", "update", "inverses". Ends
/// synchronized, with
/// perm_host and zero_pivot (agreed) set.
/// `convert_rest` (may be empty): the caller's conversion of the columns of A_s not yet in f.t
/// (all but this member's first block, which the first panel or update_next reads), enqueued on
/// the update stream before anything else there ("equilibrate_rest"), so that it runs beside
/// the first panel, as the one-GPU LU's does (blocked_lu.cpp).
void distributed_lu(DeviceRun& run, runtime::Communicator& comm, DeviceFactors& f, Variant variant,
                    PhaseClock& clock, const std::function<void(CUstream_st*)>& convert_rest = {});

}  // namespace tcsolve::cuda
