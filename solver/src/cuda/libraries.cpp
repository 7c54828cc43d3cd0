// The CUDA libraries of the solver's cuda path (libraries.hpp).
#include "libraries.hpp"

#include <cuda_runtime.h>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/cuda_check.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/gemm.hpp"

namespace tcsolve::cuda {

const char* cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS:
      return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_IRS_PARAMS_INVALID:
      return "CUSOLVER_STATUS_IRS_PARAMS_INVALID";
    case CUSOLVER_STATUS_IRS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_IRS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_IRS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_IRS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_IRS_OUT_OF_RANGE:
      return "CUSOLVER_STATUS_IRS_OUT_OF_RANGE";
    case CUSOLVER_STATUS_IRS_MATRIX_SINGULAR:
      return "CUSOLVER_STATUS_IRS_MATRIX_SINGULAR";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
      return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default:
      return "cusolverStatus_t (see cusolver_common.h)";
  }
}

void cusolver_check(cusolverStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  throw CudaError(std::string("cuSOLVER call ") + expr + " failed: " + cusolver_status_name(status) + " (" +
                  std::to_string(static_cast<int>(status)) + ") at " + file + ":" + std::to_string(line));
}

namespace {

/// A cuBLAS handle in the default math mode (FP32 TRSM and SGEMM without TF32).
cublasHandle_t make_blas_handle() {
  cublasHandle_t h = nullptr;
  TCSOLVE_CUBLAS_CHECK(cublasCreate(&h));
  TCSOLVE_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  return h;
}

}  // namespace

cublasHandle_t blas() {
  static const cublasHandle_t handle = make_blas_handle();
  return handle;
}

cublasHandle_t blas_second() {
  static const cublasHandle_t handle = make_blas_handle();
  return handle;
}

/// The cuSOLVER dense handle (default stream), created once.
cusolverDnHandle_t dense() {
  static const cusolverDnHandle_t handle = [] {
    cusolverDnHandle_t h = nullptr;
    TCSOLVE_CUSOLVER_CHECK(cusolverDnCreate(&h));
    return h;
  }();
  return handle;
}

void require_device(const std::string& what) {
  if (!device_available()) throw Unavailable(what + ": no usable CUDA device (" + device_name() + ")");
}

}  // namespace tcsolve::cuda
