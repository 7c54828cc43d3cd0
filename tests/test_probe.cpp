// The accumulator probe (probe.hpp) recovers the configured width and rounding of the
// emulation's tensor-core model on every path (E4M3 and wgmma included); the wgmma
// shared-memory layout agrees with its descriptor; on a GPU the same sweep runs on mma.sync and
// wgmma ([gpu]).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/probe.hpp"
#include "tcsolve/gemm/rounding.hpp"
#include "tcsolve/gemm/wgmma_layout.hpp"

using namespace tcsolve;

namespace {

/// Largest |partial - exact| / sum |a_p b_p| a correct path can show (probe.hpp, max_error):
/// K + 1 roundings (K products added, then C), each off by less than one unit of a
/// `significand_bits`-bit number, 2^(1 - significand_bits) relative to the running sum, which
/// never exceeds sum |a_p b_p|. Near FP16's subnormals the error floor of max_error adds at most
/// one more unit.
double partial_error_bound(const ProbePath& path, int significand_bits) {
  const int K = path.k * path.depth;
  return (K + 2) * std::ldexp(1.0, 1 - significand_bits);
}

bool is_e4m3(const ProbePath& p) { return p.input == ProbePath::Input::e4m3; }

}  // namespace

TEST_CASE("the probe's paths: every family and input format, K a multiple of the instruction's k", "[exact]") {
  const auto paths = probe_paths();
  int e4m3_mma_sync = 0, e4m3_wgmma = 0, fp16_wgmma = 0;
  for (const ProbePath& p : paths) {
    INFO(p.name);
    CHECK(p.depth >= 1);
    CHECK(p.m() == (p.engine == ProbePath::Engine::wgmma ? 64 : 16));
    CHECK_FALSE(p.instruction.empty());
    // SASS on sm_90 (the H100 dump): mma.sync -> HMMA, wgmma -> HGMMA (QGMMA for FP8); FP8
    // mma.sync has no QMMA there: F2FP.F16.E4M3.UNPACK_B then HMMA.16816.F32
    const bool wg = p.engine == ProbePath::Engine::wgmma;
    const std::string sass = wg ? (is_e4m3(p) ? "QGMMA" : "HGMMA") : (is_e4m3(p) ? "F2FP+HMMA" : "HMMA");
    CHECK(p.sass == sass);
    if (is_e4m3(p)) CHECK(p.k == 32);  // m16n8k32 and m64n8k32: 32 bytes of K per row
    if (is_e4m3(p) && p.engine == ProbePath::Engine::mma_sync) ++e4m3_mma_sync;
    if (is_e4m3(p) && p.engine == ProbePath::Engine::wgmma) ++e4m3_wgmma;
    if (!is_e4m3(p) && p.engine == ProbePath::Engine::wgmma) ++fp16_wgmma;
  }
  CHECK(e4m3_mma_sync >= 1);
  CHECK(e4m3_wgmma >= 2);  // one instruction, and the post's K = 128 chain
  CHECK(fp16_wgmma >= 1);
}

TEST_CASE("probe inputs drawn in E4M3 are exact E4M3 values within +-448", "[exact]") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (int t = 0; t < 20000; ++t) {
    const float x = std::ldexp(unit(rng), static_cast<int>(rng() % 25) - 12);
    const float v = probe_input_value(ProbePath::Input::e4m3, x);
    INFO("x = " << x << " -> " << v);
    REQUIRE(std::fabs(v) <= kE4m3Max);
    REQUIRE(e4m3_value(e4m3_bits(v, Rounding::rz)) == v);  // representable: every mode keeps it
    if (std::fabs(x) > kE4m3Max) {  // saturates, keeping the sign
      REQUIRE(v == std::copysign(kE4m3Max, x));
      continue;
    }
    // round to nearest: off by at most half a unit of E4M3 (2^-4 relative, 2^-10 absolute)
    REQUIRE(std::fabs(v - x) <= std::max(std::ldexp(std::fabs(x), -4), std::ldexp(1.0f, -10)));
  }
}

TEST_CASE("the probe recovers the model's accumulator width for several widths and both roundings", "[exact]") {
  // acc_bits counts significand bits; the probe reports mantissa bits (23 - Ntrun): width - 1,
  // capped by the output format (FP32: 23, FP16: 10). A 13-bit accumulator (e8m13) is width 14.
  for (int width : {12, 14, 20, 24, 25}) {
    for (Rounding r : {Rounding::rz, Rounding::rn}) {
      const auto results = probe_cpu({width, r}, 40);
      for (const ProbeResult& res : results) {
        INFO("width " << width << (r == Rounding::rz ? " rz " : " rn ") << res.path.name);
        const int expected = std::min(width - 1, res.output_bits);
        CHECK(res.available);
        CHECK(res.effective_bits == expected);
        CHECK(res.samples > 0);
        CHECK(res.max_error <= partial_error_bound(res.path, std::min(width, res.output_bits + 1)));
        // truncation never raises a sum of non-negative products; rounding to nearest does.
        // FP16 outputs round with the model's fp16_output_rounding (RN, as measured on Hopper).
        // (Checked for FP16 outputs only when the accumulator is wider than FP16's 11 bits by
        // 3 or more: a 12-bit truncated sum rounded to 11 bits rarely lands above the exact one.)
        const Rounding out = res.path.fp16_output ? TcModel{}.fp16_output_rounding : r;
        if (res.path.fp16_output && width < 14) continue;
        // E4M3 values are multiples of 2^-9 and the positive ones drawn here are <= 1, so their
        // products are multiples of 2^-18 and a positive sum of 32..128 of them, below 2^5 in
        // practice, needs at most 23 significand bits: a 24-bit or wider accumulator holds it
        // exactly and RN cannot show. Checked up to width 20.
        if (out == Rounding::rn && is_e4m3(res.path) && width > 20) continue;
        if (out == Rounding::rz) CHECK(res.consistent_with_rz);
        else CHECK_FALSE(res.consistent_with_rz);
      }
    }
  }
}

TEST_CASE("an e8m13 accumulator (13 mantissa bits, truncating) reads as 13 bits on the E4M3 paths, as the post found for QGMMA",
          "[exact]") {
  const auto results = probe_cpu({14, Rounding::rz}, 60);
  int e4m3_paths = 0;
  for (const ProbeResult& res : results) {
    if (!is_e4m3(res.path)) continue;
    ++e4m3_paths;
    INFO(res.path.name);
    CHECK(res.effective_bits == 13);
    CHECK(res.consistent_with_rz);
    CHECK(res.samples >= 60L * 4 * res.path.m() * 8 / 2);  // most partials of E4M3 inputs are non-zero
    CHECK(res.max_error <= partial_error_bound(res.path, 14));
  }
  CHECK(e4m3_paths >= 3);
}

TEST_CASE("the wgmma shared-memory image and its descriptor describe the same canonical K-major layout", "[exact]") {
  // For A (64 rows, 8 groups) and B (8 rows, 1 group), K chains of 1..4 instructions of 32
  // bytes of K: wgmma_kmajor_offset stores every byte at a distinct place inside the buffer,
  // core matrices are 128 contiguous bytes with rows 16 bytes apart, and the address the
  // tensor core computes from the descriptor of k-step s (PTX ISA canonical K-major layout:
  // start + (row % 8) 16 + (row / 8) SBO + (bc / 16) LBO + bc % 16, bc < 32) is the byte the
  // kernel stored there.
  for (int groups : {8, 1}) {
    for (int depth : {1, 4}) {
      const int rows = 8 * groups, kbytes = 32 * depth;
      std::vector<int> seen(static_cast<std::size_t>(rows) * kbytes, 0);
      for (int row = 0; row < rows; ++row)
        for (int bc = 0; bc < kbytes; ++bc) {
          const std::uint32_t off = wgmma_kmajor_offset(row, bc, groups);
          REQUIRE(off < seen.size());
          ++seen[off];
          // same core matrix: 128-byte block, row r at 16 r
          CHECK(off % 128 == static_cast<std::uint32_t>((row % 8) * 16 + bc % 16));
        }
      for (int c : seen) REQUIRE(c == 1);
      const std::uint32_t base = 0x400;  // any 16-byte aligned shared address
      for (int s = 0; s < depth; ++s) {
        const std::uint32_t lbo = wgmma_kmajor_lbo(groups);
        const std::uint64_t desc = wgmma_descriptor(base + 2u * s * lbo, lbo, kWgmmaKmajorSbo);
        // decode the descriptor's fields: bits 0-13, 16-29, 32-45 (>> 4), swizzle bits 62-63
        const std::uint32_t start = static_cast<std::uint32_t>(desc & 0x3fffu) << 4;
        const std::uint32_t d_lbo = static_cast<std::uint32_t>((desc >> 16) & 0x3fffu) << 4;
        const std::uint32_t d_sbo = static_cast<std::uint32_t>((desc >> 32) & 0x3fffu) << 4;
        CHECK((desc >> 62) == 0u);          // no swizzle
        CHECK(((desc >> 49) & 0x7u) == 0u);  // base offset 0
        for (int row = 0; row < rows; ++row)
          for (int bc = 0; bc < 32; ++bc) {
            const std::uint32_t hw = start + (row % 8) * 16 + (row / 8) * d_sbo + (bc / 16) * d_lbo + bc % 16;
            REQUIRE(hw == base + wgmma_kmajor_offset(row, 32 * s + bc, groups));
          }
      }
    }
  }
  // the field positions on a hand-computed value: start 0x400, LBO 1024, SBO 128
  CHECK(wgmma_descriptor(0x400, 1024, 128) == ((std::uint64_t{8} << 32) | (std::uint64_t{64} << 16) | 0x40u));
}

TEST_CASE("the probe on the GPU's tensor cores (mma.sync, wgmma) reports at most the output's bits and prints them", "[gpu][probe]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device (" << cuda::device_name() << "): skipping the hardware accumulator probe");
    return;
  }
  const auto results = cuda::probe(500);
  for (const ProbeResult& res : results) {
    INFO(res.path.name);
    if (!res.available) {
      std::printf("probe %-23s %-40s unavailable: %s\n", res.path.name.c_str(), res.path.instruction.c_str(),
                  res.note.c_str());
      CHECK_FALSE(res.note.empty());
      // an H100/H200 with this build (sm_90a code) runs every path
      CHECK(cuda::compute_capability() != 90);
      continue;
    }
    std::printf("probe %-23s %-40s %2d of %2d bits, %s, max error %.3g\n", res.path.name.c_str(),
                res.path.instruction.c_str(), res.effective_bits, res.output_bits,
                res.consistent_with_rz ? "consistent with RZ" : "rounds up", res.max_error);
    CHECK(res.samples > 0);
    CHECK(res.effective_bits >= 10);  // tensor cores with FP32 output keep at least FP16's mantissa
    CHECK(res.effective_bits <= res.output_bits);
    // the tile multiplied the intended operands (fragments, shared-memory layout, descriptors):
    // its error is that of an accumulator of at least 10 mantissa bits (11 significand bits)
    CHECK(res.max_error <= partial_error_bound(res.path, 11));
  }
}
