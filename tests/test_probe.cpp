// The accumulator probe (probe.hpp) recovers the configured width and rounding of the
// emulation's tensor-core model; on a GPU it runs the same sweep on mma.sync ([gpu]).
#include <catch2/catch.hpp>
#include <cstdio>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/probe.hpp"

using namespace tcsolve;

TEST_CASE("the probe recovers the model's accumulator width for several widths and both roundings", "[exact]") {
  // acc_bits counts significand bits; the probe reports mantissa bits (23 - Ntrun): width - 1,
  // capped by the output format (FP32: 23, FP16: 10). A 13-bit accumulator (e8m13) is width 14.
  for (int width : {12, 14, 20, 24, 25}) {
    for (Rounding r : {Rounding::rz, Rounding::rn}) {
      const auto results = probe_cpu({width, r}, 40);
      for (const ProbeResult& res : results) {
        INFO("width " << width << (r == Rounding::rz ? " rz " : " rn ") << res.path.name);
        const int expected = std::min(width - 1, res.output_bits);
        CHECK(res.effective_bits == expected);
        CHECK(res.samples > 0);
        // truncation never raises a sum of non-negative products; rounding to nearest does.
        // FP16 outputs round with the model's fp16_output_rounding (RN, as measured on Hopper).
        // (Checked for FP16 outputs only when the accumulator is wider than FP16's 11 bits by
        // 3 or more: a 12-bit truncated sum rounded to 11 bits rarely lands above the exact one.)
        const Rounding out = res.path.fp16_output ? TcModel{}.fp16_output_rounding : r;
        if (res.path.fp16_output && width < 14) continue;
        if (out == Rounding::rz) CHECK(res.consistent_with_rz);
        else CHECK_FALSE(res.consistent_with_rz);
      }
    }
  }
}

TEST_CASE("the probe on the GPU's mma.sync paths reports at most the output's bits and prints them", "[gpu]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device (" << cuda::device_name() << "): skipping the hardware accumulator probe");
    return;
  }
  const auto results = cuda::probe(500);
  for (const ProbeResult& res : results) {
    std::printf("probe %-18s %-40s %2d of %2d bits, %s\n", res.path.name.c_str(), res.path.instruction.c_str(),
                res.effective_bits, res.output_bits, res.consistent_with_rz ? "consistent with RZ" : "rounds up");
    CHECK(res.effective_bits >= 10);  // tensor cores with FP32 output keep at least FP16's mantissa
    CHECK(res.effective_bits <= res.output_bits);
  }
}
