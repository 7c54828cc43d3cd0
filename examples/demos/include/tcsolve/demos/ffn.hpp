// The transformer FFN demo (issue 5): a BERT-base feed-forward block whose two GEMMs run through
// any GEMM variant of tcsolve::gemm, measured against the same block computed in FP64.
//
//   Y = GELU(X W1 + b1) W2 + b2        d_model = 768, d_ff = 3072, T tokens (BERT-base)
//
// Layout. The gemm API is column-major, so the block is stored feature-major, one token per
// column, and computed as its transpose (the formula above, with X, W1, W2 and Y transposed):
//   X  (d_model x T)     column j is token j: the same bytes as the row-major T x d_model
//                        activation matrix of PyTorch and of the formula above
//   W1 (d_ff x d_model)  H = W1 X + b1 1^T     (d_ff x T)    first GEMM:  m = d_ff,    k = d_model
//   W2 (d_model x d_ff)  Y = W2 GELU(H) + b2 1^T (d_model x T) second GEMM: m = d_model, k = d_ff
// Both GEMMs are Op::n x Op::n with n = T and tight leading dimensions; b1 and b2 are added per
// row (per feature); every array is column-major with leading dimension = its row count.
//
// Data (make_problem, one seeded Rng, drawn in the order W1, b1, W2, b2, X):
//   weights W1, W2 ~ N(0, 0.02^2), BERT's initializer (truncated normal in the reference code;
//   the truncation at 2 sigma is left out here); biases ~ N(0, 0.02^2) as well (BERT starts
//   them at zero; drawn here so that the bias path carries weight);
//   X: N(0, 1) entries, then every token (column) layer-normalized in double to mean 0 and
//   variance 1 (LayerNorm without its affine part, eps 1e-12), rounded once to FP32.
//
// Arithmetic. Both GEMMs through the chosen variant (alpha = 1, beta = 0); bias additions and the
// exact (erf) GELU in FP32, elementwise, by the TCSOLVE_HOST_DEVICE functions below on both
// backends. The reference Y64 is the whole block in FP64 from the same FP32 inputs: the hidden
// activations are kept in FP64 (GELU in FP64 too), so the second GEMM's reference does not
// inherit the variant's own intermediate result. cpu: Eigen in double; cuda: cuBLAS DGEMM on FP64
// copies, an FP64 bias + GELU kernel between the two products.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace tcsolve::demos {

namespace detail {
class FfnBackend;  // one per backend, in ffn.cpp
}  // namespace detail

inline constexpr int kBertDModel = 768;       ///< BERT-base hidden size
inline constexpr int kBertDFf = 3072;         ///< BERT-base intermediate (feed-forward) size
inline constexpr double kBertInitStd = 0.02;  ///< BERT's initializer_range

/// Sizes of one block.
struct FfnShape {
  int tokens = 256;
  int d_model = kBertDModel;
  int d_ff = kBertDFf;
};

/// Throws InvalidInput naming the first size that is not a positive integer.
void check_shape(const FfnShape& shape);

/// Floating-point operations of one block, counted as its two GEMMs: 2 * (2 T d_model d_ff).
/// (The T (2 d_ff + d_model) bias and GELU operations are not counted.)
double ffn_flops(const FfnShape& shape);

/// Inputs and weights of one block on the host, FP32, column-major (see the layout above).
struct FfnProblem {
  FfnShape shape;
  std::vector<float> X;   ///< d_model x T, layer-normalized tokens
  std::vector<float> W1;  ///< d_ff x d_model
  std::vector<float> b1;  ///< d_ff
  std::vector<float> W2;  ///< d_model x d_ff
  std::vector<float> b2;  ///< d_model
};

/// The seeded data described at the top. Throws InvalidInput for a bad shape.
FfnProblem make_problem(const FfnShape& shape, std::uint64_t seed);

// ---------------------------------------------------------------------------------------------
// GELU, exact form: GELU(x) = x Phi(x) = x/2 (1 + erf(x / sqrt 2)). Written once for host and
// device; the FP32 version rounds in this order: t = x * fl(1/sqrt 2), e = erf(t), s = 1 + e,
// (x / 2) * s.
// ---------------------------------------------------------------------------------------------

/// fl(1 / sqrt 2) in FP32 (relative error below 2^-24).
inline constexpr float kInvSqrt2f = 0.70710678118654752f;

/// GELU in FP32 (std::erf / CUDA erff, both within 2 ulp of erf).
TCSOLVE_HOST_DEVICE inline float gelu(float x) {
#if defined(__CUDA_ARCH__)
  const float e = erff(x * kInvSqrt2f);
#else
  const float e = std::erf(x * kInvSqrt2f);
#endif
  return (0.5f * x) * (1.0f + e);
}

/// GELU in FP64: the reference.
TCSOLVE_HOST_DEVICE inline double gelu(double x) {
#if defined(__CUDA_ARCH__)
  return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
#else
  return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440));
#endif
}

/// Error of the FP32 GELU in units of r = 2^-24 (FP32 unit roundoff) times |x|:
///   |gelu(float x) - GELU(x)| <= kGeluErrorUnits * 2^-24 * |x|   (x normal, no overflow)
/// Derivation, c = fl(1/sqrt 2) = (1 + d_c)/sqrt 2 and |d_c|, |d_i| <= r:
///   t = x c (1 + d_1) = (x / sqrt 2)(1 + th), |th| <= 2r + r^2;
///   |erf(t) - erf(x/sqrt 2)| <= max_z |erf'(z) z| |th| = (2/sqrt pi)(2e)^(-1/2) |th| < 0.484 |th|
///     < 0.97 r;
///   erf evaluated within 2 ulp, and |erf| < 1 where the ulp is at most 2^-24: < 2r;
///   s = fl(1 + e) in [0, 2], one rounding: < r (absolute: the ulp of [1, 2) is 2r);
///   so |s - (1 + erf(x/sqrt 2))| < 3.97 r; x/2 is exact; |fl((x/2) s) - (x/2) s| <= r |x/2| s
///   <= r |x|. In all: (3.97/2 + 1) r |x| < 3 r |x|.
/// An absolute bound, not a relative one: for x << 0 GELU(x) underflows towards 0 while its
/// FP32 value carries the absolute error of 1 + erf. The block's error is normwise, so the
/// absolute form is the one that matters.
inline constexpr double kGeluErrorUnits = 3.0;

/// Bias then GELU: gelu(h + b), one FP32 rounding for the addition.
TCSOLVE_HOST_DEVICE inline float bias_gelu(float h, float b) { return gelu(h + b); }

// ---------------------------------------------------------------------------------------------
// The block
// ---------------------------------------------------------------------------------------------

/// What the block's two GEMMs ran as (auto may resolve differently for each; notes of fallbacks).
struct FfnInfo {
  GemmInfo first;   ///< H = W1 X
  GemmInfo second;  ///< W2 GELU(H + b1)
};

/// The block on the host (cpu backend) through `variant`: returns Y (d_model x T, column-major,
/// leading dimension d_model). Throws Unavailable when the cpu backend lacks `variant`.
std::vector<float> ffn_forward(Variant variant, const FfnProblem& problem, FfnInfo* info = nullptr,
                               const GemmOptions& options = {});

/// The whole block in FP64 on the host (Eigen double, FP64 hidden activations): Y64
/// (d_model x T, leading dimension d_model).
std::vector<double> ffn_reference(const FfnProblem& problem);

/// One variant's measurement.
struct FfnResult {
  Variant variant = Variant::fp32_simt;
  FfnInfo info;
  double relative_error = 0;  ///< ||Y - Y64||_F / ||Y64||_F of the last run
  double time_s = 0;          ///< median of the timed runs
  double tflops = 0;          ///< ffn_flops(shape) / time_s / 1e12
};

/// Name of what ran: "ec-fp16", or "ec-fp16+ec-tf32" when the two GEMMs resolved differently.
std::string resolved_name(const FfnInfo& info);

/// One problem on one backend, measured variant by variant: the inputs are placed once (cuda:
/// uploaded), the FP64 reference Y64 computed once (cpu: ffn_reference; cuda: on the device,
/// cuBLAS DGEMM on FP64 copies, so that T = 16384 takes a moment), and every run() computes the
/// block through one variant and compares its Y with Y64.
///
/// Timing: cuda: each run is timed with CUDA events on the default stream, from the first GEMM's
/// launch to the end of the last bias kernel (the two GEMMs, bias + GELU, bias); cpu: the same
/// span on the steady clock. The buffers H and Y are allocated and written once at construction,
/// so that no timed run pays for first-touch page faults (the cpu backend's warm-up).
class FfnBench {
 public:
  /// `backend` automatic resolves as tcsolve::resolve_backend does. Throws Unavailable for cuda
  /// without a usable device, InvalidInput for a bad shape.
  FfnBench(Backend backend, const FfnProblem& problem);
  ~FfnBench();
  FfnBench(FfnBench&&) noexcept;
  FfnBench& operator=(FfnBench&&) noexcept;
  FfnBench(const FfnBench&) = delete;
  FfnBench& operator=(const FfnBench&) = delete;

  /// cpu or cuda.
  Backend backend() const;
  const FfnShape& shape() const;

  /// `warmups` untimed runs, then `repeats` (>= 1) timed runs of the block through `variant`.
  /// Throws Unavailable when the backend lacks `variant`.
  FfnResult run(Variant variant, int repeats = 1, int warmups = 0, const GemmOptions& options = {});

  /// Y of the last run, on the host (d_model x T, leading dimension d_model); empty before any.
  std::vector<float> output() const;

 private:
  std::unique_ptr<detail::FfnBackend> impl_;
};

}  // namespace tcsolve::demos
