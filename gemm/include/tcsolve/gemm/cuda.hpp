// Host-callable API of the cuda backend on device arrays: the hi/lo splits and FP16
// conversions run by kernels that call the same TCSOLVE_HOST_DEVICE functions as the CPU
// emulation (split.hpp, convert.hpp), the exhaustive check of those functions against the
// hardware conversions, scale_matrix (BLAS's C = beta C), gemm-bench's device-side timer, FP64
// reference product and accuracy metrics, and the prepared points of nearest_columns. Device
// facts and device arrays (DeviceBuffer, device_alloc, the copies) are tcsolve::runtime's
// (tcsolve/runtime/device.hpp, included here).
//
// Defined in src/cuda/*.cu; in a build without CUDA every function here throws
// tcsolve::Unavailable (src/cuda_stub/cuda_stub.cpp). gemm() and implements() are declared in
// gemm.hpp.
//
// All pointers named d_* are device memory. Work runs on the stream given (nullptr: the legacy
// default stream; gemm() and the reference product on their Context's stream): a function
// returns once its kernel is enqueued (launch errors are thrown at once) unless it says that it
// waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tcsolve/gemm/convert.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/split.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace tcsolve::cuda {

// ---------------------------------------------------------------------------------------------
// Splits and conversions on device arrays (bitwise equal to the CPU functions)
// ---------------------------------------------------------------------------------------------

/// For i < n: (d_hi[i], d_lo[i]) = tcsolve::split(kind, d_src[i]). All three are device arrays
/// of n floats; d_hi and d_lo must not overlap d_src.
void split(SplitKind kind, const float* d_src, float* d_hi, float* d_lo, std::size_t n,
           CUstream_st* stream = nullptr);

/// For i < n: d_dst[i] = tcsolve::fp32_to_fp16_value(d_src[i], mode), the FP16 bit pattern
/// (RFC 0007 rules, see convert.hpp). Device arrays of n elements.
void fp32_to_fp16(const float* d_src, std::uint16_t* d_dst, std::size_t n,
                  Fp16Mode mode = Fp16Mode::saturate, CUstream_st* stream = nullptr);

/// For i < n: d_dst[i] = tcsolve::fp16_value(d_src[i]), the exact FP32 value of FP16 bits.
/// Device arrays of n elements.
void fp16_to_fp32(const std::uint16_t* d_src, float* d_dst, std::size_t n, CUstream_st* stream = nullptr);

// ---------------------------------------------------------------------------------------------
// Shared rounding helpers against the hardware conversions, over all 2^32 FP32 patterns
// ---------------------------------------------------------------------------------------------

/// Mismatch counts of compare_with_hardware(): each counter is the number of FP32 bit patterns
/// x (of all 2^32) for which the shared helper and the hardware conversion disagree, with the
/// smallest such pattern in the matching first_bad_* field (meaningful only when the count is
/// non-zero). A NaN result counts as a mismatch only when exactly one side is NaN.
struct ConversionCheck {
  std::uint64_t patterns = 0;  ///< patterns checked: 2^32 when the kernel ran to the end

  std::uint64_t fp16_rn = 0;   ///< __float2half_rn(x)  vs fp16_bits(x, Rounding::rn)
  std::uint64_t fp16_rz = 0;   ///< __float2half_rz(x)  vs fp16_bits(x, Rounding::rz)
  /// PTX cvt.rna.tf32.f32 vs round_tf32(x, Rounding::rna). The PTX ISA leaves the layout of
  /// tf32 in its .b32 register implementation defined (>= 10 mantissa bits), so both sides are
  /// compared on their high 19 bits (sign, exponent, 10 mantissa bits), the part an mma reads.
  std::uint64_t tf32_rna = 0;
  std::uint64_t tf32_rn = 0;   ///< PTX cvt.rn.tf32.f32 vs round_tf32(x, rn); sm_90 and later
  std::uint64_t tf32_rz = 0;   ///< PTX cvt.rz.tf32.f32 vs round_tf32(x, rz); sm_90 and later
  std::uint64_t bf16_rn = 0;   ///< __float2bfloat16_rn(x) vs bf16_bits_rn(x)
  /// Patterns where any of the four splits (split.hpp) differs from the same split composed
  /// from the hardware conversions (legemm's bit-cut hi composed as __float2half_rz, which
  /// split.hpp states it equals); per kind in split_by_kind[static_cast<int>(SplitKind)].
  std::uint64_t split_mismatch = 0;
  std::uint64_t split_by_kind[4] = {0, 0, 0, 0};
  /// Patterns whose cvt.rna.tf32.f32 result has non-zero low 13 bits (informational: the
  /// masked comparison above ignores them).
  std::uint64_t tf32_rna_low_bits_set = 0;
  /// NaN inputs whose cvt.rna.tf32.f32 result is no NaN once masked to 19 bits: an mma would
  /// read them as inf (informational; tf32_rna counts them only where the masked round_tf32
  /// result is NaN).
  std::uint64_t tf32_rna_nan_lost = 0;

  /// cvt.rn/.rz.tf32.f32 need sm_90: false (and tf32_rn, tf32_rz zero) on older devices.
  bool tf32_rn_rz_checked = false;

  std::uint32_t first_bad_fp16_rn = 0;
  std::uint32_t first_bad_fp16_rz = 0;
  std::uint32_t first_bad_tf32_rna = 0;
  std::uint32_t first_bad_tf32_rn = 0;
  std::uint32_t first_bad_tf32_rz = 0;
  std::uint32_t first_bad_bf16_rn = 0;
  std::uint32_t first_bad_split = 0;
  /// Smallest pattern that failed any comparison (0 when none failed).
  std::uint32_t first_bad_pattern = 0;

  /// Sum of the mismatch counters (the informational tf32_rna_low_bits_set excluded).
  std::uint64_t total_mismatches() const {
    return fp16_rn + fp16_rz + tf32_rna + tf32_rn + tf32_rz + bf16_rn + split_mismatch;
  }
};

/// Runs one kernel over all 2^32 FP32 bit patterns (well under a second on an H100) and counts
/// where the shared host+device rounding helpers (rounding.hpp, split.hpp) and the hardware
/// conversions disagree. Synchronizes.
ConversionCheck compare_with_hardware();

// ---------------------------------------------------------------------------------------------
// BLAS's C = beta C
// ---------------------------------------------------------------------------------------------

/// C = beta C for the m x n column-major d_C (leading dimension ldc >= max(1, m)) on ctx's
/// stream, as BLAS leaves C when k = 0 or alpha = 0: beta == 0 sets C to 0 without reading it,
/// beta == 1 does nothing. Returns once enqueued.
void scale_matrix(Context& ctx, int m, int n, float beta, float* d_C, int ldc);
/// The same with beta in device memory (cuBLAS's device pointer mode), read by the kernel.
void scale_matrix(Context& ctx, int m, int n, const float* d_beta, float* d_C, int ldc);

// ---------------------------------------------------------------------------------------------
// Timing and the FP64 reference (gemm-bench)
// ---------------------------------------------------------------------------------------------

/// Device-side stopwatch: a pair of CUDA events recorded on one stream.
///   timer.start(); <enqueue work>; const float ms = timer.stop_ms();
/// measures the device time between the two records; stop() and elapsed_ms() apart let more
/// work be enqueued before anything waits. Move-only.
class EventTimer {
 public:
  /// Creates the two events, recorded on `stream` (nullptr: the legacy default stream); throws
  /// CudaError (Unavailable without CUDA).
  explicit EventTimer(CUstream_st* stream = nullptr);
  ~EventTimer();
  EventTimer(EventTimer&&) noexcept;
  EventTimer& operator=(EventTimer&&) noexcept;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  /// Records the start event.
  void start();
  /// Records the stop event, waits for it and returns the milliseconds since start(); throws
  /// CudaError if work enqueued in between failed. stop() then elapsed_ms().
  float stop_ms();
  /// Records the stop event (nothing waits).
  void stop();
  /// Waits for the stop event and returns the milliseconds between the two records.
  float elapsed_ms();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// d_C64 (m x n, column-major, leading dimension m, FP64 device array) = op(A) * op(B) computed
/// in FP64 (cuBLAS DGEMM on FP64 copies of the FP32 inputs): the reference C64 of
/// docs/architecture.md on the device. d_A, d_B: device FP32, stored column-major with lda, ldb
/// (op(A) is m x k, op(B) is k x n). Enqueued on ctx's stream with its cuBLAS handle and FP64
/// workspace; returns once enqueued.
/// With d_C0 (m x n FP32, leading dimension m): d_C64 = alpha op(A) op(B) + beta C0 in FP64.
void reference_product_device(Context& ctx, Op ta, Op tb, int m, int n, int k, const float* d_A, int lda,
                              const float* d_B, int ldb, double* d_C64, double alpha = 1.0,
                              const float* d_C0 = nullptr, double beta = 0.0);

/// The accuracy metrics of metrics.hpp, computed on the device.
struct ErrorMetrics {
  double relative_residual = 0;   ///< ||C - C64||_F / ||C64||_F
  double max_relative_error = 0;  ///< max |C - C64| / |C64| over C64 != 0 (inf, NaN as below)
};

/// relative_residual() and max_relative_error() of metrics.hpp for device arrays d_C (m x n,
/// FP32, leading dimension ldc) and d_C64 (m x n, FP64, leading dimension m), with the same
/// special cases: max_relative_error is NaN when the first (column-major) entry that is NaN or
/// has C64 == 0 != C is a NaN, inf when it is the latter. One reduction kernel on `stream`;
/// waits for it. Sums are taken in a different order than on the host, so the last bits may
/// differ.
ErrorMetrics error_metrics_device(const float* d_C, int ldc, const double* d_C64, int m, int n,
                                  CUstream_st* stream = nullptr);

/// The points (A, k x m) of nearest_columns with ec-fp16 or auto scaled and split to FP16 once,
/// for repeated calls against changing B (K-means: the points stay, the centroids move): each
/// call then scales and splits B only. The labels are bitwise those of nearest_columns(ctx,
/// variant, m, n, k, d_A, ...) with the same options. Owns 4 (m + 127)(k + 63) bytes (and m + 1
/// ints) of device memory. ec-fp16: d_A is not used after the constructor, which enqueues the
/// split on ctx.stream(). auto: d_A must stay valid while the object is used: a call whose
/// centroids make auto choose TF32 splits the points again from it.
class NearestPoints {
 public:
  /// Whether this device and build run it (Hopper's wgmma kernels with ec_chunk_k 32).
  static bool available(const GemmOptions& options = {});
  /// Device bytes it owns for m x k points.
  static std::size_t bytes(int m, int k);
  /// Throws Unavailable where !available(options), InvalidInput for bad sizes or a variant other
  /// than ec-fp16 and auto.
  NearestPoints(Context& ctx, int m, int k, const float* d_A, int lda, const GemmOptions& options = {},
                Variant variant = Variant::ec_fp16);
  int m() const { return m_; }
  int k() const { return k_; }
  Variant variant() const { return variant_; }
  const float* points() const { return a_; }  ///< d_A (auto's TF32 calls read it)
  int lda() const { return lda_; }
  const unsigned char* split() const { return split_.data(); }
  const int* shift() const { return shift_.data(); }
  const int* range() const { return shift_.data() + m_; }  ///< the rows' largest exponent range

 private:
  int m_, k_;
  Variant variant_;
  const float* a_;
  int lda_;
  DeviceBuffer<unsigned char> split_;  // hi, then lo
  DeviceBuffer<int> shift_;            // m shifts, then the range
};

/// nearest_columns(ctx, points.variant(), points.m(), n, points.k(), A, ...) on prepared points;
/// GemmInfo::resolved says what auto chose.
GemmInfo nearest_columns(Context& ctx, const NearestPoints& points, int n, const float* d_B, int ldb,
                         const double* d_weights, int* d_labels, unsigned long long* d_changed,
                         const GemmOptions& options = {});

}  // namespace tcsolve::cuda
