// The drop-in's policy: which cuBLAS products it runs on tcsolve's corrected GEMM and which it
// passes through to cuBLAS, with the reason. Pure C++ (no CUDA, no cuBLAS headers; of tcsolve's
// GEMM only the header-only k-splitting rule, tcsolve/gemm/batch.hpp), so that the rules are
// unit-tested on a machine without a GPU (tests/test_hook_policy.cpp); the entry points
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
//   - a cuBLASLt layout that is not column-major, an epilogue other than DEFAULT, BIAS, RELU,
//     RELU_BIAS, GELU, GELU_BIAS ("epilogue 130"), a transposed C, a bias type other than
//     FP32                                                 -> pass with the attribute named
//   - sizes: empty or k = 0 (cuBLAS applies BLAS's C = beta C), host alpha = 0, a dimension,
//     leading dimension or batch count beyond int -> pass
//   - fewer flops than min_flops, counted over the whole call (2 m n k batch: a batch runs as
//     one launch)                                          -> pass "below min flops"
//   - min(m, n, k) < min_dim                               -> pass "below min dim"
//   - fewer work units than min_tiles (work_units: batch x 128 x 128 output tiles x k ranges,
//     the ranges of tcsolve::ec_k_split, which splits k only for calls with fewer than 128
//     tiles over the batch)                                -> pass "few output tiles"
//   - the cost model (predicted_speedup) predicts less than min_speedup times cuBLAS SGEMM's
//     speed: memory-bound shapes, where the split pass's extra traffic outweighs the faster
//     products, and small calls, where the fixed cost does -> pass "predicted slower"
//   - otherwise intercept with the configured variant.
#pragma once

#include <cstdint>
#include <string>

namespace tcsolve::hook {

/// The cuBLAS entry point of a call.
enum class Entry {
  sgemm,                    ///< cublasSgemm_v2
  sgemm_strided_batched,    ///< cublasSgemmStridedBatched
  sgemm_batched,            ///< cublasSgemmBatched (pointer arrays)
  gemm_ex,                  ///< cublasGemmEx
  gemm_batched_ex,          ///< cublasGemmBatchedEx (pointer arrays)
  gemm_strided_batched_ex,  ///< cublasGemmStridedBatchedEx
  lt_matmul                 ///< cublasLtMatmul
};
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
  /// Calls with fewer flops (2 m n k batch: the whole call, which runs as one launch however
  /// large its batch) pass through. 0: off, the cost model's fixed cost decides instead.
  double min_flops = 0;
  /// Calls with fewer work units (work_units: a 128 x 128 output tile of one member over one k
  /// range) pass through: the ec kernel computes each unit on one multiprocessor, so fewer units
  /// than about one wave (132 SMs) leave it idle. Measured (H200, session 22): 128 tiles
  /// (16384 x 128 x 16384) 1.06x cuBLAS SGEMM; 64 tiles split into 256 units (1024 x 1024 x
  /// 16384) 2.07x.
  std::int64_t min_tiles = 128;
  /// Calls predicted (predicted_speedup) to run at less than this times cuBLAS SGEMM's speed
  /// pass through. 0: off.
  double min_speedup = 1.1;
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
  float alpha = 1.0f;         ///< with host pointers (alpha == 0: BLAS does not read A and B)
  bool null_scalars = false;  ///< alpha or beta is NULL (cuBLAS rejects it; the hook must not read it)
  bool algo_valid = true;     ///< cublasGemmEx: the algorithm is one of cublasGemmAlgo_t's values
  /// An unsupported form: a cuBLASLt attribute ("order", "epilogue 8", "transc", "bias type"), a
  /// NULL pointer array of the batched forms ("pointer array NULL"); empty when the call asks for
  /// nothing the hook does not do.
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

/// The units of work the ec kernel spreads over the multiprocessors: batch x ceil(m / 128) x
/// ceil(n / 128) x tcsolve::ec_k_split(m, n, k, batch, 0).count, as a double (no overflow); 0
/// when a size is below 1.
double work_units(const Request& r);

/// The cost model of the "predicted slower" rule: cuBLAS SGEMM takes max(F / simt, bytes /
/// bandwidth) with F = 2 m n k batch and bytes = 4 (m k + k n + m n) batch (the operands read
/// once, C written once); the ec path takes fixed + F / tensor + (16 (m k + k n) + 4 m n) batch /
/// bandwidth (the scaling reads the operands, the split reads them again and writes hi and lo,
/// the main kernel reads those: four passes of 4 bytes an element; C once). The rates are an
/// H100/H200's, fitted to the per-shape table of docs/BENCHMARKS.md (session 22): on its 20
/// shapes the model's ratio lies at most 0.17 above the measured one and sorts every shape
/// measured at 1.3x or more above 1.1x and every one at 0.9x or less below it
/// (tests/test_hook_policy.cpp).
struct CostModel {
  double simt_flops = 50e12;     ///< cuBLAS SGEMM, FLOP/s (8192^3: 49 on the H200)
  double tensor_flops = 250e12;  ///< the ec main kernel, FLOP/s (8192^3: 250)
  double bandwidth = 3e12;       ///< bytes/s reached by both (of 3.35 / 4.8 peak)
  double fixed = 25e-6;          ///< the ec path's launches and host work per call, seconds
};

/// cuBLAS SGEMM's predicted time over the ec path's for the call (batch included).
double predicted_speedup(const Request& r, const CostModel& model = {});

/// The rules above.
Decision decide(const Request& r, const Settings& s);

}  // namespace tcsolve::hook
