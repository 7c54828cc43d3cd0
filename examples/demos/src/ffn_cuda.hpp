// Internal interface of the FFN demo's cuda part: the elementwise kernels of the block and the
// FP64 product of the reference. Defined in ffn_cuda.cu; in a build without CUDA every function
// throws tcsolve::Unavailable (ffn_cuda_stub.cpp). Pointers d_* are device memory; everything
// runs on the default stream and returns once enqueued. Nothing outside examples/demos/src
// includes this header.
#pragma once

namespace tcsolve::demos::detail {

/// Z(i, j) = act(Z(i, j) + b(i)) for the rows x cols column-major FP32 array d_Z (leading
/// dimension rows), b of `rows` FP32 values; act = GELU (bias_gelu of ffn.hpp) when `gelu`,
/// else the identity. The same FP32 operations as the host loop of ffn_forward.
void bias_activation(float* d_Z, const float* d_b, int rows, int cols, bool gelu);

/// The same in FP64 on an FP64 array (the reference): Z(i, j) = act(Z(i, j) + double(b(i))).
void bias_activation(double* d_Z, const float* d_b, int rows, int cols, bool gelu);

/// d_C64 (m x n, leading dimension m) = A B in FP64, with A FP32 (m x k, leading dimension m)
/// widened to FP64 exactly and B already FP64 (k x n, leading dimension k): cuBLAS DGEMM.
/// Waits for the product (it frees its FP64 copy of A).
void product_fp32_fp64(int m, int n, int k, const float* d_A, const double* d_B64, double* d_C64);

}  // namespace tcsolve::demos::detail
