// Launchers of the solver's device kernels (coop_lu.cu, equilibrate.cu, panel.cu, leaf_tournament.cu, leaf_rbt.cu, leaf_beam.cu,
// butterfly.cu, trsm.cu, row_swap.cu, refine_kernels.cu, lu_apply.cu, small_residual.cu, random_kernels.cu,
// triangular.cu),
// called by the solver's cuda path and generate_cuda.cpp.
// Plain C++ signatures (no CUDA or Eigen types): every pointer is device memory, matrices are
// column-major unless a launcher says otherwise (lu_solve's LU is row-major); every launcher
// enqueues on the stream it is given first (cudaStream_t is CUstream_st*), returns once its
// kernels are enqueued and throws CudaError when a launch fails.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tcsolve::cuda::kernels {

/// Widest leaf (column block factored at once) that the row-interchange kernels take.
inline constexpr int kMaxLeafWidth = 32;

// --- coop_lu.cu --------------------------------------------------------------------------------

/// Largest n that coop_lu() takes on the current device with panel width nb (16 or 32): its panel
/// of n x nb doubles in one block's shared memory; 0 where the device has no cooperative launch.
int coop_lu_max_n(int nb);

/// dgetrf in one cooperative launch on the column-major n x n A (leading dimension lda): A :=
/// L \ U, ipiv (n ints, 1-based, LAPACK's), *info (0, or the 1-based column of the first zero
/// pivot), bitwise cpu/coop_lu.hpp's coop_lu_reference with the same nb for any grid. blocks: the
/// grid (0: one block per 16 columns and block 0, as many as fit the device at once). Throws
/// Unavailable for n > coop_lu_max_n(nb). Not used by the solver yet: measured no faster than
/// cusolverDnDgetrf (coop_lu.cu's header).
void coop_lu(CUstream_st* stream, double* a, int n, int lda, int nb, int* ipiv, int* info, int blocks = 0);

// --- equilibrate.cu ----------------------------------------------------------------------------

/// Doubles of scratch that equilibrate() needs for order n.
std::size_t equilibrate_workspace_doubles(int n);

/// The cpu path's equilibration of the FP64 A (n x n, leading dimension n), bitwise: row_scale[i]
/// = 2^e(max_j |a_ij|), col_scale[j] = 2^e(max_i row_scale[i] |a_ij|) with e =
/// detail::equilibration_exponent; a_s (n x n FP32, ROW-MAJOR: a_s(i, j) at a_s + i n + j) =
/// fp32_rn((row_scale[i] a_ij) col_scale[j]); *norm_inf = ||A||_inf = max_i sum_j |a_ij| (row sums in a fixed
/// order: deterministic, but not the cpu's order). A must be finite.
void equilibrate(CUstream_st* stream, const double* a, int n, double* row_scale, double* col_scale, float* a_s, double* norm_inf,
                 double* workspace);

/// equilibrate() in two steps: the row scales and ||A||_inf, then, for the columns [c0, c1) (any
/// split of [0, n), in any order, gives bitwise equilibrate()'s results), their scales and their
/// columns of a_s, ordered after the first step (the same stream, or one that waits for it); col_sum (not
/// null): also col_sum[j] = sum_i |a_ij| for those columns (||A||_1 = max_j col_sum[j]), summed
/// in a fixed order, from the same reads. a_s nullptr: the scales (and col_sum) only.
void equilibrate_rows(CUstream_st* stream, const double* a, int n, double* row_scale, double* norm_inf, double* workspace);
void equilibrate_columns(CUstream_st* stream, const double* a, int n, const double* row_scale, double* col_scale, float* a_s,
                         int c0, int c1, double* col_sum = nullptr);

/// How equilibrate_fp64 launches below kFp64OneLaunchBelow (CudaLuPlan::equilibration; every way
/// gives the same bits): cluster (one launch of one thread-block cluster, small_cluster.cuh; one
/// block where the device runs no clusters), cooperative (one cooperative launch; the kernels one
/// by one where the device has none), kernels (the kernels one by one, as from
/// kFp64OneLaunchBelow always); automatic: cluster below kFp64ClusterBelow, cooperative from
/// there (equilibrate.cu gives the measurements).
enum class Fp64Equilibration { automatic, cluster, cooperative, kernels };
inline constexpr int kFp64ClusterBelow = 384;
inline constexpr int kFp64OneLaunchBelow = 1024;

/// The FP64 LU path's equilibration (fp64_solve.cpp): equilibrate_rows, equilibrate_columns
/// (col_sum not null) and scale_copy into a_s (FP64, leading dimension n), bitwise, and *zero =
/// 0 (dgetrf's info), launched as `how` says; returns the way that ran (cluster, cooperative or
/// kernels). workspace: equilibrate_workspace_doubles(n).
Fp64Equilibration equilibrate_fp64(CUstream_st* stream, const double* a, int n, double* row_scale, double* col_scale,
                                   double* col_sum, double* norm_inf, double* a_s, int* zero, double* workspace,
                                   Fp64Equilibration how = Fp64Equilibration::automatic);

/// *norm = ||A||_inf as equilibrate() computes it (A: n x n FP64, leading dimension n; the
/// same workspace).
void norm_inf(CUstream_st* stream, const double* a, int n, double* norm, double* workspace);

// --- panel.cu ---------------------------------------------------------------------------------

/// How the cluster leaf kernel moves its rows in and out (CudaLuPlan::leaf_copies): automatic
/// (bulk for the 32-column leaves, threads for the 16- and 8-column ones), bulk (one
/// cp.async.bulk copy per row, where the rows are whole and 16-byte aligned) or threads (each
/// thread's own 16-byte loads and stores). The same values either way.
enum class LeafCopies { automatic, bulk, threads };

/// Which build of the cluster leaf kernel runs (CudaLuPlan::leaf_chunk, leaf_ahead,
/// leaf_copies; all give bitwise the same factors): the 32-column kernel's register columns
/// rotate every `chunk` steps (2, or 8, 4, 1 to compare; the 16- and 8-column kernels every 8);
/// `ahead`: the 32-column kernel's steps post the next column's pivot candidate before the rest
/// of their update (else after it; the narrower kernels post after it); `copies`: LeafCopies.
struct LeafVariant {
  int chunk = 2;
  bool ahead = true;
  LeafCopies copies = LeafCopies::automatic;
};

/// Width of the widest leaves factor_leaf() takes on this device for a leaf of `rows` rows (32,
/// 16 or 8: the cluster holds 16384, 36864 or 65536 rows), or 0 when it cannot run here
/// (compute capability other than 9.0, rows too many, or the cluster not schedulable). Throws
/// InvalidInput for a chunk other than 1, 2, 4, 8.
int leaf_width(int rows, LeafVariant leaf = {});

/// LU with partial pivoting of the leaf by the kernel of leaf width `width` (one that
/// leaf_width(rows) gave for rows >= n - c0): rows c0..n-1, columns c0..c0+w-1 (w <= width)
/// of the row-major a (row r at a + r ld), in place, its rows permuted (L below, U on top);
/// the permutation as (dst, src) pairs to `pairs` (interchange_scratch_ints(w) ints; for
/// apply_row_pairs); an exactly zero pivot sets *info = its 1-based global column when *info is 0.
/// With `origin` (not null), the kernel also does apply_row_pairs_in_block's work: the same rows
/// move in the columns [block_lo, block_hi) outside the leaf, and origin[dst] = old origin[src]
/// (one launch per leaf instead of two).
void factor_leaf(CUstream_st* stream, LeafVariant leaf, int width, float* a, int ld, int n, int c0, int w, int* pairs, int* info, int block_lo = 0,
                 int block_hi = 0, int* origin = nullptr);

// --- leaf_tournament.cu ------------------------------------------------------------------------

/// Width of the leaves factor_leaf_tournament() takes for order n on this device: 32, or 0 when
/// it cannot run here (compute capability other than 9.0, n above 16 x 1024 rows, or the cluster
/// not schedulable).
int tournament_leaf_width(int n);

/// factor_leaf()'s work with tournament pivoting (CALU's TSLU, two rounds: each CTA's 1024 rows,
/// then the cluster's candidates) instead of partial pivoting: the same arguments, outputs and
/// formats; the pivots are the final round's, each row's multipliers by substitution with them.
void factor_leaf_tournament(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int* pairs, int* info,
                            int block_lo = 0, int block_hi = 0, int* origin = nullptr);

// --- leaf_rbt.cu -------------------------------------------------------------------------------

/// Widest pivot window of factor_rbt_window (SolveOptions::rbt_window at most this).
inline constexpr int kMaxRbtWindow = 256;

/// rbt's leaf, rows c0..n-1, columns c0..c0+w-1 (1 <= w <= kMaxLeafWidth, c0 + w <= n) of the
/// row-major a (row r at a + r ld), in place (L below, U on top), in two launches:
/// factor_rbt_window: the window, rows [c0, c0 + rbt_window_rows()). window > w (at most
/// kMaxRbtWindow): column k's pivot is the first largest magnitude of the rows [k, min(n, c0 +
/// window)), the rows exchanged in the leaf's columns only, the window's permutation to `pairs`
/// (interchange_scratch_ints(w) ints, as apply_row_pairs_in_block takes them; the caller moves
/// the other columns); window 0: no pivoting (pairs untouched). The first pivot whose magnitude
/// is not above `tiny` (or not finite) sets *info = its 1-based global column when *info is 0
/// (the factorization goes on: the caller decides).
/// factor_rbt_below (after it): the rows below the window (never moved): L U11 = A.
int rbt_window_rows(int n, int c0, int w, int window);
void factor_rbt_window(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int window, float tiny, int* pairs,
                       int* info);
void factor_rbt_below(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int window);

// --- leaf_beam.cu ------------------------------------------------------------------------------

/// Most rows of a beam window (factor_beam_window): beam's block size on the GPU at most this.
inline constexpr int kMaxBeamWindow = 512;

/// beam's modified pivots (device): *count (the caller zeroes it) counts them; the first
/// `capacity` go to columns[i] (global, 0-based) and deltas[i] (new minus old pivot, in FP64).
struct BeamModificationList {
  int* count = nullptr;
  int* columns = nullptr;
  double* deltas = nullptr;
  int capacity = 0;
};

/// beam's leaf (Pivoting::beam; cpu/blocked_lu.cpp's factorize_beam_lu is the reference): the
/// leaf's columns c0..c0+w-1 over `rows` rows from c0 (its diagonal block's rows from c0 down,
/// w <= rows <= kMaxBeamWindow) of the row-major a, factored by one CTA with pivots searched in
/// those rows only (the first largest magnitude), the rows exchanged in the leaf's columns only,
/// the window's permutation to `pairs` as factor_rbt_window's. A pivot not above the block's
/// threshold, fp32(factor max) with max the float of *block_max_bits (block_max_abs; factor:
/// kBeamThreshold; zero_panel_tiny where max is 0), becomes that threshold with its sign (0: +), recorded in
/// `list`; a non-finite candidate sets *info = its 1-based global column when *info is 0.
void factor_beam_window(CUstream_st* stream, float* a, int ld, int c0, int w, int rows, const unsigned* block_max_bits,
                        double factor, float zero_panel_tiny, int* pairs, int* info, BeamModificationList list);

/// *bits = the bits of max |a(r, c)| over rows [r0, r1) and columns [c0, c0 + w) of the
/// row-major a (zeroed first; a NaN gives NaN's bits).
void block_max_abs(CUstream_st* stream, const float* a, int ld, int r0, int r1, int c0, int w, unsigned* bits);

// --- butterfly.cu ------------------------------------------------------------------------------

/// The rbt transform A_r = fp32(U^T [R A C 0; 0 I] V) (butterfly.hpp; bitwise the host's
/// butterfly_transform rounded to FP32) of the n x n FP64 a (column-major, leading dimension n)
/// into the p x p ROW-MAJOR a_r (p = n rounded up to a multiple of 4); U's and V's entries
/// (RandomButterfly::outer(), inner(): p doubles each) on the device. *max_bits = the bits of
/// max |A_r| (a float).
void butterfly_matrix(CUstream_st* stream, const double* a, int n, int p, const double* row_scale, const double* col_scale,
                      const double* u_outer, const double* u_inner, const double* v_outer, const double* v_inner, float* a_r,
                      unsigned* max_bits);

/// t = U^T pad(R r) (FP64, p x cols, leading dimension p) for r (n x cols, leading dimension ld).
void butterfly_rhs(CUstream_st* stream, const double* r, int ld, int n, int p, int cols, const double* row_scale,
                   const double* u_outer, const double* u_inner, double* t);

/// x(i, c) = (col_scale[i] z(i, c)) 2^exponent[c] for i < n, z = V double(y) (y: FP32, p x cols,
/// leading dimension p; x: leading dimension ldx).
void butterfly_solution(CUstream_st* stream, const float* y, int n, int p, int cols, const double* v_outer,
                        const double* v_inner, const double* col_scale, const int* exponent, double* x, int ldx);

/// *max_bits = the bits of max |a[i]| over `count` floats (a NaN gives NaN's bits, above inf's).
void max_abs(CUstream_st* stream, const float* a, std::size_t count, unsigned* max_bits);

// --- trsm.cu -----------------------------------------------------------------------------------

/// Most rows of L that trsm_lower_unit() takes.
inline constexpr int kTrsmMaxRows = 1024;

/// B := L^-1 B for the unit lower triangular L (w x w, its strict lower part read) and B (w x
/// cols), both ROW-MAJOR with leading dimension ld (L(i, j) at l + i ld + j), on stream:
/// one CTA per 8 columns of B, forward substitution in row blocks of 64 (deterministic; forward
/// substitution's error bound). Returns false, enqueueing nothing, when w > kTrsmMaxRows (the
/// caller then uses cublasStrsm).
bool trsm_lower_unit(CUstream_st* stream, const float* l, float* b, int ld, int w, int cols);
/// The same with L and B at leading dimensions of their own (ldl >= w, ldb >= cols).
bool trsm_lower_unit(CUstream_st* stream, const float* l, int ldl, float* b, int ldb, int w, int cols);
/// Sets trsm_lower_unit's kernel attributes on the current device now (once per device),
/// loading its module: GPU members call it before their LU's NCCL traffic (distributed_lu_cuda.cpp:
/// the first call in the middle of the LU, the module loaded lazily while a broadcast waited for
/// the other member, hung both, 2 x H200, session 28).
void trsm_lower_unit_load();

// --- trsm_leaf.cu -------------------------------------------------------------------------------

/// The recursive TRSMs' diagonal-block solves (CudaLuPlan::trsm_leaves kernel), w <= 64
/// (cpu::kTrsmLeafMaxWidth), column-major, each bitwise cpu::trsm_leaf_substitute per vector.
/// Each returns false, enqueueing nothing, when w > 64 or a leading dimension is too small (the
/// caller then uses cublasStrsm); nothing to do (w or the count below 1) returns true.
/// X U = B in place: B rows x w (leading dimension ldb), U w x w unit upper (ldu; its strict
/// upper part read): U12's leaves, a thread per row of B.
bool trsm_leaf_right_upper_unit(CUstream_st* stream, const float* u, int ldu, float* b, int ldb, int rows, int w);
/// L X = B in place: L w x w lower, non-unit (ldl; its lower part read), B w x cols (ldb): beam's
/// L21 leaves (L = U11^T), a thread per column of B.
bool trsm_leaf_left_lower(CUstream_st* stream, const float* l, int ldl, float* b, int ldb, int w, int cols);

// --- row_swap.cu -------------------------------------------------------------------------------

/// Ints of the `pairs` scratch for a leaf of width w: the count, then 2w dst and 2w src rows.
inline std::size_t interchange_scratch_ints(int w) { return 1 + 4 * static_cast<std::size_t>(w); }

/// The pairs of the w <= kMaxLeafWidth sequential exchanges ipiv[0..w) (1-based within rows
/// j..n-1, as cuSOLVER's sgetrf returns them) in LAPACK's order (interchanges.hpp).
void compose_interchanges(CUstream_st* stream, const int* ipiv, int j, int w, int n, int* pairs);

/// Moves the rows of the pairs (row dst receives the old row src) in the columns of the
/// row-major a (n x n, leading dimension ld) outside [c0, c0 + w), and perm[dst] = old perm[src].
/// pairs: interchange_scratch_ints(w) ints, [count, dst[0..2w), src[0..2w)], count <= 2w, the
/// rows in [c0, n) and the dst set equal to the src set (a permutation of the moved rows).
void apply_row_pairs(CUstream_st* stream, float* a, int ld, int n, int c0, int w, const int* pairs, int* perm);

/// The largest n of pivots_to_permutation (2n ints of shared memory, within the 48 KiB a launch
/// may take without asking).
inline constexpr int kMaxPermutationN = 6144;

/// perm[i] = the row of A that row i of P A holds, for dgetrf's n sequential exchanges ipiv
/// (1-based, LAPACK's order: row i exchanged with row ipiv[i] - 1 >= i). One thread block;
/// InvalidInput unless 1 <= n <= kMaxPermutationN.
void pivots_to_permutation(CUstream_st* stream, const int* ipiv, int n, int* perm);

/// The LU's leaf interchanges inside a block of columns [block_lo, block_hi) (which contains the
/// leaf [c0, c0 + w), w <= kMaxLeafWidth): the rows of the pairs (as for apply_row_pairs) move
/// in the block's columns outside the leaf only, and origin[dst] = old origin[src] (origin: see
/// reset_origin). a: row-major, leading dimension ld, block_hi <= ld. One thread per column
/// (all its reads, then all its writes) and one block for origin: a launch of a few microseconds
/// for a 512-column block. The leaf kernel (factor_leaf with origin) does the same work itself;
/// this launcher serves the cuSOLVER leaves.
void apply_row_pairs_in_block(CUstream_st* stream, float* a, int ld, int c0, int w, int block_lo, int block_hi, const int* pairs,
                              int* origin);

/// origin[i] = i for j <= i < n (0 <= j <= n; origin: n device ints, those below j untouched): at
/// the start of the block at column j, every row holds itself; apply_row_pairs_in_block (or
/// factor_leaf with origin) then keeps origin[i] = the row (at the block's start) that row i
/// holds now, and apply_block_permutation applies that permutation outside the block.
void reset_origin(CUstream_st* stream, int* origin, int j, int n);

/// Ints of apply_block_permutation's scratch for order n: 1 + 3n (the count, then the dst and
/// src lists and a copy of perm's moved entries, n each at most).
std::size_t block_permutation_scratch_ints(int n);

/// The block's composed interchanges applied once outside it: for every row i in [j, n) with
/// origin[i] != i, the columns outside [j, j + w) of row i receive those of the old row
/// origin[i] (in place, every moved row read and written once), and perm[i] = old perm[origin[i]].
/// a: row-major, n x n, leading dimension ld >= n; perm: n ints; scratch:
/// block_permutation_scratch_ints(n) ints, any content (overwritten). origin[j..n) must be a
/// permutation of [j, n) (what reset_origin(j) and the block's leaves leave); origin[0..j) is not
/// read. The columns [j, j + w) are not touched. Kernels: one block compacts the moved rows into
/// the scratch and permutes perm; then each block of the move owns a slice of S columns outside
/// the block, loads that slice of every moved row into shared memory, then writes it to the
/// destination rows. Its shared memory (at most 96 KiB) is sized on the host, without reading
/// the count back, for m = min(2w, n - j) rows, since partial pivoting moves at most 2w (each of
/// the w steps exchanges two rows): S = 16 for m <= 1365 (any n - j at w <= 682), 8 for m <=
/// 2457, 4 for m <= 4096; for larger m the rows go through a temporary m x (n - w) buffer
/// (cudaMallocAsync) in two passes. More than m moved rows (an origin not built as above) are
/// still moved correctly through shared memory, a few columns at a time, while one column of
/// all of them fits (m (S + 2) rows); beyond that, and on the buffer path beyond m, the kernel
/// traps (a CUDA error at the next synchronization, never silently wrong rows). Asynchronous:
/// no host synchronization.
/// right_only: only the columns right of the block [j + w, right_end) move here (right_end < 0:
/// n); the others then move with move_block_permutation_left() or _columns(), which read the
/// scratch this call left (the LU runs them on another stream, off the panel's path, before the
/// next block's call).
void apply_block_permutation(CUstream_st* stream, float* a, int ld, int n, int j, int w, const int* origin, int* perm,
                             int* scratch, bool right_only = false, int right_end = -1);

/// The moves of apply_block_permutation(a, ld, n, j, w, origin, perm, scratch, true, ...) in the
/// columns [c0, c1), all left of the block or all right of it, from the scratch that call left
/// (nothing else read); _left: the columns [0, j).
void move_block_permutation_columns(CUstream_st* stream, float* a, int ld, int n, int j, int w, const int* scratch, int c0, int c1);
void move_block_permutation_left(CUstream_st* stream, float* a, int ld, int n, int j, int w, const int* scratch);

// --- refine_kernels.cu -------------------------------------------------------------------------

/// out[c] = max_i |scale[i] x(i, c)| for a rows x cols matrix x (leading dimension ld; scale
/// nullptr: 1), NaN when an entry is NaN. exponent (nullptr: not written): e with out[c] = f 2^e,
/// f in [1/2, 1) (std::frexp), 0 when out[c] is 0 or not finite.
void column_max_abs(CUstream_st* stream, const double* x, int ld, int rows, int cols, const double* scale, double* out,
                    int* exponent);

/// row_nonzero[i] = 1 if row i of the n x n a (leading dimension lda) has a nonzero entry, else
/// 0 (a system already on the device: its zero rows, without a host copy of A).
void mark_nonzero_rows(CUstream_st* stream, const double* a, int n, int lda, int* row_nonzero);

/// a_s(i, j) = (row_scale[i] a(i, j)) col_scale[j] for the n x n FP64 a (leading dimension n;
/// a_s likewise, not a): the equilibrated A_s in FP64, as the cpu path forms it.
void scale_copy(CUstream_st* stream, const double* a, int n, const double* row_scale, const double* col_scale, double* a_s);

/// y(i, c) = fp32_rn(ldexp(row_scale[perm[i]] r(perm[i], c), -exponent[c])) for i < n, c < cols:
/// P R r scaled by a power of two per column (r: leading dimension ld; y: leading dimension n).
/// row_scale nullptr: 1.
void scale_permute_to_fp32(CUstream_st* stream, const double* r, int ld, int n, int cols, const double* row_scale, const int* perm,
                           const int* exponent, float* y);

/// d(i, c) = (col_scale[i] double(y(i, c))) 2^exponent[c] (y, d: leading dimension n).
void unscale_to_fp64(CUstream_st* stream, const float* y, int n, int cols, const double* col_scale, const int* exponent,
                     double* d);

/// out(i, c) = ldexp(v(i, c), log2(scale[i]) + sign k[c]) for the n x cols v (leading dimension
/// n; scale: powers of two; out may be v): EquilibratedInverse's scalings (condition.hpp) on the
/// device, bitwise its times_pow2.
void scale_pow2(CUstream_st* stream, const double* v, int n, int cols, const double* scale, const int* k,
                int sign, double* out);

/// out(i, c) = ldexp(v(perm[i], c), log2(scale[perm[i]]) + sign k[c]): scale_pow2 of P v, the
/// rows gathered through the permutation perm (out must not overlap v).
void scale_pow2_permuted(CUstream_st* stream, const double* v, int n, int cols, const double* scale, const int* perm,
                         const int* k, int sign, double* out);

/// rows[k n + i] = a(i, positions[k]) and columns[k n + j] = a(positions[k], j) for k < c: the
/// sampled entries of the n x n a (leading dimension n) that detail::exact_singularity hashes.
void gather_samples(CUstream_st* stream, const double* a, int n, const int* positions, int c, double* rows,
                    double* columns);

/// out(i, c) = x(rows[i], c) for i < count, c < cols (x: leading dimension ld; out: count).
void gather_rows(CUstream_st* stream, const double* x, int ld, int cols, const int* rows, int count, double* out);

/// x(:, c) += d(:, c) for the columns with mask[c] != 0 (leading dimension n).
void masked_add(CUstream_st* stream, double* x, const double* d, int n, int cols, const int* mask);

/// y[i] = x[i] / s for i < n, correctly rounded (the cpu's Eigen `x / s`); y may be x.
void divide(CUstream_st* stream, const double* x, int n, double s, double* y);

// --- small_residual.cu ------------------------------------------------------------------------

/// The largest n small_residual() takes (the combining block has a thread a row), and the most
/// right-hand sides (the grid's rows).
inline constexpr int kSmallResidualMaxN = 1023;
inline constexpr int kSmallResidualMaxRhs = 65535;

/// Doubles of device scratch small_residual() needs for order n and nrhs right-hand sides.
std::size_t small_residual_scratch_doubles(int n, int nrhs);

/// r = b - A x for nrhs right-hand sides (A: n x n, leading dimension n; b, x, r: n x nrhs,
/// leading dimension n; r may not alias b or x), norms[c] = max_i |r_ic| and norms[nrhs + c] =
/// max_i |x_ic| (a NaN kept; DeviceChecker's layout), in one launch: bitwise
/// cpu/small_residual.hpp's small_residual_reference per column. scratch:
/// small_residual_scratch_doubles(n, nrhs). InvalidInput for n outside 1..kSmallResidualMaxN or
/// nrhs outside 1..65535.
void small_residual(CUstream_st* stream, const double* a, int n, const double* b, const double* x, double* r,
                    double* norms, int nrhs, double* scratch);

/// The blocks of small_residual's cluster on the current device (1 where clusters do not run).
int small_residual_blocks();

// --- lu_apply.cu -------------------------------------------------------------------------------

/// The largest n lu_apply() takes: its vector and two 32 x 32 tiles in 48 KB of shared memory.
inline constexpr int kLuApplyMaxN = 4000;

/// out(:, c) = C A_s^-1 R rhs(:, c) for c < cols in one launch (a thread block per column): lu,
/// ipiv dgetrf's factors of the n x n A_s (leading dimension n), row_scale and col_scale R and C
/// (powers of two), rhs and out n x cols (leading dimension n; out may be rhs). Bitwise
/// cpu/lu_apply.hpp's lu_apply_reference, column by column. diagonal (nullptr: not written):
/// n + 1 doubles that get U's diagonal and, in the bits of the last, *info (dgetrf's).
/// InvalidInput for n outside 1..kLuApplyMaxN.
void lu_apply(CUstream_st* stream, const double* lu, int n, const int* ipiv, const double* row_scale,
              const double* col_scale, const double* rhs, int cols, double* out, double* diagonal = nullptr,
              const int* info = nullptr);

// --- random_kernels.cu ------------------------------------------------------------------------

/// x[2p], x[2p + 1] = philox::gaussian_pair(seed, stream, p) for 2p, 2p + 1 < count: `count`
/// standard normal numbers (tcsolve/solver/philox.hpp), the same for any launch shape.
void gaussian_fill(CUstream_st* on, double* x, std::size_t count, std::uint64_t seed, std::uint32_t stream);

// --- triangular.cu ----------------------------------------------------------------------------

/// Ints of device scratch that lu_solve() needs for order n and `cols` columns.
std::size_t lu_solve_scratch_ints(int n, int cols);

/// y := U^-1 L^-1 y for `cols` columns. lu: the n x n packed LU in ROW-MAJOR order, row i at
/// lu + i * ld (ld >= n): L unit lower triangular strictly below the diagonal (its unit diagonal
/// not stored), U upper triangular including the diagonal. y: n x cols, column-major, leading
/// dimension n, FP32, overwritten. scratch: lu_solve_scratch_ints(n, cols) device ints (any
/// content on entry; cleared here). Each solve is backward stable (gamma_{n+2}) and the result is
/// bitwise the same on every call with the same inputs. Throws InvalidInput unless n >= 1,
/// ld >= n and cols >= 1. With `inverses` (lu_block_inverses of the same LU) each 64-row block
/// is solved through products with its diagonal block's inverse and the two blocks before it
/// instead of by substitution (CudaLuPlan::Trsv::inverse): a shorter chain, with a backward error
/// bounded through the diagonal blocks' conditioning (triangular.cu's comment).
void lu_solve(CUstream_st* stream, const float* lu, int ld, int n, float* y, int cols, int* scratch,
              const float* inverses = nullptr);

/// Floats of lu_block_inverses' output for order n: three 64 x 64 matrices per triangle and 64 rows.
std::size_t lu_block_inverse_floats(int n);

/// lu_solve's matrices for the LU's 64 x 64 diagonal blocks, per block b and triangle (L, unit
/// lower, then U) of the row-major packed LU (lu_solve's layout): X = T_bb^-1, then M_q = X
/// T(b, b -+ q) for the blocks solved q = 1, 2 steps before b (L: b - q, U: b + q; zero where
/// there is none), each row-major, at inverses + ((2b + upper) 3 + q) 4096. Every entry in a
/// fixed order (bitwise repeatable; rows and columns past n are the identity's in X, zero in
/// the products' T). Throws InvalidInput unless n >= 1 and ld >= n.
void lu_block_inverses(CUstream_st* stream, const float* lu, int ld, int n, float* inverses);

}  // namespace tcsolve::cuda::kernels
