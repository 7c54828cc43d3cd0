// The accumulator-precision probe (probe.hpp): the truncation sweep of seed 003, shared by the
// cpu (tensor-core model) and cuda (mma.sync) backends, and the cpu partial products.
#include "tcsolve/gemm/probe.hpp"

#include <cmath>
#include <random>

#include "tcsolve/gemm/rounding.hpp"
#include "tcsolve/gemm/tc_model.hpp"

namespace tcsolve {
namespace {

float to_format(ProbePath::Input in, float x) {
  switch (in) {
    case ProbePath::Input::fp16: return round_fp16(x, Rounding::rn);
    case ProbePath::Input::bf16: return bf16_value(bf16_bits_rn(x));
    case ProbePath::Input::tf32:
    default: return round_tf32(x, Rounding::rna);
  }
}

/// x with the low `ntrun` bits of its `mantissa_bits`-bit mantissa cleared (FP32 word; for an
/// FP16 value held in FP32 the mantissa is the top 10 bits).
float truncate_low(float x, int mantissa_bits, int ntrun) { return bit_cut(x, mantissa_bits - ntrun); }

}  // namespace

std::vector<ProbePath> probe_paths() {
  using I = ProbePath::Input;
  return {
      {"fp16->fp32", "mma.sync.m16n8k16.f32.f16.f16.f32", I::fp16, 16, false, 1},
      {"bf16->fp32", "mma.sync.m16n8k16.f32.bf16.bf16.f32", I::bf16, 16, false, 1},
      {"tf32->fp32", "mma.sync.m16n8k8.f32.tf32.tf32.f32", I::tf32, 8, false, 1},
      {"fp16->fp16", "mma.sync.m16n8k16.f16.f16.f16.f16", I::fp16, 16, true, 1},
      {"fp16->fp32 K=32", "2 x mma.sync.m16n8k16 chained", I::fp16, 16, false, 2},
      {"fp16->fp32 K=64", "4 x mma.sync.m16n8k16 chained", I::fp16, 16, false, 4},
      {"fp16->fp32 K=128", "8 x mma.sync.m16n8k16 chained", I::fp16, 16, false, 8},
  };
}

ProbeResult probe_path(const ProbePath& path, const PartialFn& partial, int trials, std::uint64_t seed) {
  ProbeResult res;
  res.path = path;
  res.output_bits = path.fp16_output ? 10 : 23;
  const int K = path.depth * path.k;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  // exponent spreads that keep FP16 products and sums in range (FP16 output: |sum| < 65504)
  const int spread = path.fp16_output ? 4 : (path.input == ProbePath::Input::fp16 ? 10 : 30);
  std::uniform_int_distribution<int> expo(-spread, spread);
  std::vector<float> a(16 * static_cast<std::size_t>(K)), b(static_cast<std::size_t>(K) * 8), d(16 * 8);
  // smallest truncation that changed some partial: ntrun_max = that - 1
  int first_change = res.output_bits + 1;
  for (int dist = 0; dist < 4; ++dist) {
    for (int t = 0; t < trials; ++t) {
      auto draw = [&](std::size_t idx) {
        float v = unit(rng);
        if (dist == 1) v = std::ldexp(v, expo(rng));                  // wide exponent spread
        if (dist == 2) v = std::ldexp(v, idx % 16 == 0 ? spread : -spread);  // long alignment shifts
        if (dist == 3) v = std::fabs(v);  // all products >= 0: truncation anywhere only lowers the sum
        return to_format(path.input, v);
      };
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = draw(i);
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = draw(i);
      partial(path, a, b, d);
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j) {
          const float p = d[i * 8 + j];
          if (!std::isfinite(p) || p == 0.0f) continue;
          ++res.samples;
          for (int n = 1; n < first_change; ++n)
            if (truncate_low(p, res.output_bits, n) != p) {  // the post's comparison, one partial
              first_change = n;
              break;
            }
          // the exact dot product of the rounded inputs as an error-free pair (s, e)
          double s = 0, e = 0;
          for (int q = 0; q < K; ++q) {
            double s2, e2;
            two_sum(s, static_cast<double>(a[i * K + q]) * b[j * K + q], s2, e2);
            s = s2, e += e2;
          }
          // RZ test on positive sums only: with mixed signs, truncating a partial sum of the other
          // sign raises the total, so an RZ adder can return more than the exact value
          if (dist != 3) continue;
          if ((static_cast<double>(p) - s) - e > 0) res.rounded_up_seen = true;
        }
    }
  }
  res.effective_bits = res.output_bits - (first_change - 1);  // 23 - Ntrun (10 - Ntrun for FP16)
  res.consistent_with_rz = !res.rounded_up_seen;
  return res;
}

std::vector<ProbeResult> probe_cpu(const TcModel& model, int trials) {
  const TensorCoreModel tc(model);
  const PartialFn partial = [&](const ProbePath& path, const std::vector<float>& a, const std::vector<float>& b,
                                std::vector<float>& d) {
    const int K = path.depth * path.k;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        float acc = 0.0f;
        for (int s = 0; s < path.depth; ++s) {
          const float* ar = a.data() + i * K + s * path.k;
          const float* bc = b.data() + j * K + s * path.k;
          acc = path.fp16_output ? tc.mma_fp16(ar, bc, path.k, acc) : tc.mma_fp32(ar, bc, path.k, acc);
        }
        d[i * 8 + j] = acc;
      }
  };
  std::vector<ProbeResult> out;
  std::uint64_t seed = 1;
  for (const ProbePath& p : probe_paths()) out.push_back(probe_path(p, partial, trials, seed++));
  return out;
}

}  // namespace tcsolve
