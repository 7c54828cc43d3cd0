// An intercepted product on tcsolve's corrected GEMM (product.hpp).
#include "product.hpp"

#include <cuda_runtime.h>

#include <cstddef>

#include "tcsolve/gemm/batch.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::hook {
namespace {

Variant to_variant(HookVariant v) {
  switch (v) {
    case HookVariant::ec_fp16:
      return Variant::ec_fp16;
    case HookVariant::ec_tf32:
      return Variant::ec_tf32;
    case HookVariant::auto_:
    case HookVariant::off:
      break;
  }
  return Variant::auto_;
}

Op to_op(char t) { return t == 'N' ? Op::n : Op::t; }

/// cuBLASLt's D = alpha AB + beta C with C apart from D: each member's C copied into its D
/// first, so that the product reads it as its own.
void copy_c_in(cudaStream_t stream, const Operands& p) {
  if (p.arrays()) throw InvalidInput("tcsolve hook: a separate C with pointer arrays");  // cuBLASLt has none
  for (int b = 0; b < p.batch; ++b) {
    TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(
        p.C + b * p.stride_c, static_cast<std::size_t>(p.ldc) * sizeof(float), p.c_in + b * p.stride_c_in,
        static_cast<std::size_t>(p.ldc_in) * sizeof(float), static_cast<std::size_t>(p.m) * sizeof(float),
        p.n, cudaMemcpyDeviceToDevice, stream));
  }
}

}  // namespace

bool run_product(cuda::Context& context, HookVariant variant, const Operands& p, bool graphs) {
  const Variant v = to_variant(variant);
  const DeviceAuto on_device;  // auto chooses FP16/TF32 on the device: no host wait
  // beta C is read only when beta may be non-zero: a NaN in C must not leak into beta = 0.
  const bool reads_c = p.device_scalars || p.beta != 0.0f;
  if (p.c_in != nullptr && reads_c) copy_c_in(context.stream(), p);
  Batch batch;
  batch.count = p.batch;
  batch.stride_a = p.stride_a, batch.stride_b = p.stride_b, batch.stride_c = p.stride_c;
  batch.a_array = p.a_array, batch.b_array = p.b_array, batch.c_array = p.c_array;
  const Op ta = to_op(p.ta), tb = to_op(p.tb);
  GemmOptions options;
  options.cuda_launch = graphs ? CudaLaunch::cached_graphs : CudaLaunch::direct;
  const GemmInfo info =
      p.device_scalars
          ? cuda::gemm_batched(context, v, ta, tb, p.m, p.n, p.k, cuda::DeviceScalars{p.d_alpha, p.d_beta}, p.A,
                               p.lda, p.B, p.ldb, p.C, p.ldc, batch, options, &on_device)
          : cuda::gemm_batched(context, v, ta, tb, p.m, p.n, p.k, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                               p.ldc, batch, options, &on_device);
  if (p.bias != nullptr || p.activation != Activation::none) apply_epilogue(context.stream(), p);
  return info.from_graph;
}

}  // namespace tcsolve::hook
