// Exact tier: the tensor-core accumulation model (tc_model.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tcsolve/gemm/tc_model.hpp"

using namespace tcsolve;

TEST_CASE("exact-sum rounding truncates a sum just below a grid point (RZ) and breaks ties by the error term", "[exact]") {
  const NumberFormat acc25{25, -1074, std::numeric_limits<double>::max()};
  // 1 - tiny: RZ must give the next 25-bit value below 1, which lies on the finer grid 2^-25
  CHECK(round_exact_sum(1.0, -1e-30, acc25, Rounding::rz) == 1.0 - 0x1p-25);
  CHECK(round_exact_sum(-1.0, 1e-30, acc25, Rounding::rz) == -(1.0 - 0x1p-25));
  CHECK(round_exact_sum(1.0, 1e-30, acc25, Rounding::rz) == 1.0);
  CHECK(round_exact_sum(1.0 + 0x1p-23, -1e-30, acc25, Rounding::rz) == 1.0 + 0x1p-23 - 0x1p-24);
  // RN: an exact midpoint of the 25-bit grid goes to even; the error term decides otherwise
  const double mid = 1.0 + 0x1p-25;  // halfway between 1 and 1 + 2^-24
  CHECK(round_exact_sum(mid, 0.0, acc25, Rounding::rn) == 1.0);
  CHECK(round_exact_sum(mid, 1e-30, acc25, Rounding::rn) == 1.0 + 0x1p-24);
  CHECK(round_exact_sum(mid, -1e-30, acc25, Rounding::rn) == 1.0);
  CHECK(round_exact_sum(mid, 0.0, acc25, Rounding::rna) == 1.0 + 0x1p-24);
  CHECK(round_exact_sum(mid, -1e-30, acc25, Rounding::rna) == 1.0);
  // FP16 output format: overflow and the subnormal grid
  CHECK(round_exact_sum(65520.0, 0.0, kFormatFp16, Rounding::rn) == std::numeric_limits<double>::infinity());
  CHECK(round_exact_sum(65520.0, 0.0, kFormatFp16, Rounding::rz) == 65504.0);
  CHECK(round_exact_sum(3 * 0x1p-26, 0.0, kFormatFp16, Rounding::rz) == 0.0);
  CHECK(round_exact_sum(3 * 0x1p-25, 0.0, kFormatFp16, Rounding::rn) == 0x1p-23);
}

TEST_CASE("an mma step keeps acc_bits bits: 1 + 2^-30 is truncated at 25 bits and kept at 53", "[exact]") {
  const float a[2] = {1.0f, 0x1p-15f}, b[2] = {1.0f, 0x1p-15f};
  CHECK(TensorCoreModel({25, Rounding::rz}).mma_fp32(a, b, 2, 0.0f) == 1.0f);
  // with c = -1 the FP32 output can show the low bits: (1 + 2^-30) - 1 = 2^-30 exactly at 53 bits
  CHECK(TensorCoreModel({53, Rounding::rz}).mma_fp32(a, b, 2, -1.0f) == 0x1p-30f);
  CHECK(TensorCoreModel({25, Rounding::rz}).mma_fp32(a, b, 2, -1.0f) == 0.0f);
}

TEST_CASE("the model with RN and 53 bits equals the exact dot product rounded once to FP32", "[exact]") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const TensorCoreModel wide({53, Rounding::rn});
  for (int t = 0; t < 2000; ++t) {
    float a[16], b[16];
    double exact = 0;
    for (int i = 0; i < 16; ++i) {
      a[i] = std::ldexp(std::round(std::ldexp(u(rng), 10)), -10);  // 11-bit values: products exact,
      b[i] = std::ldexp(std::round(std::ldexp(u(rng), 10)), -10);  // sums exact in double
      exact += static_cast<double>(a[i]) * b[i];
    }
    REQUIRE(wide.mma_fp32(a, b, 16, 0.0f) == static_cast<float>(exact));
  }
}

TEST_CASE("the RZ model never rounds a positive sum up and loses at most ks+1 units of 2^-24", "[exact]") {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const TensorCoreModel rz({25, Rounding::rz});
  for (int t = 0; t < 2000; ++t) {
    float a[16], b[16];
    double exact = 0;
    for (int i = 0; i < 16; ++i) a[i] = u(rng), b[i] = u(rng), exact += static_cast<double>(a[i]) * b[i];
    const double got = rz.mma_fp32(a, b, 16, 0.0f);
    REQUIRE(got <= exact);
    // 16 truncations of at most 2^-24 relative each (25 bits) plus one FP32 truncation (2^-23)
    REQUIRE(exact - got <= (16 * 0x1p-24 + 0x1p-23) * exact);
  }
}
