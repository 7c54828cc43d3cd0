// The cuBLAS functions tcsolve's GEMM objects call (its cuBLAS variants and context handle),
// bound at link time to these forwarders (-Wl,--wrap, hook/CMakeLists.txt) instead of a libcublas
// of our own: the drop-in links no cuBLAS, so the process keeps the one its program loaded, and
// our objects' calls reach that one through real_cublas.hpp, never our own exported entry
// points. The hook's ec products use none of these; they are here so that every symbol resolves.
#include <cublas_v2.h>

#include "real_cublas.hpp"
#include "serve.hpp"

namespace {

using tcsolve::hook::Library;
using tcsolve::hook::RealFunction;

template <typename F, typename... Args>
cublasStatus_t call_real(RealFunction& f, Args... args) {
  const auto address = f.get<F>();
  if (address == nullptr) return tcsolve::hook::missing(f.name());
  return address(args...);
}

using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                                    int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                                    cublasGemmAlgo_t);

RealFunction create{Library::cublas, "cublasCreate_v2"};
RealFunction destroy{Library::cublas, "cublasDestroy_v2"};
RealFunction set_stream{Library::cublas, "cublasSetStream_v2"};
RealFunction set_math_mode{Library::cublas, "cublasSetMathMode"};
RealFunction set_pointer_mode{Library::cublas, "cublasSetPointerMode_v2"};
RealFunction sgemm{Library::cublas, "cublasSgemm_v2"};
RealFunction dgemm{Library::cublas, "cublasDgemm_v2"};
RealFunction gemm_ex{Library::cublas, "cublasGemmEx"};
RealFunction get_property{Library::cublas, "cublasGetProperty"};
RealFunction status_name{Library::cublas, "cublasGetStatusName"};
RealFunction status_string{Library::cublas, "cublasGetStatusString"};

/// The text of a status for an error message, or a fixed one when the library lacks it.
const char* status_text(RealFunction& f, cublasStatus_t status) {
  const auto address = f.get<const char* (*)(cublasStatus_t)>();
  return address != nullptr ? address(status) : "(cuBLAS status)";
}

}  // namespace

extern "C" {

cublasStatus_t __wrap_cublasCreate_v2(cublasHandle_t* handle) {
  return call_real<decltype(&cublasCreate_v2)>(create, handle);
}
cublasStatus_t __wrap_cublasDestroy_v2(cublasHandle_t handle) {
  return call_real<decltype(&cublasDestroy_v2)>(destroy, handle);
}
cublasStatus_t __wrap_cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return call_real<decltype(&cublasSetStream_v2)>(set_stream, handle, stream);
}
cublasStatus_t __wrap_cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  return call_real<decltype(&cublasSetMathMode)>(set_math_mode, handle, mode);
}
cublasStatus_t __wrap_cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  return call_real<decltype(&cublasSetPointerMode_v2)>(set_pointer_mode, handle, mode);
}
cublasStatus_t __wrap_cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                     int n, int k, const float* alpha, const float* A, int lda,
                                     const float* B, int ldb, const float* beta, float* C, int ldc) {
  return call_real<decltype(&cublasSgemm_v2)>(sgemm, handle, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                              ldc);
}
cublasStatus_t __wrap_cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                     int n, int k, const double* alpha, const double* A, int lda,
                                     const double* B, int ldb, const double* beta, double* C, int ldc) {
  return call_real<decltype(&cublasDgemm_v2)>(dgemm, handle, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                                              ldc);
}
cublasStatus_t __wrap_cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                   int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                   int lda, const void* B, cudaDataType Btype, int ldb, const void* beta,
                                   void* C, cudaDataType Ctype, int ldc, cublasComputeType_t compute,
                                   cublasGemmAlgo_t algo) {
  return call_real<GemmExFn>(gemm_ex, handle, ta, tb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                             Ctype, ldc, compute, algo);
}
cublasStatus_t __wrap_cublasGetProperty(libraryPropertyType type, int* value) {
  return call_real<decltype(&cublasGetProperty)>(get_property, type, value);
}

const char* __wrap_cublasGetStatusName(cublasStatus_t status) { return status_text(status_name, status); }
const char* __wrap_cublasGetStatusString(cublasStatus_t status) { return status_text(status_string, status); }

}  // extern "C"
