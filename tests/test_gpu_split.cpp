// [gpu] tests of the element-wise CUDA kernels (src/cuda/split_kernels.cu) against the CPU:
// the hi/lo splits and the FP16 conversions must be bitwise identical on both sides (they call
// the same TCSOLVE_HOST_DEVICE functions), and those shared functions must agree with the
// hardware conversions on every FP32 bit pattern. Skipped, with a warning, without a GPU.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/convert.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/random.hpp"
#include "tcsolve/gemm/rounding.hpp"
#include "tcsolve/gemm/split.hpp"

namespace {

using tcsolve::bits_float;
using tcsolve::float_bits;

bool is_nan32(std::uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }
bool is_nan16(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0u; }

std::string hex(std::uint32_t u) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(u));
  return buf;
}

const char* kind_name(tcsolve::SplitKind kind) {
  switch (kind) {
    case tcsolve::SplitKind::markidis: return "markidis";
    case tcsolve::SplitKind::ootomo_fp16: return "ootomo_fp16";
    case tcsolve::SplitKind::ootomo_tf32: return "ootomo_tf32";
    case tcsolve::SplitKind::legemm:
    default: return "legemm";
  }
}

/// Hand-picked values at the edges of FP16, TF32 and the splits, with their neighbours.
std::vector<float> special_values() {
  const float base[] = {
      0.0f, 1.0f, 65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e-8f,
      0x1p-14f,   // smallest FP16 normal
      0x1p-24f,   // smallest FP16 subnormal
      0x1p-25f,   // half of it: the RN tie to zero
      0x1.8p-25f, 0x1p-26f,
      0x1.ff8p-15f,  // largest FP16 subnormal
      0x1.004p0f,    // 1 + 2^-10: next FP16 / TF32 after 1
      0x1.002p0f,    // 1 + 2^-11: tie to even (down) in FP16 and TF32
      0x1.006p0f,    // 1 + 3 * 2^-11: tie to even (up)
      2048.0f, 2049.0f, 4097.0f, 0.1f, 1.0f / 3.0f, 3.14159265f, 1e4f, 1e5f, 1e-5f, 6e-5f,
      1.17549435e-38f /* FLT_MIN */, 1e-40f /* FP32 subnormal */, 1.4e-45f /* least subnormal */,
      3.40282347e38f /* FLT_MAX */, 1e30f, 1e-30f,
      bits_float(0x7f800000u) /* inf */, bits_float(0x7fc00000u) /* quiet NaN */,
      bits_float(0x7f800001u) /* signalling NaN, payload in the low bits */,
      bits_float(0x7fbfe000u) /* NaN, payload in the high bits */};
  std::vector<float> out;
  for (float b : base) {
    const std::uint32_t u = float_bits(b);
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      out.push_back(bits_float(u | sign));
      if ((u & 0x7fffffffu) < 0x7f800000u) {  // finite: the FP32 neighbours, across ties
        if ((u & 0x7fffffffu) != 0u) out.push_back(bits_float((u - 1u) | sign));
        out.push_back(bits_float((u + 1u) | sign));
      }
    }
  }
  return out;
}

/// About 10^6 inputs: special values, urand(-1,1), exp_rand over FP16's range and beyond,
/// uniformly random bit patterns (NaN, inf, subnormals included), and values within one FP32
/// ulp of the FP16 and TF32 rounding ties (normal and FP16-subnormal ranges).
std::vector<float> test_inputs() {
  std::vector<float> v = special_values();
  tcsolve::Rng rng(20240607);

  const auto append = [&](const tcsolve::Distribution& d, std::size_t count) {
    const std::size_t at = v.size();
    v.resize(at + count);
    tcsolve::fill(d, rng, v.data() + at, count);
  };
  tcsolve::Distribution urand;  // U(-1, 1)
  append(urand, 150000);
  tcsolve::Distribution exp_fp16;
  exp_fp16.kind = tcsolve::Distribution::Kind::exp_rand;
  exp_fp16.emin = -30;  // FP16 subnormals and underflow
  exp_fp16.emax = 20;   // FP16 overflow
  append(exp_fp16, 200000);
  tcsolve::Distribution exp_all = exp_fp16;
  exp_all.emin = -126;
  exp_all.emax = 127;
  append(exp_all, 100000);

  std::uniform_int_distribution<std::uint32_t> bits32;
  for (int i = 0; i < 200000; ++i) v.push_back(bits_float(bits32(rng)));

  // Ties: the 13 dropped bits of an FP32 word are 0x1000 (the FP16-normal and TF32 half unit),
  // nudged by -1, 0, +1 FP32 ulp; exponents where FP16 is normal and over FP32's range.
  std::uniform_int_distribution<std::uint32_t> exp16(113, 142), exp32(1, 254), mant(0, 0x3ff);
  for (int i = 0; i < 50000; ++i) {
    const std::uint32_t sign = (bits32(rng) & 1u) << 31;
    for (std::uint32_t e : {exp16(rng), exp32(rng)}) {
      const std::uint32_t tie = sign | (e << 23) | (mant(rng) << 13) | 0x1000u;
      for (std::uint32_t u : {tie - 1u, tie, tie + 1u}) v.push_back(bits_float(u));
    }
  }
  // FP16-subnormal ties: odd multiples of 2^-25 below 2^-14, and their FP32 neighbours.
  std::uniform_int_distribution<std::uint32_t> odd(0, 1023);
  for (int i = 0; i < 50000; ++i) {
    const float tie = static_cast<float>(2u * odd(rng) + 1u) * 0x1p-25f;  // exact
    const std::uint32_t u = float_bits(tie) | ((bits32(rng) & 1u) << 31);
    for (std::uint32_t w : {u - 1u, u, u + 1u}) v.push_back(bits_float(w));
  }
  return v;
}

#define TCSOLVE_SKIP_WITHOUT_GPU(what)                                              \
  if (!tcsolve::cuda::device_available()) {                                          \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                          \
  }

}  // namespace

TEST_CASE("GPU hi/lo splits are bitwise identical to the CPU splits (NaN payloads aside)",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the GPU split test");
  const std::vector<float> x = test_inputs();
  const std::size_t n = x.size();
  const tcsolve::cuda::DeviceBuffer<float> d_x(x);
  tcsolve::cuda::DeviceBuffer<float> d_hi(n), d_lo(n);

  for (tcsolve::SplitKind kind :
       {tcsolve::SplitKind::markidis, tcsolve::SplitKind::ootomo_fp16,
        tcsolve::SplitKind::ootomo_tf32, tcsolve::SplitKind::legemm}) {
    tcsolve::cuda::split(kind, d_x.data(), d_hi.data(), d_lo.data(), n);
    const std::vector<float> hi = d_hi.download();
    const std::vector<float> lo = d_lo.download();

    // A NaN made by arithmetic (inf - inf, NaN - NaN) carries a payload that differs between
    // x86 (sign set, 0xffc00000) and NVIDIA GPUs (0x7fffffff): both sides must be NaN there,
    // every other result must match bit for bit.
    std::size_t mismatches = 0, nan_payload_differences = 0, first_bad = n;
    for (std::size_t i = 0; i < n; ++i) {
      const tcsolve::SplitPair cpu = tcsolve::split(kind, x[i]);
      for (auto [g, c] : {std::pair{float_bits(hi[i]), float_bits(cpu.hi)},
                          std::pair{float_bits(lo[i]), float_bits(cpu.lo)}}) {
        if (g == c) continue;
        if (is_nan32(g) && is_nan32(c)) {
          ++nan_payload_differences;
        } else {
          if (mismatches++ == 0) first_bad = i;
        }
      }
    }
    std::string first;
    if (first_bad < n) {
      const tcsolve::SplitPair cpu = tcsolve::split(kind, x[first_bad]);
      first = "; first: x = " + hex(float_bits(x[first_bad])) + ", GPU (hi, lo) = (" +
              hex(float_bits(hi[first_bad])) + ", " + hex(float_bits(lo[first_bad])) +
              "), CPU (" + hex(float_bits(cpu.hi)) + ", " + hex(float_bits(cpu.lo)) + ")";
    }
    INFO("split " << kind_name(kind) << " on " << n << " inputs: " << mismatches
                  << " mismatches, " << nan_payload_differences << " NaN payload differences"
                  << first);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("GPU FP16 conversions are bitwise identical to the CPU conversions in both modes",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the GPU conversion test");
  const std::vector<float> x = test_inputs();
  const std::size_t n = x.size();
  const tcsolve::cuda::DeviceBuffer<float> d_x(x);
  tcsolve::cuda::DeviceBuffer<std::uint16_t> d_h(n);

  for (tcsolve::Fp16Mode mode : {tcsolve::Fp16Mode::saturate, tcsolve::Fp16Mode::ieee}) {
    tcsolve::cuda::fp32_to_fp16(d_x.data(), d_h.data(), n, mode);
    const std::vector<std::uint16_t> gpu = d_h.download();
    std::vector<std::uint16_t> cpu(n);
    tcsolve::fp32_to_fp16(x.data(), cpu.data(), n, mode);

    std::size_t mismatches = 0, first_bad = n;
    for (std::size_t i = 0; i < n; ++i) {
      if (gpu[i] != cpu[i] && mismatches++ == 0) first_bad = i;
    }
    const std::string first =
        first_bad < n ? "; first: x = " + hex(float_bits(x[first_bad])) + ", GPU " +
                            hex(gpu[first_bad]) + ", CPU " + hex(cpu[first_bad])
                      : std::string();
    INFO("mode " << (mode == tcsolve::Fp16Mode::ieee ? "ieee" : "saturate") << ": "
                 << mismatches << " mismatches of " << n << first);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("every FP16 pattern converts to FP32 identically on GPU and CPU and round-trips",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the GPU FP16 round-trip test");
  constexpr std::size_t n = 65536;
  std::vector<std::uint16_t> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<std::uint16_t>(i);
  const tcsolve::cuda::DeviceBuffer<std::uint16_t> d_h(h);
  tcsolve::cuda::DeviceBuffer<float> d_f(n);
  tcsolve::cuda::DeviceBuffer<std::uint16_t> d_back(n);

  tcsolve::cuda::fp16_to_fp32(d_h.data(), d_f.data(), n);
  const std::vector<float> gpu = d_f.download();
  std::vector<float> cpu(n);
  tcsolve::fp16_to_fp32(h.data(), cpu.data(), n);
  std::size_t value_mismatches = 0;
  std::string first;
  for (std::size_t i = 0; i < n; ++i) {
    if (float_bits(gpu[i]) != float_bits(cpu[i]) && value_mismatches++ == 0) {
      first = "; first: FP16 " + hex(h[i]) + " -> GPU " + hex(float_bits(gpu[i])) + ", CPU " +
              hex(float_bits(cpu[i]));
    }
  }
  INFO(value_mismatches << " of 65536 FP16 -> FP32 values differ between GPU and CPU" << first);
  CHECK(value_mismatches == 0);

  // Back to FP16 on the GPU. IEEE mode: every non-NaN pattern comes back unchanged, a NaN stays
  // a NaN. Saturating mode: the same, except that subnormals flush to a zero of their sign.
  for (tcsolve::Fp16Mode mode : {tcsolve::Fp16Mode::ieee, tcsolve::Fp16Mode::saturate}) {
    tcsolve::cuda::fp32_to_fp16(d_f.data(), d_back.data(), n, mode);
    const std::vector<std::uint16_t> back = d_back.download();
    std::size_t failures = 0;
    std::string first_failure;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t p = h[i];
      const bool subnormal = (p & 0x7c00u) == 0u && (p & 0x03ffu) != 0u;
      bool ok;
      if (is_nan16(p)) {
        ok = is_nan16(back[i]);
      } else if (subnormal && mode == tcsolve::Fp16Mode::saturate) {
        ok = back[i] == (p & 0x8000u);
      } else {
        ok = back[i] == p;
      }
      if (!ok && failures++ == 0) {
        first_failure = "; first: FP16 " + hex(p) + " came back as " + hex(back[i]);
      }
    }
    INFO("mode " << (mode == tcsolve::Fp16Mode::ieee ? "ieee" : "saturate") << ": " << failures
                 << " of 65536 FP16 patterns failed the round trip" << first_failure);
    CHECK(failures == 0);
  }
}

TEST_CASE("the shared rounding and split helpers agree with the hardware conversions on all "
          "2^32 FP32 patterns",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the exhaustive hardware comparison");
  const tcsolve::cuda::ConversionCheck r = tcsolve::cuda::compare_with_hardware();

  std::string report = "compare_with_hardware on " + tcsolve::cuda::device_name() + ": " +
                       std::to_string(r.patterns) + " patterns; mismatches:";
  const auto field = [&](const char* name, std::uint64_t count, std::uint32_t first) {
    report += std::string("\n  ") + name + " = " + std::to_string(count);
    if (count != 0) report += " (first " + hex(first) + ")";
  };
  field("fp16_rn  (__float2half_rn)       ", r.fp16_rn, r.first_bad_fp16_rn);
  field("fp16_rz  (__float2half_rz)       ", r.fp16_rz, r.first_bad_fp16_rz);
  field("tf32_rna (cvt.rna.tf32.f32)      ", r.tf32_rna, r.first_bad_tf32_rna);
  if (r.tf32_rn_rz_checked) {
    field("tf32_rn  (cvt.rn.tf32.f32)       ", r.tf32_rn, r.first_bad_tf32_rn);
    field("tf32_rz  (cvt.rz.tf32.f32)       ", r.tf32_rz, r.first_bad_tf32_rz);
  } else {
    report += "\n  tf32_rn, tf32_rz: not checked (cvt.rn/.rz.tf32 need sm_90)";
  }
  field("bf16_rn  (__float2bfloat16_rn)   ", r.bf16_rn, r.first_bad_bf16_rn);
  field("split (any of the four)          ", r.split_mismatch, r.first_bad_split);
  for (int k = 0; k < 4; ++k) {
    report += std::string("\n    ") + kind_name(static_cast<tcsolve::SplitKind>(k)) + " = " +
              std::to_string(r.split_by_kind[k]);
  }
  report += "\n  (informational) cvt.rna.tf32 results with low 13 bits set = " +
            std::to_string(r.tf32_rna_low_bits_set);
  report += "\n  (informational, excluded above) NaN inputs that cvt.rna.tf32 turns into +-inf = " +
            std::to_string(r.tf32_rna_nan_lost) + " (round_tf32 keeps them NaN)";
  WARN(report);

  CHECK(r.patterns == (std::uint64_t{1} << 32));
  CHECK(r.fp16_rn == 0);
  CHECK(r.fp16_rz == 0);
  CHECK(r.tf32_rna == 0);
  CHECK(r.tf32_rn == 0);
  CHECK(r.tf32_rz == 0);
  CHECK(r.bf16_rn == 0);
  CHECK(r.split_mismatch == 0);
  CHECK(r.total_mismatches() == 0);
  // the quirk is confined to NaNs whose payload lies only in the 13 bits TF32 drops: 2 x (2^13 - 1)
  CHECK(r.tf32_rna_nan_lost <= 2 * ((1u << 13) - 1));
}
