// FP64 reference product and the accuracy metrics of gemm-bench and the tests.
#include "tcsolve/gemm/metrics.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <limits>

namespace tcsolve {
namespace {

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

/// op(X) as a dense double matrix (rows x cols of op(X)); X is stored column-major with ld.
MatD op_as_double(Op op, int rows, int cols, const float* X, int ld, bool absolute) {
  MatD out(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      const float v = op == Op::n ? X[i + static_cast<std::size_t>(j) * ld] : X[j + static_cast<std::size_t>(i) * ld];
      out(i, j) = absolute ? std::fabs(static_cast<double>(v)) : static_cast<double>(v);
    }
  return out;
}

}  // namespace

std::vector<double> reference_product(Op ta, Op tb, int m, int n, int k, const float* A, int lda,
                                      const float* B, int ldb) {
  const MatD a = op_as_double(ta, m, k, A, lda, false);
  const MatD b = op_as_double(tb, k, n, B, ldb, false);
  std::vector<double> c(static_cast<std::size_t>(m) * n);
  Eigen::Map<MatD>(c.data(), m, n).noalias() = a * b;
  return c;
}

double abs_product_norm(Op ta, Op tb, int m, int n, int k, const float* A, int lda, const float* B,
                        int ldb) {
  const MatD a = op_as_double(ta, m, k, A, lda, true);
  const MatD b = op_as_double(tb, k, n, B, ldb, true);
  return (a * b).norm();
}

double residual_norm(const float* C, int ldc, const double* C64, int m, int n) {
  double sum = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double d = static_cast<double>(C[i + static_cast<std::size_t>(j) * ldc]) - C64[i + static_cast<std::size_t>(j) * m];
      sum += d * d;
    }
  return std::sqrt(sum);
}

double relative_residual(const float* C, int ldc, const double* C64, int m, int n) {
  double ref = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(m) * n; ++i) ref += C64[i] * C64[i];
  return residual_norm(C, ldc, C64, m, n) / std::sqrt(ref);
}

double max_relative_error(const float* C, int ldc, const double* C64, int m, int n) {
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double ref = C64[i + static_cast<std::size_t>(j) * m];
      const double d = std::fabs(static_cast<double>(C[i + static_cast<std::size_t>(j) * ldc]) - ref);
      if (std::isnan(d)) return std::numeric_limits<double>::quiet_NaN();
      if (ref == 0) {
        if (d != 0) return std::numeric_limits<double>::infinity();
        continue;
      }
      worst = std::max(worst, d / std::fabs(ref));
    }
  return worst;
}

}  // namespace tcsolve
