// Hopper wgmma kernels of the FP16 tensor-core variants (wgmma_gemm.cu); mma_gemm.cu uses them
// on compute capability 9.0 and keeps its mma.sync kernels for other GPUs and for the variants
// these do not serve (TF32, FP16 accumulation).
#pragma once

#include "backend.hpp"

namespace tcsolve::cuda::detail {

/// Accumulation scheme of the wgmma kernel (the policies of mma_gemm.cu, same arithmetic).
enum class WgmmaScheme { single, markidis, halfhalf, legemm };

/// True on a compute capability 9.0 device when the build carries the sm_90a kernels and the
/// environment does not ask for the mma.sync kernels (TCSOLVE_GEMM_KERNEL=mma).
bool wgmma_available();

/// C = alpha op(A) op(B) + beta C with the scheme's splits (single: RN to FP16; markidis,
/// halfhalf: Ootomo's RN split with scale 1 / 2^11; legemm: bit-cut and 2^10). chunk_steps:
/// halfhalf's k-steps of 16 of hi*hi chained inside before the outside FP32 add. shift_a /
/// shift_b: ec scaling exponents on the device (nullptr: none). use_fp16: auto's device flag
/// (nullptr: always run).
void wgmma_gemm(WgmmaScheme scheme, const GemmArgs& g, int chunk_steps, const int* shift_a, const int* shift_b,
                const int* use_fp16);

}  // namespace tcsolve::cuda::detail
