// cuBLAS's compute types as the drop-in's policy sees them (policy.hpp's Compute), shared by the
// cuBLAS and cuBLASLt entry points; the legacy cudaDataType form CUDA_R_32F means 32F.
#pragma once

#include <cublas_api.h>

#include "policy.hpp"

namespace tcsolve::hook {

inline Compute compute_of(int c) {
  switch (c) {
    case CUBLAS_COMPUTE_32F:
    case CUDA_R_32F:
      return Compute::f32;
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      return Compute::f32_pedantic;
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return Compute::f32_fast_tf32;
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return Compute::f32_fast_16f;
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return Compute::f32_fast_16bf;
    default:
      return Compute::other;
  }
}

}  // namespace tcsolve::hook
