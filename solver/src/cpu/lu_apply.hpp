// The reference of the cuda path's one-launch FP64 solve (cuda/lu_apply.cu): x = C A_s^-1 R b with
// dgetrf's factors of A_s, the scalings of condition.hpp's EquilibratedInverse::apply, the row
// interchanges and both triangular solves in the kernel's order of operations, so that the
// device's x is bitwise this function's. Internal to tcsolve::solver; built on every backend (the
// cpu side of the [gpu] test's bitwise check, and the CI test of its solutions' backward error).
#pragma once

namespace tcsolve::cpu {

/// Rows (and columns) of the blocks lu_apply_reference works by: the diagonal blocks are solved
/// by substitution, the rest of the vector updated by products with a block's columns.
inline constexpr int kLuApplyBlock = 32;
/// A block's columns are summed in kLuApplyParts partial sums of kLuApplyBlock / kLuApplyParts.
inline constexpr int kLuApplyParts = 4;

/// out = C (P^T L U)^-1 R rhs for one column, with lu, ipiv dgetrf's factors of the column-major
/// n x n A_s (leading dimension n: L unit lower below the diagonal, U on and above it, ipiv[i]
/// the 1-based row swapped with row i + 1) and row_scale, col_scale powers of two (R and C), in
/// this order of operations (fma: one rounding):
///  1. k: the frexp exponent of max_i |row_i rhs_i| (0 when it is 0 or not finite);
///     w_i = ldexp(rhs_i, ilogb(row_i) - k);
///  2. the interchanges: swap(w_i, w_{ipiv_i - 1}) for i = 0, 1, ..., n - 1;
///  3. L: by blocks of kLuApplyBlock rows, top down: in the block, x_c = w_c and w_r = fma(-l_rc,
///     x_c, w_r) for its rows r > c, c ascending; then every row i below the block takes
///     w_i = w_i - ((s_0 + s_1) + (s_2 + s_3)), s_p = the fma chain from 0 of l_ic x_c over the
///     block's columns c in part p (8 columns each, ascending; past the last column: none);
///  4. U: by the same blocks, bottom up: in the block, x_c = w_c * (1 / u_cc) and w_r = fma(-u_rc,
///     x_c, w_r) for its rows r < c, c descending; then every row above the block as in 3;
///  5. out_i = ldexp(w_i, ilogb(col_i) + k).
/// out may be rhs.
void lu_apply_reference(const double* lu, int n, const int* ipiv, const double* row_scale, const double* col_scale,
                        const double* rhs, double* out);

}  // namespace tcsolve::cpu
