// The reference of the GPU LU's diagonal-block solves (cuda/trsm_leaf.cu, CudaLuPlan::trsm_leaves
// kernel): x := M^-1 x for one vector, M lower triangular of order w <= kTrsmLeafMaxWidth, unit or
// not, in the kernel's order of operations, so that the device's solutions are bitwise this
// function's. Internal to tcsolve::solver; header-only and built on every backend (the cpu side
// of the [gpu] test's bitwise check, and the CI test of its solutions against forward
// substitution's rounding-error bound).
#pragma once

#include <cmath>
#include <cstddef>

namespace tcsolve::cpu {

/// The widest diagonal block the kernel solves (one vector's entries in one thread's registers).
inline constexpr int kTrsmLeafMaxWidth = 64;

/// x := M^-1 x in place, x's entry e at x[e * stride]; M(e, k) for e > k is m(e, k), M(k, k) is
/// diag(k) (not read when unit: 1). Right-looking, in this order of operations (fma: one
/// rounding):
///   for k = 0 .. w-1:  x_k = x_k / M(k, k) (not when unit);
///                      x_e = fma(-x_k, M(e, k), x_e) for e = k+1 .. w-1.
/// So every x_e is b_e less its products in ascending k, then divided: forward substitution,
/// whose computed x solves (M + dM) x = b with |dM| <= gamma_w |M| (Higham, Thm 8.5). A NaN or
/// an infinity spreads as IEEE arithmetic spreads it (a zero M(k, k) gives infinities).
template <class Entry, class Diagonal>
void trsm_leaf_substitute(float* x, std::ptrdiff_t stride, int w, bool unit, Entry m, Diagonal diag) {
  for (int k = 0; k < w; ++k) {
    float& xk = x[k * stride];
    if (!unit) xk = xk / diag(k);
    const float minus = -xk;
    for (int e = k + 1; e < w; ++e) x[e * stride] = std::fma(minus, m(e, k), x[e * stride]);
  }
}

}  // namespace tcsolve::cpu
