// cuda backend: tcsolve::cuda::gemm and implements(), the one switch from a variant to its
// kernels (cuBLAS: cublas_gemm.cu; fp16-simt: half_gemm.cu; the research tensor-core variants:
// wgmma_gemm.cu on Hopper, else mma_gemm.cu; the ec path: ec_gemm.cu), and RFC 0007's fallback for devices
// that lack the hardware a variant needs ("Unsupported GPU: fall back to FP32 kernel"):
//   - tensor-core variants need sm_80 (mma.sync m16n8k16 FP16 and m16n8k8 TF32 with FP32
//     accumulation; TF32 first appears there);
//   - fp16-simt needs FP16 arithmetic, sm_53;
// below that they run fp32-simt, and GemmInfo says so (resolved = fp32-simt, a note).
#include <string>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "mma_gemm.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device_guard.hpp"
#include "tcsolve/runtime/error.hpp"
#include "wgmma_gemm.hpp"

namespace tcsolve::cuda {

namespace {

enum class Family { cublas, half, mma };

Family family(Variant v) {
  switch (v) {
    case Variant::fp64:
    case Variant::fp32_simt:
    case Variant::cublas_tf32:
    case Variant::cublas_fp16:
      return Family::cublas;
    case Variant::fp16_simt:
      return Family::half;
    case Variant::fp16_tc:
    case Variant::tf32_tc:
    case Variant::fp16_fp16acc:
    case Variant::fp16_twostage:
    case Variant::markidis:
    case Variant::ootomo_fp16:
    case Variant::ootomo_tf32:
    case Variant::legemm:
    case Variant::ec_fp16:
    case Variant::ec_tf32:
    case Variant::auto_:
      return Family::mma;
  }
  throw Error("cuda::gemm: unknown variant");
}

constexpr int kMmaCapability = 80;   ///< sm_80: mma.sync for FP16 and TF32, FP32 accumulation
constexpr int kHalfCapability = 53;  ///< sm_53: native FP16 arithmetic

}  // namespace

bool implements(Variant variant) {
  switch (family(variant)) {
    case Family::cublas:
    case Family::half:
    case Family::mma:
      return true;
  }
  return false;
}

namespace {

/// GemmOptions::cuda_kernels on this device: whether the wgmma kernels serve the call.
bool use_wgmma(CudaKernels kernels) {
  switch (kernels) {
    case CudaKernels::automatic:
      return detail::wgmma_available();
    case CudaKernels::mma:
      return false;
    case CudaKernels::wgmma:
      if (!detail::wgmma_available())
        throw Unavailable("the wgmma GEMM kernels need an sm_90 device and a build with sm_90a code (" +
                          device_name() + ")");
      return true;
  }
  return false;
}

GemmInfo run(Variant variant, const detail::GemmArgs& args, const GemmOptions& options);

/// A research variant on the wgmma kernels (args.wgmma) or on mma.sync.
GemmInfo tensor_cores(Variant variant, const detail::GemmArgs& args, detail::WgmmaScheme scheme, bool tf32,
                      detail::MmaKernel kernel) {
  GemmInfo info{variant, variant, Backend::cuda, {}, args.wgmma ? CudaKernels::wgmma : CudaKernels::mma};
  if (args.wgmma)
    detail::wgmma_gemm(scheme, tf32, args, 1, nullptr, nullptr, nullptr);
  else
    detail::mma_gemm(kernel, args);
  return info;
}

/// A variant only the mma.sync kernels serve (FP16 accumulation).
GemmInfo mma_only(Variant variant, const detail::GemmArgs& args, detail::MmaKernel kernel) {
  detail::mma_gemm(kernel, args);
  return GemmInfo{variant, variant, Backend::cuda, {}, CudaKernels::mma};
}

}  // namespace

namespace {

GemmInfo run_call(Context& ctx, Variant variant, detail::GemmArgs& args, const GemmOptions& options,
                  const DeviceAuto* on_device) {
  if (!device_available())
    throw Unavailable("variant " + std::string(to_string(variant)) + ": no usable CUDA device (" +
                      device_name() + ")");
  const tcsolve::detail::DeviceGuard guard(ctx.device());
  args.ctx = &ctx.impl();
  args.auto_on_device = on_device != nullptr;
  args.auto_tf32_needed = on_device != nullptr ? on_device->tf32_needed : nullptr;
  args.wgmma = use_wgmma(options.cuda_kernels);
  const CallWorkspaces workspaces(ctx.impl());
  args.ctx->phases.clear();
  GemmInfo info = run(variant, args, options);
  info.phases = std::move(args.ctx->phases);
  args.ctx->phases.clear();
  return info;
}

}  // namespace

GemmInfo gemm(Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha, const float* A,
              int lda, const float* B, int ldb, float beta, float* C, int ldc, const GemmOptions& options,
              const DeviceAuto* on_device) {
  check_gemm_arguments(ta, tb, m, n, k, lda, ldb, ldc);
  detail::GemmArgs args{ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc};
  return run_call(ctx, variant, args, options, on_device);
}

namespace {

/// The device-scalar overloads' checks.
void check_device_scalars(Variant variant, const DeviceScalars& scalars) {
  if (variant != Variant::ec_fp16 && variant != Variant::ec_tf32 && variant != Variant::auto_)
    throw InvalidInput("cuda::gemm with device scalars: the ec variants only, not " +
                       std::string(to_string(variant)));
  if (scalars.alpha == nullptr || scalars.beta == nullptr)
    throw InvalidInput("cuda::gemm with device scalars: alpha and beta must not be null");
  if (compute_capability() < kMmaCapability)
    throw Unavailable("cuda::gemm with device scalars: " + device_name() + " lacks the tensor cores of " +
                      std::string(to_string(variant)));
}

/// Whether a batch runs in one launch: the ec variants on the wgmma production path (ec_gemm.cu).
bool one_launch(Variant variant, const GemmOptions& options) {
  const bool ec = variant == Variant::ec_fp16 || variant == Variant::ec_tf32 || variant == Variant::auto_;
  return ec && device_available() && compute_capability() >= kMmaCapability &&
         use_wgmma(options.cuda_kernels) && options.ec_chunk_k == 32 && options.ec_chunk_k_tf32 % 32 == 0;
}

/// A batch: one launch where one_launch says so, else member by member (pointer arrays read
/// back to the host first, which waits for ctx's stream).
GemmInfo run_batched(Context& ctx, Variant variant, detail::GemmArgs& args, const Batch& batch,
                     const GemmOptions& options, const DeviceAuto* on_device) {
  check_batch(batch, args.m, args.n, args.ldc, "cuda::gemm_batched");
  if (batch.count == 0) return GemmInfo{variant, variant, Backend::cuda, {}, CudaKernels::automatic};
  if (one_launch(variant, options)) {
    args.batch = batch;
    return run_call(ctx, variant, args, options, on_device);
  }
  std::vector<const float*> a(batch.count), b(batch.count);
  std::vector<float*> c(batch.count);
  if (batch.arrays()) {
    const tcsolve::detail::DeviceGuard guard(ctx.device());
    const std::size_t bytes = sizeof(float*) * static_cast<std::size_t>(batch.count);
    TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(a.data(), batch.a_array, bytes, cudaMemcpyDeviceToHost, ctx.stream()));
    TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(b.data(), batch.b_array, bytes, cudaMemcpyDeviceToHost, ctx.stream()));
    TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(c.data(), batch.c_array, bytes, cudaMemcpyDeviceToHost, ctx.stream()));
    TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  } else {
    for (int i = 0; i < batch.count; ++i)
      a[i] = args.A + i * batch.stride_a, b[i] = args.B + i * batch.stride_b,
      c[i] = args.C + i * batch.stride_c;
  }
  GemmInfo info;
  for (int i = 0; i < batch.count; ++i) {
    detail::GemmArgs member = args;
    member.A = a[i], member.B = b[i], member.C = c[i];
    info = run_call(ctx, variant, member, options, on_device);
  }
  return info;
}

}  // namespace

namespace {

/// The checked arguments of a call with device scalars.
detail::GemmArgs device_scalar_args(Variant variant, Op ta, Op tb, int m, int n, int k,
                                    const DeviceScalars& scalars, const float* A, int lda, const float* B,
                                    int ldb, float* C, int ldc) {
  check_gemm_arguments(ta, tb, m, n, k, lda, ldb, ldc);
  check_device_scalars(variant, scalars);
  detail::GemmArgs args{ta, tb, m, n, k, 1.0f, A, lda, B, ldb, 1.0f, C, ldc};
  args.alpha_device = scalars.alpha;
  args.beta_device = scalars.beta;
  return args;
}

}  // namespace

GemmInfo gemm(Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k, const DeviceScalars& scalars,
              const float* A, int lda, const float* B, int ldb, float* C, int ldc, const GemmOptions& options,
              const DeviceAuto* on_device) {
  detail::GemmArgs args = device_scalar_args(variant, ta, tb, m, n, k, scalars, A, lda, B, ldb, C, ldc);
  return run_call(ctx, variant, args, options, on_device);
}

GemmInfo gemm_batched(Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha,
                      const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
                      const Batch& batch, const GemmOptions& options, const DeviceAuto* on_device) {
  check_gemm_arguments(ta, tb, m, n, k, lda, ldb, ldc);
  detail::GemmArgs args{ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc};
  return run_batched(ctx, variant, args, batch, options, on_device);
}

GemmInfo gemm_batched(Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k,
                      const DeviceScalars& scalars, const float* A, int lda, const float* B, int ldb,
                      float* C, int ldc, const Batch& batch, const GemmOptions& options,
                      const DeviceAuto* on_device) {
  detail::GemmArgs args = device_scalar_args(variant, ta, tb, m, n, k, scalars, A, lda, B, ldb, C, ldc);
  return run_batched(ctx, variant, args, batch, options, on_device);
}

namespace {

GemmInfo run(Variant variant, const detail::GemmArgs& args, const GemmOptions& options) {
  const Family f = family(variant);
  const int needed = f == Family::mma ? kMmaCapability : f == Family::half ? kHalfCapability : 0;
  const int cc = compute_capability();
  if (cc < needed) {
    GemmInfo info = detail::cublas_gemm(Variant::fp32_simt, args);
    info.requested = variant;
    info.resolved = Variant::fp32_simt;
    info.note = "device sm_" + std::to_string(cc) + " lacks " +
                (f == Family::mma ? "the tensor cores" : "the FP16 arithmetic") + " of " +
                std::string(to_string(variant)) + "; ran fp32-simt";
    return info;
  }

  // The one switch from a variant to its kernels: one kernel family per file (backend.hpp).
  using detail::MmaKernel;
  using detail::WgmmaScheme;
  switch (variant) {
    case Variant::fp64:
    case Variant::fp32_simt:
    case Variant::cublas_tf32:
    case Variant::cublas_fp16:
      return detail::cublas_gemm(variant, args);
    case Variant::fp16_simt:
      return detail::half_gemm(args);
    case Variant::fp16_tc:
      return tensor_cores(variant, args, WgmmaScheme::single, false, MmaKernel::fp16_single);
    case Variant::tf32_tc:
      return tensor_cores(variant, args, WgmmaScheme::single, true, MmaKernel::tf32_single);
    case Variant::fp16_fp16acc:
      return mma_only(variant, args, MmaKernel::fp16_accumulate);
    case Variant::fp16_twostage:
      return mma_only(variant, args, MmaKernel::fp16_two_stage);
    case Variant::markidis:
      return tensor_cores(variant, args, WgmmaScheme::markidis, false, MmaKernel::markidis);
    case Variant::ootomo_fp16:
      return tensor_cores(variant, args, WgmmaScheme::halfhalf, false, MmaKernel::halfhalf_fp16);
    case Variant::ootomo_tf32:
      return tensor_cores(variant, args, WgmmaScheme::halfhalf, true, MmaKernel::halfhalf_tf32);
    case Variant::legemm:
      return tensor_cores(variant, args, WgmmaScheme::legemm, false, MmaKernel::legemm);
    case Variant::ec_fp16:
    case Variant::ec_tf32:
    case Variant::auto_:
      return detail::ec_gemm(variant, args, options);
  }
  throw Error("cuda::gemm: unknown variant");
}

}  // namespace

}  // namespace tcsolve::cuda
