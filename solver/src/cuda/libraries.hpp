// The solver's state inside a tcsolve::cuda::Context (context.hpp): its cuBLAS and cuSOLVER
// handles and the LU's look-ahead streams, made on first use and destroyed with the context;
// the cuSOLVER status check; the device check. Internal to tcsolve::solver; host code built
// with CUDA only.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <map>
#include <memory>
#include <string>

#include "lookahead.hpp"
#include "tcsolve/runtime/context.hpp"

namespace tcsolve::cuda {

/// Name of a cuSOLVER status ("CUSOLVER_STATUS_INVALID_VALUE").
const char* cusolver_status_name(cusolverStatus_t s);

/// Throws CudaError naming the call, the status, the file and the line unless `status` is
/// CUSOLVER_STATUS_SUCCESS.
void cusolver_check(cusolverStatus_t status, const char* expr, const char* file, int line);

/// Throws Unavailable "<what>: no usable CUDA device (...)" without a usable device.
void require_device(const std::string& what);

/// The solver's handles of one context. A handle is bound to a stream when it is asked for;
/// the default math mode (FP32 TRSM and SGEMM without TF32) and host pointer mode are set.
class SolverLibraries : public Context::Attachment {
 public:
  /// The context's solver state, made on the first call.
  static SolverLibraries& of(Context& ctx);
  ~SolverLibraries() override;

  /// The first cuBLAS handle, bound to `stream`.
  cublasHandle_t blas(cudaStream_t stream);
  /// A second cuBLAS handle, for work on a second stream at the same time (a handle's
  /// workspace must not serve two streams at once): the look-ahead's update stream.
  cublasHandle_t blas_second(cudaStream_t stream);
  /// The cuSOLVER dense handle, bound to `stream`.
  cusolverDnHandle_t dense(cudaStream_t stream);

  /// The look-ahead streams with `panel_sms` SMs left to the panel (made on first use per
  /// value; lookahead.hpp), and GEMM contexts on them: `update_gemm` with the update's SM
  /// budget. `unavailable` set: none could be made.
  struct Lookahead {
    LookaheadStreams streams;
    std::unique_ptr<Context> panel_gemm, update_gemm;
    /// The panel stream's GEMM context for the panels' joins through the variant
    /// (CudaLuPlan::joins): its persistent kernels sized to the panel's SMs.
    std::unique_ptr<Context> join_gemm;
    /// CudaLuPlan::panel_products on the panel stream's GEMM contexts (tiles:
    /// Context::tile_blocks, a block per output tile; else their persistent grids).
    void set_panel_products(bool tiles) const {
      panel_gemm->set_tile_blocks(tiles);
      join_gemm->set_tile_blocks(tiles);
    }
  };
  const Lookahead& lookahead(int panel_sms);

 private:
  cublasHandle_t blas_ = nullptr, blas_second_ = nullptr;
  cusolverDnHandle_t dense_ = nullptr;
  cudaStream_t blas_stream_ = nullptr, blas_second_stream_ = nullptr, dense_stream_ = nullptr;
  std::map<int, Lookahead> lookahead_;  ///< by panel_sms, made on first use
};

}  // namespace tcsolve::cuda

/// Evaluates a cusolverStatus_t expression; throws tcsolve::CudaError unless it is
/// CUSOLVER_STATUS_SUCCESS.
#define TCSOLVE_CUSOLVER_CHECK(expr) ::tcsolve::cuda::cusolver_check((expr), #expr, __FILE__, __LINE__)
