// The tensor-core accumulation model (tc_model.hpp): exact rounding of two-sum pairs.
#include "tcsolve/gemm/tc_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tcsolve {

double round_exact_sum(double s, double e, const NumberFormat& f, Rounding r) {
  if (s == 0.0 || !std::isfinite(s)) return s;  // s == 0 implies e == 0 for a two-sum pair
  const int ex = std::ilogb(s);                  // 2^ex <= |s| < 2^(ex+1)
  const int q = std::max(ex - (f.bits - 1), f.min_ulp_exp);  // exponent of the grid's unit
  const double scaled = std::ldexp(s, -q);       // exact: a power-of-two scaling
  double t = std::trunc(scaled);
  const double frac = scaled - t;                // exact, |frac| < 1
  const double sign = s < 0 ? -1.0 : 1.0;
  const bool e_toward_zero = e != 0.0 && ((e < 0) != (s < 0));  // the exact value is below |s|
  const bool e_away = e != 0.0 && !e_toward_zero;
  const double a = std::fabs(frac);
  switch (r) {
    case Rounding::rz:
      if (a == 0.0 && e_toward_zero) {
        // s sits on the grid and the exact value is just below it in magnitude: one unit down;
        // at a power of two that is not on the floor the grid below is twice as fine.
        const bool power_of_two = std::fabs(scaled) == std::ldexp(1.0, f.bits - 1);
        if (power_of_two && q > f.min_ulp_exp) return s - sign * std::ldexp(1.0, q - 1);
        t -= sign;
      }
      break;
    case Rounding::rn:
      if (a > 0.5 || (a == 0.5 && (e_away || (e == 0.0 && std::fmod(t, 2.0) != 0.0)))) t += sign;
      break;
    case Rounding::rna:
      if (a > 0.5 || (a == 0.5 && !e_toward_zero)) t += sign;
      break;
  }
  const double out = std::ldexp(t, q);
  if (std::fabs(out) > f.max_finite)
    return r == Rounding::rz ? sign * f.max_finite : sign * std::numeric_limits<double>::infinity();
  return out;
}

TensorCoreModel::TensorCoreModel(TcModel config)
    : config_(config),
      acc_{config.acc_bits, -1074, std::numeric_limits<double>::max()},
      // the addition of C happens in the accumulator too: a result never has more significand
      // bits than the accumulator (nor than its output format)
      out32_{std::min(config.acc_bits, kFormatFp32.bits), kFormatFp32.min_ulp_exp, kFormatFp32.max_finite},
      out16_{std::min(config.acc_bits, kFormatFp16.bits), kFormatFp16.min_ulp_exp, kFormatFp16.max_finite} {}

double TensorCoreModel::inner_sum(const float* a, const float* b, int ks) const {
  double acc = 0.0;
  for (int i = 0; i < ks; ++i) {
    const double p = static_cast<double>(a[i]) * static_cast<double>(b[i]);  // exact
    double s, e;
    two_sum(acc, p, s, e);
    acc = round_exact_sum(s, e, acc_, config_.rounding);
  }
  return acc;
}

float TensorCoreModel::mma_fp32(const float* a, const float* b, int ks, float c) const {
  const double acc = inner_sum(a, b, ks);
  double s, e;
  two_sum(acc, static_cast<double>(c), s, e);
  return static_cast<float>(round_exact_sum(s, e, out32_, config_.rounding));
}

float TensorCoreModel::mma_fp16(const float* a, const float* b, int ks, float c) const {
  const double acc = inner_sum(a, b, ks);
  double s, e;
  two_sum(acc, static_cast<double>(c), s, e);
  return static_cast<float>(round_exact_sum(s, e, out16_, config_.fp16_output_rounding));
}

}  // namespace tcsolve
