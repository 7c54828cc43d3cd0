// The kernels of the distributed LU on GPU members (distributed_lu_cuda.cpp): one member's
// piece of a 1 x Q block-cyclic A, all n rows of its local columns. The FP64 piece is
// column-major (ScaLAPACK's local layout, leading dimension lda); the FP32 factors are ROW-MAJOR
// (the one-GPU LU's layout: a row interchange moves contiguous rows), leading dimension ldt.
// Internal to tcsolve::solver; host declarations, kernels in distributed_kernels.cu.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tcsolve::cuda::kernels {

/// row_max[i] = max_j |a(i, j)|, row_sum[i] = sum_j |a(i, j)| (in column order) over the local
/// columns j < cols of the FP64 piece (n rows, leading dimension lda).
void piece_row_max_sum(CUstream_st* stream, const double* a, int lda, int n, int cols, double* row_max,
                       double* row_sum);

/// row_scale[i] = 2^e(row_max[i]) (detail::equilibration_exponent: the single process' rule).
void row_scales(CUstream_st* stream, const double* row_max, int n, double* row_scale);

/// For the local columns j < cols: col_scale[j] = 2^e(max_i row_scale[i] |a(i, j)|), col_sum[j] =
/// sum_i |a(i, j)| (||A||_1's column sums), col_sum_s[j] = col_scale[j] sum_i row_scale[i] |a(i, j)|
/// (||A_s||_1's), and t(i, j) = fp32_rn((row_scale[i] a(i, j)) col_scale[j]) at t + i ldt + j
/// (row-major; t nullptr: not written).
void piece_columns(CUstream_st* stream, const double* a, int lda, int n, int cols, const double* row_scale,
                   double* col_scale, double* col_sum, double* col_sum_s, float* t, int ldt);

/// Ints of block_moves' scratch for blocks of at most w columns: the count, then dst, src and
/// perm entries, 2w each.
std::size_t block_moves_ints(int w);

/// The moves of one block's composed interchanges: for every row i in [j, n) with origin[i] !=
/// i (origin: BlockPanel's, broadcast), the pair (i, origin[i]) into scratch (at most 2w of
/// them, in no fixed order) and perm[i] = old perm[origin[i]]. One CTA.
void block_moves(CUstream_st* stream, const int* origin, int j, int n, int w, int* perm, int* scratch);

/// A range of columns [lo, hi) (empty when lo >= hi).
struct Columns {
  int lo = 0, hi = 0;
};

/// Moves the rows of block_moves' pairs (row dst receives old row src) in the columns `in` of the
/// row-major t (leading dimension ldt) outside `skip`, through `rows` (2w x (in.hi - in.lo)
/// floats: the moved rows gathered, then written): the same result in any pair order.
void move_rows(CUstream_st* stream, float* t, int ldt, Columns in, Columns skip, const int* scratch, int w,
               float* rows);

/// The member's columns of A_s = R A C in FP64: s(i, j) = (row_scale[i] a(i, j)) col_scale[j] (exact:
/// powers of two; the single process' A_s), column-major both (leading dimensions lda, lds);
/// row_scale n entries, col_scale `cols` (the local columns'), on the device.
void scaled_piece(CUstream_st* stream, const double* a, int lda, int n, int cols, const double* row_scale,
                  const double* col_scale, double* s, int lds);

/// The search for equal lines' samples (input_checks.hpp, sample_positions p_0..p_{c-1}) from
/// the member's FP64 piece (n rows, `cols` local columns of the 1 x members block-cyclic map with
/// blocks of nb, leading dimension lda): out_rows[k n + g] = A(p_k, g) for its columns g,
/// out_columns[k n + i] = A(i, p_k) where it owns column p_k. The rest of both (c n each) is left
/// as it is: zero it first, so that a sum over the members gives every entry.
void piece_samples(CUstream_st* stream, const double* a, int lda, int n, int cols, int nb, int member, int members,
                   const int* positions, int c, double* out_columns, double* out_rows);

/// One block of a fanned-in triangular sweep on its owner: out[i] = sum over k < w in order of
/// m[k + i w] (v[k] - acc[k]) (m: the block's inverse, column-major w x w, applied transposed;
/// acc may be null: v alone), a warp per output; out must not overlap v or acc. (cublasSaxpy,
/// cublasSgemv and a copy before session 27: three dependent launches on the sweeps' chain.)
void block_solve(CUstream_st* stream, const float* m, int w, const float* v, const float* acc, float* out);

/// acc[i] += sum over k < w in order of f[i ldf + k] x[k] for i < rows (f row-major, rows of w
/// values at a stride of ldf): the fanned-in sweeps' products of a block's solution with the
/// factors' rows, a warp per row reading 16 bytes a lane where the rows allow (cublasSgemv
/// before session 27: about 1.5 TB/s on these shapes, so the products beyond the next block
/// set the sweeps' pace).
void rows_dot(CUstream_st* stream, const float* f, int ldf, int rows, int w, const float* x, float* acc);

/// One block of a fanned-out transposed sweep on its owner: out[i] = sum over k < w in order of
/// m[i + k w] ((v[k] - acc1[k]) - acc2[k]) (m: the block's inverse, column-major w x w, applied
/// as it is), by 8 groups of k per output (each group's sum in k order, the groups' sums added
/// in group order); out must not overlap v, acc1 or acc2.
void block_solve_n(CUstream_st* stream, const float* m, int w, const float* v, const float* acc1, const float* acc2,
                   float* out);

/// The floats of cols_dot's scratch for `cols` columns.
std::size_t cols_dot_scratch(int cols);

/// acc[c] += sum over r < rows of f[r ldf + c] x[r] for c < cols (f row-major at a stride of
/// ldf): the fanned-out transposed sweeps' products of a block's solution with the factors' rows
/// of that block, over a member's columns. Rows in 8 chunks (each chunk's sum in row order, a
/// thread a column), the chunks' sums added in chunk order by a second kernel; `scratch`:
/// cols_dot_scratch(cols) floats, not shared with a concurrent call.
void cols_dot(CUstream_st* stream, const float* f, int ldf, int rows, int cols, const float* x, float* acc,
              float* scratch);

/// LAPACK dlaswp on the column-major FP64 factors: for i = 0 .. w - 1 in order, rows j + i and
/// ipiv[i] - 1 (ipiv 1-based over the whole matrix, as the panel's dgetrf gives them shifted by
/// j) swap in the local columns [0, cols) outside `skip` (leading dimension lda).
void swap_rows(CUstream_st* stream, double* a, int lda, int cols, Columns skip, const int* ipiv, int j, int w);

}  // namespace tcsolve::cuda::kernels

namespace tcsolve::cuda::kernels {

/// The random mode's A (generate.hpp, by blocks: A(i, j) = philox::uniform_pair's element i n + j
/// of stream 2 under `seed`) for the local columns l < cols of a member of a 1 x q_count grid of
/// nb-column blocks (global column (l / nb q_count + q) nb + l mod nb), into a (column-major,
/// leading dimension lda): bitwise the generator's.
void random_columns(CUstream_st* stream, std::uint64_t seed, int n, int nb, int q, int q_count, int cols, double* a,
                    int lda);

/// b = A x of the random mode (b(i) = sum over j = 0..n-1 in order of A(i, j) x(j), each product
/// and sum rounded, no FMA: bitwise the host generator's), A regenerated from `seed` (every
/// member makes all of b alone); x: n doubles (random_x_true) on the device.
void random_rhs(CUstream_st* stream, std::uint64_t seed, int n, const double* x, double* b);

}  // namespace tcsolve::cuda::kernels
