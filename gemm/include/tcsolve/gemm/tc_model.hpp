// The tensor-core arithmetic model of the CPU emulation, in one place.
//
// One mma k-step for one output element computes D = C + sum_{i<ks} a_i * b_i with
//   - products a_i * b_i exact (FP16/TF32/FP32 inputs: at most 48 bits, exact in double),
//   - a running sum that starts at 0 and after every addition is kept to `acc_bits` significand
//     bits, truncated (RZ) or rounded (RN) -- Ootomo & Yokota's mma_rz / mma_rn (Sec. 3.2),
//   - the addition of C rounded once to the output format (FP32, or FP16 for the FP16-
//     accumulating paths) with the same mode, and never to more bits than the accumulator
//     has (an accumulator narrower than FP32, like the e8m13 seen for FP8, shows in the output).
// Every rounding is of the exact sum (two-sum keeps the error term), so RZ of a sum that falls
// just below a representable value truncates correctly. Which variant accumulates what inside
// and outside the tensor core is decided by the variant, not here.
#pragma once

#include "tcsolve/gemm/gemm.hpp"

namespace tcsolve {

/// A target grid for rounding: `bits` significand bits, no grid finer than 2^min_ulp_exp,
/// magnitudes above max_finite overflow (to inf for RN/RNA, to max_finite for RZ).
struct NumberFormat {
  int bits;
  int min_ulp_exp;
  double max_finite;
};

inline constexpr NumberFormat kFormatFp32{24, -149, 3.4028234663852886e38};
inline constexpr NumberFormat kFormatFp16{11, -24, 65504.0};

/// Error-free sum: s = fl(a + b), e = (a + b) - s exactly.
inline void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

/// The exact value s + e (|e| <= ulp(s)/2, as two_sum gives) rounded to `format` with mode r.
double round_exact_sum(double s, double e, const NumberFormat& format, Rounding r);

class TensorCoreModel {
 public:
  explicit TensorCoreModel(TcModel config = {});

  /// round_fp32(c + acc_sum(a[0..ks) * b[0..ks))): one mma step, FP32 accumulator.
  float mma_fp32(const float* a, const float* b, int ks, float c) const;
  /// The same with the result rounded to FP16 (c and the result are FP16 values held in float).
  float mma_fp16(const float* a, const float* b, int ks, float c) const;

  const TcModel& config() const { return config_; }

 private:
  double inner_sum(const float* a, const float* b, int ks) const;
  TcModel config_;
  NumberFormat acc_, out32_, out16_;
};

}  // namespace tcsolve
