// The solver's state in a Context and the cuSOLVER check (libraries.hpp).
#include "libraries.hpp"

#include <cuda_runtime.h>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

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

/// `h`, made on first use in the default math mode and host pointer mode, bound to `stream`
/// (cublasSetStream only when `bound_to` differs: it also resets the handle's workspace).
cublasHandle_t bound(cublasHandle_t& h, cudaStream_t& bound_to, cudaStream_t stream) {
  if (h == nullptr) {
    TCSOLVE_CUBLAS_CHECK(cublasCreate(&h));
    TCSOLVE_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    TCSOLVE_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  } else if (bound_to == stream) {
    return h;
  }
  TCSOLVE_CUBLAS_CHECK(cublasSetStream(h, stream));
  bound_to = stream;
  return h;
}

const char kSolverKey = 0;  ///< the key of SolverLibraries in a Context

}  // namespace

SolverLibraries& SolverLibraries::of(Context& ctx) {
  if (Context::Attachment* a = ctx.attachment(&kSolverKey)) return static_cast<SolverLibraries&>(*a);
  return static_cast<SolverLibraries&>(ctx.attach(&kSolverKey, std::make_unique<SolverLibraries>()));
}

SolverLibraries::~SolverLibraries() {  // errors dropped: a destructor
  for (auto& [sms, l] : lookahead_) {
    l.panel_gemm.reset();
    l.update_gemm.reset();
    destroy_lookahead_streams(l.streams);
  }
  if (blas_ != nullptr) cublasDestroy(blas_);
  if (blas_second_ != nullptr) cublasDestroy(blas_second_);
  if (dense_ != nullptr) cusolverDnDestroy(dense_);
}

cublasHandle_t SolverLibraries::blas(cudaStream_t stream) { return bound(blas_, blas_stream_, stream); }

cublasHandle_t SolverLibraries::blas_second(cudaStream_t stream) {
  return bound(blas_second_, blas_second_stream_, stream);
}

cusolverDnHandle_t SolverLibraries::dense(cudaStream_t stream) {
  if (dense_ == nullptr) {
    TCSOLVE_CUSOLVER_CHECK(cusolverDnCreate(&dense_));
  } else if (dense_stream_ == stream) {
    return dense_;
  }
  TCSOLVE_CUSOLVER_CHECK(cusolverDnSetStream(dense_, stream));
  dense_stream_ = stream;
  return dense_;
}

const SolverLibraries::Lookahead& SolverLibraries::lookahead(int panel_sms) {
  const auto found = lookahead_.find(panel_sms);
  if (found != lookahead_.end()) return found->second;
  Lookahead& l = lookahead_[panel_sms];
  l.streams = make_lookahead_streams(static_cast<unsigned>(panel_sms));
  if (l.streams.unavailable.empty()) {
    l.panel_gemm = std::make_unique<Context>(l.streams.panel);
    l.update_gemm = std::make_unique<Context>(l.streams.update);
    l.update_gemm->set_max_blocks(l.streams.update_sms);
    l.join_gemm = std::make_unique<Context>(l.streams.panel);
    l.join_gemm->set_max_blocks(l.streams.panel_sms);
  }
  return l;
}

void require_device(const std::string& what) {
  if (!device_available()) throw Unavailable(what + ": no usable CUDA device (" + device_name() + ")");
}

}  // namespace tcsolve::cuda
