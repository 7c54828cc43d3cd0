// An intercepted product run on tcsolve's corrected GEMM: the batch loop, alpha and beta as
// host values or device pointers, and cuBLASLt's extras (C read from another matrix than the
// output D, the bias epilogue). Everything is enqueued on the context's stream; nothing waits.
#pragma once

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
  /// Scalars: host values, or (device_scalars) device pointers read by the kernels.
  bool device_scalars = false;
  float alpha = 1.0f, beta = 0.0f;
  const float* d_alpha = nullptr;
  const float* d_beta = nullptr;
  /// cuBLASLt: the C added (beta C) when it is not the output; nullptr: the output itself.
  const float* c_in = nullptr;
  int ldc_in = 0;
  long long stride_c_in = 0;
  /// cuBLASLt's bias epilogue: bias[i] added to row i of each output after the product (FP32).
  const float* bias = nullptr;
  long long stride_bias = 0;
};

/// Enqueues the products on context.stream() with `variant` (not off). Throws tcsolve errors.
void run_product(cuda::Context& context, HookVariant variant, const Operands& p);

/// D(i, j) += bias[i] for the m x n column-major D on `stream` (bias.cu).
void add_bias(CUstream_st* stream, int m, int n, const float* bias, float* D, int ldd);

}  // namespace tcsolve::hook
