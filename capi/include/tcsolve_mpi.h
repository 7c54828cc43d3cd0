/** \file tcsolve_mpi.h
 * tcsolve's distributed C API (docs/architecture.md, "C API"; issue 33): the solve of tcsolveDgesv
 * on the ranks of an MPI communicator, with ScaLAPACK pdgesv's arguments, so that a ScaLAPACK
 * program switches by changing one call. tcsolve.h itself stays MPI-free; this header is
 * installed, and implemented in libtcsolve, only in a build with MPI.
 *
 * \code{.c}
 *   MPI_Init(&argc, &argv);                       the caller's; tcsolve never finalizes MPI
 *   tcsolveHandle_t h;
 *   tcsolveCreateDistributed(&h, TCSOLVE_BACKEND_CPU, MPI_COMM_WORLD, 2, 2);
 *   int desca[9] = {1, ctxt, n, n, nb, nb, 0, 0, lld_a}, descb[9] = {1, ctxt, n, 1, nb, nb, 0, 0, lld_b};
 *   tcsolvePdgesv(h, NULL, n, 1, A_local, 1, 1, desca, B_local, 1, 1, descb, &info);
 *   tcsolveDestroy(h);                            before MPI_Finalize
 * \endcode
 *
 * cpu ranks (host pointers) or GPU ranks (TCSOLVE_BACKEND_CUDA: one GPU per rank, the node-local
 * rank's, NCCL between them; A and B host or device pointers; GPU members factor whole columns,
 * so on a P x Q grid with P > 1 the pieces of A first move to the 1 x PQ grid of the same ranks,
 * over MPI and through the host: the note says so; the FP64 LU of the fallback, fp64_below and
 * the FP64 condition estimate as on cpu ranks). For now ia = ja = ib = jb
 * = 1, the whole global A and B (M_ = N_ = n for A; M_ = n, N_ = nrhs for B), RSRC_ = CSRC_ = 0,
 * MB_ = NB_; partial pivoting. */
#ifndef TCSOLVE_MPI_H
#define TCSOLVE_MPI_H

#include <mpi.h>

#include "tcsolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A handle over comm's ranks as an nprow x npcol grid, row-major rank order (BLACS's default:
 * rank r is process (r / npcol, r mod npcol)). A collective over comm: every rank calls it.
 * MPI must be initialized by the caller (MPI_Initialized); the handle works on a duplicate of
 * comm (MPI_Comm_dup), freed by tcsolveDestroy (call it before MPI_Finalize). backend: CPU
 * (AUTO means CPU here) or CUDA (every rank takes the GPU of its node-local rank modulo the
 * node's GPUs; a rank without one: NOT_SUPPORTED on every rank, naming it). nprow * npcol must equal
 * comm's size (else INVALID_VALUE naming both). On failure *handle is NULL and the message is
 * kept for tcsolveGetLastErrorMessage(NULL). The handle also serves the calls of tcsolve.h
 * (tcsolveDgesv on this rank alone, ...). */
tcsolveStatus_t tcsolveCreateDistributed(tcsolveHandle_t* handle, tcsolveBackend_t backend, MPI_Comm comm,
                                         int nprow, int npcol);

/** ScaLAPACK pdgesv's arguments: desc = {DTYPE_ = 1, CTXT_ (carried, ignored), M_, N_, MB_, NB_,
 * RSRC_, CSRC_, LLD_}; A (LLD_A x local columns) and B (LLD_B x local columns) this rank's
 * local column-major pieces in the 2D block-cyclic layout of the handle's grid (host memory; on
 * a CUDA handle host or the rank's device memory).
 * A collective: every rank of the handle calls it. A is left untouched (unlike pdgesv: the
 * refinement needs it); B is overwritten by this rank's piece of X. ia, ja, ib, jb are 1-based
 * (only 1 for now). Errors are agreed across the ranks: every rank returns the same status with
 * the same message (tcsolveGetLastErrorMessage(h)): INVALID_VALUE for a bad argument or
 * descriptor on any rank (naming it, e.g. "desca: LLD = ..."), an exactly singular A or a
 * non-finite entry (as tcsolveDgesv); NOT_SUPPORTED for options the distributed solver does
 * not have yet (refinement gmres/auto, pivoting rbt); NOT_CONVERGED (B holds the best iterate,
 * info filled) when the refinement fails. params NULL: the defaults (params->block_size must be
 * 0 or NB_; row_major must be 0); info may be NULL. n = 0 or nrhs = 0: quick return. */
tcsolveStatus_t tcsolvePdgesv(tcsolveHandle_t h, const tcsolveSolveParams_t* params, int64_t n, int64_t nrhs,
                              const double* A, int64_t ia, int64_t ja, const int desca[9], double* B, int64_t ib,
                              int64_t jb, const int descb[9], tcsolveSolveInfo_t* info);

#ifdef __cplusplus
}
#endif

#endif /* TCSOLVE_MPI_H */
