// The cuBLAS entry points the drop-in exports (exports.map): cublasSgemm_v2,
// cublasSgemmStridedBatched and cublasGemmEx with their _64 forms, and cublasDestroy_v2 (which
// frees the handle's state, then forwards). Each reads what the policy needs from the handle
// (math mode, pointer mode, stream) through the caller's cuBLAS, then serve() runs or forwards it.
// Also tcsolve_hook_is_loaded().
#include <cublas_v2.h>

#include <cstdint>

#include "real_cublas.hpp"
#include "serve.hpp"
#include "state.hpp"

namespace tcsolve::hook {
namespace {

RealFunction real_sgemm{Library::cublas, "cublasSgemm_v2"};
RealFunction real_sgemm_64{Library::cublas, "cublasSgemm_v2_64"};
RealFunction real_sgemm_batched{Library::cublas, "cublasSgemmStridedBatched"};
RealFunction real_sgemm_batched_64{Library::cublas, "cublasSgemmStridedBatched_64"};
RealFunction real_gemm_ex{Library::cublas, "cublasGemmEx"};
RealFunction real_gemm_ex_64{Library::cublas, "cublasGemmEx_64"};
RealFunction real_destroy{Library::cublas, "cublasDestroy_v2"};
RealFunction real_get_math_mode{Library::cublas, "cublasGetMathMode"};
RealFunction real_get_pointer_mode{Library::cublas, "cublasGetPointerMode_v2"};
RealFunction real_get_stream{Library::cublas, "cublasGetStream_v2"};

// cublasGemmEx has C++ overloads (a legacy cudaDataType compute type): the C forms, by type.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t,
                                      const void*, const void*, cudaDataType, int64_t, const void*, cudaDataType,
                                      int64_t, const void*, void*, cudaDataType, int64_t, cublasComputeType_t,
                                      cublasGemmAlgo_t);

/// Calls the caller's `f` with `args`, or fails when the library lacks it.
template <typename F, typename... Args>
cublasStatus_t forward(RealFunction& f, Args... args) {
  const auto address = f.get<F>();
  if (address == nullptr) return missing(f.name());
  return address(args...);
}

/// 'N', 'T' (CUBLAS_OP_C too: real data) or '?' for a value cuBLAS's GEMMs reject (the policy
/// passes it through untouched).
char op_letter(cublasOperation_t op) {
  switch (op) {
    case CUBLAS_OP_N: return 'N';
    case CUBLAS_OP_T:
    case CUBLAS_OP_C: return 'T';
    default: return '?';
  }
}

/// One of cublasGemmAlgo_t's values (cuBLAS rejects others).
bool algo_valid(cublasGemmAlgo_t algo) {
  const int a = static_cast<int>(algo);
  return a == CUBLAS_GEMM_DEFAULT || (a >= CUBLAS_GEMM_ALGO0 && a <= CUBLAS_GEMM_ALGO23) ||
         (a >= CUBLAS_GEMM_DEFAULT_TENSOR_OP && a <= CUBLAS_GEMM_ALGO15_TENSOR_OP) || a == CUBLAS_GEMM_AUTOTUNE;
}

Compute compute_of(cublasComputeType_t c) {
  switch (static_cast<int>(c)) {
    case CUBLAS_COMPUTE_32F:
    case CUDA_R_32F: return Compute::f32;  // the legacy cudaDataType form
    case CUBLAS_COMPUTE_32F_PEDANTIC: return Compute::f32_pedantic;
    case CUBLAS_COMPUTE_32F_FAST_TF32: return Compute::f32_fast_tf32;
    case CUBLAS_COMPUTE_32F_FAST_16F: return Compute::f32_fast_16f;
    case CUBLAS_COMPUTE_32F_FAST_16BF: return Compute::f32_fast_16bf;
    default: return Compute::other;
  }
}

/// The handle's settings the policy reads; false when the caller's cuBLAS cannot tell.
struct HandleSettings {
  MathMode math = MathMode::default_math;
  bool pedantic = false;
  bool device_pointers = false;
  cudaStream_t stream = nullptr;
};
bool read_handle(cublasHandle_t handle, HandleSettings& s) {
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointers = CUBLAS_POINTER_MODE_HOST;
  auto get_math = real_get_math_mode.get<decltype(&cublasGetMathMode)>();
  auto get_pointers = real_get_pointer_mode.get<decltype(&cublasGetPointerMode_v2)>();
  auto get_stream = real_get_stream.get<decltype(&cublasGetStream_v2)>();
  if (get_math == nullptr || get_pointers == nullptr || get_stream == nullptr) return false;
  if (get_math(handle, &math) != CUBLAS_STATUS_SUCCESS || get_pointers(handle, &pointers) != CUBLAS_STATUS_SUCCESS ||
      get_stream(handle, &s.stream) != CUBLAS_STATUS_SUCCESS)
    return false;
  switch (static_cast<int>(math) & 0xf) {
    case CUBLAS_TENSOR_OP_MATH: s.math = MathMode::legacy_tensor_op; break;
    case CUBLAS_PEDANTIC_MATH: s.math = MathMode::pedantic, s.pedantic = true; break;
    case CUBLAS_TF32_TENSOR_OP_MATH: s.math = MathMode::tf32; break;
    case CUBLAS_FP32_EMULATED_BF16X9_MATH: s.math = MathMode::emulated_bf16x9; break;
    default: s.math = MathMode::default_math; break;
  }
  s.device_pointers = pointers == CUBLAS_POINTER_MODE_DEVICE;
  return true;
}

/// The common part of the three products: C = alpha op(A) op(B) + beta C, `batch` of them.
template <typename Int>
cublasStatus_t serve_gemm(cublasHandle_t handle, Entry entry, bool is64, cublasOperation_t ta, cublasOperation_t tb,
                          Int m, Int n, Int k, const float* alpha, const float* A, Int lda, long long stride_a,
                          const float* B, Int ldb, long long stride_b, const float* beta, float* C, Int ldc,
                          long long stride_c, Int batch, bool fp32_types, Compute compute, bool algo_ok,
                          const std::function<cublasStatus_t()>& original) {
  HandleSettings hs;
  if (!read_handle(handle, hs)) return original();
  Call call;
  Request& r = call.request;
  r.entry = entry, r.is64 = is64, r.ta = op_letter(ta), r.tb = op_letter(tb);
  r.m = m, r.n = n, r.k = k, r.batch = batch, r.lda = lda, r.ldb = ldb, r.ldc = ldc;
  r.fp32_types = fp32_types;
  r.math = hs.math;
  r.compute = compute == Compute::f32 && hs.pedantic ? Compute::f32_pedantic : compute;
  r.pointers = hs.device_pointers ? Pointers::device : Pointers::host;
  r.null_scalars = alpha == nullptr || beta == nullptr;
  r.algo_valid = algo_ok;
  Operands& o = call.operands;
  if (!hs.device_pointers && fp32_types && !r.null_scalars) {
    r.alpha = *alpha;
    o.alpha = *alpha, o.beta = *beta;
  }
  o.device_scalars = hs.device_pointers, o.d_alpha = alpha, o.d_beta = beta;
  o.ta = r.ta, o.tb = r.tb;
  // narrowed only once the policy has checked the sizes fit in int
  o.m = static_cast<int>(m), o.n = static_cast<int>(n), o.k = static_cast<int>(k), o.batch = static_cast<int>(batch);
  o.A = A, o.lda = static_cast<int>(lda), o.stride_a = stride_a;
  o.B = B, o.ldb = static_cast<int>(ldb), o.stride_b = stride_b;
  o.C = C, o.ldc = static_cast<int>(ldc), o.stride_c = stride_c;
  return serve(handle, hs.stream, call, original);
}

}  // namespace
}  // namespace tcsolve::hook

using namespace tcsolve::hook;

extern "C" {

int tcsolve_hook_is_loaded(void) { return 1; }

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                              const float* beta, float* C, int ldc) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemm_v2)>(real_sgemm, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                                                 beta, C, ldc);
    };
    return serve_gemm<int>(handle, Entry::sgemm, false, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta,
                           C, ldc, 0, 1, true, Compute::f32, true, original);
  });
}

cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                                 int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda,
                                 const float* B, int64_t ldb, const float* beta, float* C, int64_t ldc) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemm_v2_64)>(real_sgemm_64, handle, transa, transb, m, n, k, alpha, A, lda, B,
                                                    ldb, beta, C, ldc);
    };
    return serve_gemm<int64_t>(handle, Entry::sgemm, true, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta,
                               C, ldc, 0, 1, true, Compute::f32, true, original);
  });
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float* alpha, const float* A, int lda,
                                         long long int strideA, const float* B, int ldb, long long int strideB,
                                         const float* beta, float* C, int ldc, long long int strideC,
                                         int batchCount) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemmStridedBatched)>(real_sgemm_batched, handle, transa, transb, m, n, k, alpha,
                                                            A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                                                            batchCount);
    };
    return serve_gemm<int>(handle, Entry::sgemm_strided_batched, false, transa, transb, m, n, k, alpha, A, lda,
                           strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount, true, Compute::f32, true,
                           original);
  });
}

cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                            int64_t m, int64_t n, int64_t k, const float* alpha, const float* A,
                                            int64_t lda, long long int strideA, const float* B, int64_t ldb,
                                            long long int strideB, const float* beta, float* C, int64_t ldc,
                                            long long int strideC, int64_t batchCount) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemmStridedBatched_64)>(real_sgemm_batched_64, handle, transa, transb, m, n, k,
                                                               alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                                                               strideC, batchCount);
    };
    return serve_gemm<int64_t>(handle, Entry::sgemm_strided_batched, true, transa, transb, m, n, k, alpha, A, lda,
                               strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount, true, Compute::f32,
                               true, original);
  });
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return guarded([&] {
    auto original = [&] {
      return forward<GemmExFn>(real_gemm_ex, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                                               Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
    };
    const bool fp32 = Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F;
    return serve_gemm<int>(handle, Entry::gemm_ex, false, transa, transb, m, n, k, static_cast<const float*>(alpha),
                           static_cast<const float*>(A), lda, 0, static_cast<const float*>(B), ldb, 0,
                           static_cast<const float*>(beta), static_cast<float*>(C), ldc, 0, 1, fp32,
                           compute_of(computeType), algo_valid(algo), original);
  });
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                               int64_t n, int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
                               const void* B, cudaDataType Btype, int64_t ldb, const void* beta, void* C,
                               cudaDataType Ctype, int64_t ldc, cublasComputeType_t computeType,
                               cublasGemmAlgo_t algo) {
  return guarded([&] {
    auto original = [&] {
      return forward<GemmEx64Fn>(real_gemm_ex_64, handle, transa, transb, m, n, k, alpha, A, Atype,
                                                  lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
    };
    const bool fp32 = Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F;
    return serve_gemm<int64_t>(handle, Entry::gemm_ex, true, transa, transb, m, n, k, static_cast<const float*>(alpha),
                               static_cast<const float*>(A), lda, 0, static_cast<const float*>(B), ldb, 0,
                               static_cast<const float*>(beta), static_cast<float*>(C), ldc, 0, 1, fp32,
                               compute_of(computeType), algo_valid(algo), original);
  });
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  return guarded([&] {
    forget_handle(handle);
    return forward<decltype(&cublasDestroy_v2)>(real_destroy, handle);
  });
}

}  // extern "C"
