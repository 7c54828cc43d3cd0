// The CUDA build's state inside a tcsolve::cuda::Context (context.hpp): the stream and device it
// is bound to, the SM budget, the cuBLAS handle, the workspace policy (a Scratch that only grows,
// or stream-ordered per call) and the attachments other libraries keep per context. The GEMM
// kernels' own workspaces are gemm's attachment (gemm/src/cuda/backend.hpp); the phase timings
// (time_phases, phases) are the one gemm-specific piece still kept here. Internal to the build
// tree (runtime/internal/ is not installed): gemm's kernels include it (gemm/src/cuda/backend.hpp);
// other libraries reach a context through context.hpp. Only for code built with CUDA.
#pragma once

#if defined(TCSOLVE_HAVE_CUDA)

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/context_attachments.hpp"

namespace tcsolve::cuda {

/// A device array that only grows; its contents do not survive a growth. Growing frees the
/// old array (cudaFree waits for the device, so kernels still reading it finish first).
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();
  /// At least `bytes` bytes, 256-byte aligned.
  void* get(std::size_t bytes);

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

struct Context::Impl {
  cudaStream_t stream = nullptr;
  int device = 0;  ///< Context::device(): current when the context was made
  int max_blocks = 0;
  bool tile_blocks = false;  ///< Context::tile_blocks()
  Context::Workspaces workspaces = Context::Workspaces::cached;
  cudaMemPool_t pool = nullptr;
  /// Owned by the context (nothing else sees it): made on first use in the default math mode
  /// (no TF32) and host pointer mode, bound to `stream` whenever that changed.
  cublasHandle_t blas();

  /// A workspace of at least `bytes` bytes for the current call: `cached`'s growing array
  /// (Context::Workspaces), or a stream-ordered allocation on `stream` that end_call() frees.
  void* take(Scratch& cached, std::size_t bytes);
  /// Frees the call's stream-ordered workspaces on `stream` (after its kernels). Never throws.
  void end_call() noexcept;

  /// Context::set_time_phases: the phases of a GEMM call (name, seconds), moved into its GemmInfo.
  bool time_phases = false;
  std::vector<std::pair<std::string, double>> phases;

  /// Multiprocessors of the context's device (`device`, read on first use).
  int sm_count();

  detail::Attachments attachments;

  ~Impl();

 private:
  std::vector<void*> call_workspaces_;  ///< stream_ordered: this call's allocations
  cublasHandle_t blas_ = nullptr;
  cudaStream_t blas_stream_ = nullptr;
  int sm_count_ = 0;
};

/// The scope of one call: frees its stream-ordered workspaces when it ends (Impl::end_call).
class CallWorkspaces {
 public:
  explicit CallWorkspaces(Context::Impl& ctx) : ctx_(ctx) {}
  ~CallWorkspaces() { ctx_.end_call(); }
  CallWorkspaces(const CallWorkspaces&) = delete;
  CallWorkspaces& operator=(const CallWorkspaces&) = delete;

 private:
  Context::Impl& ctx_;
};

}  // namespace tcsolve::cuda

#endif  // TCSOLVE_HAVE_CUDA
