// The drop-in's policy: which cuBLAS products it runs on tcsolve's corrected GEMM and which it
// passes through to cuBLAS, with the reason. Pure C++ (no CUDA, no cuBLAS headers), so that the
// rules are unit-tested on a machine without a GPU (tests/test_hook_policy.cpp); the entry points
// (cublas_entries.cpp, cublaslt_entries.cpp) translate cuBLAS's arguments into a Request.
//
// Rules, in order (the first that applies gives the reason):
//   - the variant is off                                   -> pass "variant off"
//   - a call made from inside the hook (our own fallback)  -> pass "reentrant"
//   - an argument cuBLAS rejects (CUBLAS_STATUS_INVALID_VALUE): an operation other than N, T, C,
//     a negative size or batch count, a leading dimension below BLAS's bound, a NULL alpha or
//     beta, an unknown GEMM algorithm               -> pass "invalid transa", "invalid m", ...
//     (cuBLAS sees the call untouched and answers it)
//   - not FP32 A, B, C (and D)                             -> pass "data type"
//   - compute type not 32F (or pedantic): FAST_TF32 is a TF32 request, the others reduced
//     precision asked for                                  -> pass "compute type ..."
//   - math mode TF32 (or the legacy tensor-op mode): TF32 asked for, passes unless
//     TCSOLVE_HOOK_TF32=replace                            -> pass "tf32 math mode"
//   - math mode BF16x9 emulation: another emulation asked for     -> pass "bf16x9 math mode"
//   - alpha/beta in a pointer mode other than host or device (cuBLASLt vectors) -> pass
//   - a cuBLASLt layout that is not column-major, an epilogue other than default or bias,
//     a transposed C, a bias type other than FP32         -> pass with the attribute named
//   - sizes: empty or k = 0 (cuBLAS applies BLAS's C = beta C), host alpha = 0, a dimension or
//     leading dimension beyond int -> pass
//   - fewer flops than min_flops, or min(m, n, k) < min_dim -> pass "below min flops" / "below min dim"
//   - fewer 128 x 128 output tiles than min_tiles            -> pass "few output tiles"
//   - otherwise intercept with the configured variant.
#pragma once

#include <cstdint>
#include <string>

namespace tcsolve::hook {

/// The cuBLAS entry point of a call.
enum class Entry { sgemm, sgemm_strided_batched, gemm_ex, lt_matmul };
/// Its name as cuBLAS exports it ("cublasSgemm_v2", with "_64" for the 64-bit forms).
std::string entry_name(Entry entry, bool is64);

/// What the hook runs instead: TCSOLVE_HOOK_VARIANT.
enum class HookVariant { auto_, ec_fp16, ec_tf32, off };
/// "auto", "ec-fp16", "ec-tf32", "off" (tcsolve's variant names).
const char* to_string(HookVariant v);

/// The handle's math mode (cublasMath_t without its flag bits).
enum class MathMode { default_math, pedantic, tf32, legacy_tensor_op, emulated_bf16x9 };
/// Compute type (cublasComputeType_t) as the policy sees it.
enum class Compute { f32, f32_pedantic, f32_fast_tf32, f32_fast_16f, f32_fast_16bf, other };
/// alpha/beta pointer mode.
enum class Pointers { host, device, vector };

struct Settings {
  HookVariant variant = HookVariant::auto_;
  bool tf32_replace = false;  ///< TCSOLVE_HOOK_TF32=replace: TF32 requests are intercepted too
  /// Products with fewer flops (2 m n k per matrix) pass through: the hook's fixed cost per
  /// product (about 45 us of launches and allocations on an H100 against SGEMM's 20 us) is not
  /// repaid below about 2.5e9 flops (docs/BENCHMARKS.md, "the drop-in's crossover").
  double min_flops = 4.0e9;
  /// Products with fewer 128 x 128 output tiles (per matrix) pass through: the ec kernel computes
  /// each tile over the whole k on one multiprocessor, so fewer tiles than about one wave of an
  /// H100 (132 SMs) leave it idle where cuBLAS splits k. Measured: 0.67x cuBLAS at 128 tiles
  /// (16384 x 128 x 16384), 0.55x at 64, 1.23x at 144 (1536^2), 1.6x at 256.
  std::int64_t min_tiles = 144;
  /// Products with min(m, n, k) below this pass through (thin products gain nothing).
  std::int64_t min_dim = 64;
};

struct Request {
  Entry entry = Entry::sgemm;
  bool is64 = false;
  /// 'N', 'T' or 'C' (the same as 'T' for real data); '?' for any other value (cuBLAS rejects it).
  char ta = 'N', tb = 'N';
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  bool fp32_types = true;  ///< A, B, C (and D) are FP32
  MathMode math = MathMode::default_math;
  Compute compute = Compute::f32;
  Pointers pointers = Pointers::host;
  float alpha = 1.0f;  ///< with host pointers (alpha == 0: BLAS does not read A and B)
  bool null_scalars = false;  ///< alpha or beta is NULL (cuBLAS rejects it; the hook must not read it)
  bool algo_valid = true;     ///< cublasGemmEx: the algorithm is one of cublasGemmAlgo_t's values
  /// cuBLASLt only: an unsupported attribute ("order", "epilogue 8", "transc", "bias type"); empty
  /// when the descriptors ask for nothing the hook does not do.
  std::string unsupported;
  bool reentrant = false;
};

struct Decision {
  bool intercept = false;
  HookVariant variant = HookVariant::off;  ///< what runs when intercepted
  std::string reason;                      ///< why it passes through (empty when intercepted)
};

/// 2 m n k batch, as a double (no overflow).
double flops(const Request& r);

/// The rules above.
Decision decide(const Request& r, const Settings& s);

}  // namespace tcsolve::hook
