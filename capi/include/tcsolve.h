/** \file tcsolve.h
 * tcsolve's C API (docs/architecture.md, "C API"): error-corrected tensor-core SGEMM and the
 * mixed-precision linear solver behind a handle bound to a backend, in C99, like cuBLAS and
 * cuSOLVER. No exception crosses it: every function returns a status, and the handle keeps the
 * message of its last failure (tcsolveGetLastErrorMessage). Matrices are column-major as in BLAS
 * (tcsolveDgesv also takes row-major, C order). On a cpu handle pointers are host memory; on a
 * cuda handle tcsolveSgemm takes device pointers, and tcsolveDgesv, tcsolveKmeans and
 * tcsolveKmeansPlusPlus host or device pointers.
 *
 * \code{.c}
 *   tcsolveHandle_t h;
 *   if (tcsolveCreate(&h, TCSOLVE_BACKEND_AUTO) != TCSOLVE_STATUS_SUCCESS) ...
 *   int v;  tcsolveVariantFromName("ec-fp16", &v);
 *   float one = 1, zero = 0;
 *   tcsolveSgemm(h, v, TCSOLVE_OP_N, TCSOLVE_OP_N, m, n, k, &one, A, m, B, k, &zero, C, m);
 *   tcsolveDestroy(h);
 * \endcode
 *
 * Link with -ltcsolve (pkg-config tcsolve; CMake: find_package(tcsolve), tcsolve::tcsolve). */
#ifndef TCSOLVE_H
#define TCSOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "tcsolve/version.h" /* TCSOLVE_VERSION_MAJOR, _MINOR, _PATCH, TCSOLVE_VERSION_STRING */

#ifdef __cplusplus
extern "C" {
#endif

/** An opaque handle: a backend, its device context and stream, the last error message and the
 * last solve's record (tcsolveCreate, tcsolveDestroy). */
typedef struct tcsolveContext* tcsolveHandle_t;

/** The status every call returns; 0-4 as the CLI's exit codes. */
typedef enum {
  TCSOLVE_STATUS_SUCCESS = 0,        /**< the call did what it was asked */
  TCSOLVE_STATUS_INTERNAL_ERROR = 1, /**< a failure inside the library (the message says what) */
  TCSOLVE_STATUS_INVALID_VALUE = 2, /**< a bad argument (the message names it); nothing touched */
  TCSOLVE_STATUS_NOT_CONVERGED = 3, /**< tcsolveDgesv: X is the best iterate, info filled */
  TCSOLVE_STATUS_NOT_SUPPORTED = 4, /**< backend, variant or option unavailable here */
  TCSOLVE_STATUS_ALLOC_FAILED = 5,  /**< host or device memory could not be allocated */
  TCSOLVE_STATUS_CUDA_ERROR = 6,    /**< a CUDA, cuBLAS or cuSOLVER call failed */
  TCSOLVE_STATUS_INTERRUPTED = 7 /**< tcsolveInterrupt stopped the call; its outputs unspecified */
} tcsolveStatus_t;

/** Where a handle runs. AUTO resolves when the handle is created: CUDA when a usable GPU is
 * present, else CPU. */
typedef enum {
  TCSOLVE_BACKEND_AUTO = 0, /**< CUDA when a usable GPU is present, else CPU */
  TCSOLVE_BACKEND_CPU = 1,  /**< the reference: host memory, the tensor cores emulated */
  TCSOLVE_BACKEND_CUDA = 2  /**< the GPU current when the handle is created */
} tcsolveBackend_t;

/** op(X) of tcsolveSgemm and tcsolveDgetrs, as BLAS's TRANS. */
typedef enum {
  TCSOLVE_OP_N = 0, /**< op(X) = X */
  TCSOLVE_OP_T = 1  /**< op(X) = X^T */
} tcsolveOperation_t;

/** Creates a handle on `backend`. CUDA (or AUTO resolving to it) without a usable device, or in
 * a build without CUDA: TCSOLVE_STATUS_NOT_SUPPORTED, *handle set to NULL and the message kept
 * for tcsolveGetLastErrorMessage(NULL). A cuda handle is bound to the device current when it is
 * created: tcsolveSgemm, tcsolveDgesv, tcsolveKmeans and tcsolveKmeansPlusPlus run there (made
 * current for the call, the caller's device restored after) whatever device the calling thread
 * has current; its stream (tcsolveSetStream) and device pointers must belong to that device.
 * For several GPUs, create a handle per device.
 *
 * A handle's life. The library keeps a registry of the live handles (those tcsolveCreate
 * returned and tcsolveDestroy has not destroyed) and every function taking a handle looks it up
 * before reading it. Detected, without the handle's memory being read: a destroyed handle
 * passed again (a second tcsolveDestroy included) and a pointer tcsolveCreate never returned:
 * TCSOLVE_STATUS_INVALID_VALUE, the message kept for tcsolveGetLastErrorMessage(NULL) (the
 * getters that return a string give "" or NULL, as for a NULL handle). Undefined, as for any
 * object: tcsolveDestroy while another thread's call on the handle runs (tcsolveInterrupt the
 * call and wait for it first), and calls on one handle from several threads at once (use a
 * handle per thread), tcsolveInterrupt excepted. Not detected: a destroyed handle whose address
 * a later tcsolveCreate happened to reuse; it then names that new handle. */
tcsolveStatus_t tcsolveCreate(tcsolveHandle_t* handle, tcsolveBackend_t backend);
/** Destroys the handle (NULL: nothing to do, SUCCESS; not live, e.g. already destroyed:
 * INVALID_VALUE, nothing freed). */
tcsolveStatus_t tcsolveDestroy(tcsolveHandle_t handle);
/** Asks the call running on `handle` to stop: only sets a flag, so it is safe from another thread
 * (or a signal handler: it neither allocates nor locks). The calls that poll the flag --
 * tcsolveDgesv (both backends), tcsolveSgemm on a cpu handle, and tcsolveKmeans and
 * tcsolveKmeansPlusPlus (once per iteration or k-means++ centroid draw) -- return
 * TCSOLVE_STATUS_INTERRUPTED at their next check (within about a second) with their outputs
 * unspecified (tcsolveDgesv's X and info, tcsolveSgemm's C) and the last-solve record empty; each
 * of them clears the flag when it starts, so an interrupt that comes before a call does not stop
 * it. A cuda tcsolveSgemm is launched without waiting and is not interrupted; on a cuda handle
 * tcsolveKmeans polls once per iteration only (its k-means++ draw and tcsolveKmeansPlusPlus run
 * on the device without a check). SUCCESS whether or not a call is running; INVALID_VALUE for a
 * NULL or not live handle (no message is kept). */
tcsolveStatus_t tcsolveInterrupt(tcsolveHandle_t handle);
/** The cudaStream_t the handle's work is launched on (NULL: the legacy default stream). Stored
 * on a cpu handle too, where it has no effect. */
tcsolveStatus_t tcsolveSetStream(tcsolveHandle_t handle, void* cuda_stream);
/** Extension: the stream set by tcsolveSetStream (NULL by default). */
tcsolveStatus_t tcsolveGetStream(tcsolveHandle_t handle, void** cuda_stream);
/** Extension: the handle's backend, AUTO resolved (TCSOLVE_BACKEND_CPU or _CUDA). */
tcsolveStatus_t tcsolveGetBackend(tcsolveHandle_t handle, tcsolveBackend_t* backend);

/** A static string naming the status ("TCSOLVE_STATUS_INVALID_VALUE: ..."); never NULL. */
const char* tcsolveGetStatusString(tcsolveStatus_t status);
/** The message of the handle's last failed call ("" when none failed yet; valid until another
 * call on the handle fails). NULL handle: the last failure on this thread of a call made without a handle
 * (tcsolveCreate, tcsolveVariantFromName, any call given a NULL handle or one not live); a
 * handle that is not live (destroyed) gives the same. */
const char* tcsolveGetLastErrorMessage(tcsolveHandle_t handle);
/** TCSOLVE_VERSION_STRING of the library ("0.3.0"). */
const char* tcsolveGetVersion(void);

/** The variant named `name` ("ec-fp16", "auto", ...: `tcsolve variants`): *variant is the value
 * of tcsolve::Variant. Unknown name: TCSOLVE_STATUS_INVALID_VALUE listing the valid ones. */
tcsolveStatus_t tcsolveVariantFromName(const char* name, int* variant);
/** Extension: the name of `variant` (a static string), NULL when it is none. */
const char* tcsolveVariantName(int variant);

/** Non-finite inputs: a row of op(A) or a column of op(B) holding +-inf gives NaN in that row or
 * column of C with the split variants (ec-fp16, ec-tf32, auto, markidis, ootomo-*, legemm),
 * where BLAS and the one-operand variants give +-inf (docs/guide/variants.md, "Non-finite inputs").
 * C = alpha op(A) op(B) + beta C, column-major, BLAS semantics: op(A) m x k, op(B) k x n; m or
 * n = 0: quick return; k = 0 or alpha = 0: C = beta C (beta = 0: C set to 0, not read); A and
 * B are read only when k > 0 and alpha != 0, C only when beta != 0. alpha and beta are host
 * pointers. Host A, B, C on a cpu handle; device pointers on a cuda handle, launched on the
 * handle's stream. TCSOLVE_STATUS_INVALID_VALUE (naming the argument, nothing touched) for an
 * unknown variant or operation, a negative size, lda < max(1, rows of A), ldb < max(1, rows of
 * B), ldc < max(1, m), a NULL pointer that would be read or written; NOT_SUPPORTED for sizes
 * beyond 2^31 - 1 or a variant the backend does not implement. */
tcsolveStatus_t tcsolveSgemm(tcsolveHandle_t h, int variant, tcsolveOperation_t transa, tcsolveOperation_t transb,
                             int64_t m, int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda,
                             const float* B, int64_t ldb, const float* beta, float* C, int64_t ldc);

/** The solver's options. Versioned: `size` tells the library which fields the caller knows, so
 * that fields added by later versions (at the end) never break a compiled caller. Always start
 * from tcsolveSolveParamsDefault, which sets size to sizeof(tcsolveSolveParams_t) of the header
 * the caller was compiled with; then set fields. The library reads the fields that lie within
 * size and takes the defaults for the rest (a caller of an older, smaller layout); a size below
 * the first versioned layout's (the fields through row_major), above this library's, or not
 * ending at a field's end (0, garbage: a struct not passed through tcsolveSolveParamsDefault) is
 * refused with INVALID_VALUE naming params->size. Layouts (each a size the library takes): the
 * fields through row_major; then through rbt_seed; then through gemm_kernels (cuda_plan and
 * gemm_kernels, added later in 0.3). Every option of `tcsolve solve` is here, but --backend (the
 * handle's) and the output's; the convergence test is LAPACK dsgesv's, with no tolerance to set. */
typedef struct {
  size_t size;        /**< sizeof(tcsolveSolveParams_t) of the caller's header, set by
                         tcsolveSolveParamsDefault */
  int variant;        /**< tcsolve::Variant of the LU's trailing updates; default "auto" */
  int refinement;     /**< 0 classical, 1 gmres, 2 auto (classical, then GMRES-IR when a step gains < 10x) */
  int pivoting;       /**< 0 partial, 1 rbt (random butterflies, an LU with windowed pivoting,
                         partial pivoting when that fails), 3 beam (in-block pivoting with
                         modified tiny pivots, GMRES-IR against A, partial pivoting when that
                         fails; on cuda handles a block size of at most 512, the default
                         capped there; slower than partial pivoting where measured), 2 auto (the faster by measurement:
                         partial for now) */
  int max_iterations; /**< refinement steps, >= 0; default 30 */
  int fallback;       /**< 1: FP64 LU when refinement fails (default) */
  int block_size;     /**< LU block size nb; 0: the backend's default (128 cpu; 512 cuda, 1024 from
                         n = 24576) */
  int row_major;      /**< 1: A, B, X row-major (C order), ld* their row strides */
  int estimate_condition; /**< when cond_1(A) is estimated (info->condition_estimate, the warning
                             and the exact-singularity checks that go with it; 10.7 of 77 ms at
                             n = 16384 on an H200): 2 auto (default: only where the solve's own
                             figures leave the conditioning in doubt, as `tcsolve solve
                             --condition-estimate auto`), 1 always, 0 never (condition_estimate
                             -1 when it did not run) */
  int fp64_below;     /**< variant auto solves n < fp64_below by an FP64 LU refined in FP64; -1
                         (default): the backend's (cpu 0, cuda 3072); 0: never */
  int rbt_window;     /**< pivoting rbt: rows searched for each pivot, 64..256; 0 none; default 128 */
  uint64_t rbt_seed;  /**< pivoting rbt: the butterflies' seed; default 1 */
  const char* cuda_plan; /**< cuda: the LU's code path as `tcsolve solve --cuda-plan` takes it,
                            "FIELD=VALUE,..." (leaf=cluster|cusolver|tournament, leaf_chunk,
                            leaf_ahead, lookahead=on|off, panel_sms=auto|16|32|48|64,
                            trsm=mixed|kernel|cublas, trsv=lu_solve|inverse|cublas, auto_paths,
                            phases, host_times); read during the call only; NULL (default): the
                            production path. Ignored on a cpu handle, checked on both. */
  int gemm_kernels;   /**< cuda: the trailing updates' kernels, 0 automatic (default: wgmma on
                         sm_90, else mma.sync), 1 wgmma, 2 mma (--gemm-kernels) */
} tcsolveSolveParams_t;

/** The defaults, written into the first `size` bytes of *params only: size sizeof(*params) of the
 * caller's header, variant auto, classical, partial pivoting, max_iterations 30, fallback 1,
 * block_size 0, row_major 0, estimate_condition 2, fp64_below -1, rbt_window 128, rbt_seed 1,
 * cuda_plan NULL, gemm_kernels 0 (NULL: nothing). Call it through tcsolveSolveParamsDefault. */
void tcsolveSolveParamsInit(tcsolveSolveParams_t* params, size_t size);

/** The function of the earlier 0.3 headers, kept for the programs compiled against them: it writes
 * the layout through rbt_seed only (sets size to its end), never the later fields. */
void(tcsolveSolveParamsDefault)(tcsolveSolveParams_t* params);

/** The defaults for this header's layout: always start from it. A macro, so that a program
 * compiled against this header asks for sizeof of its own struct, and a later library, whose
 * struct is larger, never writes past it. */
#define tcsolveSolveParamsDefault(params) tcsolveSolveParamsInit((params), sizeof(*(params)))

/** What tcsolveDgesv and tcsolveDgetrs report beside X. */
typedef struct {
  int converged;             /**< LAPACK dsgesv's test holds for X */
  int iterations;            /**< refinement steps applied */
  int fallback_used;         /**< the FP64 LU ran */
  int resolved_variant;      /**< what the trailing updates ran (auto resolved) */
  double backward_error;     /**< max over columns of ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf) */
  double condition_estimate; /**< cond_1(A) estimated from the LU; -1 when not computed */
} tcsolveSolveInfo_t;

/** Solves A X = B (A n x n, B and X n x nrhs) to FP64 accuracy: the solver of `tcsolve solve`
 * (same options, bitwise the same X). Column-major unless params->row_major; lda, ldb, ldx >=
 * max(1, n) (column-major) or >= max(1, n), max(1, nrhs), max(1, nrhs) (row-major), and n, nrhs
 * and the leading dimensions at most INT_MAX (NOT_SUPPORTED beyond; n^2 may exceed it: n up to
 * what memory holds, about 64000 on an 80 GB GPU with the fallback's FP64 LU). params NULL:
 * the defaults; info may be NULL. Host pointers on a cpu handle, host or device pointers on a
 * cuda handle. n = 0 or nrhs = 0: quick return. NOT_CONVERGED (X the best iterate, info
 * filled) when refinement and fallback fail; INVALID_VALUE for bad arguments and for a matrix
 * that is exactly singular or holds NaN or inf (X untouched). */
tcsolveStatus_t tcsolveDgesv(tcsolveHandle_t h, const tcsolveSolveParams_t* params, int64_t n, int64_t nrhs,
                             const double* A, int64_t lda, const double* B, int64_t ldb, double* X, int64_t ldx,
                             tcsolveSolveInfo_t* info);

/** \name Factor once, solve many
 * Factor once, solve many (LAPACK dgetrf + dgetrs; SciPy lu_factor + lu_solve). tcsolveDgetrf
 * makes what tcsolveDgesv makes before its refinement -- the checks of A, the power-of-two
 * equilibration, the FP32 LU (variant auto below fp64_below: the FP64 LU) -- and keeps it with
 * a copy of the FP64 A in an opaque tcsolveFactorization_t. Each tcsolveDgetrs refines to FP64
 * accuracy (LAPACK dsgesv's criterion on op(A)) with the params given to tcsolveDgetrf:
 * refinement, fallback (the FP64 LU, made on first need and kept), condition estimate; with
 * TCSOLVE_OP_N bitwise the X of tcsolveDgesv with those params. On a cuda handle A, B and X are
 * host or device memory (copied through the host), the FP32 factors and the FP64 A stay on the
 * handle's device until tcsolveFactorizationDestroy, and TCSOLVE_OP_N solves reuse them; the
 * rarer paths (pivoting rbt, n below fp64_below, TCSOLVE_OP_T) solve the whole system again each
 * time (a new LU; the last-solve record says so in its note).
 *
 *   tcsolveFactorization_t f;
 *   tcsolveDgetrf(h, &params, n, A, lda, &f);
 *   tcsolveDgetrs(h, f, TCSOLVE_OP_N, 1, b1, n, x1, n, &info);   (no LU: the factors reused)
 *   tcsolveDgetrs(h, f, TCSOLVE_OP_T, 1, b2, n, x2, n, &info);   (A^T x2 = b2)
 *   tcsolveFactorizationDestroy(f);
 * \{ */

/** An opaque factorization made by tcsolveDgetrf and freed by tcsolveFactorizationDestroy. */
typedef struct tcsolveFactorization* tcsolveFactorization_t;

/** Factors A (n x n; column-major unless params->row_major, lda >= max(1, n), n and lda at most
 * INT_MAX) on the handle's backend; *factors receives the factorization (NULL on failure).
 * params NULL: the defaults; params->row_major also says how tcsolveDgetrs reads B and writes X.
 * n = 0: SUCCESS with an empty factorization (its solves are quick returns). INVALID_VALUE for
 * bad arguments and for a matrix that is exactly singular or holds NaN or inf; NOT_SUPPORTED as
 * above. A is not kept (copied). */
tcsolveStatus_t tcsolveDgetrf(tcsolveHandle_t h, const tcsolveSolveParams_t* params, int64_t n, const double* A,
                              int64_t lda, tcsolveFactorization_t* factors);
/** Solves op(A) X = B (op(A) = A for TCSOLVE_OP_N, A^T for TCSOLVE_OP_T; B and X n x nrhs,
 * layout as tcsolveDgesv's with the factorization's row_major) refined to FP64 accuracy. h must
 * be the handle that made the factors (its interrupt flag and messages serve the solve;
 * INVALID_VALUE otherwise). The last-solve record (below) is this solve's: time factorization 0,
 * no LU made. Statuses as tcsolveDgesv's: NOT_CONVERGED with X the best iterate and info
 * filled; INVALID_VALUE for bad arguments or a B holding NaN or inf (X untouched). */
tcsolveStatus_t tcsolveDgetrs(tcsolveHandle_t h, tcsolveFactorization_t factors, tcsolveOperation_t trans,
                              int64_t nrhs, const double* B, int64_t ldb, double* X, int64_t ldx,
                              tcsolveSolveInfo_t* info);
/** Frees the factorization (NULL: nothing to do). SUCCESS. Using it afterwards is undefined. */
tcsolveStatus_t tcsolveFactorizationDestroy(tcsolveFactorization_t factors);

/** \} */

/** \name Extension: the last solve
 * Extension: the last solve. A handle keeps what its last tcsolveDgesv or tcsolveDgetrs
 * computed beyond tcsolveSolveInfo_t, until the next of them on it: the backward error after each
 * iteration, the times, the backend's finer phases, the note and the warnings. The record is
 * that of a tcsolveDgesv that returned SUCCESS or NOT_CONVERGED; any other status (and n = 0 or
 * nrhs = 0, and a handle that has not solved yet) leaves it empty: no history, no phases, no
 * warnings, times 0, note "". Reading it fails only for a bad argument (then as every call:
 * INVALID_VALUE, the message kept); reading an empty record is no failure. Strings returned stay
 * valid until the next tcsolveDgesv on the handle or its destruction.
 * \{ */

/** Seconds, as `tcsolve solve --json` reports them (time_s): factorization includes the
 * equilibration, refinement includes the fallback and the condition estimate. cuda: device
 * times with A and B on the device (host copies are the phase "transfer", outside total). */
typedef struct {
  double factorization; /**< the equilibration and the LU */
  double refinement;    /**< the refinement, the fallback and the condition estimate */
  double total;         /**< the whole solve */
} tcsolveSolveTimes_t;

/** The backward error of X after each iteration: entry i after i corrections (entry 0: the LU
 * solve alone), as the CLI's history [{iteration, backward_error}]. *length is set to the
 * number of entries; the first min(capacity, *length) are copied to backward_errors (NULL
 * allowed when capacity is 0: ask for the length first). INVALID_VALUE for a NULL handle or
 * length, a negative capacity, or a NULL backward_errors with capacity > 0. */
tcsolveStatus_t tcsolveGetLastSolveHistory(tcsolveHandle_t handle, double* backward_errors, int64_t capacity,
                                           int64_t* length);
/** The times of the last solve (INVALID_VALUE for a NULL handle or times). */
tcsolveStatus_t tcsolveGetLastSolveTimes(tcsolveHandle_t handle, tcsolveSolveTimes_t* times);
/** The finer phases the backend measured (cuda: "transfer", "panel", "update", "residual", ...,
 * snake_case, as time_s.phases of the CLI's JSON; none on the cpu): *count of them, and the
 * name and seconds of phase `index` (0 <= index < count; INVALID_VALUE otherwise). */
tcsolveStatus_t tcsolveGetLastSolvePhaseCount(tcsolveHandle_t handle, int64_t* count);
/** The name and seconds of phase `index` of the last solve (0 <= index < count, as
 * tcsolveGetLastSolvePhaseCount gives it; INVALID_VALUE otherwise). */
tcsolveStatus_t tcsolveGetLastSolvePhase(tcsolveHandle_t handle, int64_t index, const char** name, double* seconds);
/** The block size nb the LU ran with (params->block_size 0 resolved to the backend's default). */
tcsolveStatus_t tcsolveGetLastSolveBlockSize(tcsolveHandle_t handle, int* block_size);
/** The pivoting that gave X (params->pivoting's codes: 0 partial, 1 rbt, 3 beam; partial when rbt
 * or beam fell back to it) and beam's count of modified pivots (0 for the others). */
tcsolveStatus_t tcsolveGetLastSolvePivoting(tcsolveHandle_t handle, int* pivoting, int* modifications);
/** beam: the growth of its factors, max|L U| / max|A_s| (also when it fell back to partial
 * pivoting; 0 where it broke down before the test, for the other pivotings and before any solve). */
tcsolveStatus_t tcsolveGetLastSolveGrowth(tcsolveHandle_t handle, double* growth);
/** Why the solve stopped, and the fallback's reason (the CLI's "note"); "" when none or for a
 * NULL handle. */
const char* tcsolveGetLastSolveNote(tcsolveHandle_t handle);
/** The solver's warnings (cond_1(A) eps64 large, ...): *count of them, and warning `index` (NULL
 * when index is out of range or the handle NULL). */
tcsolveStatus_t tcsolveGetLastSolveWarningCount(tcsolveHandle_t handle, int64_t* count);
/** Warning `index` of the last solve (NULL when index is out of range or the handle NULL). */
const char* tcsolveGetLastSolveWarning(tcsolveHandle_t handle, int64_t index);

/** \} */

/** \name Extension: the variant table
 * Extension: the variant table (`tcsolve variants`). Variant values run from 0 to
 * tcsolveVariantCount() - 1 in the table's order; tcsolveVariantName gives their names.
 * \{ */

/** The number of variants ("auto" and the vendor baselines included). */
int tcsolveVariantCount(void);
/** One line describing `variant` (a static string), NULL when it is none. */
const char* tcsolveVariantDescription(int variant);
/** The format its tensor cores (or CUDA cores) are fed ("fp16", "fp16x2", "tf32", ...; a static
 * string), NULL when it is none. */
const char* tcsolveVariantInputFormat(int variant);
/** The unit roundoff expected of its products (2^-24 for fp32-simt; the test bounds' u), -1
 * when it is none. */
double tcsolveVariantUnitRoundoff(int variant);
/** *available = 1 when `variant` runs on `backend` in this build on this machine (CUDA: a usable
 * device is present and the variant has a cuda implementation; AUTO: on the backend AUTO
 * resolves to), else 0. INVALID_VALUE for an unknown variant or backend, or a NULL available
 * (the message for tcsolveGetLastErrorMessage(NULL)). */
tcsolveStatus_t tcsolveVariantAvailable(int variant, tcsolveBackend_t backend, int* available);

/** \} */

/** \name Extension: K-means
 * Extension: K-means, the library of `tcsolve kmeans` (tcsolve/cluster/kmeans.hpp): Lloyd's algorithm
 * whose distance step computes the cross terms x.c as one GEMM of the chosen variant, the
 * scores ||c||^2 - 2 x.c and the update in FP64; stops when no label changes (from the second
 * iteration), on tol, or after max_iterations. Bitwise the CLI's labels, centroids, inertia and
 * iterations for the same data, start (init or seed), variant, backend, max_iterations and tol.
 * \{ */

/** The options of tcsolveKmeans (start from tcsolveKmeansParamsDefault). */
typedef struct {
  int variant;        /**< GEMM variant of the distance step (tcsolveVariantFromName); default "auto" */
  int max_iterations; /**< >= 1; default 300 (--max-iter) */
  double tol;         /**< >= 0; also stop when sum_j ||c_j moved||^2 <= tol * mean per-coordinate
                         variance of X (scikit-learn's tol); 0 (default, as the CLI): off */
  int init;           /**< 0: centers holds the k starting centroids (the file's init); 1 (default):
                         k-means++ drawn from X with `seed` (the CLI without init) */
  uint64_t seed;      /**< k-means++ seed; default 1 (--seed) */
} tcsolveKmeansParams_t;

/** variant auto, max_iterations 300, tol 0, init 1 (k-means++), seed 1 (NULL: nothing). */
void tcsolveKmeansParamsDefault(tcsolveKmeansParams_t* params);

/** What tcsolveKmeans reports beside the labels and centroids. */
typedef struct {
  int iterations;              /**< assignments done */
  int stop;                    /**< 0 no label changed, 1 tol, 2 max_iterations ("stop" of the JSON) */
  int resolved_variant;        /**< what the first distance GEMM ran (auto resolved) */
  int empty_clusters;          /**< clusters without points in the last assignment (centroid kept) */
  double inertia;              /**< sum_i ||x_i - c_label(i)||^2 in FP64 */
  double time_s;               /**< the iterations' wall time (no seeding, no transfers) */
  double time_per_iteration_s; /**< time_s / iterations */
  double seeding_time_s;       /**< k-means++ (0 when init = 0) */
} tcsolveKmeansInfo_t;

/** K-means of the n points X (n x d, row-major: point i is X[i ldx .. i ldx + d), ldx >= max(1, d),
 * as NumPy's C order and the K-means files' X) into k clusters. centers (k x d, row-major, ldc >=
 * max(1, d)): read as the starting centroids when params->init is 0, and written with the final
 * centroids; labels (n, may be NULL): written with each point's cluster in [0, k). params NULL:
 * the defaults; info may be NULL.
 * Memory. On a cpu handle X, centers and labels are host memory. On a cuda handle each of them
 * is host or device memory, told apart by cudaPointerGetAttributes (as tcsolveDgesv's arrays):
 * device memory of the handle's device, or managed memory (INVALID_VALUE, naming the array, for
 * another device's). The run is the handle's: on its device and stream (tcsolveSetStream), its
 * GEMM workspaces kept by the handle between calls, as for tcsolveSgemm. Device X is read where
 * it is, never copied to the host (rows ldx > d apart are first packed into a device copy); it
 * must keep its values until the call returns, and the work that wrote it must be ordered before
 * the handle's stream (made on it, or waited for). Host X is copied to the device. k-means++
 * runs on the device, and each point's nearest centroid is computed in the GEMM's epilogue where
 * the variant has such a kernel (the CLI's --assign auto). centers (init 0) is read, and centers
 * and labels are written, where they are. The call returns with every output written, having
 * waited for the handle's stream only. Host and device X on one handle give bitwise the same
 * labels, centroids and iterations (with tol > 0 the variance of the tol test is an FP64 sum whose
 * last bits may differ; the inertia, summed on the device, may differ in its last bits too).
 * INVALID_VALUE for n, d or k < 1, k > n, a bad leading dimension or parameter, a NULL pointer
 * that is needed, a non-finite value in X or the starting centers; NOT_SUPPORTED when the variant
 * is unavailable on the handle's backend or a size exceeds 2^31 - 1. Nothing is written on
 * failure. */
tcsolveStatus_t tcsolveKmeans(tcsolveHandle_t h, const tcsolveKmeansParams_t* params, int64_t n, int64_t d,
                              const float* X, int64_t ldx, int64_t k, float* centers, int64_t ldc, int32_t* labels,
                              tcsolveKmeansInfo_t* info);

/** tcsolveKmeans with sample weights (scikit-learn's sample_weight): weights (n FP64 values, host
 * memory on either handle; NULL: unweighted, exactly tcsolveKmeans) gives point i the weight
 * weights[i]. The update takes weighted means, c_j = sum_i w_i x_i / sum_i w_i over the points
 * labelled j (FP64 sums in point order, rounded once to float32); info->inertia is
 * sum_i w_i ||x_i - c_label(i)||^2; a cluster whose weights sum to 0 is empty (its centroid kept,
 * counted in empty_clusters); the tol test's variance stays the unweighted one (scikit-learn's).
 * The k-means++ start (init = 1) draws the first centroid with probability w_i / sum w and each
 * next with probability w_i D(x_i)^2 / sum w D^2 (a point of weight 0 is never drawn); on a cuda
 * handle it is drawn on the host (device X copied there for it), the same centroids as a cpu
 * handle's. Integer weights give the run of the data with point i repeated w_i times (up to the
 * order of the FP64 sums). INVALID_VALUE as tcsolveKmeans, and for a weight that is negative, NaN
 * or infinite (the message names it), weights that are all 0, or weights in device memory;
 * nothing is written on failure. */
tcsolveStatus_t tcsolveKmeansWeighted(tcsolveHandle_t h, const tcsolveKmeansParams_t* params, int64_t n, int64_t d,
                                      const float* X, int64_t ldx, int64_t k, float* centers, int64_t ldc,
                                      int32_t* labels, const double* weights, tcsolveKmeansInfo_t* info);

/** The k-means++ start that tcsolveKmeans draws with params->init = 1 and this seed (Arthur and
 * Vassilvitskii, in FP64 on the handle's backend, bitwise the same centroids on the host and on
 * the GPU; the CLI's start without a file init): k rows of centers
 * (row-major, ldc >= max(1, d)), each a copy of a point of X (n x d, row-major, ldx >= max(1, d)).
 * Passing them back with init = 0 gives the run of init = 1. X and centers as tcsolveKmeans takes
 * them: host memory on a cpu handle; host or device memory on a cuda handle, where the draw runs
 * on the handle's device and stream (device X read where it is). INVALID_VALUE as tcsolveKmeans
 * (nothing written). */
tcsolveStatus_t tcsolveKmeansPlusPlus(tcsolveHandle_t h, int64_t n, int64_t d, const float* X, int64_t ldx, int64_t k,
                                      uint64_t seed, float* centers, int64_t ldc);

/** \} */

#ifdef __cplusplus
}
#endif

#endif /* TCSOLVE_H */
