// The checks of a solve's input (check_system, check_solve_options) and the certificates of an
// exactly singular A that need no factorization (a zero row or column; exact_singularity: two
// lines equal up to sign and a power of two), shared by the cpu path and the cuda path.
//
// Exactly singular (both paths): InvalidInput, with zero_pivot_message, when the FP32 LU meets an
// exact zero pivot and the FP64 LU of A_s a zero or non-finite one, or when any FP64 LU
// (fallback, condition estimate) does; and, before any FP64 LU, when two rows or two columns are
// equal up to sign and a power of two (exact_singularity: the blocked LU meets no exact zero for
// them; its comment says why). Host code only.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tcsolve/solver/solver.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve::detail {

/// "matrix is exactly singular: zero pivot in column <column + 1> (1-based)".
std::string zero_pivot_message(int column);

/// Throws InvalidInput unless A is square and non-empty, b has n rows and >= 1 column, both are
/// finite, and x_true (when present) has b's shape, and (exact singularity) no row or column of
/// A is zero. Returns max |a_ij|, found by the zero-column test's pass (prescale.hpp uses it).
double check_system(const LinearSystem& sys);

/// Throws InvalidInput for a block size < 1 or max_iterations < 0.
void check_solve_options(const SolveOptions& options);
/// InvalidInput for a plan field out of its range (leaf_chunk, panel_sms).
void check_plan(const CudaLuPlan& plan);

/// lu_factorize's checks (both backends): throws InvalidInput unless A is square and non-empty,
/// block_size >= 1 and A is finite.
void check_lu_input(const Eigen::MatrixXd& A, int block_size);

/// A certificate of exact singularity that needs no factorization: two rows, or two columns,
/// of A that are equal up to sign and a power of two (a_rj = s 2^k a_ij for all j, s = +-1;
/// rows or columns that are entirely zero are left to the LU's zero pivot). Returns the message
/// of the InvalidInput to throw ("matrix is exactly singular: rows 3 and 7 (1-based) are equal
/// up to sign and a power of two"), or nullopt. Exact: entries are compared by their frexp
/// parts (mantissa, sign, exponent difference), never by a rounded quotient. O(n^2) at most:
/// rows (columns) are grouped by a hash of 64 sampled columns (rows), only groups of two or
/// more are hashed in full, and only equal full hashes are compared entry by entry.
///
/// Why it is needed: the blocked LU does not meet an exact zero pivot for two equal rows. Inside
/// a panel the second row's update a_rj - 1 * u_j is exactly 0, but outside it the row receives
/// A22 - L21 U12, where U12 came from a triangular solve and the product from the GEMM (the
/// variant's rounding and order): the two round differently and leave O(u |a|) instead of 0, so
/// the LU goes on with a tiny pivot, refinement of a consistent b converges (the null-space
/// component of x is invisible to the residual) and the forward error is O(1). Equal columns
/// do not cancel exactly even unblocked ((a / p) p != a in floating point).
std::optional<std::string> exact_singularity(const Eigen::MatrixXd& A);

/// The positions exact_singularity samples in every row and column of an order-n matrix: 64
/// spread over [0, n) (all of them below n = 64).
std::vector<int> sample_positions(int n);
/// Fills `out` with row `line` (rows) or column `line` of the matrix, n values.
using LineFetch = std::function<void(bool rows, int line, std::vector<double>& out)>;
/// exact_singularity of a matrix given by its samples (row_samples[k n + i] = A(i, p_k),
/// column_samples[k n + j] = A(p_k, j), p = sample_positions(n)) and whole lines fetched on
/// demand: a matrix in device memory, whose samples are gathered there and read back at once.
/// The same answer as the host overload on the same matrix.
/// `whole`, when given, may return the whole matrix on the host (column-major, leading dimension
/// n; null: not affordable): the groups whose samples agree are then hashed in one pass over it
/// in its storage order instead of one fetch per line (a sparse matrix, whose samples are mostly
/// zero, puts most lines in such groups).
using WholeMatrix = std::function<const double*()>;
std::optional<std::string> exact_singularity(int n, const std::vector<double>& row_samples,
                                             const std::vector<double>& column_samples,
                                             const LineFetch& fetch, const WholeMatrix& whole = {});

/// That search in two halves, for a matrix spread over ranks (distributed_search.cpp): the
/// groups of rows and of columns whose sampled entries hash alike (pure host work, for a thread
/// beside the LU), then their verification on whole lines (`fetch`, a collective there: every
/// rank calls it for the same lines in the same order, as the groups are the same everywhere).
/// verify_candidates(sampled_candidates(...), fetch) is exact_singularity(...).
struct SampledCandidates {
  int n = 0;
  std::vector<std::vector<int>> rows, columns;  ///< groups of two or more lines each
};
SampledCandidates sampled_candidates(int n, const std::vector<double>& row_samples,
                                     const std::vector<double>& column_samples);
std::optional<std::string> verify_candidates(const SampledCandidates& candidates, const LineFetch& fetch,
                                             const WholeMatrix& whole = {});

}  // namespace tcsolve::detail
