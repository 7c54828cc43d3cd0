// The reference of the cuda path's one-launch FP64 LU (cuda/coop_lu.cu): the same partial-pivoting
// LU in the same order of operations, element by element, so that the device's factors, pivots and
// info are bitwise this function's. Internal to tcsolve::solver; built on every backend (the cpu
// side of the [gpu] test's bitwise check, and the CI test of its factors against Eigen's).
#pragma once

namespace tcsolve::cpu {

/// dgetrf's contract on the column-major n x n A (leading dimension lda >= n): A := L \ U with
/// P A = L U, ipiv[j] the 1-based row swapped with row j + 1 (LAPACK's), and the return value
/// info: 0, or the 1-based column of the first exactly zero pivot (the factorization goes on, as
/// dgetrf does). The order of operations is coop_lu.cu's, by panels of nb columns (1 <= nb <= 32):
///  - in a panel, column by column: the pivot is the first row of largest |a| at or below the
///    diagonal (NaN never chosen; none found: no swap), the swap spans the panel's columns, the
///    multipliers are a / pivot (left as they are under a zero pivot), and every entry to the
///    right in the panel takes fma(-l, u, a);
///  - every other column takes the panel's swaps, then, right of the panel, the block row by
///    unit-lower substitution (x_i = fma(-l_ik, x_k, x_i), k ascending) and the rows below by
///    a = fma(-l_rk, u_kc, a), k ascending over the panel's columns.
int coop_lu_reference(double* a, int n, int lda, int nb, int* ipiv);

}  // namespace tcsolve::cpu
