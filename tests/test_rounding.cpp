// Exact tier: the rounding helpers of rounding.hpp on hand-computed cases and exhaustively.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "tcsolve/gemm/rounding.hpp"
#include "tcsolve/gemm/tc_model.hpp"

using namespace tcsolve;

namespace {
const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();
float p2(int e) { return std::ldexp(1.0f, e); }
bool fp16_is_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
}  // namespace

TEST_CASE("every FP16 value converts to FP32 and back unchanged in every rounding mode", "[exact]") {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float v = fp16_value(bits);
    if (fp16_is_nan(bits)) {
      REQUIRE(std::isnan(v));
      REQUIRE(fp16_is_nan(fp16_bits(v, Rounding::rn)));
      continue;
    }
    for (Rounding r : {Rounding::rn, Rounding::rna, Rounding::rz}) REQUIRE(fp16_bits(v, r) == bits);
  }
}

TEST_CASE("FP16 rounding agrees with hand-computed ties, subnormals, overflow, inf and NaN", "[exact]") {
  struct Case {
    float x;
    std::uint16_t rn, rna, rz;
  };
  const Case cases[] = {
      {1.0f, 0x3c00, 0x3c00, 0x3c00},
      {1.0f + p2(-11), 0x3c00, 0x3c01, 0x3c00},                 // tie, even below
      {1.0f + 3 * p2(-11), 0x3c02, 0x3c02, 0x3c01},             // tie, even above
      {1.0f + p2(-11) + p2(-20), 0x3c01, 0x3c01, 0x3c00},       // just above the tie
      {-(1.0f + p2(-11) + p2(-20)), 0xbc01, 0xbc01, 0xbc00},    // RZ goes toward zero for negatives
      {-0.0f, 0x8000, 0x8000, 0x8000},
      {65504.0f, 0x7bff, 0x7bff, 0x7bff},                      // largest finite
      {65519.0f, 0x7bff, 0x7bff, 0x7bff},                      // below the overflow tie
      {65520.0f, 0x7c00, 0x7c00, 0x7bff},                      // tie at the top rounds to inf
      {1e6f, 0x7c00, 0x7c00, 0x7bff},
      {-1e6f, 0xfc00, 0xfc00, 0xfbff},
      {p2(-14), 0x0400, 0x0400, 0x0400},                       // smallest normal
      {p2(-14) - p2(-25), 0x0400, 0x0400, 0x03ff},             // 1023.5 units of 2^-24: tie to even 1024
      {p2(-24), 0x0001, 0x0001, 0x0001},                       // smallest subnormal
      {p2(-25), 0x0000, 0x0001, 0x0000},                       // half the smallest subnormal: tie to even 0
      {1.5f * p2(-25), 0x0001, 0x0001, 0x0000},
      {3 * p2(-25), 0x0002, 0x0002, 0x0001},                   // 1.5 units: tie to even 2
      {p2(-30), 0x0000, 0x0000, 0x0000},
      {kInf, 0x7c00, 0x7c00, 0x7c00},
      {-kInf, 0xfc00, 0xfc00, 0xfc00},
  };
  for (const Case& c : cases) {
    INFO("x = " << c.x);
    CHECK(fp16_bits(c.x, Rounding::rn) == c.rn);
    CHECK(fp16_bits(c.x, Rounding::rna) == c.rna);
    CHECK(fp16_bits(c.x, Rounding::rz) == c.rz);
  }
  for (Rounding r : {Rounding::rn, Rounding::rna, Rounding::rz}) CHECK(fp16_is_nan(fp16_bits(kNan, r)));
}

TEST_CASE("FP16 rounding agrees with an independent double-arithmetic rounding on random floats", "[exact]") {
  // round_exact_sum rounds a double onto a (bits, grid floor, max) format with ldexp/trunc:
  // different code from the bit manipulation of fp16_bits, same specification.
  std::mt19937_64 rng(11);
  for (int t = 0; t < 200000; ++t) {
    // exponents across FP16's range and beyond: biased FP32 exponent 90..150
    const std::uint32_t bits = (static_cast<std::uint32_t>(rng() & 1u) << 31) |
                               (static_cast<std::uint32_t>(90 + rng() % 61) << 23) |
                               static_cast<std::uint32_t>(rng() & 0x7fffffu);
    const float x = bits_float(bits);
    for (Rounding r : {Rounding::rn, Rounding::rna, Rounding::rz}) {
      const double ref = round_exact_sum(x, 0.0, kFormatFp16, r);
      INFO("x = " << x << " mode " << static_cast<int>(r));
      REQUIRE(static_cast<double>(round_fp16(x, r)) == ref);
    }
  }
}

TEST_CASE("TF32 RN, RNA and RZ keep 10 mantissa bits with the right ties, overflow, inf and NaN", "[exact]") {
  CHECK(round_tf32(1.0f + p2(-11), Rounding::rna) == 1.0f + p2(-10));
  CHECK(round_tf32(1.0f + p2(-11), Rounding::rn) == 1.0f);
  CHECK(round_tf32(1.0f + p2(-11), Rounding::rz) == 1.0f);
  CHECK(round_tf32(1.0f + 3 * p2(-11), Rounding::rn) == 1.0f + p2(-9));
  CHECK(round_tf32(1.0f + 3 * p2(-11), Rounding::rz) == 1.0f + p2(-10));
  CHECK(round_tf32(-(1.0f + p2(-11)), Rounding::rna) == -(1.0f + p2(-10)));
  CHECK(round_tf32(p2(-130) * 1.5f, Rounding::rz) == p2(-130) * 1.5f);  // FP32 subnormal, bits kept
  CHECK(round_tf32(p2(-140) * 1.5f, Rounding::rz) == 0.0f);  // subnormal bits below 2^-136 are dropped
  const float fmax = std::numeric_limits<float>::max();
  CHECK(round_tf32(fmax, Rounding::rna) == kInf);
  CHECK(round_tf32(fmax, Rounding::rz) == (2.0f - p2(-10)) * p2(127));
  CHECK(round_tf32(-kInf, Rounding::rna) == -kInf);
  CHECK(std::isnan(round_tf32(kNan, Rounding::rna)));
  CHECK(std::isnan(round_tf32(bits_float(0x7f800001u), Rounding::rz)));  // payload only in dropped bits
  std::mt19937_64 rng(5);
  for (int t = 0; t < 100000; ++t) {
    const float x = bits_float(static_cast<std::uint32_t>(rng()) & 0xfeffffffu);  // finite
    if (!std::isfinite(x) || (float_bits(x) & 0x7f800000u) == 0) continue;  // normal x: relative bound
    for (Rounding r : {Rounding::rn, Rounding::rna, Rounding::rz}) {
      const float y = round_tf32(x, r);
      REQUIRE((float_bits(y) & 0x1fffu) == 0u);
      if (std::isfinite(y)) REQUIRE(std::fabs(static_cast<double>(y) - x) <= std::ldexp(std::fabs(static_cast<double>(x)), -10));
    }
  }
}

TEST_CASE("BF16 round-to-nearest-even on hand-computed cases", "[exact]") {
  CHECK(bf16_bits_rn(1.0f) == 0x3f80);
  CHECK(bf16_bits_rn(1.0f + p2(-8)) == 0x3f80);      // tie, even below
  CHECK(bf16_bits_rn(1.0f + 3 * p2(-8)) == 0x3f82);  // tie, even above
  CHECK(bf16_bits_rn(1.0f + p2(-8) + p2(-20)) == 0x3f81);
  CHECK(bf16_bits_rn(-2.0f) == 0xc000);
  CHECK(bf16_bits_rn(kInf) == 0x7f80);
  CHECK(bf16_value(bf16_bits_rn(3.0f)) == 3.0f);
  const std::uint16_t n = bf16_bits_rn(kNan);
  CHECK(((n & 0x7f80u) == 0x7f80u && (n & 0x7fu) != 0));
}

TEST_CASE("bit-cut truncates without rounding and equals RZ to FP16 on and off FP16's range", "[exact]") {
  CHECK(bit_cut(1.0f + p2(-11) + p2(-20), 10) == 1.0f);
  CHECK(bit_cut(-(2.0f - p2(-23)), 10) == -(2.0f - p2(-10)));
  CHECK(bit_cut(1.0f + p2(-23), 23) == 1.0f + p2(-23));
  CHECK(bit_cut(1.75f, 0) == 1.0f);
  CHECK(std::isnan(bit_cut(kNan, 10)));
  CHECK(bit_cut_fp16(1e6f) == 65504.0f);
  CHECK(bit_cut_fp16(-1e6f) == -65504.0f);
  CHECK(bit_cut_fp16(3 * p2(-25)) == p2(-24));  // subnormal: truncated to the 2^-24 grid
  std::mt19937_64 rng(9);
  for (int t = 0; t < 200000; ++t) {
    const std::uint32_t bits = (static_cast<std::uint32_t>(rng() & 1u) << 31) |
                               (static_cast<std::uint32_t>(95 + rng() % 55) << 23) |
                               static_cast<std::uint32_t>(rng() & 0x7fffffu);
    const float x = bits_float(bits);
    REQUIRE(bit_cut_fp16(x) == round_fp16(x, Rounding::rz));
  }
}

TEST_CASE("every E4M3 value converts to FP32 and back unchanged, and the grid is the OCP E4M3 grid", "[exact]") {
  int finite = 0;
  for (std::uint32_t h = 0; h < 0x100u; ++h) {
    const auto bits = static_cast<std::uint8_t>(h);
    const float v = e4m3_value(bits);
    INFO("e4m3 0x" << std::hex << h);
    if ((h & 0x7fu) == 0x7fu) {  // S.1111.111 is the only NaN; there is no infinity
      CHECK(std::isnan(v));
      continue;
    }
    ++finite;
    REQUIRE(std::isfinite(v));
    REQUIRE(std::fabs(v) <= kE4m3Max);
    for (Rounding r : {Rounding::rn, Rounding::rna, Rounding::rz}) REQUIRE(e4m3_bits(v, r) == bits);
  }
  CHECK(finite == 254);  // 2 x (127 values incl. zero)
  CHECK(e4m3_value(0x7e) == 448.0f);
  CHECK(e4m3_value(0x08) == p2(-6));     // least normal
  CHECK(e4m3_value(0x01) == p2(-9));     // least subnormal
  CHECK(e4m3_value(0x38) == 1.0f);       // bias 7
  CHECK(e4m3_value(0xb9) == -1.125f);    // 3 mantissa bits
}

TEST_CASE("E4M3 rounding: ties, subnormals, saturation at 448, inf and NaN", "[exact]") {
  CHECK(e4m3_bits(1.0f + p2(-4), Rounding::rn) == 0x38);  // tie between 1 and 1.125: even
  CHECK(e4m3_bits(1.0f + p2(-4), Rounding::rna) == 0x39);
  CHECK(e4m3_bits(1.0f + 3 * p2(-4), Rounding::rn) == 0x3a);  // tie 1.125 / 1.25: even is 1.25
  CHECK(e4m3_bits(1.0f + p2(-4) + p2(-20), Rounding::rn) == 0x39);
  CHECK(e4m3_bits(1.0f + p2(-4) + p2(-20), Rounding::rz) == 0x38);
  CHECK(e4m3_bits(p2(-10), Rounding::rn) == 0x00);   // half the least subnormal: tie to 0
  CHECK(e4m3_bits(p2(-10), Rounding::rna) == 0x01);
  CHECK(e4m3_bits(3 * p2(-10), Rounding::rn) == 0x02);  // 1.5 units: even is 2
  CHECK(e4m3_bits(-7.5f * p2(-9), Rounding::rn) == 0x88);  // rounds up to the least normal
  CHECK(e4m3_bits(460.0f, Rounding::rn) == 0x7e);   // below the 448/480 midpoint
  CHECK(e4m3_bits(470.0f, Rounding::rn) == 0x7e);   // would round to 480: saturates
  CHECK(e4m3_bits(-1e6f, Rounding::rz) == 0xfe);
  CHECK(e4m3_bits(kInf, Rounding::rn) == 0x7e);
  CHECK(e4m3_bits(-kInf, Rounding::rn) == 0xfe);
  CHECK(e4m3_bits(kNan, Rounding::rn) == kE4m3Nan);
  CHECK(e4m3_bits(p2(-30), Rounding::rz) == 0x00);
  CHECK(e4m3_bits(-p2(-30), Rounding::rn) == 0x80);
}

TEST_CASE("E4M3 rounding agrees with an independent double-arithmetic rounding on random floats", "[exact]") {
  // round_exact_sum onto {4 significand bits, grid floor 2^-9, max 448}: same specification as
  // e4m3_bits, different code. Compared where no saturation happens (|x| <= 448).
  const NumberFormat e4m3{4, -9, 448.0};
  std::mt19937_64 rng(12);
  for (int t = 0; t < 200000; ++t) {
    // biased FP32 exponent 110..135: 2^-17 .. 2^9, across the subnormals and to the top
    const std::uint32_t bits = (static_cast<std::uint32_t>(rng() & 1u) << 31) |
                               (static_cast<std::uint32_t>(110 + rng() % 26) << 23) |
                               static_cast<std::uint32_t>(rng() & 0x7fffffu);
    const float x = bits_float(bits);
    if (std::fabs(x) > kE4m3Max) continue;
    for (Rounding r : {Rounding::rn, Rounding::rna, Rounding::rz}) {
      const double ref = round_exact_sum(x, 0.0, e4m3, r);
      if (std::fabs(ref) > 448.0) continue;  // rounds past 448: saturation, checked above
      INFO("x = " << x << " mode " << static_cast<int>(r));
      REQUIRE(static_cast<double>(round_e4m3(x, r)) == ref);
    }
  }
}
