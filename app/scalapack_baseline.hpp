// ScaLAPACK's pdgesv (FP64 LU with partial pivoting and the two triangular solves; Debian's
// libscalapack-openmpi) called from `compare` on cpu ranks, as the baseline of the distributed
// solver (issue 33; docs/architecture.md, "Solver": baselines). Only the app calls ScaLAPACK and BLACS:
// the libraries stay free of them. scalapack_baseline.cpp is built with the library and
// TCSOLVE_HAVE_SCALAPACK where CMake found it (app/CMakeLists.txt); else
// scalapack_baseline_stub.cpp says why the baseline is absent.
#pragma once

#include <string>
#include <vector>

#include "tcsolve/solver/block_cyclic.hpp"

namespace tcsolve::app {

/// What one pdgesv call gave this rank.
struct ScalapackSolve {
  std::vector<double> x;  ///< this rank's piece of X, in B's layout (desc_b; desc_b.lld x local columns)
  /// pdgesv's INFO (the same on every rank): 0, or i > 0 when U(i, i) is exactly zero (one-based:
  /// the factorization finished, no solution was computed).
  int info = 0;
  /// Wall clock from an MPI_Barrier before the call to one after it (so the slowest rank's time),
  /// measured on every rank.
  double seconds = 0;
};

/// Whether this build calls ScaLAPACK.
bool have_scalapack();
/// Why it does not (empty when it does): the sentence compare's JSON and table print.
std::string scalapack_absent_reason();

/// pdgesv_ of this rank's pieces of A (desc_a: n x n, MB = NB) and B (desc_b: n x nrhs, MB = A's)
/// on BLACS's row-major P x Q grid over MPI_COMM_WORLD, which is tcsolve's (rank r is process
/// (r / Q, r mod Q)); pdgesv overwrites A with its factors and B with X, so it runs on copies and
/// A and B are left untouched. Every rank of the world calls it, with the descriptors it gives
/// tcsolve's distributed solver (their CTXT replaced by the BLACS context made here). Throws
/// Unavailable without ScaLAPACK, Error when BLACS's grid is not tcsolve's or pdgesv refuses an
/// argument (INFO < 0).
ScalapackSolve scalapack_pdgesv(const Grid& grid, int rank, const Descriptor& desc_a, const double* A,
                                const Descriptor& desc_b, const double* B);

}  // namespace tcsolve::app
