// `tcsolve probe`: the effective accumulator precision of a tensor-core path, measured as in
// "Some Matrix Multiplication Engines Are Not As Accurate As We Thought" (seed 003):
//   the partial result of each mma (C = 0, one k-step, or a chain of `depth` k-steps kept inside
//   the tensor core) has its low Ntrun mantissa bits truncated before it is accumulated outside
//   in FP32; the largest Ntrun that leaves every product unchanged, over many random inputs,
//   means those bits were never computed: the accumulator keeps 23 - Ntrun mantissa bits
//   (10 - Ntrun for an FP16 output).
// Each partial of positive inputs is also compared with the exact dot product of the same
// (rounded) inputs: a result never above the exact value is consistent with truncation (RZ).
// Note what the count means: mantissa bits of the result, relative to the result's own
// exponent. An adder that aligns products to the largest one and keeps a fixed number of bits
// below it (a "fused" dot product) can return more result bits than it keeps below the largest
// product whenever the sum grows past it; the post's e8m13 is read the same way as here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"

namespace tcsolve {

/// A tensor-core path: input format, instruction family and shape, output format.
struct ProbePath {
  enum class Input { fp16, bf16, tf32, e4m3 };
  /// mma.sync: one warp, a 16 x 8 tile (sm_80; FP8 sm_89). wgmma.mma_async: one warpgroup of
  /// 128 threads, a 64 x 8 tile, operands in shared memory (sm_90a only).
  enum class Engine { mma_sync, wgmma };

  std::string name;         ///< "fp16->fp32"
  std::string instruction;  ///< PTX of the cuda path ("mma.sync.m16n8k16.f32.f16.f16.f32")
  std::string sass;         ///< SASS it becomes on sm_90 (HMMA, HGMMA, QGMMA; E4M3 mma.sync: F2FP unpack to FP16 + HMMA, seen in the H100 dump)
  Input input;
  Engine engine;
  int k;                    ///< k of one instruction (16 FP16/BF16, 8 TF32, 32 E4M3)
  bool fp16_output;         ///< FP16 accumulator and result
  int depth;                ///< k-steps chained inside the tensor core per partial (1 = one mma)

  /// Rows of the tile one instruction computes (its n is 8 on every path).
  int m() const { return engine == Engine::wgmma ? 64 : 16; }
};

/// The paths the probe measures: the mma.sync family (FP16, BF16, TF32, FP16-accumulating,
/// E4M3), the wgmma family (FP16, E4M3: the post's QGMMA), and K-chains inside the tensor core
/// (depth > 1: FP16 mma.sync K = 32, 64, 128; E4M3 mma.sync K = 64, 128; wgmma FP16 K = 64,
/// wgmma E4M3 K = 128 as in the post's BLOCK_K = 128 experiment).
std::vector<ProbePath> probe_paths();

struct ProbeResult {
  ProbePath path;
  bool available = true;     ///< false: not run here (older GPU, or not in this build's code)
  std::string note;          ///< why not, when unavailable
  int effective_bits = 0;    ///< mantissa bits the accumulator keeps (23 - Ntrun; 10 - Ntrun FP16)
  int output_bits = 23;      ///< mantissa bits of the output format
  bool consistent_with_rz = false;  ///< no partial exceeded the exact value in magnitude
  bool rounded_up_seen = false;     ///< some partial exceeded it (RN-like)
  long samples = 0;          ///< partials examined
  /// max over partials of |partial - exact| / max(sum_p |a_p b_p|, smallest normal of the
  /// output): a sanity check that the path multiplied the intended operands (a wrong fragment
  /// or shared-memory layout gives errors of order 1; a correct w-bit accumulator stays below
  /// about (K + 1) 2^(1-w)).
  double max_error = 0.0;
};

/// One partial per output element of an M x 8 tile (M = path.m()): D = sum over depth*k of
/// a[i][p] b[p][j] with C = 0, as the path computes it. a is M x K row-major, b is K x 8
/// column-major (K = depth*k), values already in the input format; d is M x 8 row-major.
using PartialFn = std::function<void(const ProbePath&, const std::vector<float>& a, const std::vector<float>& b,
                                     std::vector<float>& d)>;

/// Runs the truncation sweep of `path` with `partial` on `trials` random tiles per input
/// distribution (U(-1,1), wide exponent spread, one large value among small ones, U(0,1)),
/// every value rounded to the path's input format.
ProbeResult probe_path(const ProbePath& path, const PartialFn& partial, int trials, std::uint64_t seed);

/// The input format's rounding used to draw probe inputs (RN; E4M3 saturates at 448).
float probe_input_value(ProbePath::Input input, float x);

/// The cpu backend: every path (mma.sync and wgmma alike) runs on the tensor-core model of the
/// emulation (TcModel), which has one accumulator for all paths.
std::vector<ProbeResult> probe_cpu(const TcModel& model, int trials = 200);

namespace cuda {
/// The cuda backend: the same paths on the device's tensor cores (mma.sync, wgmma). Paths the
/// device or this build's code for it cannot run (E4M3 mma.sync below sm_89, wgmma anywhere
/// but sm_90 with sm_90a code) come back with available = false and a note. Throws
/// Unavailable without a device or CUDA build.
std::vector<ProbeResult> probe(int trials = 2000);
}  // namespace cuda

}  // namespace tcsolve
