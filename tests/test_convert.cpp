// Exact tier: RFC 0007's conversion API and its documented error handling.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tcsolve/gemm/convert.hpp"
#include "tcsolve/gemm/metrics.hpp"

using namespace tcsolve;

TEST_CASE("RFC 0007 saturating conversion clamps overflow, flushes underflow and propagates NaN", "[exact]") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> src{1.0f, 1e5f, -1e5f, 65504.0f, 65520.0f, 1e-5f, -1e-5f, 6.0e-5f,
                               6.2e-5f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), -0.0f};
  std::vector<std::uint16_t> sat(src.size()), ieee(src.size());
  fp32_to_fp16(src.data(), sat.data(), src.size());  // default mode: saturate
  fp32_to_fp16(src.data(), ieee.data(), src.size(), Fp16Mode::ieee);
  CHECK(sat[0] == 0x3c00);
  CHECK(sat[1] == 0x7bff);   // clamp to 65504
  CHECK(sat[2] == 0xfbff);   // clamp to -65504
  CHECK(sat[3] == 0x7bff);
  CHECK(sat[4] == 0x7bff);   // would round to inf: clamped
  CHECK(sat[5] == 0x0000);   // below 6.1e-5: flushed
  CHECK(sat[6] == 0x8000);   // flushed, sign kept
  CHECK(sat[7] == 0x0000);   // 6.0e-5 < 2^-14 = 6.1035e-5
  CHECK(sat[8] == fp16_bits(6.2e-5f, Rounding::rn));
  CHECK(sat[9] == 0x7c00);   // inf is not a finite overflow: stays inf
  CHECK(sat[10] == 0xfc00);
  CHECK(std::isnan(fp16_value(sat[11])));
  CHECK(sat[12] == 0x8000);
  // IEEE mode: plain RN
  CHECK(ieee[1] == 0x7c00);
  CHECK(ieee[4] == 0x7c00);
  CHECK(ieee[5] == fp16_bits(1e-5f, Rounding::rn));
  CHECK(fp16_value(ieee[5]) > 0.0f);  // kept as a subnormal
  CHECK(std::isnan(fp16_value(ieee[11])));
}

TEST_CASE("RFC 0007 round trip: every finite FP16 value survives FP16 -> FP32 -> FP16", "[exact]") {
  std::vector<std::uint16_t> all(0x10000), back(0x10000);
  for (std::uint32_t h = 0; h < 0x10000u; ++h) all[h] = static_cast<std::uint16_t>(h);
  std::vector<float> f(all.size());
  fp16_to_fp32(all.data(), f.data(), all.size());
  fp32_to_fp16(f.data(), back.data(), f.size(), Fp16Mode::ieee);
  std::vector<std::uint16_t> sat(all.size());
  fp32_to_fp16(f.data(), sat.data(), f.size(), Fp16Mode::saturate);
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const bool nan = std::isnan(f[h]);
    const bool subnormal = (h & 0x7c00u) == 0 && (h & 0x3ffu) != 0;
    if (nan) {
      REQUIRE(std::isnan(fp16_value(back[h])));
      continue;
    }
    REQUIRE(back[h] == all[h]);
    // saturating mode keeps every normal value and flushes exactly the subnormals
    REQUIRE(sat[h] == (subnormal ? (all[h] & 0x8000u) : all[h]));
  }
}

TEST_CASE("RFC 0007 mixed_precision_gemm stays within 2^-8 of the FP32 product on U(-1,1)", "[accuracy]") {
  // RFC 0007's own test tolerance, relative to the scale sum |a||b|: the FP16 operands carry
  // 2^-11 relative error each, far inside 2^-8.
  const int M = 33, N = 17, K = 70;
  std::vector<float> A(M * K), B(K * N), C(M * N);
  for (int i = 0; i < M * K; ++i) A[i] = std::sin(0.37f * i);
  for (int i = 0; i < K * N; ++i) B[i] = std::cos(0.11f * i);
  const GemmInfo info = mixed_precision_gemm(A.data(), B.data(), C.data(), M, N, K);
  CHECK(info.resolved == Variant::fp16_simt);
  const std::vector<double> ref = reference_product(Op::n, Op::n, M, N, K, A.data(), M, B.data(), K);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) {
      double scale = 0;
      for (int p = 0; p < K; ++p) scale += std::fabs(A[i + p * M]) * std::fabs(B[p + j * K]);
      REQUIRE(std::fabs(C[i + j * M] - ref[i + j * M]) <= 0x1p-8 * scale);
    }
}
