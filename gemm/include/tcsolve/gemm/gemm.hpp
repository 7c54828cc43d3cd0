// Public GEMM API of tcsolve::gemm: one signature, two backends (cpu emulation, cuda).
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tcsolve/gemm/batch.hpp"
#include "tcsolve/gemm/rounding.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/where.hpp"

namespace tcsolve {

enum class Op { n, t };

/// Model of the accumulator inside a tensor core (Ootomo & Yokota, Sec. 3.2, mma_rz / mma_rn):
/// products exact; after every addition the running sum is kept to `acc_bits` significand
/// bits, truncated (rz) or rounded (rn); the final addition of the C operand is rounded to the
/// output format with `rounding` (FP32 output) or `fp16_output_rounding` (FP16 output).
/// Vendors do not document the unit. Defaults from `tcsolve probe` on an H100 (2026-11-22,
/// docs/BENCHMARKS.md): FP16/BF16/TF32 -> FP32 mma.sync results carry all 23 mantissa bits and
/// never exceed the exact sum of positive products (truncation), consistent with the paper's
/// 25-bit RZ accumulator; FP16 -> FP16 results round to nearest.
struct TcModel {
  int acc_bits = 25;
  Rounding rounding = Rounding::rz;
  Rounding fp16_output_rounding = Rounding::rn;
};

/// The kernel family of the cuda backend's tensor-core variants (GemmOptions::cuda_kernels).
enum class CudaKernels { automatic, wgmma, mma };
std::string_view to_string(CudaKernels k);  ///< "automatic", "wgmma", "mma"
CudaKernels parse_cuda_kernels(std::string_view name);  ///< inverse of to_string; InvalidInput

/// How the ec path on the Hopper kernels finds its power-of-two scaling (GemmOptions::ec_scaling).
enum class EcScaling { automatic, fused, separate };

/// How the cuda production path enqueues its kernels (GemmOptions::cuda_launch).
enum class CudaLaunch { direct, cached_graphs };

struct GemmOptions {
  TcModel model{};
  /// ec-fp16: number of k (a multiple of 16) over which lo*hi, hi*lo and hi*hi are accumulated
  /// inside the tensor core from zero before the partial sum is added outside in FP32 RN. 32
  /// is two wgmma k-steps: the Hopper kernel double-buffers the partial sums at that chunk
  /// (other values run on the mma.sync kernel). Chunk 64 measured up to 2.25x the blocked
  /// Eigen FP32 residual on exp_rand(-15,14), 32 at most 1.7x (docs/design.md).
  int ec_chunk_k = 32;
  /// ec-tf32 (Ootomo's tf32tf32 on the scaled operands: lo scaled by 2^11 and lo*hi + hi*lo in
  /// their own accumulator): k (a multiple of 8) of hi*hi accumulated inside before the outside
  /// add. 32 is one k-tile of the Hopper kernel.
  int ec_chunk_k_tf32 = 32;
  /// cuda: which kernels run the tensor-core variants. automatic (the production path): the
  /// Hopper wgmma kernels where the device is sm_90 and the build carries sm_90a code, else the
  /// mma.sync kernels; mma: the mma.sync kernels everywhere (to compare; their accumulation
  /// order differs, so results may differ in the last bits). Reported in GemmInfo::kernels.
  CudaKernels cuda_kernels = CudaKernels::automatic;
  /// cuda::nearest_columns on the wgmma kernels: each row block's points (A's FP16/TF32 hi and
  /// lo k-tiles) loaded once into shared memory and kept for the row's tiles, so that only the
  /// centroids stream from L2 (where the k-tiles fit: k <= 256 at FP16, 128 at TF32). The same
  /// products in the same order: the same labels. Off until measured.
  bool nearest_resident_points = false;
  /// The ec path (ec-fp16, ec-tf32, auto): k split into ranges whose sums are added in FP32
  /// (batch.hpp: the rule, its error bound). 0 automatic: calls with fewer than 128 output
  /// tiles of 128 x 128 (over the batch) are split, by their shape alone; 1 never; c >= 2 into
  /// c ranges. On cuda the Hopper wgmma kernels split (the mma.sync kernels and the nearest
  /// epilogue never do); the cpu emulation splits alike. The effective count is in
  /// GemmInfo::split_k.
  int split_k = 0;
  /// cuda, the ec path on the wgmma kernels: fused, each block of the split pass owns whole
  /// rows (or columns), finds their exponent ranges and splits them (one kernel; up to k = 3072
  /// the rows are staged in shared memory and read once, beyond twice); separate, the ranges
  /// first by one launch that also splits k among blocks, then a tile-parallel split that
  /// finishes the scaling; automatic, separate for one product (not a batch) with k > 1024
  /// (measured faster there), else fused. The same shifts and splits either way, so the same
  /// bits. Batches and the nearest epilogue always fuse.
  EcScaling ec_scaling = EcScaling::automatic;
  /// cuda, the ec path on the wgmma kernels (its production path): direct, each kernel launched
  /// by the call (4-5 us of the calling thread each; auto's product makes four); cached_graphs,
  /// the call's launches kept as a CUDA graph in a cache of the Context, keyed by every argument
  /// (pointers, sizes, scalars, options, the workspace's address, the stream): a call is
  /// captured the second time its exact arguments come and replayed by one graph launch from the
  /// third. Not while the caller's stream is being captured, with Context::time_phases, or where
  /// auto reads its choice back. The same kernels with the same parameters: the same bits.
  /// Reported in GemmInfo::from_graph. The drop-in sets it (TCSOLVE_HOOK_GRAPHS).
  CudaLaunch cuda_launch = CudaLaunch::direct;
  /// cpu: polled by the emulated products between blocks of output columns (well under a second
  /// apart); when it reads true the call throws Interrupted with C unspecified. nullptr: never.
  /// The caller owns the flag (another thread or a signal handler sets it).
  const std::atomic<bool>* interrupt = nullptr;
};

/// cuda, auto: the FP16/TF32 choice of a call stays on the device (the solver's trailing
/// updates). Both paths are launched, gated by the device's flag, instead of reading the choice
/// back (which waits for the stream): the call returns without synchronizing, and
/// GemmInfo::resolved is Variant::auto_ with a note saying so.
struct DeviceAuto {
  /// On Hopper (the wgmma kernels): when not null, only the FP16 path is launched (gated as
  /// above); a call whose flag chooses TF32 then leaves C as it was and sets *tf32_needed
  /// (device memory) to 1: the caller checks it and redoes that work (the solver's LU factors
  /// again without it). Saves the gated TF32 split and kernel launches of every call that stays
  /// on FP16. Elsewhere ignored (both paths run).
  int* tf32_needed = nullptr;
};

/// What actually ran.
struct GemmInfo {
  Variant requested = Variant::fp32_simt;
  Variant resolved = Variant::fp32_simt;  ///< differs for auto (ec-fp16 / ec-tf32) and fallbacks
  Backend backend = Backend::cpu;
  std::string note;  ///< fallback explanation, empty when none
  /// cuda: the kernel family that ran the tensor-core part (wgmma or mma; automatic for the
  /// cuBLAS and SIMT variants and on the cpu).
  CudaKernels kernels = CudaKernels::automatic;
  /// The ec path's k ranges (GemmOptions::split_k) that ran: 1 when k was not split.
  int split_k = 1;
  /// cuda: the call's kernels ran as one cached CUDA graph (GemmOptions::cuda_launch).
  bool from_graph = false;
  /// cuda with Context::time_phases(): the device seconds of the call's phases, in order.
  std::vector<std::pair<std::string, double>> phases;
};

/// C (m x n) = alpha * op(A) * op(B) + beta * C, column-major as in BLAS: op(A) is m x k, op(B)
/// is k x n; lda, ldb, ldc are the leading dimensions of the stored A, B, C. When beta == 0, C
/// is not read. Pointers are host memory for the cpu backend and device memory for cuda.
/// Backend::automatic means cuda when a usable GPU is present, else cpu. On cuda this makes a
/// Context for the call (the default stream; handles and workspaces made and freed each time)
/// and waits for it: convenient for one product; call cuda::gemm with your own Context for
/// repeated ones.
/// Throws InvalidInput for bad sizes or leading dimensions, Unavailable when `variant` has no
/// implementation on the backend.
GemmInfo gemm(Backend backend, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha,
              const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
              const GemmOptions& options = {});

/// The same on `where` (tcsolve/runtime/where.hpp, the one "where" argument of the entry
/// points): Where() the cpu backend (host pointers); Where(context) cuda::gemm in that context
/// (device pointers; returns once enqueued, as cuda::gemm does). A group is refused
/// (InvalidInput): one product runs on one device.
GemmInfo gemm(const runtime::Where& where, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha,
              const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
              const GemmOptions& options = {});

/// cuda when a usable GPU is present (and the build has CUDA), else cpu; explicit choices pass.
Backend resolve_backend(Backend requested);

/// Whether `variant` runs on the (resolved) backend `backend` in this build on this machine.
bool available(Variant variant, Backend backend);

/// Checks sizes and leading dimensions; throws InvalidInput naming the bad argument.
void check_gemm_arguments(Op ta, Op tb, int m, int n, int k, int lda, int ldb, int ldc);
/// Checks a batch (batch.hpp) of m x n outputs: count >= 0, the three arrays or none, strided
/// members' C apart; throws InvalidInput naming `who` and the problem.
void check_batch(const Batch& batch, int m, int n, int ldc, const char* who);

namespace cpu {
/// The reference backend: Eigen for fp64/fp32-simt, faithful emulation for the rest.
GemmInfo gemm(Variant variant, Op ta, Op tb, int m, int n, int k, float alpha, const float* A,
              int lda, const float* B, int ldb, float beta, float* C, int ldc,
              const GemmOptions& options = {});
/// A batch (batch.hpp; host pointers and host arrays): each member as gemm above, with the
/// k-splitting of the whole batch's shape (as cuda::gemm_batched splits it). The ec variants'
/// scaling is per member; auto chooses FP16 or TF32 once for the batch (TF32 when any member
/// needs it), as on cuda. Returns the last member's GemmInfo (count 0: nothing runs).
GemmInfo gemm_batched(Variant variant, Op ta, Op tb, int m, int n, int k, float alpha, const float* A, int lda,
                      const float* B, int ldb, float beta, float* C, int ldc, const Batch& batch,
                      const GemmOptions& options = {});
/// The reference of cuda::nearest_columns (see there; host arrays): labels[i] = argmin_j
/// (weights[j] - 2 D(i, j)) with D = A^T B, *changed (when not null) += the labels changed.
/// ec-fp16, ec-tf32, auto: D bitwise cpu::gemm's with split_k 1 (auto resolved once over the whole
/// operands); fp32-simt: FP32 FMAs in k order (the cuda SIMT kernel's D, not Eigen's). Throws
/// Unavailable for the other variants, InvalidInput as cuda::nearest_columns.
GemmInfo nearest_columns(Variant variant, int m, int n, int k, const float* A, int lda, const float* B, int ldb,
                         const double* weights, int* labels, long long* changed, const GemmOptions& options = {});
}  // namespace cpu

namespace cuda {
// device_available(), device_name(), runtime_versions(), device_memory(): tcsolve/runtime/device.hpp.
/// Same contract as tcsolve::gemm with device pointers, enqueued on ctx.stream() with ctx's
/// handles, workspaces and SM budget. Returns once the work is enqueued, except for auto
/// without `on_device`, which reads its FP16/TF32 choice back (waits for ctx.stream()).
GemmInfo gemm(Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha,
              const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
              const GemmOptions& options = {}, const DeviceAuto* on_device = nullptr);
/// alpha and beta in device memory (cuBLAS's device pointer mode): the kernels read them, the
/// host never does. beta's value decides in the kernel whether C is read (0: not read).
struct DeviceScalars {
  const float* alpha = nullptr;
  const float* beta = nullptr;
};
/// The same with device scalars; the ec variants only (ec-fp16, ec-tf32, auto): InvalidInput
/// for the others and Unavailable on a device without their tensor cores. For k = 0 (BLAS: C =
/// beta C) use scale_matrix with the device beta.
GemmInfo gemm(Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k, const DeviceScalars& scalars,
              const float* A, int lda, const float* B, int ldb, float* C, int ldc,
              const GemmOptions& options = {}, const DeviceAuto* on_device = nullptr);
/// A batch (batch.hpp) with device pointers (and device arrays of them). ec-fp16, ec-tf32 and
/// auto on the Hopper wgmma kernels run the whole batch in one split pass and one main kernel
/// whose tiles come from every member (and k ranges: GemmOptions::split_k); each member is
/// then bitwise the single product with the same split count, but for auto, which chooses
/// FP16 or TF32 once for the batch (TF32 when any member needs it). The other variants and
/// kernels run the members one after the other. Enqueued on ctx.stream() as gemm.
GemmInfo gemm_batched(Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha,
                      const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
                      const Batch& batch, const GemmOptions& options = {}, const DeviceAuto* on_device = nullptr);
/// The same with device scalars (the ec variants only, as gemm with DeviceScalars).
GemmInfo gemm_batched(Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k,
                      const DeviceScalars& scalars, const float* A, int lda, const float* B, int ldb, float* C,
                      int ldc, const Batch& batch, const GemmOptions& options = {},
                      const DeviceAuto* on_device = nullptr);
/// Whether the cuda backend implements `variant` in this build.
bool implements(Variant variant);

/// The nearest column (K-means' assignment) fused into the GEMM: with D = A^T B (A k x m,
/// lda >= k; B k x n, ldb >= k; column-major device arrays: the points and the centroids one per
/// column), for every i < m
///   d_labels[i] = argmin_j (d_weights[j] - 2 D(i, j)),
/// the score in FP64 from the FP32 D(i, j), the lowest j on ties, NaN and +inf scores never
/// winning (0 when no score wins); d_changed (one counter) += the i whose d_labels[i] differed
/// before. D is never stored. What D(i, j) is, by variant:
///   ec-fp16, ec-tf32, auto: bitwise the D of gemm(ctx, variant, Op::t, Op::n, m, n, k, 1, A,
///       lda, B, ldb, 0, C, m, options) with options.split_k = 1 (the epilogue needs whole
///       rows, so k is never split here): the ec kernels with the argmin in their epilogue
///       (Hopper's wgmma kernels with ec_chunk_k 32 and ec_chunk_k_tf32 a multiple of 32);
///   fp32-simt: FP32 FMAs in k order on the CUDA cores (not bitwise cuBLAS SGEMM's D).
/// nearest_columns_available says where it runs: else Unavailable, and the caller runs gemm and
/// its own argmin. Enqueued on ctx.stream(); auto reads its FP16/TF32 choice back (waits).
/// Throws InvalidInput for m, n or k < 1 or a leading dimension below k.
GemmInfo nearest_columns(Context& ctx, Variant variant, int m, int n, int k, const float* d_A, int lda,
                         const float* d_B, int ldb, const double* d_weights, int* d_labels,
                         unsigned long long* d_changed, const GemmOptions& options = {});
/// Whether nearest_columns serves `variant` with `options` on this device and build.
bool nearest_columns_available(Variant variant, const GemmOptions& options = {});
}  // namespace cuda

}  // namespace tcsolve
