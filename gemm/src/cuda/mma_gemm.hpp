// The mma.sync kernel family (mma_gemm.cu): one kernel per accumulation scheme, for GPUs
// without wgmma (before Hopper), the variants wgmma does not serve (FP16 accumulation), and the
// ec path where the wgmma one does not apply (ec_gemm.cu). gemm_cuda.cu picks the kernel.
#pragma once

#include "backend.hpp"

namespace tcsolve::cuda::detail {

/// The schemes (mma_gemm.cu's policies): single rounded product (FP16 RN, TF32 RNA); FP16
/// accumulation inside (fp16-fp16acc) or per k-step added outside (fp16-twostage); markidis;
/// halfhalf (Ootomo's halfhalf / tf32tf32: lo*hi + hi*lo inside, hi*hi chained for
/// MmaScaling::chunk_steps k-steps then added outside); halfhalf_fp16_shared (the ec-fp16 form:
/// the three products in one accumulator per chunk); legemm.
enum class MmaKernel {
  fp16_single,
  tf32_single,
  fp16_accumulate,
  fp16_two_stage,
  markidis,
  halfhalf_fp16,
  halfhalf_tf32,
  halfhalf_fp16_shared,
  legemm,
};

/// The ec path's extras: chunk_steps (halfhalf kernels: k-steps of 16 FP16 / 8 TF32 chained
/// inside before the outside add), the scaling exponents on the device (nullptr: none), and
/// auto's device flag (nullptr: always run; else this kernel runs when *use_fp16 == want_fp16).
struct MmaScaling {
  int chunk_steps = 1;
  const int* shift_a = nullptr;
  const int* shift_b = nullptr;
  const int* use_fp16 = nullptr;
  int want_fp16 = 0;
};

/// C = alpha op(A) op(B) + beta C by `kernel` on g's stream. Returns once enqueued.
void mma_gemm(MmaKernel kernel, const GemmArgs& g, const MmaScaling& scaling = {});

}  // namespace tcsolve::cuda::detail
