// The CUDA libraries of the solver's cuda path (cuda/*.cpp): one cuBLAS
// and one cuSOLVER dense handle on the default stream, the cuSOLVER status check, and the
// device check. Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <string>

namespace tcsolve::cuda {

/// Name of a cuSOLVER status ("CUSOLVER_STATUS_INVALID_VALUE").
const char* cusolver_status_name(cusolverStatus_t s);

/// Throws CudaError naming the call, the status, the file and the line unless `status` is
/// CUSOLVER_STATUS_SUCCESS.
void cusolver_check(cusolverStatus_t status, const char* expr, const char* file, int line);

/// The solver's cuBLAS handle (default stream, default math mode, host pointer mode), created on
/// first use and never destroyed (as the gemm library's: the runtime may be gone at exit).
cublasHandle_t blas();

/// A second cuBLAS handle like blas(), for work on a second stream at the same time (a handle's
/// workspace must not serve two streams at once): the LU's look-ahead runs part of U12's TRSM
/// beside the panel.
cublasHandle_t blas_second();

/// The cuSOLVER dense handle (default stream), created on first use.
cusolverDnHandle_t dense();

/// Throws Unavailable "<what>: no usable CUDA device (...)" without a usable device.
void require_device(const std::string& what);

}  // namespace tcsolve::cuda

/// Evaluates a cusolverStatus_t expression; throws tcsolve::CudaError unless it is
/// CUSOLVER_STATUS_SUCCESS.
#define TCSOLVE_CUSOLVER_CHECK(expr) ::tcsolve::cuda::cusolver_check((expr), #expr, __FILE__, __LINE__)
