// `tcsolve probe`: the effective accumulator precision of a tensor-core path, measured as in
// "Some Matrix Multiplication Engines Are Not As Accurate As We Thought" (seed 003):
//   the partial result of each mma (C = 0, one k-step, or a chain of `depth` k-steps kept inside
//   the tensor core) has its low Ntrun mantissa bits truncated before it is accumulated outside
//   in FP32; the largest Ntrun that leaves every product unchanged, over many random inputs,
//   means those bits were never computed: the accumulator keeps 23 - Ntrun mantissa bits
//   (10 - Ntrun for an FP16 output).
// Each partial of positive inputs is also compared with the exact dot product of the same
// (rounded) inputs: a result never above the exact value is consistent with truncation (RZ).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"

namespace tcsolve {

/// A tensor-core path: input format, k of one instruction, output format.
struct ProbePath {
  std::string name;         ///< "fp16->fp32"
  std::string instruction;  ///< PTX of the cuda path ("mma.sync.m16n8k16.f32.f16.f16.f32")
  enum class Input { fp16, bf16, tf32 } input;
  int k;                    ///< k of one instruction (16 FP16/BF16, 8 TF32)
  bool fp16_output;         ///< FP16 accumulator and result
  int depth;                ///< k-steps chained inside the tensor core per partial (1 = one mma)
};

/// The paths the probe measures (mma.sync family; depth 1, and the FP16 path at depth 2, 4, 8
/// = K 32, 64, 128 inside the tensor core).
std::vector<ProbePath> probe_paths();

struct ProbeResult {
  ProbePath path;
  int effective_bits = 0;    ///< mantissa bits the accumulator keeps (23 - Ntrun; 10 - Ntrun FP16)
  int output_bits = 23;      ///< mantissa bits of the output format
  bool consistent_with_rz = false;  ///< no partial exceeded the exact value in magnitude
  bool rounded_up_seen = false;     ///< some partial exceeded it (RN-like)
  long samples = 0;          ///< partials examined
};

/// One partial per output element of a 16 x 8 tile: D = sum over depth*k of a[i][p] b[p][j] with
/// C = 0, as the path computes it. a is 16 x K row-major, b is K x 8 column-major (K = depth*k),
/// values already in the input format; d is 16 x 8 row-major.
using PartialFn = std::function<void(const ProbePath&, const std::vector<float>& a, const std::vector<float>& b,
                                     std::vector<float>& d)>;

/// Runs the truncation sweep of `path` with `partial` on `trials` random tiles per input
/// distribution (U(-1,1), wide exponent spread, one large value among small ones, U(0,1)).
ProbeResult probe_path(const ProbePath& path, const PartialFn& partial, int trials, std::uint64_t seed);

/// The cpu backend: the paths run on the tensor-core model of the emulation (TcModel).
std::vector<ProbeResult> probe_cpu(const TcModel& model, int trials = 200);

namespace cuda {
/// The cuda backend: the same paths on the device's tensor cores (mma.sync). Throws
/// Unavailable without a device or CUDA build.
std::vector<ProbeResult> probe(int trials = 2000);
}  // namespace cuda

}  // namespace tcsolve
