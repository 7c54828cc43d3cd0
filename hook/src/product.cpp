// An intercepted product on tcsolve's corrected GEMM (product.hpp).
#include "product.hpp"

#include <cuda_runtime.h>

#include <cstddef>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::hook {
namespace {

Variant to_variant(HookVariant v) {
  switch (v) {
    case HookVariant::ec_fp16: return Variant::ec_fp16;
    case HookVariant::ec_tf32: return Variant::ec_tf32;
    case HookVariant::auto_:
    case HookVariant::off: break;
  }
  return Variant::auto_;
}

Op to_op(char t) { return t == 'N' ? Op::n : Op::t; }

}  // namespace

void run_product(cuda::Context& context, HookVariant variant, const Operands& p) {
  const Variant v = to_variant(variant);
  const DeviceAuto on_device;  // auto chooses FP16/TF32 on the device: no host wait
  cudaStream_t stream = context.stream();
  // beta C is read only when beta may be non-zero: a NaN in C must not leak into beta = 0.
  const bool reads_c = p.device_scalars || p.beta != 0.0f;
  for (int b = 0; b < p.batch; ++b) {
    const float* A = p.A + b * p.stride_a;
    const float* B = p.B + b * p.stride_b;
    float* C = p.C + b * p.stride_c;
    if (p.c_in != nullptr && reads_c) {  // cuBLASLt's D = alpha AB + beta C with C apart from D
      const float* c_in = p.c_in + b * p.stride_c_in;
      TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(C, static_cast<std::size_t>(p.ldc) * sizeof(float), c_in,
                                           static_cast<std::size_t>(p.ldc_in) * sizeof(float),
                                           static_cast<std::size_t>(p.m) * sizeof(float), p.n,
                                           cudaMemcpyDeviceToDevice, stream));
    }
    if (p.device_scalars)
      cuda::gemm(context, v, to_op(p.ta), to_op(p.tb), p.m, p.n, p.k, cuda::DeviceScalars{p.d_alpha, p.d_beta}, A,
                 p.lda, B, p.ldb, C, p.ldc, {}, &on_device);
    else
      cuda::gemm(context, v, to_op(p.ta), to_op(p.tb), p.m, p.n, p.k, p.alpha, A, p.lda, B, p.ldb, p.beta, C, p.ldc,
                 {}, &on_device);
    if (p.bias != nullptr) add_bias(stream, p.m, p.n, p.bias + b * p.stride_bias, C, p.ldc);
  }
}

}  // namespace tcsolve::hook
