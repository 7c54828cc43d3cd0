// tcsolve::solver: mixed-precision LU solver with iterative refinement (docs/architecture.md, Solver).
//
//   1. exact power-of-two equilibration: A_s = R A C with R, C diagonal powers of two;
//   2. blocked right-looking LU with partial pivoting of A_s in FP32, block size nb: panel
//      factorization, row swaps, U12 by triangular solve, trailing update A22 -= L21 U12 through
//      tcsolve::gemm with the chosen variant (the only place the variant enters);
//   3. refinement in FP64 against the original A: r = b - A x, d from the FP32 LU, x += d, until
//      LAPACK dsgesv's test  ||r||_inf <= sqrt(n) ||x||_inf ||A||_inf eps64  holds for every
//      right-hand side (eps64 = 2^-53), at most max_iterations, stopping early on stagnation or
//      divergence: the relative correction ||d||/||x|| not halved over 3 steps (solver.cpp);
//      or GMRES-IR (FP64 GMRES left-preconditioned by the LU, inner tolerance 1e-4; Carson &
//      Higham 2018) with the same tests on the outer steps;
//   4. fallback (default on): FP64 LU (Eigen PartialPivLU; cuda: cuSOLVER dgetrf + dgetrs) of
//      the EQUILIBRATED A_s = R A C (x = C y) when refinement fails; x is the better of its
//      solution and the best iterate (dsgesv's criterion first, then the backward error);
//   5. a 1-norm condition estimate cond_1(A) ~= ||A||_1 est(||A^-1||_1) (Hager / Higham, LAPACK
//      dlacn2) from the factors, and warnings when cond_1(A) eps64 or the forward error is large.
// Norms, the stopping test and the backward error are overflow- and underflow-safe (frexp
// form): a system near 1e306 or near 1e-310 is judged as its scaled copy would be.
// A solve that does not converge is a result (converged = false), not an exception.
//
// Backends: cpu (Eigen and the cpu GEMM backend) and cuda (solver/src/cuda: A, the factors and
// the vectors stay on the device; recursive panels with leaves by a thread-block-cluster kernel
// (cuSOLVER sgetrf where that cannot run), U12 by a recursive TRSM on cuBLAS, trailing updates by
// tcsolve::gemm(cuda) beside the next panel (look-ahead), residuals and GMRES's products by
// cuBLAS in FP64). Both run one implementation of the equilibration exponent, the stopping
// criterion, the stagnation rule, the fallback's scaling, the condition estimator
// (solver/src/condition.hpp) and the warnings.
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve {

/// How x is refined: classical (d = LU^-1 r), GMRES-IR (d from GMRES on M^-1 A d = M^-1 r, M the
/// LU), or auto: classical first, and GMRES-IR from the best iterate once a classical step
/// reduces the backward error by less than kAutoSwitchFactor (or gives a non-finite correction),
/// before any FP64 fallback; SolveResult::gmres_from says where it switched.
enum class Refinement { classical, gmres, auto_ };
/// refine auto switches when a classical step leaves the backward error above this fraction of
/// the previous iterate's: a contraction slower than 10x per step needs more than 8 steps for
/// the ~8 digits an FP32 LU leaves to gain, where GMRES-IR (Carson & Higham 2018) converges in a
/// few outer steps up to cond ~ 1/eps32 and beyond.
inline constexpr double kAutoSwitchFactor = 0.1;
Refinement parse_refinement(std::string_view name);  ///< "classical" | "gmres" | "auto"
std::string_view to_string(Refinement r);

/// How the LU keeps itself stable: partial pivoting (a pivot search per column), or rbt: a
/// random butterfly transform A_r = U^T A V (depth 2; butterfly.hpp) and an LU whose pivot
/// searches span a window of rows only (SolveOptions::rbt_window; 0: none), refined against
/// the original A; when that breaks down (a tiny or non-finite pivot, growth of the factors) or
/// its refinement does not converge, the solve runs again with partial pivoting, and
/// SolveResult::pivoting and the note say so. Both backends (cuda: the transform and the LU on
/// the device; a failed attempt's time is in the total and the phase "rbt_attempt").
///
/// auto: the fastest that never gives a worse answer than partial pivoting, by what was
/// measured (resolve_pivoting). On the H100 (docs/benchmark-history.md, session 10) rbt with windowed
/// pivoting converged where partial pivoting did, in 0-2 more iterations, but took 93-98 ms
/// against partial pivoting's 79-80 at n = 16384 (its one-CTA leaves and the panels' SGEMM
/// joins still set the pace), so auto resolves to partial on both backends for now.
///
/// beam: block elimination with additive modifications (Lindquist, Luszczek and Dongarra, ICS
/// 2023): each pivot is searched in the rows of its own nb x nb diagonal block only (no search
/// over the rows below it, so no reduction over all remaining rows per column); a pivot not
/// above kBeamThreshold times the largest |entry| of its block's panel (the block's columns,
/// the rows from its first down, taken once as the block starts: one reduction per block) is
/// replaced by that threshold with its sign, and the change recorded (A_s + E = P^T L U, E of rank SolveResult::modifications). Refined against
/// the original A: where there are modifications, GMRES-IR or classical refinement with a
/// Woodbury correction (SolveOptions::beam_correction), the requested refinement otherwise. A non-finite pivot,
/// growth of the factors beyond kBeamGrowth, or a refinement that does not converge runs the
/// solve again with partial pivoting (SolveResult::pivoting and the note say why). Without
/// modifications classical refinement runs as auto (beam_rules.hpp). The cpu backend (the
/// reference), one GPU (block size at most kMaxBeamBlockCuda; measured slower than partial
/// pivoting on an H200, docs/BENCHMARKS.md, session 31: the leaves' pivot chain still costs
/// about 1 us a column, and the factors grow 100x more; session 39: the threshold above needs the
/// whole block panel updated before its diagonal block is factored, so L21 = A21 U11^-1 stays
/// on the panel's path, 13.8 ms at n = 16384 and 148 at 32768) and the distributed solver's GPU members
/// (their diagonal blocks without modifications yet: an exact zero pivot there pivots
/// partially); cpu ranks refuse it for now.
enum class Pivoting { partial, rbt, auto_, beam };
/// beam's modification threshold, relative to the block panel's largest |entry| (the trailing
/// matrix's scale there, which shrinks with a graded A's Schur complements; a global ||A||
/// modified hundreds of pivots of a randsvd 1e10 system of n = 600): sqrt of FP32's unit
/// roundoff, 2^-12, as the BEAM paper's sqrt(eps).
inline constexpr double kBeamThreshold = 0x1p-12;
/// beam's growth bound max|U| / max|A_s| (as rbt's, kRbtGrowth in butterfly.hpp: 2^20).
inline constexpr double kBeamGrowth = 0x1p20;
/// How beam's refinement accounts for its modifications (SolveOptions::beam_correction), where
/// it modified pivots (M = A_s + E = P^T L U, E = U_E V_E^T of rank r = the modifications):
///   gmres     GMRES-IR against A, preconditioned by the LU of M (GMRES resolves the low-rank
///             difference; each outer step's cycle applies the LU several times);
///   woodbury  classical refinement whose correction solves with A_s itself through the
///             Woodbury formula, A_s^-1 = M^-1 + M^-1 U_E (I - V_E^T M^-1 U_E)^-1 V_E^T M^-1:
///             r solves with the LU and an r x r FP64 LU once, then per step one LU solve and a
///             rank-r update;
///   automatic gmres, as measured so far: on the cpu, n = 256 with the first 32 x 32 diagonal
///             block zero (32 modifications), woodbury converged in 9 classical steps after its
///             32 set-up solves (41 LU solves), GMRES-IR in 5 outer steps of 13 inner ones in
///             all (about 18); the GPU's figures may move it (issue 35);
///   none      (results only) no modifications, so no correction: the requested refinement.
enum class BeamCorrection { automatic, gmres, woodbury, none };
BeamCorrection parse_beam_correction(std::string_view name);  ///< "auto" | "gmres" | "woodbury"
std::string_view to_string(BeamCorrection c);                 ///< and "none"
/// The default SolveOptions::rbt_window. Without pivoting, the LU of U^T A V of an n = 16384
/// U(-1,1) system grew its factors 8e6-fold (H100, docs/benchmark-history.md, session 10): beyond what FP32
/// factors refine. With the pivot the largest of >= 96 candidates, |l_ij| stays near 1.
inline constexpr int kRbtWindow = 128;
Pivoting parse_pivoting(std::string_view name);  ///< "partial" | "rbt" | "auto" | "beam"
std::string_view to_string(Pivoting p);
/// What Pivoting::auto_ runs for a system of order n on `backend` (resolved): partial pivoting
/// (see Pivoting); any other request is returned as it is.
Pivoting resolve_pivoting(Pivoting requested, Backend backend, int n);

/// When the solve estimates cond_1(A) (SolveOptions::condition_estimate). The estimate is a
/// handful of triangular solves with the LU and one or two FP64 products with A (O(n^2) each; on
/// cuda the phase "condition": 10.7 ms of a 77 ms solve at n = 16384 on an H200, issue 35).
/// Where the FP32 factors do not resolve A^-1 (cond_1(A)
/// near 1/u32 or beyond: condition.hpp) it comes from an FP64 LU of the equilibrated A (the
/// fallback's, or one made for it: O(n^3)), and before that FP64 LU rows and columns equal up to
/// sign and a power of two are looked for (exact singularity: InvalidInput). It feeds the
/// warning that the forward error cannot be trusted (cond_1(A) eps64 >= 1e-3,
/// refinement_rules.hpp).
///   always     after every solve.
///   never      not at all: no such warning, and a consistent system with two equal rows may
///              "converge" with an arbitrary null-space component in x.
///   automatic  (the default) when the refinement's own figures leave the conditioning in doubt
///              (detail::decide_condition_estimate; SolveResult::condition_estimate_reason says
///              which rule decided): the refinement did not converge, the FP64 fallback ran,
///              GMRES-IR made corrections, a classical step contracted the backward error by
///              less than 10x (well above dsgesv's level), U's diagonal spans more than 2^20
///              (max |u_ii| / min |u_ii|, a lower bound on cond(U)), or A is in device memory
///              only. A classical refinement with FP32 factors converges only for cond_1(A) up
///              to about 1/u32 = 1.7e7, far below the warning's 4.5e12, so skipping the
///              estimate there loses no warning. Without the estimate, two rows or columns equal
///              up to sign and a power of two (which the estimate's FP64 LU used to find) are
///              looked for on a host thread beside the device's work (input_checks.hpp); the
///              distributed solve does the same on every rank (the samples summed over the
///              ranks, U's diagonal span reduced over them: distributed_search.cpp). What
///              automatic can miss: on the FP64 LU path (fp64_below), an ill-conditioned A whose
///              LU is backward stable and whose U has a narrow diagonal (a Kahan-like triangular
///              matrix); ask for always where that matters.
enum class ConditionEstimate { automatic, always, never };
ConditionEstimate parse_condition_estimate(std::string_view name);  ///< "auto" | "always" | "never"
std::string_view to_string(ConditionEstimate c);                    ///< "auto", "always", "never"

/// The LU's block size when SolveOptions::block_size is 0: 128 on the cpu; on cuda 512, where
/// the 2n/nb panel factorizations and row swaps are launch-bound (n = 16384 random, ec-fp16 on an
/// H100: 150 ms at nb 128, 131 at 256, 120 at 512; docs/benchmark-history.md, session 2), and 1024 from
/// n = kLargeBlockFromCuda on, where the trailing updates' corrected GEMMs set the pace and run
/// faster with k = 1024 (n = 32768: auto 320 ms against 336 at 512, the update 135 ms against
/// 183; at n = 16384 1024 is 5% slower: docs/benchmark-history.md, session 15).
inline constexpr int kDefaultBlockSizeCpu = 128, kDefaultBlockSizeCuda = 512, kLargeBlockSizeCuda = 1024;
inline constexpr int kLargeBlockFromCuda = 24576;
/// The default block size for order n: kDefaultBlockSizeCpu on the cpu; on cuda
/// kLargeBlockSizeCuda from n = kLargeBlockFromCuda on, else kDefaultBlockSizeCuda (automatic
/// resolves first).
int default_block_size(Backend backend, std::int64_t n = 0);

/// Pivoting::beam on cuda: the largest block size (one CTA factors a leaf's diagonal rows, a
/// thread per row). resolve_block_size: beam with the default block size takes at most this;
/// a larger one given is refused.
inline constexpr int kMaxBeamBlockCuda = 512;
/// SolveOptions::block_size for order n on `backend` (automatic resolves first), options'
/// pivoting already resolved: 0 becomes default_block_size's, capped at kMaxBeamBlockCuda for
/// beam on cuda; a given one is kept, except that beam on cuda refuses one above
/// kMaxBeamBlockCuda (InvalidInput).
struct SolveOptions;
int resolve_block_size(const SolveOptions& options, Backend backend, std::int64_t n);

/// The cuda default of SolveOptions::fp64_below: auto solves n < 3072 by the FP64 LU. Measured
/// on an H200 (docs/BENCHMARKS.md, "Small systems", 2026-11-29, session 37, call d; `tcsolve
/// solve --warmup`, U(-1,1) seed 1): with its solves by cublasDtrsm (CudaLuPlan::fp64_solves
/// trsm) the FP64 path took 5.99 ms at n = 2048 against the mixed path's 7.13, 8.36 against 8.49
/// at 2560 (one correction from there on), 10.53 against 9.93 at 3072. Session 34 (the solves by
/// dgetrs) had the crossover at 2560; session 23's 2048 was measured before the FP64 path lost
/// its allocations and waits.
inline constexpr int kFp64BelowCuda = 3072;
/// CudaLuPlan::joins: the narrowest join (columns of its left half, the product's k) that the
/// variant takes, and (automatic) the fewest rows below it.
inline constexpr int kJoinVariantMinK = 128;
inline constexpr int kJoinVariantMinRows = 16384;

/// SolveOptions::fp64_below when it is kFp64BelowDefault.
/// cpu: 0 (never): its variants are emulations, the reference of the mixed path, not there for
/// speed. cuda (automatic resolving to it): kFp64BelowCuda, the measured crossover.
int fp64_below_default(Backend backend);


/// The code path of the cuda LU and refinement (SolveOptions::cuda_plan). The defaults are the
/// production path; the other values exist to compare (docs/guide/solver.md, "Code paths"). Every field
/// except `leaf = tournament`, `leaf_width`, `joins`, `trsm_products` and `trsm_leaves` gives bitwise the same
/// factors.
/// SolveResult::cuda_plan says what ran (a request the device cannot serve is reported as what
/// replaced it).
struct CudaLuPlan {
  /// The 32-column leaves of the recursive panels: the thread-block-cluster kernel with partial
  /// pivoting (Hopper; where it cannot run, cuSOLVER's), cuSOLVER sgetrf on a transposed copy,
  /// or tournament pivoting (CALU's two-round TSLU in one cluster kernel: each CTA's 1024 rows
  /// choose their candidates, the candidates the pivots; other pivots than partial pivoting's,
  /// so other factors; n <= 16384 on Hopper, else the cluster kernel).
  enum class Leaf { cluster, cusolver, tournament };
  Leaf leaf = Leaf::cluster;
  /// The cluster leaf kernel's register columns rotate every leaf_chunk steps: 2, or 8, 4, 1.
  int leaf_chunk = 2;
  /// The cluster leaf kernel posts the next column's pivot candidate before the rest of a step's
  /// update (false: after it); the 32-column leaves only (the 16- and 8-column ones post after it:
  /// posting ahead measured 2-5% slower there, session 26).
  bool leaf_ahead = true;
  /// How the cluster leaf kernel moves its rows in and out of the cluster: bulk (one
  /// cp.async.bulk copy per row, where the rows are whole and 16-byte aligned), threads (each
  /// thread's own 16-byte loads and stores), or automatic (the default: bulk for the 32-column
  /// leaves, threads for the 16- and 8-column ones, whose rows are 64 and 32 bytes: a bulk copy
  /// per 32 bytes set the 8-column leaves' pace; one H200 at n = 65536, the leaves 538-540 ms
  /// with bulk, 463-470 with threads; at 32768, 16384 rows and fewer, no difference: session 26,
  /// docs/benchmark-history.md). The same values either way.
  enum class LeafCopies { automatic, bulk, threads };
  LeafCopies leaf_copies = LeafCopies::automatic;
  /// How wide the cluster kernel's leaves are (32, 16 or 8 columns: the cluster holds 16384,
  /// 36864 or 65536 rows): block (the default) chooses per block of nb columns, the widest whose
  /// cluster holds the block's rows, so that the panels of a large n get wider leaves (fewer
  /// joins) as their rows shrink; order chooses once from the matrix's order (every leaf of n =
  /// 65536 then 8 columns wide; beyond 65536 rows, cuSOLVER's leaves for every block). Other
  /// leaves, other joins: the factors differ in the last bits where the two choose differently.
  enum class LeafWidth { block, order };
  LeafWidth leaf_width = LeafWidth::block;
  /// The next block's panel factored beside the rest of the trailing update, on two streams (a
  /// green context holding all SMs but panel_sms for the update); false: one stream, one step
  /// after the other. Needs compute capability 9.0 and the driver's green contexts.
  bool lookahead = true;
  /// SMs the look-ahead leaves to the panel: 16 (one cluster), 24, 32, 40, 48 or 64 (the leaf uses one
  /// cluster of up to 16; the joins' SGEMMs and TRSMs use them all; the update gets the rest); 0
  /// (auto, the default): 16 on one GPU, 24 on the GPU members of a distributed solve (each
  /// updates only its share of the columns while the panels are the chain: n = 65536 on
  /// 2 x H200, 2026-11-28, session 29: 24 gave 939-950 ms against 951-960 with 32 and 961-965
  /// with 16; before U12 of the next block ran on trsm.cu's kernel, 2026-11-27, 32 had given
  /// 1.32 s against 1.40 s with 16 and 1.34 s with 48). The value that ran is written back
  /// (SolveResult::cuda_plan).
  int panel_sms = 0;
  /// GPU members of a distributed solve with look-ahead: the percentage of a block's trailing
  /// update (its last columns on this member) that the panel stream takes when the next panel is
  /// another member's, so that the panel's SMs work while that panel is factored (0: none; 0,
  /// 10, 20, 30, 40 or 50). The same products on other shapes: the factors may differ in the
  /// last bits. Default 0: on 2 x H200 at n = 65536 (2026-11-28) 20-40 shortened the update
  /// streams but not the factorization, which the chain of panels then sets; with more GPUs the
  /// panel streams idle longer.
  int member_share = 0;
  /// The panel stream's products on the tensor cores with look-ahead (the panels' joins through
  /// the variant, the next block's update): budget (persistent kernels, the joins' sized to the
  /// panel's SMs, the next block's update's to every SM) or tiles (a block per output tile,
  /// Context::tile_blocks: they run on the SMs the update stream leaves free, and on all of them
  /// once its kernels are done, as in the distributed solve's last blocks). The same products,
  /// the same bits. automatic (the default): tiles on the GPU members of a distributed solve,
  /// budget on one GPU (2 x H200, n = 65536, session 27 call g: two GPUs 953-958 ms with tiles
  /// against 962 with budget; one GPU 1554 against 1543). The value that ran is written back.
  enum class PanelProducts { automatic, budget, tiles };
  PanelProducts panel_products = PanelProducts::automatic;
  /// U12 = L11^-1 A12 and the panels' joins: mixed (trsm.cu's kernel for the next block's
  /// columns and the joins, a recursive TRSM on cublasStrsm + SGEMM for the rest of U12), kernel
  /// (trsm.cu's kernel for all of U12), cublas (one cublasStrsm per part).
  enum class Trsm { mixed, kernel, cublas };
  Trsm trsm = Trsm::mixed;
  /// The products of the panels' joins (A22 -= L21 U12 inside a panel, on the panel's SMs):
  /// sgemm (cublasSgemm, FP32 SIMT), variant (the LU's variant, on the tensor cores, for the
  /// joins of at least kJoinVariantMinK columns; narrower ones stay SGEMM), or automatic (the
  /// default: variant where the panel has at least kJoinVariantMinRows rows below the join,
  /// else sgemm). The factors differ from sgemm's in the last bits where the variant ran.
  enum class Joins { automatic, sgemm, variant };
  Joins joins = Joins::automatic;
  /// The products inside U12's recursive TRSM (U12 = L11^-1 A12 by halves of L11, the
  /// off-diagonal parts by a product; trsm = mixed, on one GPU and on GPU members): sgemm, variant
  /// (the LU's variant, as the joins, for halves of at least kJoinVariantMinK columns), or
  /// automatic (the default: on one GPU the variant where the TRSM solves at least
  /// kJoinVariantMinRows columns of A, else sgemm; on GPU members sgemm, measured faster there:
  /// 2 x H200, n = 65536, 2026-11-28). The factors differ from sgemm's in the last bits where the
  /// variant ran.
  Joins trsm_products = Joins::automatic;
  /// The diagonal blocks of at most 64 columns where one GPU's recursive TRSMs end (U12's rest
  /// with trsm = mixed, and beam's L21 = A21 U11^-1): kernel (trsm_leaf.cu: a thread per
  /// right-hand side, its entries in registers, the block in shared memory; bitwise
  /// cpu/trsm_leaf.hpp), cublas (cublasStrsm), or automatic (the default: cublas). On an H200
  /// (session 39 call e, U(-1,1)) the kernel took U12's rest from 34.5 to 30.2 ms at n = 32768,
  /// but left the factors with which classical refinement stagnated there (cond_1 about 7e8: the
  /// FP64 fallback answered, 1027 ms against 342); beam's L21 took 119 ms against 148 at 32768
  /// and 16.8 against 13.6 at 16384. Other roundings: the factors differ in the last bits. The GPU
  /// members of a distributed solve take cublasStrsm (reported as cublas). The value that ran is
  /// written back.
  enum class TrsmLeaves { automatic, kernel, cublas };
  TrsmLeaves trsm_leaves = TrsmLeaves::automatic;
  /// The refinement's and the condition estimate's triangular solves: lu_solve (triangular.cu's
  /// sync-free row-block solve, its 64 x 64 diagonal blocks by substitution), inverse (the same
  /// solve with the diagonal blocks applied through their inverses, computed once after the
  /// factorization: a shorter chain per block) or cublas (cublasStrsm, the refinement only).
  enum class Trsv { lu_solve, inverse, cublas };
  Trsv trsv = Trsv::lu_solve;
  /// The refinement's triangular sweeps on the GPU members of a distributed solve (two or
  /// more): fan_in (the default: each member sums its own blocks' products, the members' sums for
  /// a block's rows are added by one NCCL sum of nb values when the block is reached, and each
  /// owner's product for the rows beyond the next block runs on a second stream beside the
  /// other members' steps; the transposed sweeps of the condition estimate fanned out: each
  /// block's solution broadcast by its owner, every member adding its products to its own later
  /// blocks) or broadcast (the owner of each block updates the whole rest of the vector and
  /// broadcasts it: one member at work at a time). Other sums: the solves differ in
  /// the last bits, which the refinement corrects. On 2 x H200 at n = 65536 (session 26) the
  /// refinement's solves took 49.5-50.3 ms fanned in against 67.0-67.1 broadcast (8 iterations).
  enum class MemberSweeps { fan_in, broadcast };
  MemberSweeps member_sweeps = MemberSweeps::fan_in;
  /// The FP64 LU's solves with A_s = R A C (the FP64 path of small systems, and the refinement
  /// of the FP64 fallback): kernel (lu_apply.cu: the scalings, dgetrf's interchanges and both
  /// triangular solves in one launch, a thread block per right-hand side holding its vector in
  /// shared memory; n <= kFp64SolveKernelMaxN), dgetrs (cuSOLVER's, between kernels for the
  /// scalings: five launches), trsm (dgetrf's interchanges composed into a permutation once per
  /// factorization; each solve gathers and scales the right-hand sides through it in one kernel,
  /// then two cublasDtrsm and the last scaling; n <= kFp64SolveTrsmMaxN), or automatic (the
  /// default: kernel below kFp64SolveKernelBelow, trsm from there to kFp64SolveTrsmMaxN, dgetrs
  /// beyond). On an H200 (session 35 call g) the kernel took 41 against dgetrs's 72 us at n =
  /// 200, 119 against 150 at 512, 209 against 211 at 768 and 336 against 269 at 1024: one thread
  /// block's chain of 32-row blocks against dgetrs's kernels over the whole GPU. dgetrs applies
  /// its interchanges one after the other on the device: the two triangular solves alone
  /// (cublasDtrsm) took 0.13 against its 0.27 ms at 1024, 0.30 against 0.69 at 2560 and 0.48
  /// against 1.08 at 4096 (session 37 call c). All are backward stable substitutions with other
  /// roundings: the solutions differ in the last bits, which the refinement corrects. The value
  /// that ran is written back (kernel or trsm asked beyond its n: dgetrs). The condition
  /// estimate's solves are dgetrs's.
  enum class Fp64Solves { automatic, kernel, dgetrs, trsm };
  Fp64Solves fp64_solves = Fp64Solves::automatic;
  /// The refinement's FP64 residual r = b - A x and the norms the assessment reads back (max
  /// |r_i| and max |x_i| per column): kernel (small_residual.cu: one launch of a thread-block
  /// cluster, each thread an inner product over 32 columns of one row, the cluster's first block
  /// forming r and both norms; n <= kResidualKernelMaxN), cublas (a copy of b, dgemv or dgemm,
  /// two column maxima: four launches), or automatic (the default: kernel below
  /// kResidualKernelBelow, cublas from there). Other roundings: r differs in the last bits. The
  /// value that ran is written back.
  enum class Residuals { automatic, kernel, cublas };
  Residuals residuals = Residuals::automatic;
  /// How the FP64 path of small systems launches its equilibration (the same bits every way):
  /// cluster (one launch of one thread-block cluster of 8 blocks, one cluster barrier; one block
  /// where the device runs no clusters; n < 1024), cooperative (one cooperative launch with grid
  /// barriers; n < 1024, where the device has cooperative launches), kernels (the row pass, the
  /// column pass and the copy one by one), or automatic (the default: cluster below
  /// kEquilibrationClusterBelow, cooperative from there to 1023, kernels from 1024). On an H200
  /// (session 38 call a, device times on a busy stream) cluster / cooperative / kernels took 12.0
  /// / 15.4 / 17.2 us at n = 200 and 47.7 / 34.1 / 24.0 at 768 (the cluster's 8 SMs read A twice).
  /// The way that ran is written back.
  enum class Equilibration { automatic, cluster, cooperative, kernels };
  Equilibration equilibration = Equilibration::automatic;
  /// auto's trailing updates after the first: fp16_first launches the FP16 path only (gated on
  /// the device; should one choose TF32, the LU is repeated with both paths); both launches both
  /// paths every time; retry behaves as fp16_first and repeats the LU as if TF32 had been
  /// chosen (tests).
  enum class AutoPaths { fp16_first, both, retry };
  AutoPaths auto_paths = AutoPaths::fp16_first;
  /// Phase events: blocks (one mark per step of each block), detail (marks around every leaf
  /// and join: "panel" and "panel_update" apart; about 1.5 ms of GPU time at n = 16384), off
  /// (none; the phases are then not reported).
  enum class Phases { blocks, detail, off };
  Phases phases = Phases::blocks;
  /// Host seconds spent enqueueing each kind of LU work, returned as phases "host_*" (to see
  /// whether the host or the device sets the pace). Synchronizes the LU's streams at its end. On
  /// the FP64 path of small systems: host_first_marks (the first events), host_first_launch (the
  /// equilibration's launch), host_enqueue (then up to the first read-back), host_wait (for it),
  /// host_loop (the refinement loop after it), host_search (the wait for the upload's search for
  /// equal rows), host_rest (the rest, up to the device's last wait).
  bool host_times = false;
};

std::string_view to_string(CudaLuPlan::Leaf v);       ///< "cluster", "cusolver", "tournament"
std::string_view to_string(CudaLuPlan::LeafWidth v);  ///< "block", "order"
std::string_view to_string(CudaLuPlan::LeafCopies v); ///< "automatic", "bulk", "threads"
std::string_view to_string(CudaLuPlan::Trsm v);       ///< "mixed", "kernel", "cublas"
std::string_view to_string(CudaLuPlan::Joins v);      ///< "automatic", "sgemm", "variant"
std::string_view to_string(CudaLuPlan::Trsv v);       ///< "lu_solve", "inverse", "cublas"
std::string_view to_string(CudaLuPlan::PanelProducts v); ///< "automatic", "budget", "tiles"
std::string_view to_string(CudaLuPlan::MemberSweeps v); ///< "fan_in", "broadcast"
std::string_view to_string(CudaLuPlan::Fp64Solves v); ///< "automatic", "kernel", "dgetrs", "trsm"
std::string_view to_string(CudaLuPlan::Residuals v);  ///< "automatic", "kernel", "cublas"
std::string_view to_string(CudaLuPlan::TrsmLeaves v); ///< "automatic", "kernel", "cublas"
std::string_view to_string(CudaLuPlan::Equilibration v);  ///< "automatic", "cluster", "cooperative", "kernels"
std::string_view to_string(CudaLuPlan::AutoPaths v);  ///< "fp16_first", "both", "retry"
std::string_view to_string(CudaLuPlan::Phases v);     ///< "blocks", "detail", "off"
/// The largest order whose FP64 solves CudaLuPlan::Fp64Solves::kernel serves (its vector in one
/// thread block's shared memory).
inline constexpr int kFp64SolveKernelMaxN = 4000;
/// CudaLuPlan::Fp64Solves::automatic takes the kernel below this order, trsm from it (the
/// measured crossover: the FP64 path's solve --warmup on an H200, session 37 call d, kernel
/// against trsm: 0.877 against 0.901 ms at n = 384, 1.197 against 1.170 at 512, 1.938 against
/// 1.872 at 768; session 35 had 768 against dgetrs).
inline constexpr int kFp64SolveKernelBelow = 512;
/// The largest order whose FP64 solves CudaLuPlan::Fp64Solves::trsm serves (the composition of
/// dgetrf's interchanges holds 2n ints in one thread block's shared memory).
inline constexpr int kFp64SolveTrsmMaxN = 6144;
/// What the plan's fp64_solves runs for an order-n system: kernel, trsm or dgetrs.
CudaLuPlan::Fp64Solves fp64_solves_for(const CudaLuPlan& plan, int n);
/// The largest order whose residual CudaLuPlan::Residuals::kernel serves (its partial sums for
/// one cluster's first block to combine, a thread a row).
inline constexpr int kResidualKernelMaxN = 1023;
/// CudaLuPlan::Residuals::automatic takes the kernel below this order, cuBLAS from it. Device
/// times on a busy stream (tcsolve_small_lu_bench --fixed, H200, session 38 call a), kernel
/// against cuBLAS: 9.1 against 17.7 us at n = 200, 9.3 against 13.9 at 512, 15.6 against 16.0 at
/// 768, 19.9 against 17.9 at 1000 (the cluster's 8 SMs read A, dgemv the whole GPU).
inline constexpr int kResidualKernelBelow = 768;
/// The most right-hand sides CudaLuPlan::Residuals::kernel serves (a launch's grid rows).
inline constexpr int kResidualKernelMaxRhs = 65535;
/// What the plan's residuals runs for an order-n system with nrhs right-hand sides: kernel or cublas.
CudaLuPlan::Residuals residuals_for(const CudaLuPlan& plan, int n, int nrhs);
/// CudaLuPlan::Equilibration::automatic launches one cluster below this order, and cluster and
/// cooperative serve orders below kEquilibrationOneLaunchBelow.
inline constexpr int kEquilibrationClusterBelow = 384;
inline constexpr int kEquilibrationOneLaunchBelow = 1024;
/// What the plan's equilibration asks for an order-n system, automatic resolved: cluster,
/// cooperative or kernels (a device without cooperative launches then takes kernels).
CudaLuPlan::Equilibration equilibration_for(const CudaLuPlan& plan, int n);
/// The plan's fields as (name, value) text pairs, in declaration order (JSON, reports).
std::vector<std::pair<std::string, std::string>> plan_fields(const CudaLuPlan& plan);
/// Sets the field `name` (as plan_fields names it) from its text `value`; InvalidInput naming
/// the field and the accepted values otherwise.
void set_plan_field(CudaLuPlan& plan, std::string_view name, std::string_view value);
/// set_plan_field for each FIELD=VALUE of the comma-separated `text` (the CLI's --cuda-plan, the C
/// API's params->cuda_plan), in order; InvalidInput naming the part that is not FIELD=VALUE.
void set_plan_fields(CudaLuPlan& plan, std::string_view text);

/// SolveOptions::fp64_below: take the backend's default (fp64_below_default).
inline constexpr int kFp64BelowDefault = -1;

struct SolveOptions {
  Variant variant = Variant::auto_;
  Backend backend = Backend::automatic;
  int block_size = 0;                ///< nb of the blocked LU; 0: default_block_size(backend, n)
  Refinement refinement = Refinement::classical;
  Pivoting pivoting = Pivoting::partial;
  /// rbt: the seed of the butterflies (the same seed, the same transform and bits).
  std::uint64_t rbt_seed = 1;
  /// rbt: each column's pivot is searched among the rbt_window rows from the first row of its
  /// 32-column leaf (the rows below are not searched: no reduction over the whole column, one
  /// thread block per leaf on cuda), 64..256; 0: no pivoting at all (the papers' LU of U^T A V,
  /// whose growth on large U(-1,1) systems exceeds what FP32 factors can refine: kRbtWindow's
  /// note).
  int rbt_window = kRbtWindow;
  /// beam, where it modified pivots: how the refinement accounts for them (BeamCorrection).
  BeamCorrection beam_correction = BeamCorrection::automatic;
  int max_iterations = 30;           ///< corrections x += d (GMRES-IR: outer steps, each one GMRES
                                     ///< cycle of at most min(n, 100) inner iterations)
  bool fallback = true;              ///< FP64 LU when refinement fails
  /// When cond_1(A) is estimated from the LU (SolveResult::condition_estimate; ConditionEstimate
  /// says what each value does and what the estimate costs). The default, automatic, runs it only
  /// where the solve's own figures leave the conditioning in doubt.
  ConditionEstimate condition_estimate = ConditionEstimate::automatic;
  /// variant auto: a system with n < fp64_below is solved by an FP64 LU (partial pivoting) of the
  /// equilibrated A, refined in FP64 to the same criterion (LAPACK dsgesv's), instead of the
  /// mixed path: below some n the FP32 path's fixed costs (panels, launches, residuals) make it
  /// slower than an FP64 LU (measured on an H100: auto 4.4x cuSOLVER dgetrf+getrs at n = 128,
  /// 1.4x at 2048, 1.08x at 4096, 0.93x at 6144; docs/benchmark-history.md, session 9; the FP64 path
  /// is the faster one below kFp64BelowCuda, session 13). The result
  /// says so (SolveResult::fp64_lu, resolved_variant fp64). kFp64BelowDefault: the backend's
  /// default (fp64_below_default); 0: never. Other variants always run the mixed path.
  int fp64_below = kFp64BelowDefault;
  GemmOptions gemm{};
  /// cuda: the LU's and the refinement's code path.
  CudaLuPlan cuda_plan{};
  /// cuda: the context the solve runs in (stream, handles, workspaces; the solver adds its
  /// cuSOLVER handle and look-ahead streams to it). nullptr: a context made for this solve on
  /// the default stream. The solve is ordered on its stream and returns with it idle.
  cuda::Context* cuda_context = nullptr;
  /// Polled between the cpu LU's blocks, inside the cpu backend's emulated products (passed on
  /// as GemmOptions::interrupt, unless that is set), before each cpu GMRES inner step and before
  /// each refinement step on both backends (the cuda LU, seconds at most, runs to its end); when
  /// it reads true the solve throws Interrupted. nullptr: never. The caller owns the flag (another thread or a signal handler
  /// sets it); the C API sets it from tcsolveInterrupt.
  const std::atomic<bool>* interrupt = nullptr;
  /// Progress of a long solve, called on the solving thread: stage "lu" after each block of the
  /// cpu LU, `done` the share of its flops completed (1 - (r/n)^3 with r columns left); stage
  /// "refinement" before each correction, done = iterations / max_iterations (the most it can
  /// take). cuda: not called (its LU is enqueued ahead of the device and takes seconds at most).
  /// Empty: nothing.
  std::function<void(std::string_view stage, double done)> progress;
};

struct SolveTimes {
  double factorization = 0, refinement = 0, total = 0;  ///< seconds
  /// Finer phases, in seconds, where the backend measures them (empty on the cpu), snake_case.
  /// cuda:
  ///   "transfer"          host <-> device copies of A, b, x (not part of total);
  ///   "equilibrate"       R, C and the FP32 A_s (with look-ahead only what precedes the first
  ///                       panel);
  ///   "equilibrate_rest"  the rest of A_s, on the update stream beside the first panel;
  ///   "butterfly"         rbt: A_r = fp32(U^T A_s V) from the FP64 A (after "equilibrate",
  ///                       which then forms R and C only);
  ///   "growth"            rbt: max|LU| for the growth test;
  ///   "rbt_attempt"       rbt that broke down or did not converge: the attempt's seconds (in
  ///                       factorization and total), its phases as "rbt_<phase>"; the phases
  ///                       without the prefix are partial pivoting's;
  ///   "panel"             the leaves of the recursive panel factorizations (the cluster
  ///                       kernel, or cuSOLVER sgetrf);
  ///   "swap"              every leaf's row interchanges applied to the other columns;
  ///   "panel_below"       rbt, CudaLuPlan::Phases::detail: the leaves' rows below their window
  ///                       (else part of "panel");
  ///   "panel_update"      TRSM and FP32 SGEMM inside the recursive panels
  ///                       (CudaLuPlan::Phases::detail; else part of "panel");
  ///   "trsm"              U12 of the blocks (with look-ahead: of the next block's columns);
  ///   "trsm_rest"         with look-ahead, the rest of U12, on the update stream;
  ///   "update_next"       with look-ahead, the next block's trailing update, on the panel's stream;
  ///   "update_wait"       with look-ahead, the panel's stream waiting for the update stream;
  ///   "update"            the trailing updates (with look-ahead: the rest, on the update stream);
  ///   "pivots"            reading the pivots and info back;
  ///   "residual"          r = b - A x with the norms;
  ///   "correction"        the FP32 triangular solves with scaling (GMRES-IR: the initial solve
  ///                       only);
  ///   "gmres"             GMRES-IR: the GMRES cycles of the outer steps, preconditioner,
  ///                       products and orthogonalization;
  ///   "fallback"          the FP64 LU of the equilibrated A and its solve;
  ///   "condition"         the condition estimate: ||A||_1, the solves, the resolution check, and
  ///                       an FP64 LU made only for it;
  /// device times from CUDA events, summed over the panels and iterations.
  std::vector<std::pair<std::string, double>> phases;
};

/// Whether `solve` takes the FP64 LU path for a system of order n (variant auto, n below the
/// resolved fp64_below).
bool uses_fp64_lu(const SolveOptions& options, Backend backend, std::int64_t n);

struct SolveResult {
  Eigen::MatrixXd x;                   ///< n x nrhs: the iterate with the smallest backward error
  bool converged = false;
  int iterations = 0;                  ///< corrections applied (outer steps for GMRES-IR)
  bool fallback_used = false;          ///< the FP64 fallback ran; x is its solution unless the
                                       ///< best iterate was better (the note says which)
  double backward_error = 0;           ///< max over rhs of ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf)
                                       ///< (inf when x is not finite: converged is then false)
  std::optional<double> forward_error; ///< max over rhs of ||x - x_true||_inf / ||x_true||_inf, when known
  std::vector<double> history;         ///< backward error after each iteration (index 0: initial solve)
  /// refine auto: the corrections from this iteration on were GMRES-IR's (history[gmres_from]
  /// is the first iterate it made; the iterate before it is the best classical one it started
  /// from); -1 when it stayed classical (and for classical and gmres).
  int gmres_from = -1;
  /// The pivoting that gave x: SolveOptions::pivoting, or partial when rbt or beam broke down or
  /// did not converge (the note says why).
  Pivoting pivoting = Pivoting::partial;
  /// beam: the pivots its LU modified (the rank of E), whether or not beam gave x; 0 otherwise.
  int modifications = 0;
  /// beam: the correction its refinement used (gmres or woodbury; none without modifications or
  /// when beam did not give x).
  BeamCorrection beam_correction = BeamCorrection::none;
  /// beam: the growth of its factors, max|L U| / max|A_s| (whether or not beam gave x; 0 where
  /// it broke down before the test, and for the other pivotings).
  double growth = 0;
  SolveTimes time_s;                   ///< factorization includes equilibration, refinement the fallback
                                       ///< and the condition estimate;
                                       ///< cuda: device times with A and b already on the device
                                       ///< (total = factorization + refinement; the copies are
                                       ///< the phase "transfer")
  /// The LU was FP64 (SolveOptions::fp64_below: auto on a small system); resolved_variant is
  /// then fp64 and the note says why.
  bool fp64_lu = false;
  Variant resolved_variant = Variant::fp32_simt;  ///< what the first trailing update ran (auto
                                                  ///< resolved); the requested one when n <= nb
  Backend backend = Backend::cpu;
  std::string note;                    ///< why it stopped, fallback reason
  /// cond_1(A) = ||A||_1 ||A^-1||_1, estimated (SolveOptions::condition_estimate; nullopt when
  /// not computed): a lower bound in exact arithmetic, usually within a factor 3 of the true
  /// value; from the FP32 factors where they resolve A^-1, else from an FP64 LU (then about
  /// 1/eps64 or more for a numerically singular A); inf when it overflows.
  int block_size = 0;                  ///< the nb the LU ran with (SolveOptions::block_size resolved)
  /// cuda: the plan that ran (SolveOptions::cuda_plan with what the device could not serve
  /// replaced: cusolver leaves, no look-ahead); nullopt on the cpu.
  std::optional<CudaLuPlan> cuda_plan;
  /// cuda: the GEMM kernel family of the trailing updates (GemmInfo::kernels of the first).
  std::optional<CudaKernels> gemm_kernels;
  std::optional<double> condition_estimate;
  /// Why the condition estimate ran or did not (SolveOptions::condition_estimate: "always",
  /// "never", or automatic's rule, e.g. "automatic: the FP64 fallback ran" or "automatic: not
  /// needed (classical refinement converged, every step contracting at least 10x)").
  std::string condition_estimate_reason;
  /// cond_1(A_s) of the equilibrated A_s = R A C (the matrix the LU factors; LAPACK's xGESVX
  /// reports this one), estimated the same way, only when condition_estimate is at the warning's
  /// level (cond_1(A) eps64 >= 1e-3) and R or C is not uniform: a badly scaled A (rows from 1e-300
  /// to 1e300: cond_1(A) = inf) whose equilibrated matrix is well-conditioned gets no
  /// "cannot be trusted" warning, and the note says why. nullopt otherwise.
  std::optional<double> condition_estimate_equilibrated;
  /// Human-readable warnings, no trailing period, returned as data (the library prints nothing):
  /// cond_1(A) eps64 >= 1e-3 (the forward error cannot be trusted, with the estimate), unless
  /// condition_estimate_equilibrated is below that level; with the
  /// system's x known, a forward error above 1e-3 although refinement converged, naming the
  /// likely causes (ill-conditioning with the estimate, or a file written column-major read as
  /// row-major).
  std::vector<std::string> warnings;
  /// solve(const Factorization&, ...): the LU was factorize()'s, made before this call and
  /// reused (time_s.factorization is then 0: this solve made no LU, FP32 or FP64, beyond an FP64
  /// LU for the fallback or the condition estimate, made once per factorization and kept).
  bool factorization_reused = false;
};

/// Bytes of device memory a cuda solve of order n with nrhs right-hand sides holds at its peak:
/// A in FP64 (8 n^2), the FP32 factors (4 n^2; rbt: of order n rounded up to a multiple of 4), the
/// FP64 fallback's LU when options.fallback (8 n^2), the vectors and the GEMM workspaces (64 MiB).
/// cuda solves (solve, solve_device) refuse a system that does not fit the free device memory
/// before allocating anything: InvalidInput naming the bytes needed and free.
double cuda_solve_bytes(std::int64_t n, std::int64_t nrhs, const SolveOptions& options);

/// Solves sys.A x = sys.b on options.backend (automatic: cuda when a usable GPU is present).
/// Both refinements run on both backends (cuda GMRES-IR: the Krylov basis and the FP64 products
/// on the device, Gram-Schmidt run twice in its classical form, the small least-squares problem
/// on the host). Throws InvalidInput for an exactly singular matrix: "matrix is exactly singular:
/// zero pivot in column j" when the FP32 LU meets an exact zero pivot and the FP64 LU of the
/// equilibrated A a zero or non-finite one, or when an FP64 LU made for the fallback or the
/// condition estimate does; "... rows i and j are equal up to sign and a power of two" (or
/// columns), looked for before any FP64 LU. Throws Unavailable when the variant has no
/// implementation on the backend, and when the backend is cuda and there is no usable device (or
/// the build has no CUDA).
SolveResult solve(const LinearSystem& sys, const SolveOptions& options);

/// The same on `where` (tcsolve/runtime/where.hpp): Where() the cpu backend, Where(context) the
/// cuda backend in that context (they replace options.backend and options.cuda_context). A group:
/// the distributed solver (distributed.hpp, solve_on_ranks: every rank passes the whole system,
/// on a 1 x ranks grid) on an mpi() group of cpu ranks; other groups are refused (Unavailable)
/// for now.
SolveResult solve(const LinearSystem& sys, const SolveOptions& options, const runtime::Where& where);

/// A system already in device memory (cuda backend), FP64: A n x n, B n x nrhs, column-major
/// with leading dimensions lda, ldb >= n, or with row_major both row-major (C order) with
/// lda >= n, ldb >= nrhs.
struct DeviceSystemView {
  int n = 0, nrhs = 1;
  const double* A = nullptr;
  int lda = 0;
  const double* B = nullptr;
  int ldb = 0;
  bool row_major = false;
};

/// solve() of a system on the device without a host copy of A: A and B are copied on the device
/// (in options.cuda_context's stream order) and checked there (non-finite entries, zero rows and
/// columns: the messages of solve()); x is written to X (device; ldx >= n, or >= nrhs with
/// row_major) and returned in SolveResult::x as well (n x nrhs on the host). A comes to the host
/// only on the rare paths that need it (norms beyond 2^+-900, the search for equal rows or
/// columns before an FP64 LU). options.backend must be cuda or automatic with a usable device;
/// throws as solve().
SolveResult solve_device(const DeviceSystemView& system, double* X, int ldx, const SolveOptions& options);

/// The FP32 LU of the equilibrated matrix: P (R A C) = L U, L unit lower and U upper packed in
/// `lu` (column-major n x n), `perm[i]` the original row at position i.
struct LuFactorization {
  Eigen::MatrixXf lu;
  std::vector<int> perm;
  Eigen::VectorXd row_scale, col_scale;  ///< the powers of two R, C
  Variant resolved_variant = Variant::fp32_simt;
};

/// Blocked LU with partial pivoting in FP32 of R A C (cpu backend; trailing updates through
/// tcsolve::gemm(variant)). Throws InvalidInput naming the column of an exactly zero pivot.
LuFactorization lu_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm = {});

/// The same factorization on `backend` (automatic resolves), with `plan` and `ctx` on cuda (as in
/// SolveOptions). cuda: R and C computed on the device
/// (bitwise the cpu's), the LU row-major on the device with recursive panels (leaves of 32
/// columns by a thread-block-cluster kernel on Hopper, else cuSOLVER sgetrf), row interchanges by
/// kernels, U12 by a recursive TRSM, trailing updates by tcsolve::gemm(cuda, variant) beside the
/// next panel's factorization (look-ahead on two streams; the same factors as one stream); the factors
/// are copied back (column-major, as the cpu's). Throws
/// as lu_factorize, and Unavailable without a usable device.
LuFactorization lu_factorize(Backend backend, const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm = {}, const CudaLuPlan& plan = {},
                             cuda::Context* ctx = nullptr);

/// x = A^{-1} r using the factorization (FP32 triangular solves of the scaled system, result
/// in FP64): the correction step of refinement.
Eigen::MatrixXd lu_apply(const LuFactorization& f, const Eigen::MatrixXd& r);

/// Factor once, solve many (LAPACK dgetrf + dgetrs, SciPy lu_factor + lu_solve), each solve
/// refined to FP64 accuracy. factorize() runs what solve() runs before its refinement: the checks
/// of A, the equilibration A_s = R A C, the FP32 LU of A_s (or, variant auto with n below
/// fp64_below, the FP64 LU of A_s), and keeps the FP64 A for the residuals. solve(f, b) then
/// refines against A (or A^T) with the options given to factorize: bitwise the x of
/// solve(LinearSystem{A, b}, options), with the same refinement, fallback, condition estimate and
/// warnings; the FP64 LU of A_s that a fallback or the condition estimate needs is made on first
/// need and kept for later solves.
///
/// Pivoting rbt: the transformed LU; a solve whose refinement with it does not converge makes
/// partial pivoting's LU then (as solve() does) and keeps it; a breakdown in factorize makes it
/// there. A transposed solve corrects through A_s^-T = U A_r^-T V^T. On the cuda backend A and
/// partial pivoting's FP32 factors stay on the device (options.cuda_context's, or a context of
/// the factorization's own) and solves of A x = b reuse them (solves serialized on its stream);
/// rbt, fp64_below and A^T solves run solve(LinearSystem{op(A), b}) whole on cuda each time
/// (factorization_reused false, the note says so). A system whose A
/// lies below 2^-511 (prescale.hpp), or whose b does, is solved by solve(LinearSystem{A, b}, options)
/// whole (bitwise the same; the LU is then made again, and factorization_reused is false).
enum class Transpose { no, yes };

/// The factors of factorize(): opaque, movable, not copyable. Solves with one Factorization may
/// run on several threads at once (the FP64 LU made on first need is guarded by a lock), unless
/// options.interrupt or options.progress say otherwise.
class Factorization {
 public:
  struct State;
  explicit Factorization(std::unique_ptr<State> state);
  Factorization(Factorization&&) noexcept;
  Factorization& operator=(Factorization&&) noexcept;
  ~Factorization();

  int n() const;                      ///< the order of A
  const SolveOptions& options() const;  ///< as given to factorize, block size and pivoting resolved
  Variant resolved_variant() const;   ///< what the LU's first trailing update ran (fp64: the FP64 LU)
  bool fp64_lu() const;               ///< the LU is FP64 (SolveOptions::fp64_below)
  double seconds() const;             ///< the time factorize took
  const State& state() const;           ///< InvalidInput for a moved-from Factorization

 private:
  std::unique_ptr<State> state_;
};

/// Factors A (n x n, FP64, column-major) as solve() would (above). Throws as solve() does for
/// A: InvalidInput for an empty, non-square or non-finite A and for an exactly singular one
/// (a zero row or column; an FP32 zero pivot confirmed by the FP64 LU); Unavailable for a
/// variant without an implementation on the backend, or cuda without a usable device. options.interrupt
/// and options.progress are kept and used by the solves too (the caller keeps them alive).
Factorization factorize(const Eigen::MatrixXd& A, const SolveOptions& options);

/// Solves op(A) x = b (b n x nrhs; op(A) = A, or A^T with Transpose::yes) with the factors of
/// f, refined to FP64 accuracy against op(A) (dsgesv's criterion on op(A)), with f.options():
/// refinement, fallback (the FP64 LU of A_s, applied transposed for A^T), the condition estimate
/// cond_1(op(A)) and the warnings. Transpose::no gives bitwise the x of solve(LinearSystem{A, b},
/// f.options()). time_s.factorization is 0 and factorization_reused true. Throws InvalidInput
/// for b of another row count, no column, or non-finite entries.
SolveResult solve(const Factorization& f, const Eigen::MatrixXd& b, Transpose trans = Transpose::no);

/// Baseline methods of `compare`: on the cpu, Eigen FP64 PartialPivLU ("fp64-lu").
SolveResult solve_fp64_baseline(const LinearSystem& sys);

/// The baseline methods of `compare` on a backend (automatic resolves), in the order compare
/// runs them: cpu {"fp64-lu"}; cuda {"cusolver-dgetrf", "cusolver-dsgesv", "cusolver-dhgesv",
/// "cusolver-dbgesv", "cusolver-dxgesv"}.
std::vector<std::string> baseline_methods(Backend backend);

/// Solves with one method of baseline_methods():
///   fp64-lu          Eigen FP64 PartialPivLU (solve_fp64_baseline);
///   cusolver-dgetrf  cuSOLVER FP64 dgetrf + dgetrs;
///   cusolver-dsgesv, -dhgesv, -dbgesv, -dxgesv
///                    cuSOLVER's iterative-refinement solvers cusolverDnD{S,H,B,X}gesv: LU with
///                    FP32 / FP16 / BF16 / TF32 arithmetic, classical refinement in FP64 to
///                    dsgesv's criterion (cuSOLVER's default tolerance), at most 50 iterations,
///                    FP64 fallback.
/// converged: dsgesv's criterion holds for the returned x (checked here, as for every method);
/// history: the backward error of that x. IRS: iterations = cuSOLVER's niters when >= 0 (0
/// otherwise), fallback_used = niters < 0 (cuSOLVER solved again in FP64); the note gives niters.
/// cuda times: A and b are copied to the device first (phase "transfer", outside total);
/// dgetrf is the factorization, dgetrs the refinement; an IRS call is counted whole as
/// factorization (refinement 0). Throws InvalidInput for an unknown method or an exactly
/// singular matrix ("zero pivot in column j"), Unavailable for a cuda method without a device.
/// cuda methods run in `ctx` (nullptr: a context made for the call on the default stream).
SolveResult solve_baseline(const LinearSystem& sys, std::string_view method, cuda::Context* ctx = nullptr);

/// The same for the cusolver-* methods on a system already in device memory (DeviceSystemView,
/// checked and copied on the device as solve_device does; A comes to the host only where a norm
/// beyond 2^+-900 asks for it); forward_error is not set (no x_true here).
SolveResult solve_baseline_device(const DeviceSystemView& system, std::string_view method,
                                  cuda::Context* ctx = nullptr);

}  // namespace tcsolve
