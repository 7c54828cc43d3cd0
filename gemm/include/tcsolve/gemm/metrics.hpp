// Accuracy metrics against an FP64 product of the same FP32 inputs.
#pragma once

#include <vector>

#include "tcsolve/gemm/gemm.hpp"

namespace tcsolve {

/// op(A) * op(B) (m x n, column-major, leading dimension m) in double from the FP32 inputs:
/// the reference C64 of docs/architecture.md (Eigen double on the host).
std::vector<double> reference_product(Op ta, Op tb, int m, int n, int k, const float* A, int lda,
                                      const float* B, int ldb);

/// ||C - C64||_F / ||C64||_F (Ootomo's relative residual); C has leading dimension ldc, C64 m.
double relative_residual(const float* C, int ldc, const double* C64, int m, int n);

/// max_ij |C_ij - C64_ij| / |C64_ij| over the entries with C64_ij != 0 (LE-GEMM's Max_error,
/// Eq. 19); an entry with C64_ij == 0 and C_ij != 0 makes it inf.
double max_relative_error(const float* C, int ldc, const double* C64, int m, int n);

/// || |op(A)| |op(B)| ||_F in double: the scale of the componentwise error bound
/// |C - C64| <= c * u * |A||B| used by the tests.
double abs_product_norm(Op ta, Op tb, int m, int n, int k, const float* A, int lda, const float* B,
                        int ldb);

/// ||C - C64||_F (absolute).
double residual_norm(const float* C, int ldc, const double* C64, int m, int n);

}  // namespace tcsolve
