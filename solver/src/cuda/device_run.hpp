// What every part of one GPU solve works with (DeviceRun): the caller's context and its stream,
// the solver's handles in that context (libraries.hpp), the code path (CudaLuPlan) and the GEMM
// options. device_system, blocked_lu, refinement_cuda, fp64_lu, condition_cuda and
// baselines_cuda take it; everything they enqueue is ordered on `stream` (the LU's look-ahead
// adds two streams of its own and joins them back). ContextFor gives a solve the caller's
// context or one of its own. Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <memory>

#include "libraries.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cuda {

struct DeviceRun {
  DeviceRun(Context& context, const CudaLuPlan& lu_plan, const GemmOptions& gemm_options)
      : ctx(context), stream(context.stream()), libs(SolverLibraries::of(context)), plan(lu_plan),
        gemm(gemm_options) {}

  Context& ctx;
  cudaStream_t stream;
  SolverLibraries& libs;
  CudaLuPlan plan;   ///< requested; the LU writes back what it could not serve (SolveResult::cuda_plan)
  GemmOptions gemm;

  /// The solver's first cuBLAS handle and its cuSOLVER handle, bound to `stream`.
  cublasHandle_t blas() const { return libs.blas(stream); }
  cusolverDnHandle_t dense() const { return libs.dense(stream); }
  /// Waits for `stream`.
  void synchronize() const { ctx.synchronize(); }
};

/// The caller's context, or a context of this scope on the default stream.
class ContextFor {
 public:
  explicit ContextFor(Context* given) : own_(given ? nullptr : std::make_unique<Context>()), ctx_(given ? given : own_.get()) {}
  Context& get() { return *ctx_; }

 private:
  std::unique_ptr<Context> own_;
  Context* ctx_;
};

}  // namespace tcsolve::cuda
