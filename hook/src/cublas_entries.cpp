// The cuBLAS entry points the drop-in exports (exports.map): cublasSgemm_v2,
// cublasSgemmStridedBatched, cublasSgemmBatched, cublasGemmEx, cublasGemmBatchedEx and
// cublasGemmStridedBatchedEx with their _64 forms (the pointer-array forms take device arrays of
// device pointers, never read on the host), and cublasDestroy_v2 (which frees the handle's
// state, then forwards). Each reads what the policy needs from the handle
// (math mode, pointer mode, stream) through the caller's cuBLAS, then serve() runs or forwards it.
// Also tcsolve_hook_is_loaded().
#include <cublas_v2.h>

#include <cstdint>
#include <functional>

#include "compute_type.hpp"
#include "real_cublas.hpp"
#include "serve.hpp"
#include "state.hpp"

namespace tcsolve::hook {
namespace {

RealFunction real_sgemm{Library::cublas, "cublasSgemm_v2"};
RealFunction real_sgemm_64{Library::cublas, "cublasSgemm_v2_64"};
RealFunction real_sgemm_strided{Library::cublas, "cublasSgemmStridedBatched"};
RealFunction real_sgemm_strided_64{Library::cublas, "cublasSgemmStridedBatched_64"};
RealFunction real_sgemm_batched{Library::cublas, "cublasSgemmBatched"};
RealFunction real_sgemm_batched_64{Library::cublas, "cublasSgemmBatched_64"};
RealFunction real_gemm_ex{Library::cublas, "cublasGemmEx"};
RealFunction real_gemm_ex_64{Library::cublas, "cublasGemmEx_64"};
RealFunction real_gemm_batched_ex{Library::cublas, "cublasGemmBatchedEx"};
RealFunction real_gemm_batched_ex_64{Library::cublas, "cublasGemmBatchedEx_64"};
RealFunction real_gemm_strided_batched_ex{Library::cublas, "cublasGemmStridedBatchedEx"};
RealFunction real_gemm_strided_batched_ex_64{Library::cublas, "cublasGemmStridedBatchedEx_64"};
RealFunction real_destroy{Library::cublas, "cublasDestroy_v2"};
RealFunction real_get_math_mode{Library::cublas, "cublasGetMathMode"};
RealFunction real_get_pointer_mode{Library::cublas, "cublasGetPointerMode_v2"};
RealFunction real_get_stream{Library::cublas, "cublasGetStream_v2"};

// cublasGemmEx, cublasGemmBatchedEx and cublasGemmStridedBatchedEx have C++ overloads (a legacy
// cudaDataType compute type, migrated inline before the C function is called): the C forms, by
// type (cublas_api.h's prototypes).
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                                    int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                                    cublasGemmAlgo_t);
using GemmEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t, int64_t,
                                      int64_t, const void*, const void*, cudaDataType, int64_t, const void*,
                                      cudaDataType, int64_t, const void*, void*, cudaDataType, int64_t,
                                      cublasComputeType_t, cublasGemmAlgo_t);
using GemmBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                           int, const void*, const void* const[], cudaDataType, int,
                                           const void* const[], cudaDataType, int, const void*, void* const[],
                                           cudaDataType, int, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmBatchedEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t,
                                             int64_t, int64_t, const void*, const void* const[], cudaDataType,
                                             int64_t, const void* const[], cudaDataType, int64_t, const void*,
                                             void* const[], cudaDataType, int64_t, int64_t,
                                             cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                                  int, int, const void*, const void*, cudaDataType, int,
                                                  long long int, const void*, cudaDataType, int,
                                                  long long int, const void*, void*, cudaDataType, int,
                                                  long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                                    int64_t, int64_t, int64_t, const void*, const void*,
                                                    cudaDataType, int64_t, long long int, const void*,
                                                    cudaDataType, int64_t, long long int, const void*, void*,
                                                    cudaDataType, int64_t, long long int, int64_t,
                                                    cublasComputeType_t, cublasGemmAlgo_t);

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
    case CUBLAS_OP_N:
      return 'N';
    case CUBLAS_OP_T:
    case CUBLAS_OP_C:
      return 'T';
    default:
      return '?';
  }
}

/// One of cublasGemmAlgo_t's values (cuBLAS rejects others).
bool algo_valid(cublasGemmAlgo_t algo) {
  const int a = static_cast<int>(algo);
  return a == CUBLAS_GEMM_DEFAULT || (a >= CUBLAS_GEMM_ALGO0 && a <= CUBLAS_GEMM_ALGO23) ||
         (a >= CUBLAS_GEMM_DEFAULT_TENSOR_OP && a <= CUBLAS_GEMM_ALGO15_TENSOR_OP) ||
         a == CUBLAS_GEMM_AUTOTUNE;
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
  if (get_math(handle, &math) != CUBLAS_STATUS_SUCCESS ||
      get_pointers(handle, &pointers) != CUBLAS_STATUS_SUCCESS ||
      get_stream(handle, &s.stream) != CUBLAS_STATUS_SUCCESS)
    return false;
  switch (static_cast<int>(math) & 0xf) {
    case CUBLAS_TENSOR_OP_MATH:
      s.math = MathMode::legacy_tensor_op;
      break;
    case CUBLAS_PEDANTIC_MATH:
      s.math = MathMode::pedantic, s.pedantic = true;
      break;
    case CUBLAS_TF32_TENSOR_OP_MATH:
      s.math = MathMode::tf32;
      break;
    case CUBLAS_FP32_EMULATED_BF16X9_MATH:
      s.math = MathMode::emulated_bf16x9;
      break;
    default:
      s.math = MathMode::default_math;
      break;
  }
  s.device_pointers = pointers == CUBLAS_POINTER_MODE_DEVICE;
  return true;
}

/// A call of one of the GEMM entry points, its sizes widened to 64 bits: C = alpha op(A) op(B) +
/// beta C for `batch` members, strided (A, B, C and their strides) or from device arrays of
/// pointers (a_array, b_array, c_array).
struct GemmCall {
  Entry entry = Entry::sgemm;
  bool is64 = false;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  std::int64_t m = 0, n = 0, k = 0;
  const float* alpha = nullptr;
  const float* A = nullptr;
  std::int64_t lda = 0;
  long long stride_a = 0;
  const float* B = nullptr;
  std::int64_t ldb = 0;
  long long stride_b = 0;
  const float* beta = nullptr;
  float* C = nullptr;
  std::int64_t ldc = 0;
  long long stride_c = 0;
  const float* const* a_array = nullptr;
  const float* const* b_array = nullptr;
  float* const* c_array = nullptr;
  bool pointer_arrays = false;  ///< the pointer-array forms (the arrays may still be NULL)
  std::int64_t batch = 1;
  bool fp32_types = true;
  Compute compute = Compute::f32;
  bool algo_ok = true;
};

/// The common part of every GEMM entry point: the request from the call and the handle, the
/// operands, then serve(). `original` is the call as the caller made it.
cublasStatus_t serve_gemm(cublasHandle_t handle, const GemmCall& g,
                          const std::function<cublasStatus_t()>& original) {
  HandleSettings hs;
  if (!read_handle(handle, hs)) return original();
  Call call;
  Request& r = call.request;
  r.entry = g.entry, r.is64 = g.is64, r.ta = op_letter(g.ta), r.tb = op_letter(g.tb);
  r.m = g.m, r.n = g.n, r.k = g.k, r.batch = g.batch, r.lda = g.lda, r.ldb = g.ldb, r.ldc = g.ldc;
  r.fp32_types = g.fp32_types;
  r.math = hs.math;
  r.compute = g.compute == Compute::f32 && hs.pedantic ? Compute::f32_pedantic : g.compute;
  r.pointers = hs.device_pointers ? Pointers::device : Pointers::host;
  r.null_scalars = g.alpha == nullptr || g.beta == nullptr;
  r.algo_valid = g.algo_ok;
  // a NULL array would be taken for the strided form with NULL matrices: cuBLAS answers that
  if (g.pointer_arrays && (g.a_array == nullptr || g.b_array == nullptr || g.c_array == nullptr))
    r.unsupported = "pointer array NULL";
  Operands& o = call.operands;
  if (!hs.device_pointers && g.fp32_types && !r.null_scalars) {
    r.alpha = *g.alpha;
    o.alpha = *g.alpha, o.beta = *g.beta;
  }
  o.device_scalars = hs.device_pointers, o.d_alpha = g.alpha, o.d_beta = g.beta;
  o.ta = r.ta, o.tb = r.tb;
  // narrowed here, used only once the policy has checked that the sizes fit in int
  o.m = static_cast<int>(g.m), o.n = static_cast<int>(g.n), o.k = static_cast<int>(g.k);
  o.batch = static_cast<int>(g.batch);
  o.A = g.A, o.lda = static_cast<int>(g.lda), o.stride_a = g.stride_a;
  o.B = g.B, o.ldb = static_cast<int>(g.ldb), o.stride_b = g.stride_b;
  o.C = g.C, o.ldc = static_cast<int>(g.ldc), o.stride_c = g.stride_c;
  o.a_array = g.a_array, o.b_array = g.b_array, o.c_array = g.c_array;
  return serve(handle, hs.stream, call, original);
}

/// The fields every call fills: entry, operations, sizes, scalars, leading dimensions, batch.
template <typename Int>
GemmCall gemm_call(Entry entry, bool is64, cublasOperation_t ta, cublasOperation_t tb, Int m, Int n, Int k,
                   const void* alpha, Int lda, Int ldb, const void* beta, Int ldc, Int batch) {
  GemmCall g;
  g.entry = entry, g.is64 = is64, g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k;
  g.alpha = static_cast<const float*>(alpha), g.beta = static_cast<const float*>(beta);
  g.lda = lda, g.ldb = ldb, g.ldc = ldc, g.batch = batch;
  return g;
}

/// A and B and C strided (stride 0 for the single products).
GemmCall strided(GemmCall g, const void* A, long long stride_a, const void* B, long long stride_b, void* C,
                 long long stride_c) {
  g.A = static_cast<const float*>(A), g.stride_a = stride_a;
  g.B = static_cast<const float*>(B), g.stride_b = stride_b;
  g.C = static_cast<float*>(C), g.stride_c = stride_c;
  return g;
}

/// A and B and C from device arrays of device pointers (never read on the host).
GemmCall arrays(GemmCall g, const float* const* A, const float* const* B, float* const* C) {
  g.a_array = A, g.b_array = B, g.c_array = C;
  g.pointer_arrays = true;
  return g;
}
/// The same for the Ex forms' untyped arrays (FP32 ones when the policy takes the call).
GemmCall arrays(GemmCall g, const void* const* A, const void* const* B, void* const* C) {
  return arrays(g, reinterpret_cast<const float* const*>(A), reinterpret_cast<const float* const*>(B),
                reinterpret_cast<float* const*>(C));
}

/// The Ex forms' types and algorithm.
GemmCall typed(GemmCall g, cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute,
               cublasGemmAlgo_t algo) {
  g.fp32_types = a == CUDA_R_32F && b == CUDA_R_32F && c == CUDA_R_32F;
  g.compute = compute_of(compute);
  g.algo_ok = algo_valid(algo);
  return g;
}

}  // namespace
}  // namespace tcsolve::hook

using namespace tcsolve::hook;

extern "C" {

int tcsolve_hook_is_loaded(void) { return 1; }

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                              int m, int n, int k, const float* alpha, const float* A, int lda,
                              const float* B, int ldb, const float* beta, float* C, int ldc) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemm_v2)>(real_sgemm, handle, transa, transb, m, n, k, alpha, A, lda, B,
                                                ldb, beta, C, ldc);
    };
    const GemmCall g =
        gemm_call<int>(Entry::sgemm, false, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
    return serve_gemm(handle, strided(g, A, 0, B, 0, C, 0), original);
  });
}

cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                 int64_t m, int64_t n, int64_t k, const float* alpha, const float* A,
                                 int64_t lda, const float* B, int64_t ldb, const float* beta, float* C,
                                 int64_t ldc) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemm_v2_64)>(real_sgemm_64, handle, transa, transb, m, n, k, alpha, A,
                                                   lda, B, ldb, beta, C, ldc);
    };
    const GemmCall g =
        gemm_call<int64_t>(Entry::sgemm, true, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
    return serve_gemm(handle, strided(g, A, 0, B, 0, C, 0), original);
  });
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                         const float* A, int lda, long long int strideA, const float* B,
                                         int ldb, long long int strideB, const float* beta, float* C, int ldc,
                                         long long int strideC, int batchCount) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemmStridedBatched)>(real_sgemm_strided, handle, transa, transb, m, n,
                                                           k, alpha, A, lda, strideA, B, ldb, strideB, beta,
                                                           C, ldc, strideC, batchCount);
    };
    const GemmCall g = gemm_call<int>(Entry::sgemm_strided_batched, false, transa, transb, m, n, k, alpha,
                                      lda, ldb, beta, ldc, batchCount);
    return serve_gemm(handle, strided(g, A, strideA, B, strideB, C, strideC), original);
  });
}

cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                            const float* alpha, const float* A, int64_t lda,
                                            long long int strideA, const float* B, int64_t ldb,
                                            long long int strideB, const float* beta, float* C, int64_t ldc,
                                            long long int strideC, int64_t batchCount) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemmStridedBatched_64)>(real_sgemm_strided_64, handle, transa, transb,
                                                              m, n, k, alpha, A, lda, strideA, B, ldb,
                                                              strideB, beta, C, ldc, strideC, batchCount);
    };
    const GemmCall g = gemm_call<int64_t>(Entry::sgemm_strided_batched, true, transa, transb, m, n, k, alpha,
                                          lda, ldb, beta, ldc, batchCount);
    return serve_gemm(handle, strided(g, A, strideA, B, strideB, C, strideC), original);
  });
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                  int m, int n, int k, const float* alpha, const float* const Aarray[],
                                  int lda, const float* const Barray[], int ldb, const float* beta,
                                  float* const Carray[], int ldc, int batchCount) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemmBatched)>(real_sgemm_batched, handle, transa, transb, m, n, k,
                                                    alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,
                                                    batchCount);
    };
    const GemmCall g = gemm_call<int>(Entry::sgemm_batched, false, transa, transb, m, n, k, alpha, lda, ldb,
                                      beta, ldc, batchCount);
    return serve_gemm(handle, arrays(g, Aarray, Barray, Carray), original);
  });
}

cublasStatus_t cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                     cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                     const float* alpha, const float* const Aarray[], int64_t lda,
                                     const float* const Barray[], int64_t ldb, const float* beta,
                                     float* const Carray[], int64_t ldc, int64_t batchCount) {
  return guarded([&] {
    auto original = [&] {
      return forward<decltype(&cublasSgemmBatched_64)>(real_sgemm_batched_64, handle, transa, transb, m, n, k,
                                                       alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,
                                                       batchCount);
    };
    const GemmCall g = gemm_call<int64_t>(Entry::sgemm_batched, true, transa, transb, m, n, k, alpha, lda,
                                          ldb, beta, ldc, batchCount);
    return serve_gemm(handle, arrays(g, Aarray, Barray, Carray), original);
  });
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                            int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
                            const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  return guarded([&] {
    auto original = [&] {
      return forward<GemmExFn>(real_gemm_ex, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype,
                               ldb, beta, C, Ctype, ldc, computeType, algo);
    };
    const GemmCall g =
        gemm_call<int>(Entry::gemm_ex, false, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
    return serve_gemm(handle, typed(strided(g, A, 0, B, 0, C, 0), Atype, Btype, Ctype, computeType, algo),
                      original);
  });
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                               int64_t m, int64_t n, int64_t k, const void* alpha, const void* A,
                               cudaDataType Atype, int64_t lda, const void* B, cudaDataType Btype,
                               int64_t ldb, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
                               cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return guarded([&] {
    auto original = [&] {
      return forward<GemmEx64Fn>(real_gemm_ex_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                                 Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
    };
    const GemmCall g =
        gemm_call<int64_t>(Entry::gemm_ex, true, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
    return serve_gemm(handle, typed(strided(g, A, 0, B, 0, C, 0), Atype, Btype, Ctype, computeType, algo),
                      original);
  });
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                   int m, int n, int k, const void* alpha, const void* const Aarray[],
                                   cudaDataType Atype, int lda, const void* const Barray[],
                                   cudaDataType Btype, int ldb, const void* beta, void* const Carray[],
                                   cudaDataType Ctype, int ldc, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return guarded([&] {
    auto original = [&] {
      return forward<GemmBatchedExFn>(real_gemm_batched_ex, handle, transa, transb, m, n, k, alpha, Aarray,
                                      Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc, batchCount,
                                      computeType, algo);
    };
    const GemmCall g = gemm_call<int>(Entry::gemm_batched_ex, false, transa, transb, m, n, k, alpha, lda, ldb,
                                      beta, ldc, batchCount);
    return serve_gemm(
        handle, typed(arrays(g, Aarray, Barray, Carray), Atype, Btype, Ctype, computeType, algo), original);
  });
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                      const void* alpha, const void* const Aarray[], cudaDataType Atype,
                                      int64_t lda, const void* const Barray[], cudaDataType Btype,
                                      int64_t ldb, const void* beta, void* const Carray[], cudaDataType Ctype,
                                      int64_t ldc, int64_t batchCount, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t algo) {
  return guarded([&] {
    auto original = [&] {
      return forward<GemmBatchedEx64Fn>(real_gemm_batched_ex_64, handle, transa, transb, m, n, k, alpha,
                                        Aarray, Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc,
                                        batchCount, computeType, algo);
    };
    const GemmCall g = gemm_call<int64_t>(Entry::gemm_batched_ex, true, transa, transb, m, n, k, alpha, lda,
                                          ldb, beta, ldc, batchCount);
    return serve_gemm(
        handle, typed(arrays(g, Aarray, Barray, Carray), Atype, Btype, Ctype, computeType, algo), original);
  });
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                          const void* A, cudaDataType Atype, int lda, long long int strideA,
                                          const void* B, cudaDataType Btype, int ldb, long long int strideB,
                                          const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return guarded([&] {
    auto original = [&] {
      return forward<GemmStridedBatchedExFn>(real_gemm_strided_batched_ex, handle, transa, transb, m, n, k,
                                             alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C,
                                             Ctype, ldc, strideC, batchCount, computeType, algo);
    };
    const GemmCall g = gemm_call<int>(Entry::gemm_strided_batched_ex, false, transa, transb, m, n, k, alpha,
                                      lda, ldb, beta, ldc, batchCount);
    return serve_gemm(
        handle, typed(strided(g, A, strideA, B, strideB, C, strideC), Atype, Btype, Ctype, computeType, algo),
        original);
  });
}

cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                             const void* alpha, const void* A, cudaDataType Atype,
                                             int64_t lda, long long int strideA, const void* B,
                                             cudaDataType Btype, int64_t ldb, long long int strideB,
                                             const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
                                             long long int strideC, int64_t batchCount,
                                             cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return guarded([&] {
    auto original = [&] {
      return forward<GemmStridedBatchedEx64Fn>(real_gemm_strided_batched_ex_64, handle, transa, transb, m, n,
                                               k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta,
                                               C, Ctype, ldc, strideC, batchCount, computeType, algo);
    };
    const GemmCall g = gemm_call<int64_t>(Entry::gemm_strided_batched_ex, true, transa, transb, m, n, k,
                                          alpha, lda, ldb, beta, ldc, batchCount);
    return serve_gemm(
        handle, typed(strided(g, A, strideA, B, strideB, C, strideC), Atype, Btype, Ctype, computeType, algo),
        original);
  });
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  return guarded([&] {
    forget_handle(handle);
    return forward<decltype(&cublasDestroy_v2)>(real_destroy, handle);
  });
}

}  // extern "C"
