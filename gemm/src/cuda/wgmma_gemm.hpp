// Hopper wgmma kernels of the FP16 and TF32 tensor-core variants (wgmma_gemm.cu): gemm_cuda.cu
// and ec_gemm.cu run them on compute capability 9.0; the mma.sync kernels (mma_gemm.hpp) serve
// other GPUs and the variants these do not (FP16 accumulation).
#pragma once

#include "backend.hpp"
#include "tcsolve/gemm/config.hpp"

namespace tcsolve::cuda::detail {

/// With Context::set_time_phases(true): the ec scaling, the split pass and the main kernel are
/// timed apart (CUDA events on the context's stream, synchronising) into the context's phase
/// list, which cuda::gemm returns in GemmInfo::phases; a diagnostic for benchmarks.
class PhaseTimer {
 public:
  explicit PhaseTimer(const GemmArgs& g);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  /// Ends the phase before (if any) and starts `name`.
  void mark(const char* name);

 private:
  Context::Impl* ctx_;  ///< null: not timing
  const char* name_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

/// Accumulation scheme of the wgmma kernel (the policies of mma_gemm.cu, same arithmetic).
/// ec: the production path's scheme (emulate.cpp ec_value): lo*hi, hi*lo, hi*hi chained in one
/// accumulator from zero for 2 k-steps, then added outside in FP32; lo not scaled.
/// halfhalf_tiles: halfhalf whose hi*hi chunk is whole k-tiles (4 k-steps), added outside
/// between k-tiles (ec-tf32).
enum class WgmmaScheme { single, markidis, halfhalf, halfhalf_tiles, legemm, ec };

/// True on a compute capability 9.0 device when the build carries the sm_90a kernels (probed
/// once per process: a property of the device and the build).
bool wgmma_available();

/// C = alpha op(A) op(B) + beta C with the scheme's splits (single: RN to FP16 / RNA to TF32;
/// markidis, halfhalf: Ootomo's split with scale 1 / 2^11; legemm: bit-cut and 2^10). tf32:
/// TF32 operands (single, halfhalf and ec only). chunk_steps: halfhalf's k-steps (16 FP16, 8 TF32)
/// of hi*hi chained inside before the outside FP32 add. shift_a / shift_b: ec scaling
/// exponents on the device (nullptr: none). use_fp16: auto's device flag (nullptr: always run;
/// else the FP16 kernels run when it is nonzero, the TF32 ones when it is zero).
void wgmma_gemm(WgmmaScheme scheme, bool tf32, const GemmArgs& g, int chunk_steps, const int* shift_a,
                const int* shift_b, const int* use_fp16);

/// The production path on Hopper (ec-fp16 with ec_chunk_k = 32, ec-tf32 with whole k-tiles,
/// auto): the ec scaling is computed inside the split kernel (each block owns whole rows), so
/// the operands are read twice and nothing else runs before the GEMM. shift: m + n ints of
/// device workspace (rows of op(A), then columns of op(B)); max_range, flag: 2 and 1 ints
/// (auto: the ranges and the choice, 1 = FP16). range_keys (one member; ec_gemm.cu's scaling
/// kernels, for few rows and a long k): the rows' exponent ranges were found first, as keys
/// (hi keys of the m + n vectors, then lo keys; max_range cleared with them); the tile-parallel
/// split pass then finishes the scaling from them (the same bits as the fused kernel).
/// workspace: wgmma_production_bytes(variant, g) bytes of device memory, 256-byte aligned, which
/// the caller takes together with its own (one stream-ordered allocation a call). Returns
/// whether the FP16 path ran.
bool wgmma_production(Variant variant, const GemmArgs& g, int tf32_chunk_steps, int* shift, int* max_range,
                      int* flag, const unsigned* range_keys, unsigned char* workspace);

/// The device workspace wgmma_production needs for g (the split operands; with g.split.count >
/// 1, the k ranges' partial sums too).
std::size_t wgmma_production_bytes(Variant variant, const GemmArgs& g);

/// The key of an exponent range's largest exponent (hi) or smallest (lo) for atomicMax: a zero
/// fill is the empty range (INT_MIN, INT_MAX), so one cudaMemsetAsync initialises them.
TCSOLVE_HOST_DEVICE constexpr unsigned hi_key(int e) { return static_cast<unsigned>(e) ^ 0x80000000u; }
TCSOLVE_HOST_DEVICE constexpr unsigned lo_key(int e) { return ~hi_key(e); }
TCSOLVE_HOST_DEVICE constexpr int hi_of_key(unsigned u) { return static_cast<int>(u ^ 0x80000000u); }
TCSOLVE_HOST_DEVICE constexpr int lo_of_key(unsigned u) { return static_cast<int>(~u ^ 0x80000000u); }

/// op(A) of the nearest-column GEMM scaled and split to FP16 once (ec-fp16, auto): hi and lo
/// (mp x kp FP16 each, K contiguous, zero-padded), the rows' scaling exponents (m ints) and
/// their largest exponent range (one int: auto's choice needs it).
struct PreparedPoints {
  const unsigned char* hi;
  const unsigned char* lo;
  const int* shift;
  const int* range;
  int m, k, mp, kp;
};

/// Bytes of hi and lo together for m x k points.
std::size_t prepared_points_bytes(int m, int k);

/// The layout of prepared points in one allocation of prepared_points_bytes(m, k): hi, then lo.
PreparedPoints prepared_points(const unsigned char* split, const int* shift, const int* range, int m, int k);

/// Scales and splits op(A) = A^T of g (g.m rows, g.k) into hi, lo (prepared_points_bytes(m, k)
/// / 2 bytes each), shift (m ints) and *range (the rows' largest exponent range; zeroed first):
/// the scale_split kernel production() runs on it.
void wgmma_prepare_points(const GemmArgs& g, unsigned char* hi, unsigned char* lo, int* shift, int* range);

/// nearest_columns for ec-fp16 or auto on prepared points: op(B) scaled and split (shift_b: n
/// ints of workspace), auto's choice made from both ranges as production() makes it
/// (max_range, flag: 2 and 1 ints of workspace; one read-back), then the main kernel with the
/// nearest-column epilogue (g.nearest); a TF32 choice splits op(A) again from g.A. The same
/// kernels and arguments as production(variant), so the same D. Returns whether the FP16 path
/// ran.
bool wgmma_nearest_prepared(Variant variant, const GemmArgs& g, const PreparedPoints& a, int tf32_chunk_steps,
                            int* shift_b, int* max_range, int* flag);

}  // namespace tcsolve::cuda::detail
