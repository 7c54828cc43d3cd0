// RFC 0007 conversion API over host arrays, and mixed_precision_gemm.
#include "tcsolve/gemm/convert.hpp"

namespace tcsolve {

void fp32_to_fp16(const float* src, std::uint16_t* dst, std::size_t elements, Fp16Mode mode) {
  for (std::size_t i = 0; i < elements; ++i) dst[i] = fp32_to_fp16_value(src[i], mode);
}

void fp16_to_fp32(const std::uint16_t* src, float* dst, std::size_t elements) {
  for (std::size_t i = 0; i < elements; ++i) dst[i] = fp16_value(src[i]);
}

// RFC 0007's "Unsupported GPU: fall back to FP32 kernel" is cuda::gemm's: on a device without
// FP16 arithmetic (below sm_53) fp16-simt runs fp32-simt, and the returned GemmInfo says so
// (resolved = fp32-simt, a note). The cpu backend always has it.
GemmInfo mixed_precision_gemm(const float* A, const float* B, float* C, int M, int N, int K,
                              Backend backend) {
  return gemm(backend, Variant::fp16_simt, Op::n, Op::n, M, N, K, 1.0f, A, M, B, K, 0.0f, C, M);
}

}  // namespace tcsolve
