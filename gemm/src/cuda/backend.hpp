// Internal interface of the cuda backend: one entry point per kernel family, all with the
// public gemm contract (device pointers, column-major, C = alpha op(A) op(B) + beta C).
// gemm_cuda.cu dispatches to them; nothing outside gemm/src/cuda includes this header.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context_impl.hpp"

namespace tcsolve::cuda::detail {

/// The GEMM kernels' device workspaces in a Context: gemm's attachment, made on the context's
/// first GEMM. Each is a growing array (Context::Workspaces::cached) or the cache that
/// Context::Impl::take bypasses for stream-ordered calls.
struct GemmWorkspaces : Context::Attachment {
  Scratch scaling;  ///< the ec path's exponent ranges, shifts and auto flag (ints; mma.sync path)
  Scratch split;    ///< the Hopper kernels' split operands (the production path: its ints and, with k
                    ///< ranges, their FP32 sums before the reduction, in the same allocation)
  Scratch fp64;     ///< the fp64 variant's and the reference product's FP64 copies
  Scratch nearest;  ///< nearest_columns' per-column data (FP32 and FP64 weights, scalings, bounds)

  /// The workspaces of `ctx`, made on first use.
  static GemmWorkspaces& of(Context::Impl& ctx) {
    static const char key = 0;
    if (Context::Attachment* a = ctx.attachments.find(&key)) return static_cast<GemmWorkspaces&>(*a);
    return static_cast<GemmWorkspaces&>(ctx.attachments.put(&key, std::make_unique<GemmWorkspaces>()));
  }
};

/// The nearest-column epilogue (cuda::nearest_columns, nearest.cu): labels[i] = argmin_j
/// (weights[j] - 2 D(i, j)) instead of storing D = op(A) op(B); *changed += the labels changed.
struct NearestArgs {
  const double* weights;
  int* labels;
  unsigned long long* changed;
  bool resident_a;  ///< GemmOptions::nearest_resident_points
};

/// Arguments of one GEMM call, as the public API takes them.
struct GemmArgs {
  Op ta, tb;
  int m, n, k;
  float alpha;
  const float* A;
  int lda;
  const float* B;
  int ldb;
  float beta;
  float* C;
  int ldc;
  /// The caller's context: its stream, handles, workspaces and SM budget (Context::max_blocks
  /// for the persistent wgmma kernels: 0, one block per SM).
  Context::Impl* ctx = nullptr;
  /// A DeviceAuto was passed: auto's choice stays on the device.
  bool auto_on_device = false;
  /// DeviceAuto::tf32_needed (with auto_on_device; the wgmma path only).
  int* auto_tf32_needed = nullptr;
  /// GemmOptions::cuda_kernels resolved: the wgmma kernels serve the tensor-core variants.
  bool wgmma = false;
  /// DeviceScalars: alpha and beta read by the kernels from device memory (nullptr: the values
  /// above). Only the ec path's kernels take them.
  const float* alpha_device = nullptr;
  const float* beta_device = nullptr;
  /// Not null: the ec path's wgmma kernels end in the nearest-column epilogue (C is not written).
  const NearestArgs* nearest = nullptr;
  /// cuda::gemm_batched on the wgmma production path: the members (count 1: the one product
  /// above; A, B, C are member 0's base pointers when strided).
  Batch batch{};
  /// The production path's k ranges (GemmOptions::split_k resolved by ec_k_split for the batch).
  KSplit split{};

  cudaStream_t stream() const { return ctx->stream; }
};

/// fp64 (DGEMM on FP64 copies of A, B, C), fp32-simt (SGEMM), cublas-tf32 and cublas-fp16
/// (cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 / _FAST_16F). cublas_gemm.cu.
GemmInfo cublas_gemm(Variant variant, const GemmArgs& args);

/// fp16-simt: RFC 0007's half_gemm_fp32_accum on CUDA cores (saturating FP16 operands, FP32
/// sequential accumulation). half_gemm.cu.
GemmInfo half_gemm(const GemmArgs& args);

/// The ec path: ec-fp16, ec-tf32 and auto with their scaling, on the wgmma kernels (Hopper) or
/// mma.sync. ec_gemm.cu. (The research tensor-core variants: wgmma_gemm.hpp, mma_gemm.hpp.)
GemmInfo ec_gemm(Variant variant, const GemmArgs& args, const GemmOptions& options);

}  // namespace tcsolve::cuda::detail
