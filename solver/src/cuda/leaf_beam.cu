// The leaf of beam's LU (Pivoting::beam; blocked_lu.cpp's factorize_beam runs it, cpu/blocked_lu.cpp's
// factorize_beam_lu is the reference): columns c0..c0+w-1 (w <= 32) over the rows of the leaf's
// diagonal block from c0 down (at most kMaxBeamWindow = 512), ONE CTA, a thread per row holding
// its 32 values in registers, and the block panel's largest |entry| (block_max_abs) for the
// threshold of the modified pivots.
//
// Why a kernel of its own: rbt's window kernel (leaf_rbt.cu) in beam's place took 55 us a leaf at
// n = 16384 (1.7 us a column; 28.4 of the 51 ms panel, session 31), as long as partial pivoting's
// cluster kernel per column. Its column step had two barriers and every warp reduced the warps'
// candidates one by one from shared memory (a chain of up to 16 dependent loads). Here a column
// step has ONE barrier:
//   1. each warp takes its candidate with one redux.sync over the keys (bits of |a| + 1, 0 for a
//      retired or absent row: the largest magnitude; then the lowest lane with it, by ballot, so
//      ties go to the lower row as Eigen's maxCoeff takes them) and its winning lane stages its
//      whole row, key, row and origin into the warp's slot; the thread of row k stages its row
//      too (the exchange's other half);
//   2. __syncthreads (slots alternate by the column's parity, so that column k + 1's writes
//      never meet column k's reads: a warp that writes column k + 2's slot has passed column
//      k + 1's barrier, which every warp reached after its reads of column k);
//   3. every warp reduces the slots' keys (one redux.sync and a ballot: the lowest warp, i.e.
//      the lowest row, among the largest), reads the winner's row from its slot (float4
//      broadcasts), modifies a pivot not above the threshold (each thread the same way; the
//      owner records it), the two threads of the exchange swap rows, and every live row below
//      k is eliminated in registers: l = a / pivot, a(c) = fma(-l, u(c), a(c)), the cpu's
//      arithmetic (tests/test_beam_cuda.cpp checks it bitwise against a host emulation).
// The register columns rotate by one each step (the step's column is always v[0]), as rbt's
// window kernel does: one loop body for every column.
// Measured (H200, n = 16384, session 31): 34 us a leaf, 1.07 us a column (predicted 0.25 us
// from the instruction count): about partial pivoting's cluster kernel per column; the chain's
// latency sets the pace, not the rows it searches (docs/design.md, "Session 31").
// At the end the rows go back in place (the pivot of step i at row c0 + i), the window's
// permutation as (dst, src) pairs for apply_row_pairs_in_block.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "kernels.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kW = kMaxLeafWidth;  // 32
constexpr int kWarps = kMaxBeamWindow / 32;
constexpr unsigned kFull = 0xffffffffu;
static_assert(kMaxBeamWindow % 32 == 0 && kMaxBeamWindow <= 1024, "a window is one CTA, a thread per row");

/// v[0..32) = the 32 floats at `row` (16-byte aligned), by 8 float4 loads.
__device__ __forceinline__ void load_row(float (&v)[kW], const float* row) {
  const float4* src = reinterpret_cast<const float4*>(row);
#pragma unroll
  for (int q = 0; q < kW / 4; ++q) {
    const float4 x = src[q];
    v[4 * q] = x.x;
    v[4 * q + 1] = x.y;
    v[4 * q + 2] = x.z;
    v[4 * q + 3] = x.w;
  }
}

/// row[0..32) = v, by 8 float4 stores (row 16-byte aligned).
__device__ __forceinline__ void store_row(float* row, const float (&v)[kW]) {
  float4* dst = reinterpret_cast<float4*>(row);
#pragma unroll
  for (int q = 0; q < kW / 4; ++q) dst[q] = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
}

struct BeamLeaf {
  const unsigned* block_max_bits;
  double factor;
  float zero_panel_tiny;
  BeamModificationList list;
};

__global__ void __launch_bounds__(kMaxBeamWindow, 1)
    beam_window_kernel(float* __restrict__ a, int ld, int c0, int w, int rows, bool vector_io, BeamLeaf beam,
                       int* __restrict__ pairs, int* __restrict__ info) {
  __shared__ __align__(16) float slot_row[2][kWarps][kW];
  __shared__ unsigned slot_key[2][kWarps];
  __shared__ int slot_at[2][kWarps], slot_orig[2][kWarps];
  __shared__ __align__(16) float k_row[2][kW];
  __shared__ int k_orig[2];
  __shared__ int moved;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
  const bool mine = t < rows;
  if (t == 0) moved = 0;
  const float block_max = __uint_as_float(*beam.block_max_bits);
  const float tiny = block_max > 0 ? static_cast<float>(beam.factor * static_cast<double>(block_max))
                                   : beam.zero_panel_tiny;  // the cpu's threshold
  float v[kW];
  int orig = t;
  float* row = a + static_cast<std::size_t>(c0 + (mine ? t : 0)) * ld + c0;
  if (mine && vector_io) {
    load_row(v, row);
  } else {
#pragma unroll
    for (int c = 0; c < kW; ++c) v[c] = (mine && c < w) ? row[c] : 0.0f;
  }
#pragma unroll 1
  for (int k = 0; k < w; ++k) {
    const int b = k & 1;
    const bool live = mine && t >= k;
    if (live && !isfinite(v[0])) atomicCAS(info, 0, c0 + k + 1);  // the cpu's breakdown
    // 1. the warp's candidate: the largest |a|, the lowest lane among equals
    const unsigned key = live ? __float_as_uint(fabsf(v[0])) + 1u : 0u;
    const unsigned top = __reduce_max_sync(kFull, key);
    const unsigned winners = __ballot_sync(kFull, key == top);
    if (lane == __ffs(winners) - 1) {
      slot_key[b][warp] = top;  // 0: no live row in this warp
      slot_at[b][warp] = t;
      slot_orig[b][warp] = orig;
      store_row(slot_row[b][warp], v);
    }
    if (t == k) {
      store_row(k_row[b], v);
      k_orig[b] = orig;
    }
    __syncthreads();
    // 3. the CTA's winner: the largest key, the lowest warp among equals (row k is live: some key > 0)
    const unsigned slot = lane < warps ? slot_key[b][lane] : 0u;
    const unsigned best = __reduce_max_sync(kFull, slot);
    const int q = __ffs(__ballot_sync(kFull, slot == best && lane < warps)) - 1;
    const int p = slot_at[b][q];
    const float old_pivot = slot_row[b][q][0];
    float pivot = old_pivot;
    if (!(fabsf(pivot) > tiny)) {  // modified: the threshold with the pivot's sign (0: +)
      pivot = old_pivot < 0 ? -tiny : tiny;
      if (t == p) {
        const int s = atomicAdd(beam.list.count, 1);
        if (s < beam.list.capacity) {
          beam.list.columns[s] = c0 + k;
          beam.list.deltas[s] = static_cast<double>(pivot) - static_cast<double>(old_pivot);
        }
      }
    }
    if (t == k) {  // row k becomes the pivot row
      load_row(v, slot_row[b][q]);
      v[0] = pivot;
      orig = slot_orig[b][q];
    } else if (t == p) {  // the pivot's old place takes row k
      load_row(v, k_row[b]);
      orig = k_orig[b];
    }
    if (live && t > k) {  // the elimination: l = a / pivot, a(c) -= l u(c) for the leaf's columns right of k
      const float l = v[0] / pivot;
      v[0] = l;
      const int active = w - k;  // v[1..active) are the leaf's columns right of k
      const float4* u = reinterpret_cast<const float4*>(slot_row[b][q]);
#pragma unroll
      for (int c4 = 0; c4 < kW / 4; ++c4) {
        const float4 x = u[c4];
        const float uc[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int c = 4 * c4 + e;
          if (c >= 1 && c < active) v[c] = fmaf(-l, uc[e], v[c]);
        }
      }
    }
    const float done = v[0];  // rotate: column k + 1 to v[0], column k to the end
#pragma unroll
    for (int c = 0; c + 1 < kW; ++c) v[c] = v[c + 1];
    v[kW - 1] = done;
  }
  if (mine) {  // after w rotations column c sits at v[(c - w) mod 32]
    if (vector_io) {  // w == 32: no rotation left over
      store_row(row, v);
    } else {
#pragma unroll
      for (int q = 0; q < kW; ++q) {
        const int c = (q + w) & (kW - 1);
        if (c < w) row[c] = v[q];
      }
    }
  }
  if (mine && orig != t) {  // the window's permutation as (dst, src) pairs, in any order
    const int m = atomicAdd(&moved, 1);
    pairs[1 + m] = c0 + t;
    pairs[1 + 2 * w + m] = c0 + orig;
  }
  __syncthreads();
  if (t == 0) pairs[0] = moved;
}

__global__ void block_max_kernel(const float* __restrict__ a, int ld, int r0, int r1, int c0, int w,
                                 unsigned* __restrict__ bits) {
  unsigned m = 0;
  const long long count = static_cast<long long>(r1 - r0) * w;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int r = r0 + static_cast<int>(e / w), c = c0 + static_cast<int>(e % w);
    m = max(m, __float_as_uint(fabsf(a[static_cast<std::size_t>(r) * ld + c])));
  }
  m = __reduce_max_sync(kFull, m);
  if ((threadIdx.x & 31) == 0) atomicMax(bits, m);
}

}  // namespace

void factor_beam_window(CUstream_st* stream, float* a, int ld, int c0, int w, int rows, const unsigned* block_max_bits,
                        double factor, float zero_panel_tiny, int* pairs, int* info, BeamModificationList list) {
  if (w < 1 || w > kW || rows < w || rows > kMaxBeamWindow)
    throw InvalidInput("factor_beam_window: a leaf of 1..32 columns and w <= rows <= kMaxBeamWindow");
  if (block_max_bits == nullptr || list.count == nullptr)
    throw InvalidInput("factor_beam_window: no block maximum or modification list");
  // whole 16-byte rows: float4 loads and stores
  const bool vector_io = w == kW && ld % 4 == 0 && c0 % 4 == 0 && reinterpret_cast<std::size_t>(a) % 16 == 0;
  beam_window_kernel<<<1, ceil_div(rows, 32) * 32, 0, stream>>>(
      a, ld, c0, w, rows, vector_io, BeamLeaf{block_max_bits, factor, zero_panel_tiny, list}, pairs, info);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void block_max_abs(CUstream_st* stream, const float* a, int ld, int r0, int r1, int c0, int w, unsigned* bits) {
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof(unsigned), stream));
  if (r1 <= r0 || w < 1) return;
  const long long count = static_cast<long long>(r1 - r0) * w;
  const int blocks = static_cast<int>(std::min<long long>(264, (count + 255) / 256));
  block_max_kernel<<<blocks, 256, 0, stream>>>(a, ld, r0, r1, c0, w, bits);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
