// Thin error macros for the CUDA runtime and cuBLAS: TCSOLVE_CUDA_CHECK(expr) and
// TCSOLVE_CUBLAS_CHECK(expr) evaluate expr once and throw tcsolve::CudaError naming the
// expression, the library's error name and text, the file and the line when it fails.
//
// Only for code built with CUDA (TCSOLVE_HAVE_CUDA defined: the .cu files of the cuda
// backend); in a build without CUDA this header defines nothing. Internal to the build tree
// (runtime/internal/ is not installed: the installed headers include no CUDA header).
#pragma once

#if defined(TCSOLVE_HAVE_CUDA)

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::detail {

/// Throws CudaError when `status` is not cudaSuccess; `expr` is the call's source text.
inline void cuda_check(cudaError_t status, const char* expr, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw CudaError(std::string("CUDA call ") + expr + " failed: " + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ") at " + file + ":" + std::to_string(line));
}

/// Throws CudaError when `status` is not CUBLAS_STATUS_SUCCESS; `expr` is the call's source text.
inline void cublas_check(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(std::string("cuBLAS call ") + expr + " failed: " + cublasGetStatusName(status) +
                  " (" + cublasGetStatusString(status) + ") at " + file + ":" +
                  std::to_string(line));
}

}  // namespace tcsolve::detail

/// Evaluates a cudaError_t expression; throws tcsolve::CudaError unless it is cudaSuccess.
#define TCSOLVE_CUDA_CHECK(expr) ::tcsolve::detail::cuda_check((expr), #expr, __FILE__, __LINE__)

/// Evaluates a cublasStatus_t expression; throws tcsolve::CudaError unless it is
/// CUBLAS_STATUS_SUCCESS.
#define TCSOLVE_CUBLAS_CHECK(expr) \
  ::tcsolve::detail::cublas_check((expr), #expr, __FILE__, __LINE__)

#endif  // TCSOLVE_HAVE_CUDA
