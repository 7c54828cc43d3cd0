// coop_lu_reference (coop_lu.hpp): the one-launch FP64 LU's arithmetic, sequentially.
#include "coop_lu.hpp"

#include <cmath>
#include <cstddef>
#include <utility>

namespace tcsolve::cpu {

int coop_lu_reference(double* a, int n, int lda, int nb, int* ipiv) {
  auto at = [&](int i, int j) -> double& { return a[i + static_cast<std::size_t>(j) * lda]; };
  int info = 0;
  for (int j0 = 0; j0 < n; j0 += nb) {
    const int w = n - j0 < nb ? n - j0 : nb;
    // the panel: columns [j0, j0 + w), rows [j0, n)
    for (int jj = j0; jj < j0 + w; ++jj) {
      int p = -1;
      double best = -1;
      for (int r = jj; r < n; ++r) {
        const double v = std::fabs(at(r, jj));
        if (v > best) best = v, p = r;  // the first of the largest; NaN never
      }
      if (p < 0) p = jj;
      ipiv[jj] = p + 1;
      if (p != jj)
        for (int c = j0; c < j0 + w; ++c) std::swap(at(jj, c), at(p, c));
      const double pivot = at(jj, jj);
      if (pivot == 0 && info == 0) info = jj + 1;
      for (int r = jj + 1; r < n; ++r) {
        double l = at(r, jj);
        if (pivot != 0) l = l / pivot;
        at(r, jj) = l;
        for (int c = jj + 1; c < j0 + w; ++c) at(r, c) = std::fma(-l, at(jj, c), at(r, c));
      }
    }
    // every other column: the panel's swaps, in order
    for (int jj = j0; jj < j0 + w; ++jj) {
      const int p = ipiv[jj] - 1;
      if (p == jj) continue;
      for (int c = 0; c < n; ++c)
        if (c < j0 || c >= j0 + w) std::swap(at(jj, c), at(p, c));
    }
    // right of the panel: the block row by substitution, then the rows below
    for (int c = j0 + w; c < n; ++c) {
      for (int i = 1; i < w; ++i)
        for (int k = 0; k < i; ++k) at(j0 + i, c) = std::fma(-at(j0 + i, j0 + k), at(j0 + k, c), at(j0 + i, c));
      for (int r = j0 + w; r < n; ++r)
        for (int k = 0; k < w; ++k) at(r, c) = std::fma(-at(r, j0 + k), at(j0 + k, c), at(r, c));
    }
  }
  return info;
}

}  // namespace tcsolve::cpu
