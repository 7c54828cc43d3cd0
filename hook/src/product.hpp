// An intercepted product run on tcsolve's corrected GEMM: the whole batch (strided or pointer
// arrays) in one call to cuda::gemm_batched, alpha and beta as host values or device pointers,
// and cuBLASLt's extras (C read from another matrix than the output D, the bias and activation
// epilogues). Everything is enqueued on the context's stream; nothing waits.
#pragma once

#include "activation.hpp"
#include "policy.hpp"
#include "tcsolve/runtime/context.hpp"

namespace tcsolve::hook {

/// One call's operands, column-major as in BLAS, all device memory; sizes the policy accepted
/// (1 <= m, n, k, batch and leading dimensions within int).
struct Operands {
  char ta = 'N', tb = 'N';
  int m = 0, n = 0, k = 0, batch = 1;
  const float* A = nullptr;
  int lda = 0;
  long long stride_a = 0;
  const float* B = nullptr;
  int ldb = 0;
  long long stride_b = 0;
  float* C = nullptr;  ///< the output (cuBLASLt's D)
  int ldc = 0;
  long long stride_c = 0;
  /// cublasSgemmBatched and cublasGemmBatchedEx: device arrays of the members' device pointers
  /// (all three, or none: the strided form above, whose A, B and C are then unused).
  const float* const* a_array = nullptr;
  const float* const* b_array = nullptr;
  float* const* c_array = nullptr;
  /// Scalars: host values, or (device_scalars) device pointers read by the kernels.
  bool device_scalars = false;
  float alpha = 1.0f, beta = 0.0f;
  const float* d_alpha = nullptr;
  const float* d_beta = nullptr;
  /// cuBLASLt (strided batches only): the C added (beta C) when it is not the output; nullptr:
  /// the output itself.
  const float* c_in = nullptr;
  int ldc_in = 0;
  long long stride_c_in = 0;
  /// cuBLASLt's epilogues, after the product: bias[i] (FP32; member b's from bias + b
  /// stride_bias) added to row i of each output, then `activation`.
  const float* bias = nullptr;
  long long stride_bias = 0;
  Activation activation = Activation::none;
  bool arrays() const { return a_array != nullptr; }
};

/// Enqueues the products on context.stream() with `variant` (not off), through the context's
/// cached graphs when `graphs` (GemmOptions::cuda_launch). Returns whether they ran from one.
/// Throws tcsolve errors.
bool run_product(cuda::Context& context, HookVariant variant, const Operands& p, bool graphs);

/// The epilogue of `p` on its outputs (p.C, or the members of p.c_array), on `stream`: one
/// kernel over the whole batch, D = activation(D + bias), bias and activation as `p` has them
/// (epilogue.cu).
void apply_epilogue(CUstream_st* stream, const Operands& p);

}  // namespace tcsolve::hook
