// cuda::nearest_columns (gemm.hpp): the nearest column of B for every column of A, the argmin
// fused into the GEMM so that the m x n distance block is never stored (K-means' assignment).
//   ec-fp16, ec-tf32, auto   the ec path's wgmma kernels (ec_gemm.cu -> wgmma_production) with
//                            GemmArgs::nearest set: their epilogue keeps each row's minimum in
//                            registers over the row's tiles (wgmma_gemm.cu, kNearest);
//   fp32-simt                nearest_simt_kernel below: FP32 FMAs in k order on the CUDA cores,
//                            128 x 128 tiles, 8 x 8 per thread, the same argmin epilogue.
// NearestPoints: ec-fp16's or auto's points scaled and split once (wgmma_prepare_points), then
// each call splits B alone and runs the same kernels on them (wgmma_nearest_prepared).
// The score is weights[j] - 2 D(i, j) in FP64 (2 D is exact: one rounding); the minimum is the
// lexicographic (score, j), which no merge order changes, so the lowest j wins ties.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <algorithm>
#include <climits>
#include <string>

#include "backend.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device_guard.hpp"
#include "tcsolve/runtime/error.hpp"
#include "wgmma_gemm.hpp"

namespace tcsolve::cuda {
namespace {

constexpr int kTile = 128;         ///< points and centroids per tile
constexpr int kDepth = 8;          ///< k per shared-memory step
constexpr int kSide = 16;          ///< threads per tile side: 16 x 16 threads, 8 x 8 values each
constexpr int kPer = kTile / kSide;
constexpr int kSimtThreads = kSide * kSide;

/// (s, j) < (best, best_j) lexicographically: a NaN score never wins.
__device__ __forceinline__ bool nearer(double s, int j, double best, int best_j) {
  return s < best || (s == best && j < best_j);
}

/// Loads k [k0, k0 + 8) of the 128 vectors from v0 (column-major, vector v at V + v ld) into
/// tile[kk][v]; outside the matrix 0.
__device__ __forceinline__ void load_tile(float (&tile)[kDepth][kTile + 4], const float* V, int ld, int count,
                                          int k, int v0, int k0) {
  for (int idx = threadIdx.x; idx < kDepth * kTile; idx += kSimtThreads) {
    const int v = idx / kDepth, kk = idx % kDepth;  // a vector's 8 values on adjacent threads
    const int gv = v0 + v, gk = k0 + kk;
    tile[kk][v] = gv < count && gk < k ? V[static_cast<std::size_t>(gv) * ld + gk] : 0.0f;
  }
}

/// One block per row of tiles at a time (persistent over rows): thread (tx, ty) holds points
/// ty + 16 r and centroids tx + 16 c (r, c < 8) of each 128 x 128 tile.
__global__ void __launch_bounds__(kSimtThreads)
    nearest_simt_kernel(int m, int n, int k, const float* __restrict__ A, int lda, const float* __restrict__ B,
                        int ldb, const double* __restrict__ weights, int* __restrict__ labels,
                        unsigned long long* __restrict__ changed) {
  __shared__ float sa[kDepth][kTile + 4];
  __shared__ float sb[kDepth][kTile + 4];
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;
  const int tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
  for (int tm = blockIdx.x; tm < tiles_m; tm += gridDim.x) {
    double best[kPer];
    int best_j[kPer];
#pragma unroll
    for (int r = 0; r < kPer; ++r) best[r] = CUDART_INF, best_j[r] = INT_MAX;
    for (int tn = 0; tn < tiles_n; ++tn) {
      float acc[kPer][kPer];
#pragma unroll
      for (int r = 0; r < kPer; ++r)
#pragma unroll
        for (int c = 0; c < kPer; ++c) acc[r][c] = 0.0f;
      for (int k0 = 0; k0 < k; k0 += kDepth) {
        load_tile(sa, A, lda, m, k, tm * kTile, k0);
        load_tile(sb, B, ldb, n, k, tn * kTile, k0);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kDepth; ++kk) {
          float a[kPer], b[kPer];
#pragma unroll
          for (int r = 0; r < kPer; ++r) a[r] = sa[kk][ty + kSide * r];
#pragma unroll
          for (int c = 0; c < kPer; ++c) b[c] = sb[kk][tx + kSide * c];
#pragma unroll
          for (int r = 0; r < kPer; ++r)
#pragma unroll
            for (int c = 0; c < kPer; ++c) acc[r][c] = __fmaf_rn(a[r], b[c], acc[r][c]);  // k ascending
        }
        __syncthreads();
      }
#pragma unroll
      for (int c = 0; c < kPer; ++c) {  // the thread's columns ascending, strict <
        const int gj = tn * kTile + tx + kSide * c;
        if (gj >= n) break;
        const double w = weights[gj];
#pragma unroll
        for (int r = 0; r < kPer; ++r) {
          const double s = w - 2.0 * static_cast<double>(acc[r][c]);
          if (s < best[r]) best[r] = s, best_j[r] = gj;
        }
      }
    }
    // the 16 threads of a point (adjacent lanes tx) merge; tx == 0 writes
    int moved = 0;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
#pragma unroll
      for (int off = 1; off < kSide; off *= 2) {
        const double s = __shfl_xor_sync(0xffffffffu, best[r], off);
        const int j = __shfl_xor_sync(0xffffffffu, best_j[r], off);
        if (nearer(s, j, best[r], best_j[r])) best[r] = s, best_j[r] = j;
      }
      const int gi = tm * kTile + ty + kSide * r;
      if (tx == 0 && gi < m) {
        const int label = best_j[r] == INT_MAX ? 0 : best_j[r];
        moved += labels[gi] != label;
        labels[gi] = label;
      }
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) moved += __shfl_xor_sync(0xffffffffu, moved, off);
    if (threadIdx.x % 32 == 0 && moved != 0) atomicAdd(changed, static_cast<unsigned long long>(moved));
  }
}

/// The wgmma kernels' nearest-column call: args in impl's context with the epilogue `nearest`,
/// the call's workspaces and its phases around `launch` (the kernels; returns the GemmInfo).
template <typename Launch>
GemmInfo run_wgmma_nearest(Context::Impl& impl, detail::GemmArgs& args, const detail::NearestArgs& nearest,
                           Launch launch) {
  args.ctx = &impl;
  args.wgmma = true;
  args.nearest = &nearest;
  const CallWorkspaces workspaces(impl);
  impl.phases.clear();
  GemmInfo info = launch();
  info.phases = std::move(impl.phases);
  impl.phases.clear();
  return info;
}

bool wgmma_ec(const GemmOptions& options) {
  return options.cuda_kernels != CudaKernels::mma && detail::wgmma_available() && options.ec_chunk_k == 32 &&
         options.ec_chunk_k_tf32 % 32 == 0;
}

}  // namespace

bool nearest_columns_available(Variant variant, const GemmOptions& options) {
  if (!device_available()) return false;
  switch (variant) {
    case Variant::fp32_simt: return true;
    case Variant::ec_fp16:
    case Variant::ec_tf32:
    case Variant::auto_: return wgmma_ec(options);
    default: return false;
  }
}

GemmInfo nearest_columns(Context& ctx, Variant variant, int m, int n, int k, const float* d_A, int lda,
                         const float* d_B, int ldb, const double* d_weights, int* d_labels,
                         unsigned long long* d_changed, const GemmOptions& options) {
  check_gemm_arguments(Op::t, Op::n, m, n, k, lda, ldb, m);  // D = A^T B, m x n
  if (!nearest_columns_available(variant, options))
    throw Unavailable("nearest_columns: no fused kernel for " + std::string(to_string(variant)) + " on " +
                      device_name() +
                      " (ec-fp16, ec-tf32 and auto need Hopper's wgmma kernels with ec_chunk_k 32; fp32-simt runs "
                      "everywhere)");
  const tcsolve::detail::DeviceGuard on_device(ctx.device());
  Context::Impl& impl = ctx.impl();
  GemmInfo info{variant, variant, Backend::cuda, {}, CudaKernels::mma};
  if (variant == Variant::fp32_simt) {
    const int tiles_m = (m + kTile - 1) / kTile;
    const int grid = std::min(tiles_m, 8 * impl.sm_count());
    nearest_simt_kernel<<<grid, kSimtThreads, 0, impl.stream>>>(m, n, k, d_A, lda, d_B, ldb, d_weights, d_labels,
                                                                d_changed);
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
    return info;
  }
  const detail::NearestArgs nearest{d_weights, d_labels, d_changed, options.nearest_resident_points};
  detail::GemmArgs args{Op::t, Op::n, m, n, k, 1.0f, d_A, lda, d_B, ldb, 0.0f, nullptr, m};
  return run_wgmma_nearest(impl, args, nearest, [&] { return detail::ec_gemm(variant, args, options); });
}

bool NearestPoints::available(const GemmOptions& options) { return device_available() && wgmma_ec(options); }

std::size_t NearestPoints::bytes(int m, int k) {
  return detail::prepared_points_bytes(m, k) + (static_cast<std::size_t>(m) + 1) * sizeof(int);
}

NearestPoints::NearestPoints(Context& ctx, int m, int k, const float* d_A, int lda, const GemmOptions& options,
                             Variant variant)
    : m_(m), k_(k), variant_(variant), a_(d_A), lda_(lda) {
  check_gemm_arguments(Op::t, Op::n, m, 1, k, lda, k, m);
  if (variant != Variant::ec_fp16 && variant != Variant::auto_)
    throw InvalidInput("NearestPoints: prepared points serve ec-fp16 and auto, not " + std::string(to_string(variant)));
  if (!available(options))
    throw Unavailable("NearestPoints: prepared points need Hopper's wgmma kernels with ec_chunk_k 32 (" +
                      device_name() + ")");
  const tcsolve::detail::DeviceGuard on_device(ctx.device());
  split_ = DeviceBuffer<unsigned char>(detail::prepared_points_bytes(m, k));
  shift_ = DeviceBuffer<int>(static_cast<std::size_t>(m) + 1);
  detail::GemmArgs args{Op::t, Op::n, m, 1, k, 1.0f, d_A, lda, nullptr, k, 0.0f, nullptr, m};
  args.ctx = &ctx.impl();
  const detail::PreparedPoints layout = detail::prepared_points(split_.data(), shift(), range(), m, k);
  detail::wgmma_prepare_points(args, split_.data(), const_cast<unsigned char*>(layout.lo), shift_.data(),
                               shift_.data() + m);
}

GemmInfo nearest_columns(Context& ctx, const NearestPoints& points, int n, const float* d_B, int ldb,
                         const double* d_weights, int* d_labels, unsigned long long* d_changed,
                         const GemmOptions& options) {
  const int m = points.m(), k = points.k();
  check_gemm_arguments(Op::t, Op::n, m, n, k, points.lda(), ldb, m);
  if (!NearestPoints::available(options))
    throw Unavailable("nearest_columns on prepared points: needs Hopper's wgmma kernels with ec_chunk_k 32 (" +
                      device_name() + ")");
  const tcsolve::detail::DeviceGuard on_device(ctx.device());
  Context::Impl& impl = ctx.impl();
  const detail::NearestArgs nearest{d_weights, d_labels, d_changed, options.nearest_resident_points};
  detail::GemmArgs args{Op::t, Op::n, m, n, k, 1.0f, points.points(), points.lda(), d_B, ldb, 0.0f, nullptr, m};
  return run_wgmma_nearest(impl, args, nearest, [&] {
    // shift_b (n ints), then auto's ranges and flag (3 ints)
    int* ws = static_cast<int*>(
        impl.take(detail::GemmWorkspaces::of(impl).scaling, (static_cast<std::size_t>(n) + 3) * sizeof(int)));
    const bool fp16 = detail::wgmma_nearest_prepared(
        points.variant(), args, detail::prepared_points(points.split(), points.shift(), points.range(), m, k),
        options.ec_chunk_k_tf32 / 8, ws, ws + n, ws + n + 2);  // TF32 k-steps of 8
    return GemmInfo{points.variant(), fp16 ? Variant::ec_fp16 : Variant::ec_tf32, Backend::cuda, {},
                    CudaKernels::wgmma};
  });
}

}  // namespace tcsolve::cuda
