// The reference of the cuda path's one-launch residual (cuda/small_residual.cu): r = b - A x in
// FP64 and the norms the refinement reads back (max |r_i|, max |x_i|), in the kernel's order of
// operations, so that the device's r and norms are bitwise this function's. Internal to
// tcsolve::solver; header-only and built on every backend (the cpu side of the [gpu] test's
// bitwise check, and the CI test of its residuals against the rounding-error bound).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "tcsolve/gemm/config.hpp"

namespace tcsolve::cpu {

/// Columns of A per part: the kernel's threads each form one row's inner product over one part.
inline constexpr int kSmallResidualPart = 32;

/// The parts of order n: part q holds the columns [32 q, min(n, 32 q + 32)).
TCSOLVE_HOST_DEVICE inline int small_residual_parts(int n) {
  return n < 1 ? 1 : (n + kSmallResidualPart - 1) / kSmallResidualPart;
}

/// r = b - A x for one right-hand side (A: n x n column-major, leading dimension lda), in this
/// order of operations (fma: one rounding):
///  1. per part q and row i: p_q(i) = the fma chain from 0 of a_ij x_j over the part's columns j,
///     ascending;
///  2. r_i = b_i - p_0(i), then r_i = r_i - p_q(i) for q = 1, 2, ...;
///  3. norms[0] = max_i |r_i|, norms[1] = max_i |x_i| (a NaN kept; max is exact in any order).
/// Accuracy: r_i differs from the exact b_i - (A x)_i by at most gamma_{32 + parts}
/// (|b_i| + (|A| |x|)_i) (Higham, Thm 3.4: at most 32 products and sums per part, then one
/// subtraction per part).
inline void small_residual_reference(int n, const double* a, int lda, const double* b, const double* x,
                                     double* r, double* norms) {
  const int parts = small_residual_parts(n);
  auto nan_max = [](double u, double v) { return (u != u || u > v) ? u : v; };
  double r_max = 0, x_max = 0;
  for (int i = 0; i < n; ++i) {
    double ri = b[i];
    for (int q = 0; q < parts; ++q) {
      double p = 0;
      for (int j = q * kSmallResidualPart; j < std::min(n, (q + 1) * kSmallResidualPart); ++j)
        p = std::fma(a[i + static_cast<std::size_t>(j) * static_cast<std::size_t>(lda)], x[j], p);
      ri -= p;
    }
    r[i] = ri;
    r_max = nan_max(std::fabs(ri), r_max);
    x_max = nan_max(std::fabs(x[i]), x_max);
  }
  norms[0] = r_max;
  norms[1] = x_max;
}

}  // namespace tcsolve::cpu
