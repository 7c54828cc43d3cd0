// The device loop that folds a strided run of FP32 elements into an exponent range (scaling.hpp's
// fold_exponent), shared by the ec path's scaling kernels (ec_gemm.cu) and the fused scale-and-
// split kernel of the wgmma path (wgmma_gemm.cu).
#pragma once

#include <cstddef>

#include "tcsolve/gemm/scaling.hpp"

namespace tcsolve::cuda::detail {

/// Elements q0, q0 + step, ... < q1 of X + base (stride estride) folded into [lo, hi], eight
/// loads in flight per thread (the loop is latency-bound otherwise).
__device__ __forceinline__ void fold_range(const float* X, std::size_t base, std::size_t estride, int q0,
                                           int q1, int step, int& hi, int& lo) {
  int q = q0;
  for (; q + 7 * step < q1; q += 8 * step) {
    float x[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) x[u] = X[base + static_cast<std::size_t>(q + u * step) * estride];
#pragma unroll
    for (int u = 0; u < 8; ++u) fold_exponent(x[u], hi, lo);
  }
  for (; q < q1; q += step) fold_exponent(X[base + static_cast<std::size_t>(q) * estride], hi, lo);
}

}  // namespace tcsolve::cuda::detail
