// The split pass of the Hopper wgmma GEMM (wgmma_gemm.cu's step 1): the kernels that scale op(A)
// and op(B) by the ec powers of two and split them into FP16 (or TF32) hi / lo matrices, K
// contiguous and zero-padded to whole tiles:
//   split_pass_kernel          one 32 x 64 tile per block, both operands in one launch; the
//                              shifts given, or finished here from the ranges' keys (the
//                              separate scaling order);
//   scale_split_kernel         the fused order: a block owns 32 whole rows, finds their ranges
//                              and splits them, reading them twice from global memory;
//   scale_split_staged_kernel  the fused order with the block's 16 rows staged in shared memory
//                              (every load in flight at once), up to kp = kMaxStagedK.
// Included once, by wgmma_gemm.cu (its anonymous namespace), after the PTX wrappers.
#pragma once

#include <climits>
#include <cstddef>

#include "exponent_range.cuh"
#include "tc_split.cuh"
#include "tcsolve/gemm/scaling.hpp"
#include "wgmma_gemm.hpp"

namespace tcsolve::cuda::detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Split pass
// ---------------------------------------------------------------------------------------------

constexpr int kSplitRows = 32, kSplitK = 64, kSplitThreads = 256;

using SplitTile = float[kSplitRows][kSplitK + 1];

/// Loads rows [r0, r0 + 32) x k [k0, k0 + 64) of op(X) into the tile: element (r, k) of op(X)
/// is X[k + r ld] when k_inner, else X[r + k ld]; out-of-range elements are 0. Consecutive
/// threads walk the stored matrix's contiguous dimension.
/// All of a thread's loads are issued before its first shared-memory store (the loop was bound
/// by one load's latency per element otherwise).
__device__ __forceinline__ void load_split_tile(SplitTile& tile, const float* X, int ld, bool k_inner, int rows,
                                                int k, int r0, int k0) {
  constexpr int kPer = kSplitRows * kSplitK / kSplitThreads;
  float v[kPer];
#pragma unroll
  for (int u = 0; u < kPer; ++u) {
    const int idx = threadIdx.x + u * kSplitThreads;
    const int r = k_inner ? idx / kSplitK : idx % kSplitRows;
    const int kk = k_inner ? idx % kSplitK : idx / kSplitRows;
    const int gr = r0 + r, gk = k0 + kk;
    v[u] = gr < rows && gk < k ? __ldg(k_inner ? X + gk + static_cast<std::size_t>(gr) * ld
                                               : X + gr + static_cast<std::size_t>(gk) * ld)
                               : 0.0f;
  }
#pragma unroll
  for (int u = 0; u < kPer; ++u) {
    const int idx = threadIdx.x + u * kSplitThreads;
    tile[k_inner ? idx / kSplitK : idx % kSplitRows][k_inner ? idx % kSplitK : idx / kSplitRows] = v[u];
  }
}

/// The tile, row r multiplied by 2^shift(r), split (or rounded) into hi (and lo) FP16 (kTf32:
/// TF32) rows of length kp at row r0 and column k0.
template <Transform T, bool kTf32, typename Shift>
__device__ __forceinline__ void store_split_tile(const SplitTile& tile, Shift shift, int r0, int k0, int kp,
                                                 unsigned* hi, unsigned* lo) {
  if constexpr (kTf32) {
    for (int idx = threadIdx.x; idx < kSplitRows * kSplitK; idx += kSplitThreads) {
      const int r = idx / kSplitK, kk = idx % kSplitK;
      unsigned h, l;
      tf32_one<T>(tile[r][kk] * shift(r), h, l);
      const std::size_t w = static_cast<std::size_t>(r0 + r) * kp + k0 + kk;
      hi[w] = h;
      if constexpr (T != Transform::round) lo[w] = l;
    }
  } else {
    for (int idx = threadIdx.x; idx < kSplitRows * kSplitK / 2; idx += kSplitThreads) {
      const int r = idx / (kSplitK / 2), pr = idx % (kSplitK / 2);
      const float s = shift(r);
      unsigned h, l;
      fp16_pair<T>(tile[r][2 * pr] * s, tile[r][2 * pr + 1] * s, h, l);
      const std::size_t w = (static_cast<std::size_t>(r0 + r) * kp + k0) / 2 + pr;
      hi[w] = h;
      if constexpr (T != Transform::round) lo[w] = l;
    }
  }
}

/// The members of a batched operand: member b is array[b] (when not null) or X + b stride;
/// its split rows start at row b rows_p of hi and lo, its shifts at shift + b rows.
struct MemberLayout {
  long long stride = 0;
  const float* const* array = nullptr;
  int rows_p = 0;
  __device__ __forceinline__ const float* member(const float* X, int b) const {
    return array != nullptr ? array[b] : X + b * stride;
  }
};

/// One operand of split_pass_kernel.
struct SplitOperand {
  const float* X;
  int ld;
  bool k_inner;
  int rows;
  /// The ec scaling exponents of every member's rows (nullptr: none). With hi_keys, they are
  /// found here: from the rows' ranges (hi_keys / lo_keys, wgmma_gemm.hpp; one member), written to shift by the
  /// blocks of the first k-tile, and the largest range into *max_range (when not null).
  int* shift;
  const unsigned* hi_keys;
  const unsigned* lo_keys;
  int* max_range;
  unsigned *hi, *lo;
  MemberLayout layout;  ///< batches; layout.rows_p: the padded rows of one member
};

/// a or b, field by field: a reference chosen at run time between two kernel parameters made
/// the compiler copy both to a stack frame in every thread (192 bytes: the split pass 5x
/// slower, session 30).
__device__ __forceinline__ MemberLayout pick(bool first, const MemberLayout& a, const MemberLayout& b) {
  return MemberLayout{first ? a.stride : b.stride, first ? a.array : b.array, first ? a.rows_p : b.rows_p};
}
__device__ __forceinline__ SplitOperand pick(bool first, const SplitOperand& a, const SplitOperand& b) {
  return SplitOperand{first ? a.X : b.X,
                      first ? a.ld : b.ld,
                      first ? a.k_inner : b.k_inner,
                      first ? a.rows : b.rows,
                      first ? a.shift : b.shift,
                      first ? a.hi_keys : b.hi_keys,
                      first ? a.lo_keys : b.lo_keys,
                      first ? a.max_range : b.max_range,
                      first ? a.hi : b.hi,
                      first ? a.lo : b.lo,
                      pick(first, a.layout, b.layout)};
}

/// Split pass of both operands in one launch (blocks [0, blocks_a) take op(A), the rest op(B)):
/// one 32 x 64 tile per block, blocks along k first, then rows, then members. use_fp16 (auto):
/// runs when (*use_fp16 != 0) != kTf32.
template <Transform T, bool kTf32>
__global__ void __launch_bounds__(kSplitThreads) split_pass_kernel(SplitOperand a_op, SplitOperand b_op,
                                                                    long long blocks_a, int k, int kp,
                                                                    const int* use_fp16) {
  if (use_fp16 != nullptr && (*use_fp16 != 0) == kTf32) return;  // auto chose the other format
  const bool first = static_cast<long long>(blockIdx.x) < blocks_a;
  const SplitOperand op = pick(first, a_op, b_op);
  const long long local = first ? blockIdx.x : blockIdx.x - blocks_a;
  __shared__ SplitTile tile;
  __shared__ float factor[kSplitRows];
  const int rows = op.rows;
  const int k_blocks = kp / kSplitK, row_blocks = op.layout.rows_p / kSplitRows;
  const int kb = static_cast<int>(local % k_blocks);
  const long long rest = local / k_blocks;
  const int b = static_cast<int>(rest / row_blocks);
  const int r0 = static_cast<int>(rest % row_blocks) * kSplitRows, k0 = kb * kSplitK;
  if (threadIdx.x < kSplitRows) {
    const int gr = r0 + threadIdx.x;
    float f = 1.0f;
    if (op.shift != nullptr && gr < rows) {
      int* member_shift = op.shift + static_cast<std::size_t>(b) * rows;
      if (op.hi_keys != nullptr) {  // the scaling finished here (as finish_scaling_kernel)
        const int emax = hi_of_key(op.hi_keys[gr]), emin = lo_of_key(op.lo_keys[gr]);
        const bool any = emax != INT_MIN;
        const int s = scale_exponent(any, emax);
        if (kb == 0) {
          member_shift[gr] = s;
          if (op.max_range != nullptr && any) atomicMax(op.max_range, emax - emin);
        }
        f = scale_factor(s);
      } else {
        f = scale_factor(member_shift[gr]);
      }
    }
    factor[threadIdx.x] = f;
  }
  load_split_tile(tile, op.layout.member(op.X, b), op.ld, op.k_inner, rows, k, r0, k0);
  __syncthreads();
  store_split_tile<T, kTf32>(tile, [&](int r) { return factor[r]; }, b * op.layout.rows_p + r0, k0, kp, op.hi,
                             op.lo);
}

/// The ec scaling and the split in one kernel: each block owns 32 whole rows of op(X). Pass 1
/// reads them and finds each row's exponent range (as exponent_range_kernel: nonzero finite
/// elements), so the row's scaling exponent (scale_exponent) is known without a grid-wide
/// step; it is written to shift[row], and the largest range to *max_range (atomicMax; auto).
/// Pass 2 reads the rows again (from L2 when they fit) and splits them scaled.
/// One operand of scale_split_kernel.
struct ScaleSplitOperand {
  const float* X;
  int ld;
  bool k_inner;
  int rows;
  int* shift;
  int* max_range;
  unsigned *hi, *lo;
  MemberLayout layout;  ///< batches; layout.rows_p: the padded rows of one member
};

__device__ __forceinline__ ScaleSplitOperand pick(bool first, const ScaleSplitOperand& a, const ScaleSplitOperand& b) {
  return ScaleSplitOperand{first ? a.X : b.X,         first ? a.ld : b.ld,
                           first ? a.k_inner : b.k_inner, first ? a.rows : b.rows,
                           first ? a.shift : b.shift, first ? a.max_range : b.max_range,
                           first ? a.hi : b.hi,       first ? a.lo : b.lo,
                           pick(first, a.layout, b.layout)};
}

/// Both operands in one launch (blocks [0, blocks_a) take op(A), the rest op(B)), so that the
/// two halves fill the GPU together.
/// range_slots (auto on the device, in place of max_range's atomicMax and the fill it needs):
/// block b writes the largest range of its rows to range_slots[b] (0 when none), and the FP16
/// main kernel takes the maxima of blocks [0, blocks_a) and of the rest (MainParams::choose_slots).
template <Transform T, bool kTf32>
__global__ void __launch_bounds__(kSplitThreads) scale_split_kernel(ScaleSplitOperand a_op,
                                                                     ScaleSplitOperand b_op, int blocks_a, int k,
                                                                     int kp, int* range_slots) {
  const bool first = static_cast<int>(blockIdx.x) < blocks_a;
  const ScaleSplitOperand op = pick(first, a_op, b_op);
  const int ld = op.ld, rows = op.rows;
  const bool k_inner = op.k_inner;
  int* max_range = op.max_range;
  unsigned *hi = op.hi, *lo = op.lo;
  __shared__ SplitTile tile;
  __shared__ float factor[kSplitRows];
  const int local = first ? static_cast<int>(blockIdx.x) : static_cast<int>(blockIdx.x) - blocks_a;
  const int row_blocks = op.layout.rows_p / kSplitRows;
  const int member = local / row_blocks;
  const int r0 = (local % row_blocks) * kSplitRows;
  const float* X = op.layout.member(op.X, member);
  int* shift = op.shift + static_cast<std::size_t>(member) * rows;
  const int out_r0 = member * op.layout.rows_p + r0;  // the member's rows in hi and lo
  // Pass 1 straight from global memory (a range is order-free: no shared tile, no barrier per
  // k-step, so the loads of successive steps overlap): eight threads a row, each folding every
  // eighth element (fold_range, eight loads in flight); k_inner rows are contiguous (a row's
  // eight threads are adjacent lanes reading adjacent elements), else thread r of each warp
  // takes row r, so a warp reads 32 adjacent rows of one column. The eight partial ranges of a
  // row meet in shared memory.
  __shared__ int row_hi[kSplitRows], row_lo[kSplitRows];
  if (threadIdx.x < kSplitRows) row_hi[threadIdx.x] = INT_MIN, row_lo[threadIdx.x] = INT_MAX;
  __syncthreads();
  {
    const int fr = k_inner ? threadIdx.x / 8 : threadIdx.x % kSplitRows;
    const int fq = k_inner ? threadIdx.x % 8 : threadIdx.x / kSplitRows;
    const int gr = r0 + fr;
    int emax = INT_MIN, emin = INT_MAX;
    if (gr < rows) {
      if (k_inner) fold_range(X, static_cast<std::size_t>(gr) * ld, 1, fq, k, 8, emax, emin);
      else fold_range(X, static_cast<std::size_t>(gr), static_cast<std::size_t>(ld), fq, k, 8, emax, emin);
    }
    if (emax != INT_MIN) {
      atomicMax(row_hi + fr, emax);
      atomicMin(row_lo + fr, emin);
    }
  }
  __syncthreads();
  if (threadIdx.x < kSplitRows) {  // one warp: kSplitRows == 32
    const int fr = threadIdx.x, gr = r0 + fr;
    const int emax = row_hi[fr], emin = row_lo[fr];
    const bool any = emax != INT_MIN;
    const int s = scale_exponent(any, emax);
    factor[fr] = scale_factor(s);
    int range = gr < rows && any ? emax - emin : 0;
    if (gr < rows) {
      shift[gr] = s;
      if (range_slots == nullptr && max_range != nullptr && any) atomicMax(max_range, range);
    }
    if (range_slots != nullptr) {
      for (int off = 16; off > 0; off /= 2) range = max(range, __shfl_xor_sync(0xffffffffu, range, off));
      if (fr == 0) range_slots[blockIdx.x] = range;
    }
  }
  __syncthreads();
  for (int k0 = 0; k0 < kp; k0 += kSplitK) {
    load_split_tile(tile, X, ld, k_inner, rows, k, r0, k0);
    __syncthreads();
    store_split_tile<T, kTf32>(tile, [&](int r) { return factor[r]; }, out_r0, k0, kp, hi, lo);
    __syncthreads();
  }
}

/// The fused scaling and split with the block's rows staged in shared memory, for kp up to
/// kMaxStagedK: each block owns kStagedRows whole rows of op(X) and issues every load of them at
/// once (cp.async, zero-filled beyond op(X) and up to kp), so that the GPU's memory is busy
/// while scale_split_kernel's blocks waited on eight loads a thread at a time; the ranges and
/// the split then read shared memory only. The same ranges, shifts and splits as
/// scale_split_kernel: the same bits.
constexpr int kStagedRows = 16;    ///< rows of op(X) per block (16 threads fold each row's range)
constexpr int kMaxStagedK = 3072;  ///< kp up to which it runs: 16 x 3073 floats, 192 KiB a block
static_assert(kSplitThreads == 16 * kStagedRows, "16 threads a row fold the ranges");
constexpr int staged_smem_bytes(int kp) { return kStagedRows * (kp + 1) * static_cast<int>(sizeof(float)); }

__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, bool valid) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(valid ? 4 : 0));
}

template <Transform T, bool kTf32>
__global__ void __launch_bounds__(kSplitThreads) scale_split_staged_kernel(ScaleSplitOperand a_op,
                                                                            ScaleSplitOperand b_op, int blocks_a,
                                                                            int k, int kp, int* range_slots) {
  extern __shared__ float staged[];  // [kStagedRows][kp + 1]
  __shared__ float factor[kStagedRows];
  __shared__ int block_range;  // range_slots: the largest range of the block's rows
  if (threadIdx.x == 0) block_range = 0;
  const int pitch = kp + 1;          // odd: a column's 16 rows in 16 banks
  const bool first = static_cast<int>(blockIdx.x) < blocks_a;
  const ScaleSplitOperand op = pick(first, a_op, b_op);
  const int local = first ? static_cast<int>(blockIdx.x) : static_cast<int>(blockIdx.x) - blocks_a;
  const int row_blocks = op.layout.rows_p / kStagedRows;
  const int member = local / row_blocks;
  const int r0 = (local % row_blocks) * kStagedRows;
  const float* X = op.layout.member(op.X, member);
  int* shift = op.shift + static_cast<std::size_t>(member) * op.rows;
  const int out_r0 = member * op.layout.rows_p + r0;  // the member's rows in hi and lo
  if (op.k_inner) {  // rows contiguous: consecutive threads take consecutive elements of a row
    for (int r = 0; r < kStagedRows; ++r) {
      const int gr = r0 + r;
      for (int kk = threadIdx.x; kk < kp; kk += kSplitThreads) {
        const bool valid = gr < op.rows && kk < k;
        cp_async_4(staged + r * pitch + kk, valid ? X + static_cast<std::size_t>(gr) * op.ld + kk : X, valid);
      }
    }
  } else {  // rows strided: 16 threads take one column's 16 adjacent rows
    const int r = threadIdx.x % kStagedRows, gr = r0 + r;
    for (int kk = threadIdx.x / kStagedRows; kk < kp; kk += kSplitThreads / kStagedRows) {
      const bool valid = gr < op.rows && kk < k;
      cp_async_4(staged + r * pitch + kk, valid ? X + gr + static_cast<std::size_t>(kk) * op.ld : X, valid);
    }
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  {  // each row's exponent range: 16 threads a row (a half-warp), met by shuffles
    const int r = threadIdx.x / 16, q = threadIdx.x % 16;
    int hi = INT_MIN, lo = INT_MAX;
    for (int kk = q; kk < k; kk += 16) fold_exponent(staged[r * pitch + kk], hi, lo);
    for (int off = 8; off > 0; off /= 2) {
      hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
      lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
    }
    if (q == 0) {
      const int gr = r0 + r;
      const bool any = hi != INT_MIN;
      const int s = scale_exponent(any, hi);
      factor[r] = scale_factor(s);
      if (gr < op.rows) {
        shift[gr] = s;
        if (range_slots != nullptr) {
          if (any) atomicMax(&block_range, hi - lo);
        } else if (op.max_range != nullptr && any) {
          atomicMax(op.max_range, hi - lo);
        }
      }
    }
  }
  __syncthreads();
  if (range_slots != nullptr && threadIdx.x == 0) range_slots[blockIdx.x] = block_range;
  for (int r = 0; r < kStagedRows; ++r) {  // split as store_split_tile does
    const float f = factor[r];
    const float* row = staged + r * pitch;
    if constexpr (kTf32) {
      for (int kk = threadIdx.x; kk < kp; kk += kSplitThreads) {
        unsigned h, l;
        tf32_one<T>(row[kk] * f, h, l);
        const std::size_t w = static_cast<std::size_t>(out_r0 + r) * kp + kk;
        op.hi[w] = h;
        if constexpr (T != Transform::round) op.lo[w] = l;
      }
    } else {
      for (int pr = threadIdx.x; pr < kp / 2; pr += kSplitThreads) {
        unsigned h, l;
        fp16_pair<T>(row[2 * pr] * f, row[2 * pr + 1] * f, h, l);
        const std::size_t w = static_cast<std::size_t>(out_r0 + r) * kp / 2 + pr;
        op.hi[w] = h;
        if constexpr (T != Transform::round) op.lo[w] = l;
      }
    }
  }
}

}  // namespace
}  // namespace tcsolve::cuda::detail
