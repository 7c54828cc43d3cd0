// The accumulator-precision probe (probe.hpp): the path table, the truncation sweep of seed 003
// shared by the cpu (tensor-core model) and cuda (mma.sync, wgmma) backends, and the cpu
// partial products.
#include "tcsolve/gemm/probe.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "tcsolve/gemm/rounding.hpp"
#include "tcsolve/gemm/tc_model.hpp"

namespace tcsolve {
namespace {

/// x with the low `ntrun` bits of its `mantissa_bits`-bit mantissa cleared (FP32 word; for an
/// FP16 value held in FP32 the mantissa is the top 10 bits).
float truncate_low(float x, int mantissa_bits, int ntrun) { return bit_cut(x, mantissa_bits - ntrun); }

}  // namespace

float probe_input_value(ProbePath::Input in, float x) {
  switch (in) {
    case ProbePath::Input::fp16: return round_fp16(x, Rounding::rn);
    case ProbePath::Input::bf16: return bf16_value(bf16_bits_rn(x));
    case ProbePath::Input::e4m3: return round_e4m3(x, Rounding::rn);
    case ProbePath::Input::tf32:
    default: return round_tf32(x, Rounding::rna);
  }
}

std::vector<ProbePath> probe_paths() {
  using I = ProbePath::Input;
  using E = ProbePath::Engine;
  return {
      {"fp16->fp32", "mma.sync.m16n8k16.f32.f16.f16.f32", "HMMA", I::fp16, E::mma_sync, 16, false, 1},
      {"bf16->fp32", "mma.sync.m16n8k16.f32.bf16.bf16.f32", "HMMA", I::bf16, E::mma_sync, 16, false, 1},
      {"tf32->fp32", "mma.sync.m16n8k8.f32.tf32.tf32.f32", "HMMA", I::tf32, E::mma_sync, 8, false, 1},
      {"fp16->fp16", "mma.sync.m16n8k16.f16.f16.f16.f16", "HMMA", I::fp16, E::mma_sync, 16, true, 1},
      {"fp16->fp32 K=32", "2 x mma.sync.m16n8k16 chained", "HMMA", I::fp16, E::mma_sync, 16, false, 2},
      {"fp16->fp32 K=64", "4 x mma.sync.m16n8k16 chained", "HMMA", I::fp16, E::mma_sync, 16, false, 4},
      {"fp16->fp32 K=128", "8 x mma.sync.m16n8k16 chained", "HMMA", I::fp16, E::mma_sync, 16, false, 8},
      {"e4m3->fp32", "mma.sync.m16n8k32.f32.e4m3.e4m3.f32", "F2FP+HMMA", I::e4m3, E::mma_sync, 32, false, 1},
      {"e4m3->fp32 K=64", "2 x mma.sync.m16n8k32 e4m3 chained", "F2FP+HMMA", I::e4m3, E::mma_sync, 32, false, 2},
      {"e4m3->fp32 K=128", "4 x mma.sync.m16n8k32 e4m3 chained", "F2FP+HMMA", I::e4m3, E::mma_sync, 32, false, 4},
      {"wgmma fp16->fp32", "wgmma.mma_async.m64n8k16.f32.f16.f16", "HGMMA", I::fp16, E::wgmma, 16, false, 1},
      {"wgmma fp16->fp32 K=64", "4 x wgmma.m64n8k16 f16 chained", "HGMMA", I::fp16, E::wgmma, 16, false, 4},
      {"wgmma e4m3->fp32", "wgmma.mma_async.m64n8k32.f32.e4m3.e4m3", "QGMMA", I::e4m3, E::wgmma, 32, false, 1},
      {"wgmma e4m3->fp32 K=128", "4 x wgmma.m64n8k32 e4m3 chained", "QGMMA", I::e4m3, E::wgmma, 32, false, 4},
  };
}

ProbeResult probe_path(const ProbePath& path, const PartialFn& partial, int trials, std::uint64_t seed) {
  ProbeResult res;
  res.path = path;
  res.output_bits = path.fp16_output ? 10 : 23;
  const int M = path.m(), K = path.depth * path.k;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  // exponent spreads that keep the inputs and sums in range: FP16 output |sum| < 65504; FP16
  // inputs within 2^+-10 of 1 (FP16's normal range is 2^-14..2^15); E4M3 within 2^+-6 of 1 (its
  // normal range is 2^-6..448, smaller values become subnormal or 0, still exact inputs)
  const int spread = path.fp16_output                       ? 4
                     : path.input == ProbePath::Input::fp16 ? 10
                     : path.input == ProbePath::Input::e4m3 ? 6
                                                            : 30;
  std::uniform_int_distribution<int> expo(-spread, spread);
  // the error floor of the sanity check: the output format's smallest normal
  const double floor = path.fp16_output ? 6.103515625e-05 : 1.1754943508222875e-38;
  std::vector<float> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * 8),
      d(static_cast<std::size_t>(M) * 8);
  // smallest truncation that changed some partial: ntrun_max = that - 1
  int first_change = res.output_bits + 1;
  for (int dist = 0; dist < 4; ++dist) {
    for (int t = 0; t < trials; ++t) {
      auto draw = [&](std::size_t idx) {
        float v = unit(rng);
        if (dist == 1) v = std::ldexp(v, expo(rng));                  // wide exponent spread
        if (dist == 2) v = std::ldexp(v, idx % 16 == 0 ? spread : -spread);  // long alignment shifts
        if (dist == 3) v = std::fabs(v);  // all products >= 0: truncation anywhere only lowers the sum
        return probe_input_value(path.input, v);
      };
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = draw(i);
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = draw(i);
      partial(path, a, b, d);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < 8; ++j) {
          const float p = d[static_cast<std::size_t>(i) * 8 + j];
          if (!std::isfinite(p) || p == 0.0f) continue;
          ++res.samples;
          for (int n = 1; n < first_change; ++n)
            if (truncate_low(p, res.output_bits, n) != p) {  // the post's comparison, one partial
              first_change = n;
              break;
            }
          // the exact dot product of the rounded inputs as an error-free pair (s, e)
          double s = 0, e = 0, magnitude = 0;
          for (int q = 0; q < K; ++q) {
            const double prod = static_cast<double>(a[static_cast<std::size_t>(i) * K + q]) * b[j * K + q];
            double s2, e2;
            two_sum(s, prod, s2, e2);
            s = s2, e += e2;
            magnitude += std::fabs(prod);
          }
          const double err = std::fabs((static_cast<double>(p) - s) - e) / std::max(magnitude, floor);
          res.max_error = std::max(res.max_error, err);
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
    for (int i = 0; i < path.m(); ++i)
      for (int j = 0; j < 8; ++j) {
        float acc = 0.0f;
        for (int s = 0; s < path.depth; ++s) {
          const float* ar = a.data() + static_cast<std::size_t>(i) * K + s * path.k;
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
