// lu_apply_reference (lu_apply.hpp): the one-launch FP64 solve's arithmetic, sequentially.
#include "lu_apply.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace tcsolve::cpu {
namespace {

constexpr int kPartCols = kLuApplyBlock / kLuApplyParts;

/// w_i -= the product of row i of the columns [c0, c1) with w[c0, c1), in the parts' order.
double block_product(const double* lu, int n, int i, int c0, int c1, const double* w) {
  double s[kLuApplyParts];
  for (int p = 0; p < kLuApplyParts; ++p) {
    s[p] = 0;
    for (int j = 0; j < kPartCols; ++j) {
      const int c = c0 + p * kPartCols + j;
      if (c < c1) s[p] = std::fma(lu[i + static_cast<std::size_t>(c) * n], w[c], s[p]);
    }
  }
  static_assert(kLuApplyParts == 4, "the tree below sums four parts");
  return (s[0] + s[1]) + (s[2] + s[3]);
}

}  // namespace

void lu_apply_reference(const double* lu, int n, const int* ipiv, const double* row_scale, const double* col_scale,
                        const double* rhs, double* out) {
  auto a = [&](int i, int j) { return lu[i + static_cast<std::size_t>(j) * n]; };
  double m = 0;
  for (int i = 0; i < n; ++i) {
    const double v = std::fabs(row_scale[i] * rhs[i]);
    if (std::isnan(v) || v > m) m = std::isnan(m) ? m : v;
  }
  int k = 0;
  if (m > 0 && m <= std::numeric_limits<double>::max()) std::frexp(m, &k);
  std::vector<double> w(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) w[i] = std::ldexp(rhs[i], std::ilogb(row_scale[i]) - k);
  for (int i = 0; i < n; ++i) std::swap(w[i], w[ipiv[i] - 1]);
  for (int r0 = 0; r0 < n; r0 += kLuApplyBlock) {  // L, top down
    const int r1 = std::min(n, r0 + kLuApplyBlock);
    for (int c = r0; c < r1; ++c)
      for (int r = c + 1; r < r1; ++r) w[r] = std::fma(-a(r, c), w[c], w[r]);
    for (int i = r1; i < n; ++i) w[i] = w[i] - block_product(lu, n, i, r0, r1, w.data());
  }
  const int blocks = (n + kLuApplyBlock - 1) / kLuApplyBlock;
  for (int b = blocks - 1; b >= 0; --b) {  // U, bottom up
    const int r0 = b * kLuApplyBlock, r1 = std::min(n, r0 + kLuApplyBlock);
    for (int c = r1 - 1; c >= r0; --c) {
      w[c] = w[c] * (1.0 / a(c, c));
      for (int r = r0; r < c; ++r) w[r] = std::fma(-a(r, c), w[c], w[r]);
    }
    for (int i = 0; i < r0; ++i) w[i] = w[i] - block_product(lu, n, i, r0, r1, w.data());
  }
  for (int i = 0; i < n; ++i) out[i] = std::ldexp(w[i], std::ilogb(col_scale[i]) + k);
}

}  // namespace tcsolve::cpu
