// Exact tier: the hi/lo splits of split.hpp, and Ootomo's expected kept mantissa (Tables 1-2).
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "tcsolve/gemm/split.hpp"

using namespace tcsolve;

namespace {

/// Mantissa bits of v in [1, 2) that hi + lo reproduces, counted as the paper's Tables 1 and 2
/// count them: the 23 explicit bits minus the bits lost, where the loss is the error
/// e = v - (hi + lo) (exact in double) in units of v's last place 2^-23: a loss of L bits is an
/// error in [2^(L-1), 2^L) units ("1" = 1 bit, "11" = 2 bits in the paper's examples).
int kept_bits(float v, Rounding r) {
  const SplitPair s = split_fp16_unscaled(v, r);
  const double e = std::fabs(static_cast<double>(v) - (static_cast<double>(s.hi) + s.lo));
  if (e == 0.0) return 23;
  const int lost = static_cast<int>(std::floor(std::log2(e / 0x1p-23))) + 1;
  return 23 - lost;
}

struct KeptStats {
  double mean = 0, p21 = 0, p22 = 0, p23 = 0;
};

KeptStats measure(Rounding r) {
  // Assumption 1: every mantissa bit 1 with probability 1/2, independently; v in [1, 2) so
  // neither hi nor lo can underflow (lo >= 2^-24 is on FP16's subnormal grid at worst).
  std::mt19937_64 rng(2024);
  const int samples = 1 << 20;
  KeptStats s;
  for (int t = 0; t < samples; ++t) {
    const float v = bits_float(0x3f800000u | static_cast<std::uint32_t>(rng() & 0x7fffffu));
    const int k = kept_bits(v, r);
    s.mean += k;
    s.p21 += k == 21, s.p22 += k == 22, s.p23 += k == 23;
  }
  s.mean /= samples, s.p21 /= samples, s.p22 /= samples, s.p23 /= samples;
  return s;
}

}  // namespace

// 2^20 samples: the standard error of the mean is below 0.5 / 2^10 = 5e-4 and of each
// probability below 5e-4, so the tolerances 0.01 and 0.005 are 10-20 standard errors wide
// while a one-bit miscount in a quarter of the cases would move the mean by 0.25.
TEST_CASE("the unscaled FP16 hi+lo split keeps 22.75 mantissa bits on average with RN (Ootomo Table 1)", "[exact]") {
  const KeptStats s = measure(Rounding::rn);
  INFO("mean " << s.mean << " P(21) " << s.p21 << " P(22) " << s.p22 << " P(23) " << s.p23);
  CHECK(s.mean == Approx(22.75).margin(0.01));
  CHECK(s.p21 == 0.0);
  CHECK(s.p22 == Approx(0.25).margin(0.005));
  CHECK(s.p23 == Approx(0.75).margin(0.005));
}

TEST_CASE("the unscaled FP16 hi+lo split keeps 22.25 mantissa bits on average with RZ (Ootomo Table 2)", "[exact]") {
  const KeptStats s = measure(Rounding::rz);
  INFO("mean " << s.mean << " P(21) " << s.p21 << " P(22) " << s.p22 << " P(23) " << s.p23);
  CHECK(s.mean == Approx(22.25).margin(0.01));
  CHECK(s.p21 == Approx(0.25).margin(0.005));
  CHECK(s.p22 == Approx(0.25).margin(0.005));
  CHECK(s.p23 == Approx(0.50).margin(0.005));
}

TEST_CASE("RNA keeps the same 22.75 bits as RN (Ootomo Sec. 3.1)", "[exact]") {
  CHECK(measure(Rounding::rna).mean == Approx(22.75).margin(0.01));
}

TEST_CASE("splits give representable parts, an exact residual and the derived reconstruction error", "[exact]") {
  std::mt19937_64 rng(77);
  for (int t = 0; t < 300000; ++t) {
    // |a| in [2^-12, 2^15): every lo bit is above FP16's 2^-24 grid for the 2^11-scaled splits
    const int e = -12 + static_cast<int>(rng() % 27);
    const float a = bits_float((static_cast<std::uint32_t>(rng() & 1u) << 31) |
                               (static_cast<std::uint32_t>(e + 127) << 23) |
                               static_cast<std::uint32_t>(rng() & 0x7fffffu));
    const double ad = a;
    INFO("a = " << a);

    const SplitPair o16 = split_ootomo_fp16(a);
    REQUIRE(round_fp16(o16.hi, Rounding::rn) == o16.hi);
    REQUIRE(round_fp16(o16.lo, Rounding::rn) == o16.lo);
    REQUIRE(static_cast<double>(a - o16.hi) == ad - o16.hi);  // the FP32 residual is exact
    // at least 22 of 24 significant bits survive (Table 1: one bit lost at worst): error < 2^-22 |a|
    REQUIRE(std::fabs(ad - (o16.hi + static_cast<double>(o16.lo) / kOotomoScale)) < std::ldexp(std::fabs(ad), -22));

    const SplitPair t32 = split_ootomo_tf32(a);
    REQUIRE((float_bits(t32.hi) & 0x1fffu) == 0u);
    REQUIRE((float_bits(t32.lo) & 0x1fffu) == 0u);
    REQUIRE(std::fabs(ad - (t32.hi + static_cast<double>(t32.lo) / kOotomoScale)) < std::ldexp(std::fabs(ad), -22));

    // LE-GEMM: hi truncated, so a - hi has a's sign and |a - hi| < 2^(e-10); its 2^10-scaled value
    // is below 2^e and RZ to 11 bits loses less than 2^(e-11) there, i.e. 2^(e-21) after the
    // division: error < 2^-21 |a|.
    const SplitPair le = split_legemm(a);
    REQUIRE(round_fp16(le.hi, Rounding::rz) == le.hi);
    REQUIRE(std::fabs(le.hi) <= std::fabs(a));
    REQUIRE(round_fp16(le.lo, Rounding::rz) == le.lo);
    REQUIRE(std::fabs(ad - (le.hi + static_cast<double>(le.lo) / kLegemmScale)) < std::ldexp(std::fabs(ad), -21));

    // Markidis unscaled: the residual lands on FP16's subnormal grid below 2^-14 * 2^10, so the
    // 22-bit guarantee only holds for |a| >= 1/2 (lo's last needed bit 2^(e-23) >= 2^-24).
    if (e >= -1) {
      const SplitPair mk = split_markidis(a);
      REQUIRE(std::fabs(ad - (static_cast<double>(mk.hi) + mk.lo)) < std::ldexp(std::fabs(ad), -22));
    }
  }
}

TEST_CASE("the 2^11 scaling keeps the residual that the unscaled Markidis split loses to underflow", "[exact]") {
  // a = 2^-10 * (1 + 2^-23 * 3): residual 3 * 2^-33 is below FP16's 2^-24 grid unscaled.
  const float a = std::ldexp(1.0f + 3 * 0x1p-23f, -10);
  const SplitPair mk = split_markidis(a);
  const SplitPair oo = split_ootomo_fp16(a);
  CHECK(mk.lo == 0.0f);
  CHECK(static_cast<double>(oo.hi) + static_cast<double>(oo.lo) / kOotomoScale == static_cast<double>(a));
}
