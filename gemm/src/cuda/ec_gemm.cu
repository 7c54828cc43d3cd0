// The ec path (ec-fp16, ec-tf32, auto: the project's production GEMM) on the cuda backend: the
// exact power-of-two scaling of rows of op(A) and columns of op(B) (scaling.hpp) computed on the
// device, auto's FP16/TF32 choice (kept on the device with DeviceAuto), and the kernels that
// run the scaled products:
//   Hopper, ec_chunk_k 32   wgmma_production (wgmma_gemm.cu): the scaling fused into the split,
//                           or (GemmOptions::ec_scaling) the ranges found first by one launch
//                           over both operands (ranges_kernel, after one fill), the shifts then
//                           finished by the split pass; batches in one launch, k split into
//                           ranges (batch.hpp); auto's choice made by the FP16 main kernel when
//                           it stays on the device; the launches replayed from the context's
//                           cached graphs with GemmOptions::cuda_launch (launch_graphs.hpp);
//   otherwise               the scaling kernels below, then the FP16 path (the wgmma ec scheme
//                           for chunks of 2 k-steps, else mma.sync halfhalf_fp16_shared) and/or
//                           the TF32 path (the wgmma halfhalf_tiles scheme for whole k-tiles,
//                           else mma.sync halfhalf_tf32); auto queues both, gated by its flag.
// The workspace (exponent ranges, shifts, the flag) is the context's `scaling` scratch.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>

#include "backend.hpp"
#include "exponent_range.cuh"
#include "launch_graphs.hpp"
#include "mma_gemm.hpp"
#include "tcsolve/gemm/scaling.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "wgmma_gemm.hpp"

namespace tcsolve::cuda::detail {
namespace {

constexpr int kFp16Steps = 16, kTf32Steps = 8;  ///< k of one mma k-step: FP16, TF32

/// exponent_of(x) of the nonzero finite elements into emax[v] / emin[v] (atomics; initialised
/// to INT_MIN / INT_MAX). Threads map to consecutive v when estride != 1 (coalesced when the
/// vectors interleave) and the length is split over gridDim.y (fold_range: exponent_range.cuh).
__global__ void exponent_range_kernel(const float* X, std::size_t vstride, std::size_t estride, int count,
                                      int len, int* emax, int* emin) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= count) return;
  const int per = ceil_div(len, static_cast<int>(gridDim.y));
  const int q0 = blockIdx.y * per, q1 = min(len, q0 + per);
  int hi = INT_MIN, lo = INT_MAX;
  fold_range(X, v * vstride, estride, q0, q1, 1, hi, lo);
  if (hi != INT_MIN) {
    atomicMax(emax + v, hi);
    atomicMin(emin + v, lo);
  }
}

/// The same for vectors stored contiguously (estride 1): one warp per vector and part of its
/// length (the length split over gridDim.y, as above).
__global__ void exponent_range_contiguous_kernel(const float* X, std::size_t vstride, int count, int len,
                                                 int* emax, int* emin) {
  const int v = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (v >= count) return;
  const int per = ceil_div(ceil_div(len, static_cast<int>(gridDim.y)), 32) * 32;
  const int q0 = blockIdx.y * per, q1 = min(len, q0 + per);
  int hi = INT_MIN, lo = INT_MAX;
  fold_range(X, v * vstride, 1, q0 + threadIdx.x % 32, q1, 32, hi, lo);
  for (int off = 16; off > 0; off /= 2) {
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
  }
  if (threadIdx.x % 32 == 0 && hi != INT_MIN) {
    atomicMax(emax + v, hi);
    atomicMin(emin + v, lo);
  }
}

/// shift[v] = scale_exponent(...) for every vector, and the largest range into *max_range[which].
__global__ void finish_scaling_kernel(const int* emax, const int* emin, int count, int* shift,
                                      int* max_range) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= count) return;
  const bool any = emax[v] != INT_MIN;
  shift[v] = scale_exponent(any, emax[v]);
  if (any) atomicMax(max_range, emax[v] - emin[v]);
}

/// One operand of ranges_kernel: `count` vectors of the call's length, at X + v ld (contiguous,
/// elements adjacent) or X + v (elements ld apart), the length split over `split` of gridDim.y.
struct RangeOperand {
  const float* X;
  int ld;
  bool contiguous;
  int count, split, blocks;  ///< blocks: along the vectors (gridDim.x's share)
  unsigned *hi_keys, *lo_keys;
};

/// The production path's ranges (both operands in one launch: blocks [0, a.blocks) take op(A))
/// as keys (wgmma_gemm.hpp, zero-filled first); an operand's vectors are folded as in
/// exponent_range_contiguous_kernel (a warp per vector) or exponent_range_kernel (a thread per
/// vector).
__global__ void ranges_kernel(RangeOperand a, RangeOperand b, int len) {
  const bool first = static_cast<int>(blockIdx.x) < a.blocks;
  // field by field: a reference chosen between two parameters puts both on every thread's stack
  const RangeOperand op{first ? a.X : b.X,         first ? a.ld : b.ld,         first ? a.contiguous : b.contiguous,
                        first ? a.count : b.count, first ? a.split : b.split,   first ? a.blocks : b.blocks,
                        first ? a.hi_keys : b.hi_keys, first ? a.lo_keys : b.lo_keys};
  const int bx = first ? static_cast<int>(blockIdx.x) : static_cast<int>(blockIdx.x) - a.blocks;
  if (static_cast<int>(blockIdx.y) >= op.split) return;
  int hi = INT_MIN, lo = INT_MAX, v = 0;
  if (op.contiguous) {
    v = bx * (blockDim.x / 32) + threadIdx.x / 32;
    if (v >= op.count) return;  // the whole warp
    const int per = ceil_div(ceil_div(len, op.split), 32) * 32;
    const int q0 = blockIdx.y * per, q1 = min(len, q0 + per);
    fold_range(op.X, static_cast<std::size_t>(v) * op.ld, 1, q0 + threadIdx.x % 32, q1, 32, hi, lo);
    for (int off = 16; off > 0; off /= 2) {
      hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
      lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
    }
    if (threadIdx.x % 32 != 0) return;
  } else {
    v = bx * blockDim.x + threadIdx.x;
    if (v >= op.count) return;
    const int per = ceil_div(len, op.split);
    const int q0 = blockIdx.y * per, q1 = min(len, q0 + per);
    fold_range(op.X, static_cast<std::size_t>(v), static_cast<std::size_t>(op.ld), q0, q1, 1, hi, lo);
  }
  if (hi != INT_MIN) {
    atomicMax(op.hi_keys + v, hi_key(hi));
    atomicMax(op.lo_keys + v, lo_key(lo));
  }
}

/// The production path's scaling, found first (one member): keys (hi keys of the m + n
/// vectors, then lo keys) and max_range[0..2) right after them, cleared by one fill, then the
/// ranges in one launch; wgmma_production's split pass finishes the shifts from them.
void compute_range_keys(const GemmArgs& g, unsigned* keys) {
  const int total = g.m + g.n;
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(keys, 0, (2 * static_cast<std::size_t>(total) + 2) * sizeof(unsigned), g.stream()));
  auto operand = [&](const float* X, int ld, bool contiguous, int count, unsigned* hi) {
    RangeOperand o{X, ld, contiguous, count, 1, 0, hi, hi + total};
    if (contiguous)
      o.split = std::max(1, std::min(64, g.k / 2048)), o.blocks = ceil_div(count, 8);
    else
      o.split = std::max(1, std::min(64, g.k / 64)), o.blocks = ceil_div(count, 256);
    return o;
  };
  const RangeOperand a = operand(g.A, g.lda, g.ta == Op::t, g.m, keys);
  const RangeOperand b = operand(g.B, g.ldb, g.tb == Op::n, g.n, keys + g.m);
  ranges_kernel<<<dim3(a.blocks + b.blocks, std::max(a.split, b.split)), 256, 0, g.stream()>>>(a, b, g.k);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

__global__ void init_ranges_kernel(int* emax, int* emin, int count, int* max_range) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < count) emax[v] = INT_MIN, emin[v] = INT_MAX;
  if (v < 2) max_range[v] = 0;
}

__global__ void auto_choice_kernel(const int* max_range, int* use_fp16) {
  *use_fp16 = auto_uses_fp16(max_range[0], max_range[1]) ? 1 : 0;
}

/// Fills shift_a[0..m), shift_b[0..n) and max_range[0..2) (ranges of op(A) rows, op(B) columns).
void compute_scaling(const GemmArgs& g, int* emax, int* emin, int* shift_a, int* shift_b, int* max_range) {
  const int total = g.m + g.n;
  init_ranges_kernel<<<ceil_div(total, 256), 256, 0, g.stream()>>>(emax, emin, total, max_range);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  auto ranges = [&](const float* X, int ld, bool contiguous, int count, int len, int* hi, int* lo) {
    if (contiguous) {  // vector v at X + v*ld, elements adjacent; long vectors split over gridDim.y
      const int split = std::max(1, std::min(64, len / 2048));
      exponent_range_contiguous_kernel<<<dim3(ceil_div(count, 8), split), 256, 0, g.stream()>>>(X, ld, count,
                                                                                                len, hi, lo);
    } else {  // vector v at X + v, elements ld apart
      const int split = std::max(1, std::min(64, len / 64));
      exponent_range_kernel<<<dim3(ceil_div(count, 256), split), 256, 0, g.stream()>>>(X, 1, ld, count, len,
                                                                                       hi, lo);
    }
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
  };
  ranges(g.A, g.lda, g.ta == Op::t, g.m, g.k, emax, emin);              // rows of op(A)
  ranges(g.B, g.ldb, g.tb == Op::n, g.n, g.k, emax + g.m, emin + g.m);  // columns of op(B)
  finish_scaling_kernel<<<ceil_div(g.m, 256), 256, 0, g.stream()>>>(emax, emin, g.m, shift_a, max_range);
  finish_scaling_kernel<<<ceil_div(g.n, 256), 256, 0, g.stream()>>>(emax + g.m, emin + g.m, g.n, shift_b,
                                                                    max_range + 1);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

GemmInfo ec_gemm(Variant variant, const GemmArgs& g, const GemmOptions& options) {
  if (options.ec_chunk_k < 16 || options.ec_chunk_k % 16 != 0)
    throw InvalidInput("ec_chunk_k must be a positive multiple of 16, got " +
                       std::to_string(options.ec_chunk_k));
  if (options.ec_chunk_k_tf32 < 8 || options.ec_chunk_k_tf32 % 8 != 0)
    throw InvalidInput("ec_chunk_k_tf32 must be a positive multiple of 8, got " +
                       std::to_string(options.ec_chunk_k_tf32));
  GemmInfo info{variant, variant, Backend::cuda, {}, CudaKernels::mma};
  const bool hopper = g.wgmma;        // the sm_90a wgmma kernels (GemmOptions::cuda_kernels)
  auto wgmma = [&](auto&&... args) {  // wgmma_gemm, reported in GemmInfo::kernels
    info.kernels = CudaKernels::wgmma;
    wgmma_gemm(args...);
  };
  const bool production = hopper && options.ec_chunk_k == 32 && options.ec_chunk_k_tf32 % 32 == 0;
  if (g.batch.count != 1 && !production)
    throw Unavailable("a batched product in one launch runs on the wgmma production path only");
  // every member's shifts (the other paths: one member)
  const std::size_t total = (static_cast<std::size_t>(g.m) + g.n) * g.batch.count;
  const std::size_t ws_bytes = (3 * total + 3) * sizeof(int);
  GemmArgs h = g;
  if (production)  // k split by the batch's shape (never with the nearest epilogue)
    h.split = g.nearest != nullptr ? KSplit{} : ec_k_split(g.m, g.n, g.k, g.batch.count, options.split_k);
  // production: the ints and wgmma_production's workspace in one allocation (a stream-ordered
  // one costs the caller's thread about a microsecond and a free, docs/BENCHMARKS.md session 32)
  const std::size_t ints_bytes = (ws_bytes + 255) / 256 * 256;
  int* ws = production ? static_cast<int*>(g.ctx->take(GemmWorkspaces::of(*g.ctx).split,
                                                       ints_bytes + wgmma_production_bytes(variant, h)))
                       : static_cast<int*>(g.ctx->take(GemmWorkspaces::of(*g.ctx).scaling, ws_bytes));
  // max_range right after emin: compute_range_keys clears them together
  int *emax = ws, *emin = ws + total, *max_range = ws + 2 * total, *flag = max_range + 2, *shift = flag + 1;
  if (production) {  // fused scaling and split
    info.kernels = CudaKernels::wgmma;
    info.split_k = h.split.count;
    // GemmOptions::ec_scaling: with a long k the fused kernel's blocks (whole rows each) hold too
    // few of them to fill the GPU, so the ranges are found first (ranges_kernel, parallel along
    // k too) and the split is tile-parallel: measured faster for single products with k > 1024
    // (H200, docs/BENCHMARKS.md session 30: 768 x 4096 x 3072 0.171 against 0.184 ms fused),
    // slower at k = 1024, where the fused kernel stages its rows in shared memory (1024 x 16384
    // x 1024 0.212 against 0.236 ms). The same shifts and splits: the same bits either way.
    const bool may_separate = g.batch.count == 1 && g.nearest == nullptr;
    const bool shifts_first = may_separate && (options.ec_scaling == EcScaling::separate ||
                                               (options.ec_scaling == EcScaling::automatic && g.k > 1024));
    unsigned* keys = shifts_first ? reinterpret_cast<unsigned*>(emax) : nullptr;  // emax, emin, max_range
    bool fp16 = true;
    auto launches = [&] {
      if (shifts_first) {
        PhaseTimer phases(h);
        phases.mark("scaling");
        compute_range_keys(h, keys);
      }
      fp16 = wgmma_production(variant, h, options.ec_chunk_k_tf32 / kTf32Steps, shift, max_range, flag, keys,
                              reinterpret_cast<unsigned char*>(ws) + ints_bytes);
    };
    // GemmOptions::cuda_launch: a graph holds launches only (no wait for auto's choice, no timings)
    const bool graphs = options.cuda_launch == CudaLaunch::cached_graphs && !g.ctx->time_phases &&
                        g.nearest == nullptr && (variant != Variant::auto_ || g.auto_on_device);
    if (graphs)
      info.from_graph = LaunchGraphs::of(*g.ctx).run(
          *g.ctx, product_key(variant, h, ws, options.ec_chunk_k_tf32, shifts_first), launches);
    else
      launches();
    if (variant == Variant::auto_) {
      if (g.auto_on_device)
        info.note = "auto: FP16/TF32 chosen on the device";
      else
        info.resolved = fp16 ? Variant::ec_fp16 : Variant::ec_tf32;
    }
    return info;
  }
  {
    PhaseTimer phases(g);
    phases.mark("scaling");
    compute_scaling(g, emax, emin, shift, shift + g.m, max_range);
  }
  MmaScaling s16, s32;
  s16.shift_a = s32.shift_a = shift;
  s16.shift_b = s32.shift_b = shift + g.m;
  s16.chunk_steps = options.ec_chunk_k / kFp16Steps;
  s32.chunk_steps = options.ec_chunk_k_tf32 / kTf32Steps;
  // the wgmma ec kernel double-buffers chunks of 2 k-steps; other chunks run on mma.sync
  auto fp16_path = [&](const int* flag_or_null) {
    if (hopper && s16.chunk_steps == 2)
      wgmma(WgmmaScheme::ec, false, g, 2, s16.shift_a, s16.shift_b, flag_or_null);
    else
      mma_gemm(MmaKernel::halfhalf_fp16_shared, g, s16);
  };
  // ec-tf32 is tf32tf32 with the hi*hi chunk; whole k-tiles on the wgmma kernel
  auto tf32_path = [&](const int* flag_or_null) {
    if (hopper && s32.chunk_steps % 4 == 0)
      wgmma(WgmmaScheme::halfhalf_tiles, true, g, s32.chunk_steps, s32.shift_a, s32.shift_b, flag_or_null);
    else
      mma_gemm(MmaKernel::halfhalf_tf32, g, s32);
  };
  if (variant == Variant::ec_fp16) {
    fp16_path(nullptr);
  } else if (variant == Variant::ec_tf32) {
    tf32_path(nullptr);
  } else {
    // auto: the choice is made on the device; both kernels are queued and the one not chosen
    // returns at its first instruction. The flag is read back for GemmInfo (unless
    // g.auto_on_device: no synchronisation).
    auto_choice_kernel<<<1, 1, 0, g.stream()>>>(max_range, flag);
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
    s16.use_fp16 = s32.use_fp16 = flag;
    s16.want_fp16 = 1, s32.want_fp16 = 0;
    fp16_path(flag);
    tf32_path(flag);
    if (g.auto_on_device) {
      info.note = "auto: FP16/TF32 chosen on the device";
    } else {
      int chose_fp16 = 0;
      TCSOLVE_CUDA_CHECK(
          cudaMemcpyAsync(&chose_fp16, flag, sizeof chose_fp16, cudaMemcpyDeviceToHost, g.stream()));
      TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(g.stream()));
      info.resolved = chose_fp16 ? Variant::ec_fp16 : Variant::ec_tf32;
    }
  }
  return info;
}

}  // namespace tcsolve::cuda::detail
