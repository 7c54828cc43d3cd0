// Overflow- and underflow-safe norms, shared by the cpu path and the cuda path (the stopping
// test, the backward and forward errors, the condition estimate): ScaledNorm, a non-negative
// number kept as its frexp parts, its exact arithmetic and comparisons, and ||A||_inf, ||A||_1 of
// a host matrix without overflow. Internal to tcsolve::solver; host code only.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

namespace tcsolve::detail {

/// A non-negative number m 2^e kept as its frexp parts (m in [1/2, 1), or m = 0, or m inf/NaN
/// for a norm that is not finite), so that products and quotients of norms neither overflow
/// nor underflow: ||A|| ||x|| eps64 of a system near 1e306, or of one near 1e-310, is a pair
/// of a moderate mantissa and an integer exponent, and comparisons are exact.
struct ScaledNorm {
  double m = 0;
  int e = 0;
  bool finite() const { return std::isfinite(m); }
  bool zero() const { return m == 0; }
  /// The value as a double (saturates to inf or flushes toward 0 when out of range).
  double value() const { return std::isfinite(m) ? std::ldexp(m, e) : m; }
};

/// v >= 0 (or inf/NaN) in frexp form (exact).
inline ScaledNorm scaled_norm(double v) {
  ScaledNorm s;
  if (!std::isfinite(v)) {
    s.m = std::isnan(v) ? v : std::numeric_limits<double>::infinity();
    return s;
  }
  s.m = std::frexp(std::abs(v), &s.e);
  return s;
}

/// a b (one rounding of the mantissas' product, exponents added exactly).
inline ScaledNorm times(ScaledNorm a, ScaledNorm b) {
  if (!a.finite() || !b.finite()) return scaled_norm(a.m * b.m);
  ScaledNorm p = scaled_norm(a.m * b.m);  // in [1/4, 1): no underflow
  p.e += a.e + b.e;
  return p;
}

/// a + b (the smaller mantissa aligned to the larger exponent: at most one rounding).
inline ScaledNorm plus(ScaledNorm a, ScaledNorm b) {
  if (!a.finite() || !b.finite()) return scaled_norm(a.m + b.m);
  if (a.zero()) return b;
  if (b.zero()) return a;
  const int k = std::max(a.e, b.e);
  ScaledNorm s = scaled_norm(std::ldexp(a.m, a.e - k) + std::ldexp(b.m, b.e - k));  // in [1/2, 2)
  s.e += k;
  return s;
}

/// a <= b, exactly (not finite: false).
inline bool less_equal(ScaledNorm a, ScaledNorm b) {
  if (!a.finite() || !b.finite()) return false;
  if (a.zero()) return true;
  if (b.zero()) return false;
  return a.e != b.e ? a.e < b.e : a.m <= b.m;
}

/// a / b as a double (inf when b is 0 and a is not, or when out of range; 0 / 0 = 0).
inline double quotient(ScaledNorm a, ScaledNorm b) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!a.finite() || !b.finite()) return kInf;
  if (a.zero()) return 0;
  if (b.zero()) return kInf;
  return std::ldexp(a.m / b.m, a.e - b.e);
}

/// ||A||_inf (max row sum of |a_ij|) and ||A||_1 (max column sum) without overflow for entries
/// near DBL_MAX and without losing a matrix of subnormals: summed as they are when the largest
/// |a_ij| lies in [2^-900, 2^900] (a sum of n < 2^100 terms cannot overflow, and the largest
/// row sum, at least max |a_ij|, is far from the subnormals), else summed scaled by 2^-E with
/// 2^E the largest |a_ij| (exact; entries far below it may flush, which changes the largest
/// sum, at least 2^(E-1), by less than n 2^-1074).
ScaledNorm norm_inf(const Eigen::MatrixXd& A);
ScaledNorm norm_1(const Eigen::MatrixXd& A);

}  // namespace tcsolve::detail
