// The distributed solve's operators on replicated vectors (distributed.hpp), internal to
// tcsolve::solver: every vector (b, x, r, d, the Krylov basis, the estimator's vectors) is held
// whole on every rank and is bitwise the same there, so that every rank takes the same decisions
// in the shared rules (refinement_rules.hpp, condition.hpp) and calls the same collectives.
//
//   distributed_apply.cpp        sums over ranks in rank order; A x and the norms of the
//                                distributed A; the solves with the distributed factors
//                                (L U)^-1 P and their transpose, in FP32 or FP64; the
//                                refinement's correction (lu_apply's scaling) and A^-1, A^-T as
//                                an EquilibratedInverse (condition.hpp).
//   distributed_equilibrate.cpp  R and C of the power-of-two equilibration from the distributed
//                                A, the local piece of A_s = R A C, ||A_s||_1.
//   distributed_gmres.cpp        one GMRES cycle of GMRES-IR on M^-1 A d = M^-1 r.
//   distributed_condition.cpp    cond_1(A) and cond_1(A_s) from the distributed factors.
//   distributed_search.cpp       what the condition estimate's automatic rule asks of the
//                                distributed factors and A: U's diagonal span, the search for
//                                rows or columns equal up to sign and a power of two.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../input_checks.hpp"

#include "../condition.hpp"
#include "../scaled_norm.hpp"
#include "grid_comms.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve::distributed {

/// The distributed FP64 A: this rank's piece and the layout.
struct PieceA {
  const double* a;
  int ld, rows, cols;  // local
  CyclicMap row_map, col_map;
  int prow, pcol;
};

/// The equilibration's R and C (powers of two, n each), the same on every rank.
struct Scales {
  Eigen::VectorXd row, col;
};

// distributed_apply.cpp

/// The sum over the ranks of `comm` of every rank's v, in rank order (the same bits on every
/// rank, unlike an allreduce whose order may differ between ranks).
Eigen::MatrixXd sum_in_rank_order(runtime::Communicator& comm, const Eigen::MatrixXd& v);

/// A x for x whole (n x nrhs) on every rank; the result whole on every rank.
Eigen::MatrixXd product(GridComms& g, const PieceA& A, const Eigen::MatrixXd& x);

/// ||A||_inf and ||A||_1 without overflow or underflow, as detail::norm_inf / norm_1 of the whole A
/// (scaled_norm.hpp: summed scaled by 2^-E when the largest |a_ij| = 2^E lies outside
/// [2^-900, 2^900]), the same on every rank.
detail::ScaledNorm norm_inf(GridComms& g, const PieceA& A);
detail::ScaledNorm norm_1(GridComms& g, const PieceA& A);

/// W := (L U)^-1 P W (solve_factors) and W := P^T (L U)^-T W (solve_factors_transpose) with the
/// distributed factors P A_s = L U in T, W whole on every rank (n x k), rounded to T on the way
/// in as it is (the caller scales it: lu_apply's or EquilibratedInverse's scaling).
template <class T>
void solve_factors(GridComms& g, const DistributedFactors<T>& f, Eigen::MatrixXd& w);
template <class T>
void solve_factors_transpose(GridComms& g, const DistributedFactors<T>& f, Eigen::MatrixXd& w);

/// d = C (L U)^-1 P R r with the FP32 factors of A_s = R A C (lu_apply's scaling: each column of
/// R r to ||.||_inf in [1/2, 1) by a power of two before its FP32 rounding): the refinement's
/// correction and GMRES-IR's preconditioner.
Eigen::MatrixXd apply_lu(GridComms& g, const DistributedLu& f, const Scales& s, const Eigen::MatrixXd& r);

/// A^-1 and A^-T through the distributed factors of A_s (condition.hpp): the condition estimate's
/// and the fallback's solves. g, f and s must outlive it.
template <class T>
detail::EquilibratedInverse inverse(GridComms& g, const DistributedFactors<T>& f, const Scales& s);

// distributed_equilibrate.cpp

/// R and C of A_s = R A C as the single-process equilibrate (cpu/blocked_lu.hpp): r_i from the
/// largest |a_ij| of row i, then c_j from the largest r_i |a_ij| of column j, each the power of
/// two detail::equilibration_exponent gives; maxima over ranks (exact, so the same bits as the
/// single process).
Scales equilibrate(GridComms& g, const PieceA& A);
/// This rank's piece of A_s = R A C (exact: powers of two), leading dimension A.ld.
std::vector<double> equilibrated_piece(const PieceA& A, const Scales& s);
/// ||A_s||_1 = max_j c_j sum_i r_i |a_ij| (condition.hpp's equilibrated_norm1, distributed).
detail::ScaledNorm equilibrated_norm_1(GridComms& g, const PieceA& A, const Scales& s);

// distributed_gmres.cpp

/// The preconditioner M^-1 v of GMRES-IR (apply_lu with the FP32 factors).
using Preconditioner = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

/// One GMRES cycle on M^-1 A d = M^-1 r (x0 = 0, FP64), as the cpu's gmres (cpu/refinement_cpu.hpp:
/// at most `cycle` inner iterations, stop at kGmresTolerance, modified Gram-Schmidt twice,
/// detail::GmresLeastSquares), with A x the distributed product. `iterations`: the inner
/// iterations done. Every rank calls it with the same r.
Eigen::VectorXd gmres(GridComms& g, const PieceA& A, const Preconditioner& m_inv, const Eigen::VectorXd& r,
                      int cycle, int& iterations);
/// The same with A x by `times_a` (the GPU members' product).
Eigen::VectorXd gmres(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& times_a,
                      const Preconditioner& m_inv, const Eigen::VectorXd& r, int cycle, int& iterations);

// distributed_condition.cpp

/// cond_1(A) (res.condition_estimate) and, where needed, cond_1(A_s)
/// (res.condition_estimate_equilibrated), as the single-process cpu solve: through the FP32
/// factors `fp32` with the resolution check, or through the FP64 LU `fp64()` where the FP32
/// factors do not resolve A^-1 or when `fp64_made` (the fallback made it). The note says when the
/// FP64 LU gave it.
void estimate_condition(GridComms& g, const PieceA& A, const Scales& s,
                        const detail::EquilibratedInverse& fp32, bool fp64_made,
                        const std::function<detail::EquilibratedInverse()>& fp64, SolveResult& res);
/// The same from ||A||_1, the product with A and ||A_s||_1 (asked for only when needed): the
/// GPU members' operations.
void estimate_condition(const detail::ScaledNorm& norm1, const detail::VectorMap& times_a,
                        const std::function<detail::ScaledNorm()>& norm1_s,
                        const detail::EquilibratedInverse& fp32, bool fp64_made,
                        const std::function<detail::EquilibratedInverse()>& fp64, SolveResult& res);

// distributed_search.cpp

/// max |u_ii| / min |u_ii| over U's diagonal, held by the ranks that own diagonal blocks (a
/// collective over g.world; the same on every rank).
template <class T>
double pivot_span(GridComms& g, const DistributedFactors<T>& f);

/// This rank's entries of lines of the original A: out[k n + i] = A(lines[k], i) (rows) or
/// A(i, lines[k]) (columns) where the rank holds them, 0 elsewhere (out resized to lines.size() n).
using LocalLines = std::function<void(bool rows, const std::vector<int>& lines, std::vector<double>& out)>;
/// v := the element-wise sum of every rank's v (a collective). Exact here: one rank holds each
/// entry, the others add zeros.
using RankSum = std::function<void(std::vector<double>& v)>;
/// A cpu rank's LocalLines for its host piece.
LocalLines local_lines(const PieceA& A);

/// detail::exact_singularity of the distributed A, as the single process searches (the same
/// sampled positions, groups and verification, so the same answer): the constructor, a
/// collective, sums the sampled lines over the ranks and starts the hashing on a host thread
/// beside the LU; result(), also a collective, waits for it and fetches the lines of any group
/// whose samples agree (none for most matrices), the same calls on every rank.
class DistributedSingularitySearch {
 public:
  /// The samples (row_samples, column_samples: exact_singularity's), summed over the ranks, as a
  /// function the hashing thread calls first (GPU members: their read-back from the device).
  using Samples = std::function<std::pair<std::vector<double>, std::vector<double>>()>;
  DistributedSingularitySearch(int n, LocalLines local, RankSum sum);
  /// With the samples' sum already enqueued (a collective made by the caller before this).
  DistributedSingularitySearch(int n, Samples samples, LocalLines local, RankSum sum);
  ~DistributedSingularitySearch();
  DistributedSingularitySearch(const DistributedSingularitySearch&) = delete;
  DistributedSingularitySearch& operator=(const DistributedSingularitySearch&) = delete;
  /// The message for the first pair of equal lines, or none; the same on every rank.
  std::optional<std::string> result();

 private:
  int n_;
  LocalLines local_;
  RankSum sum_;
  std::future<detail::SampledCandidates> candidates_;
  std::optional<std::optional<std::string>> answer_;  ///< result(), once verified
};

/// d = C (L U)^-1 P R r (apply_lu's scaling) through `solve` (W := (L U)^-1 P W in FP32).
Eigen::MatrixXd apply_lu_with(const std::function<void(Eigen::MatrixXd&)>& solve, const Scales& s,
                              const Eigen::MatrixXd& r);

}  // namespace tcsolve::distributed
