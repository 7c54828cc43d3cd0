// The refinement's FP64 residual of a small system in one launch (kernels::small_residual,
// CudaLuPlan::residuals kernel): r = b - A x and the two norms the assessment reads back (max
// |r_i|, max |x_i|) per right-hand side, where cuBLAS takes four launches (a copy of b, dgemv,
// two column maxima: 17 us at n = 200 on an H200, session 35, for a few microseconds of loads).
// Session 36's version, a thread per row in one cooperative launch, took 20.7 us.
//
// One cluster per right-hand side (small_cluster.cuh: kSmallClusterBlocks blocks of 1024 threads
// where the device runs it, else one block), two phases:
//   partial  each thread one task (row i, part q of 32 columns: cpu/small_residual.hpp's parts):
//            p_q(i), the fma chain over the part's columns (consecutive threads take consecutive
//            rows: coalesced reads of the column-major A), written to `scratch`;
//   combine  after the cluster's barrier the first block forms r_i = b_i - p_0(i) - p_1(i) - ...
//            in order, a thread a row, and the maxima of |r_i| and |x_i| (warp shuffles, then
//            shared memory; a NaN kept).
// Every sum's order is fixed by n alone: r and the norms are bitwise cpu/small_residual.hpp's
// small_residual_reference, whose header gives the rounding-error bound.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "../cpu/small_residual.hpp"
#include "kernels.hpp"
#include "nan_max.cuh"
#include "small_cluster.cuh"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kThreads = kSmallClusterThreads;
constexpr int kPart = cpu::kSmallResidualPart;
static_assert(kSmallResidualMaxN < kThreads, "the combining block has a thread a row");

/// The maximum over the block (nan_max) of every thread's v, in thread 0 (warp shuffles, then
/// the 32 warps' maxima through `shared`).
__device__ __forceinline__ double block_nan_max(double v, double* shared) {
  for (int offset = 16; offset > 0; offset /= 2) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, offset));
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = shared[lane];
    for (int offset = 16; offset > 0; offset /= 2) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, offset));
  }
  return v;
}

__global__ void __launch_bounds__(kThreads, 1)
    small_residual_kernel(const double* __restrict__ a, int n, const double* __restrict__ b,
                          const double* __restrict__ x, double* __restrict__ r, double* __restrict__ norms,
                          int nrhs, double* __restrict__ scratch) {
  const int column = static_cast<int>(blockIdx.y);
  const std::size_t at = static_cast<std::size_t>(column) * static_cast<std::size_t>(n);
  const int parts = cpu::small_residual_parts(n);
  double* partial = scratch + at * static_cast<std::size_t>(parts);  // parts x n, row fastest
  const double* xc = x + at;
  const int tasks = n * parts;
  for (int task = static_cast<int>(blockIdx.x) * kThreads + static_cast<int>(threadIdx.x); task < tasks;
       task += static_cast<int>(gridDim.x) * kThreads) {
    const int i = task % n, q = task / n;
    const int j1 = min(n, (q + 1) * kPart);
    double s = 0;
#pragma unroll 8
    for (int j = q * kPart; j < j1; ++j) s = fma(a[i + static_cast<std::size_t>(j) * n], __ldg(xc + j), s);
    partial[i + static_cast<std::size_t>(q) * n] = s;
  }
  small_cluster_sync();
  if (blockIdx.x != 0) return;
  __shared__ double shared[2][32];
  double r_max = 0, x_max = 0;
  const int i = static_cast<int>(threadIdx.x);
  if (i < n) {
    double ri = b[at + i];
    for (int q = 0; q < parts; ++q) ri -= __ldcg(partial + i + static_cast<std::size_t>(q) * n);
    r[at + i] = ri;
    r_max = fabs(ri);
    x_max = fabs(xc[i]);
  }
  r_max = block_nan_max(r_max, shared[0]);
  x_max = block_nan_max(x_max, shared[1]);
  if (threadIdx.x == 0) {
    norms[column] = r_max;
    norms[nrhs + column] = x_max;
  }
}

}  // namespace

std::size_t small_residual_scratch_doubles(int n, int nrhs) {
  if (n < 1 || nrhs < 1) return 0;
  return static_cast<std::size_t>(n) * static_cast<std::size_t>(cpu::small_residual_parts(n)) *
         static_cast<std::size_t>(nrhs);
}

void small_residual(CUstream_st* stream, const double* a, int n, const double* b, const double* x, double* r,
                    double* norms, int nrhs, double* scratch) {
  if (n < 1 || n > kSmallResidualMaxN || nrhs < 1 || nrhs > kSmallResidualMaxRhs)
    throw InvalidInput("small_residual: n = " + std::to_string(n) + ", nrhs = " + std::to_string(nrhs) +
                       " (it takes 1 <= n <= " + std::to_string(kSmallResidualMaxN) +
                       ", 1 <= nrhs <= " + std::to_string(kSmallResidualMaxRhs) + ")");
  const void* kernel = reinterpret_cast<const void*>(small_residual_kernel);
  void* args[] = {&a, &n, &b, &x, &r, &norms, &nrhs, &scratch};
  launch_small_cluster(kernel, stream, small_cluster_blocks(kernel), nrhs, args);
}

int small_residual_blocks() {
  return small_cluster_blocks(reinterpret_cast<const void*>(small_residual_kernel));
}

}  // namespace tcsolve::cuda::kernels
