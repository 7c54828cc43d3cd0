// y := U^-1 L^-1 y with the packed LU stored row-major: forward substitution with the unit lower
// L, then backward substitution with U, one kernel launch each (after one memset of the
// scratch). Both are "sync-free" chains of row blocks of kBlock rows:
//
//   order     A CTA takes a ticket (atomicAdd) when it starts and solves the row block that comes
//             ticket-th in the solve order (top down for L, bottom up for U). A CTA only ever
//             waits for blocks of smaller tickets, whose CTAs are already running, so the chain
//             cannot deadlock however many CTAs are resident at once.
//   sweep     The block's update y_I -= T(I, J) y_J over the column blocks J solved before it is a
//             dot-product sweep along the rows (row-major: coalesced), done while the chain is
//             still below: the CTA polls the blocks' ready flags and accumulates every newly
//             solved stretch of columns, so by the time its turn comes most of the matrix is read.
//   near      The last kLookback column blocks before the turn and the diagonal block are copied
//             into shared memory (cp.async) when the CTA starts. Their solutions are taken from
//             "LL" words (NCCL's low-latency protocol): the value and a tag in one 64-bit store,
//             which the reader polls directly, so the chain's critical path has no memory fence
//             and no separate flag round trip; the flags (written after a fence) serve the sweep
//             only.
//   diagonal  One warp per right-hand side solves the diagonal block by substitution, kGroup rows
//             per shuffle round: every lane solves the group's small triangle redundantly, so the
//             chain waits on one shuffle latency per kGroup rows instead of one per row.
//   inverse   Or (`inverses`, CudaLuPlan::Trsv::inverse), with matrices made once per
//             factorization by lu_block_inverses: X_I = T_II^-1 and, for the two blocks J1, J2
//             solved just before I, M_q = X_I T(I, Jq). Then y_I = X_I c_I - M_2 y_J2 - M_1 y_J1
//             with c_I = b_I - (the sums over the older blocks), and the chain's step is only the
//             wait for y_J1 and one 64 x 64 product with it, a lane per row (no reduction across
//             lanes, no barrier): X_I c_I is formed while y_J2 is on its way, and M_2 y_J2 while
//             y_J1 is. (Measured per step on the H100 with substitution: 0.5 us from one block's
//             publication to the next block seeing it, 0.25 us for the sums' reduction and
//             barrier, 0.86 us for the 16 rounds.) X, M_2 and M_1 take the near region's places
//             of the diagonal block and of J2 and J1.
//
// Determinism: the sweep's chunks depend on timing, so every lane accumulates a fixed set of
// columns (fixed by the column index alone) in a fixed order (the solve order of the columns)
// whatever the chunks; everything after the sweep is in a fixed order too. Accuracy: every entry
// of y is a substitution step over at most n + 2 roundings (the dot products in any order, one
// reciprocal and one product for U's diagonal), so each solve is backward stable with gamma_{n+2}
// (Higham, Thm 8.5). With inverses the bound goes through the diagonal blocks' conditioning
// instead: X's columns are backward stable (T_II X - I = -dT X, |dT| <= gamma_64 |T_II|), the
// products M_q = fl(X T(I, Jq)) add gamma_64 |X| |T(I, Jq)|, and the three 64-term products and
// two subtractions of the step gamma_35 |X| |.|, so the residual of block row I is at most
// gamma_{n+1} (|b_I| + |T(I, older)| |y|) + gamma_164 (1 + gamma_{n+1}) |T_II| |X| (|b_I| +
// |T(I, off)| |y|) (tests/test_triangular_cuda.cpp derives this and checks its normwise form).
//
// Scratch (ints): a ticket per launch, a flag per row block, and an LL word per row and column of
// a launch (at most kMaxCols columns per launch; more run in chunks). One memset per call clears
// it; within a call, launch k of the forward solve tags its flags and words 2k + 1 and of the
// backward solve 2k + 2, so a later launch never mistakes an earlier one's values for its own.
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cuda/atomic>
#include <string>
#include <utility>

#include "kernels.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kBlock = 64;  ///< rows of a row block (and columns of a column block)
constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kRowsPerWarp = kBlock / kWarps;  ///< rows of the block each warp sweeps
/// Column blocks read through the LL words: the sweep, which learns of a block a fence later and
/// then reads its columns from DRAM, has this many chain steps to finish before it is waited for.
constexpr int kLookback = 3;
constexpr int kNearWidth = (kLookback + 1) * kBlock;
constexpr int kNearStride = kNearWidth + 1;  ///< odd: lanes reading one column of rows hit distinct banks
constexpr int kGroup = 4;                    ///< diagonal rows per shuffle round
constexpr int kMaxCols = 4;                  ///< right-hand sides per launch
constexpr unsigned kFullMask = 0xffffffffu;

static_assert(kBlock == 64, "the diagonal solve gives each lane the rows lane and lane + 32");
static_assert(32 % kGroup == 0, "a group's rows sit in one register of consecutive lanes");

/// Relaxed device-scope accesses to the flags and LL words (::cuda: libcu++, not tcsolve::cuda).
template <class T>
using DeviceAtomic = ::cuda::atomic_ref<T, ::cuda::thread_scope_device>;
constexpr auto kRelaxed = ::cuda::memory_order_relaxed;

struct Shared {
  /// the block's rows, columns [near0, near0 + kNearWidth); with inverses the diagonal block's
  /// place holds X = T_II^-1 instead
  float near[kBlock * kNearStride];
  float sums[kBlock][kMaxCols];  ///< the finished dot products T(I, J) y_J (inverses: b_I - those)
  float rhs[kMaxCols][kBlock];   ///< inverses: b_I
  float inverse[kBlock];             ///< 1 / u_ii (backward solve; 1 for rows past n)
  int ticket;
  int ready;
};

/// One launch: the triangle, at most kMaxCols columns of y, and its share of the scratch.
struct Problem {
  const float* lu;
  const float* inverses;  ///< lu_block_inverses' output, or nullptr: substitution
  int ld;
  int n;
  int blocks;  ///< row blocks: ceil(n / kBlock)
  float* y;    ///< the launch's first column (leading dimension n)
  int* ticket;
  int* flags;              ///< per row block: the tag of the launch that solved it
  unsigned long long* ll;  ///< per row and column: the solution's bits and the launch's tag
  int tag;
};

/// This CTA's place: its ticket (position in the solve order) and its row block.
struct Place {
  int order;
  int block;
  int row0;   ///< first row of the block
  int near0;  ///< first column of the near region
};

template <bool Upper>
__device__ __forceinline__ int block_of(int order, int blocks) {
  return Upper ? blocks - 1 - order : order;
}

/// Column of the near region where the block solved at `order` starts (the diagonal block for
/// order == place.order).
template <bool Upper>
__device__ __forceinline__ int near_offset(int order, const Place& p) {
  return (Upper ? p.order - order : order - p.order + kLookback) * kBlock;
}

__device__ __forceinline__ int load_flag(int* flag) { return DeviceAtomic<int>(*flag).load(kRelaxed); }

__device__ __forceinline__ unsigned long long load_word(unsigned long long* word) {
  return DeviceAtomic<unsigned long long>(*word).load(kRelaxed);
}

__device__ __forceinline__ void store_word(unsigned long long* word, float value, int tag) {
  const unsigned long long w =
      static_cast<unsigned long long>(static_cast<unsigned>(tag)) << 32 | __float_as_uint(value);
  DeviceAtomic<unsigned long long>(*word).store(w, kRelaxed);
}

template <bool Upper>
__device__ Place take_ticket(const Problem& p, Shared& s) {
  if (threadIdx.x == 0) s.ticket = atomicAdd(p.ticket, 1);
  __syncthreads();
  Place place;
  place.order = s.ticket;
  place.block = block_of<Upper>(place.order, p.blocks);
  place.row0 = place.block * kBlock;
  place.near0 = Upper ? place.row0 : place.row0 - kLookback * kBlock;
  return place;
}

constexpr int kInverseMatrices = 3;  ///< per block and triangle: X, M_1, M_2

/// Matrix q (0: X = T_II^-1, 1: M_1, 2: M_2) of block `block` of the lower (Upper = false) or
/// upper triangle in lu_block_inverses' output: kBlock x kBlock floats, row-major.
template <bool Upper>
__device__ __forceinline__ const float* block_matrix(const float* inverses, int block, int q) {
  return inverses + ((2 * static_cast<std::size_t>(block) + (Upper ? 1 : 0)) * kInverseMatrices + q) * kBlock * kBlock;
}

/// Starts copying the near region (zero outside the matrix) into shared memory. The copies are
/// asynchronous (cp.async): their DRAM latency passes while the CTA sweeps. With inverses the
/// diagonal block's place gets X = T_II^-1 (identity past n).
template <bool Upper, bool Inverse>
__device__ void start_near(const Problem& p, const Place& place, Shared& s) {
  for (int at = threadIdx.x; at < kBlock * kNearWidth; at += kThreads) {
    const int r = at / kNearWidth, x = at % kNearWidth;
    const int row = place.row0 + r, col = place.near0 + x;
    float* dst = s.near + r * kNearStride + x;
    // the place's age: 0 the diagonal block, q the block solved q steps before it
    const int age = Upper ? x / kBlock : kLookback - x / kBlock;
    if (Inverse && age < kInverseMatrices)
      __pipeline_memcpy_async(dst, block_matrix<Upper>(p.inverses, place.block, age) + r * kBlock + x % kBlock,
                              sizeof(float));
    else if (row < p.n && col >= 0 && col < p.n)
      __pipeline_memcpy_async(dst, p.lu + static_cast<std::size_t>(row) * p.ld + col, sizeof(float));
    else
      *dst = 0.0f;
  }
  __pipeline_commit();
}

/// Waits for the near region and, for U, takes the reciprocals of its diagonal (1 past n).
template <bool Upper, bool Inverse>
__device__ void finish_near(const Problem& p, const Place& place, Shared& s) {
  __pipeline_wait_prior(0);
  __syncthreads();
  if (Upper && !Inverse && threadIdx.x < kBlock) {
    const int r = threadIdx.x;
    const float diagonal = s.near[r * kNearStride + near_offset<Upper>(place.order, place) + r];
    s.inverse[r] = place.row0 + r < p.n ? __frcp_rn(diagonal) : 1.0f;
  }
}

/// acc[r][j] += T(row_r, c..c+VEC) y(c..c+VEC, j) for this warp's rows, in increasing column order.
/// Rows past n read row n - 1 instead (their sums are never used): no branch between the loads.
template <int NC, int VEC>
__device__ __forceinline__ void sweep_step(const Problem& p, int row_first, int c,
                                           float (&acc)[kRowsPerWarp][NC]) {
  float yv[NC][VEC];
#pragma unroll
  for (int j = 0; j < NC; ++j) {
    const float* src = p.y + static_cast<std::size_t>(j) * p.n + c;
    if constexpr (VEC == 4) {
      const float4 v = __ldcg(reinterpret_cast<const float4*>(src));  // L2: written by other CTAs
      yv[j][0] = v.x, yv[j][1] = v.y, yv[j][2] = v.z, yv[j][3] = v.w;
    } else {
      yv[j][0] = __ldcg(src);
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int row = min(row_first + r, p.n - 1);
    const float* src = p.lu + static_cast<std::size_t>(row) * p.ld + c;
    float t[VEC];
    if constexpr (VEC == 4) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(src));
      t[0] = v.x, t[1] = v.y, t[2] = v.z, t[3] = v.w;
    } else {
      t[0] = __ldg(src);
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e)
#pragma unroll
      for (int j = 0; j < NC; ++j) acc[r][j] = fmaf(t[e], yv[j][e], acc[r][j]);
  }
}

/// Adds the columns [c0, c1) (c0 a multiple of kBlock; c1 also unless it is n) to acc. Lane l owns
/// the VEC-wide column vectors c with (c / VEC) % 32 == l and takes them in the solve order (vectors
/// increasing for L, decreasing for U), so its sums do not depend on how the columns were split.
template <bool Upper, int NC, int VEC>
__device__ void sweep(const Problem& p, const Place& place, int c0, int c1, float (&acc)[kRowsPerWarp][NC]) {
  constexpr int kSpan = 32 * VEC;
  const int lane = threadIdx.x % 32;
  const int row_first = place.row0 + (threadIdx.x / 32) * kRowsPerWarp;
  // Unrolled twice: the loads of two steps are in flight together (a step waits on DRAM).
  if constexpr (!Upper) {
    int c = c0 / kSpan * kSpan + lane * VEC;
    if (c < c0) c += kSpan;
#pragma unroll 2
    for (; c < c1; c += kSpan) sweep_step<NC, VEC>(p, row_first, c, acc);
  } else {
    int c = (c1 - 1) / kSpan * kSpan + lane * VEC;
    if (c >= c1) c -= kSpan;
#pragma unroll 2
    for (; c >= c0; c -= kSpan) sweep_step<NC, VEC>(p, row_first, c, acc);
  }
}

/// Warp 0: the first order >= done whose block is not flagged yet (at most limit).
template <bool Upper>
__device__ int flagged_prefix(const Problem& p, int done, int limit) {
  const int lane = threadIdx.x % 32;
  int ready = done;
  for (;;) {
    const int order = ready + lane;
    const bool ok = order < limit && load_flag(p.flags + block_of<Upper>(order, p.blocks)) == p.tag;
    const unsigned mask = __ballot_sync(kFullMask, ok);
    const int run = mask == kFullMask ? 32 : __ffs(~mask) - 1;
    ready += run;
    if (run < 32 || ready >= limit) return ready;
  }
}

/// The sweep over the blocks of orders [0, order - kLookback), as their flags appear.
template <bool Upper, int NC, int VEC>
__device__ void sweep_flagged(const Problem& p, const Place& place, Shared& s,
                              float (&acc)[kRowsPerWarp][NC]) {
  const int limit = max(0, place.order - kLookback);
  int done = 0;
  while (done < limit) {
    if (threadIdx.x < 32) {
      const int ready = flagged_prefix<Upper>(p, done, limit);
      __threadfence();  // acquire: the y of the flagged blocks is read after the flags
      if (threadIdx.x == 0) s.ready = ready;
    }
    __syncthreads();
    const int ready = s.ready;
    __syncthreads();  // s.ready is written again in the next round
    if (ready == done) continue;
    const int c0 = Upper ? block_of<Upper>(ready - 1, p.blocks) * kBlock : done * kBlock;
    const int c1 = Upper ? min(p.n, (block_of<Upper>(done, p.blocks) + 1) * kBlock) : ready * kBlock;
    sweep<Upper, NC, VEC>(p, place, c0, c1, acc);
    done = ready;
  }
}

/// Lane l: the solution at columns col0 + l and col0 + l + 32 (those below n) of the launch's
/// columns first .. first + NC - 1, polled from their LL words until all of them carry the
/// launch's tag.
template <int NC>
__device__ void wait_solution(const Problem& p, int col0, float (&yv)[2][NC], int first = 0) {
  const int lane = threadIdx.x % 32;
  for (bool all = false; !all;) {
    all = true;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = col0 + lane + 32 * h;
      if (col >= p.n) continue;
#pragma unroll
      for (int j = 0; j < NC; ++j) {
        const unsigned long long w = load_word(p.ll + static_cast<std::size_t>(first + j) * p.n + col);
        if (static_cast<int>(w >> 32) == p.tag)
          yv[h][j] = __uint_as_float(static_cast<unsigned>(w));
        else
          all = false;
      }
    }
  }
}

/// The last kLookback blocks before this one, the oldest first, each as soon as its solution
/// arrives: only the last block's products remain once the chain reaches this block.
/// Skip: the newest blocks left out (the inverse path's J2 and J1, applied through M_2 and M_1).
template <bool Upper, int NC, int Skip>
__device__ void add_recent(const Problem& p, const Place& place, const Shared& s,
                           float (&acc)[kRowsPerWarp][NC]) {
  const int lane = threadIdx.x % 32;
  const int count = min(place.order, kLookback);
  const float* rows = s.near + (threadIdx.x / 32) * kRowsPerWarp * kNearStride;
  for (int k = 0; k < count - Skip; ++k) {
    const int order = place.order - count + k;
    const int x0 = near_offset<Upper>(order, place), col0 = block_of<Upper>(order, p.blocks) * kBlock;
    float yv[2][NC] = {};
    wait_solution<NC>(p, col0, yv);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (col0 + lane + 32 * h >= p.n) continue;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
        for (int j = 0; j < NC; ++j)
          acc[r][j] = fmaf(rows[r * kNearStride + x0 + lane + 32 * h], yv[h][j], acc[r][j]);
    }
  }
}

/// s.sums[row][j] = the warp's sum of acc[r][j] over its lanes (a fixed butterfly); with
/// inverses b_row - that sum, 0 for rows past n.
template <bool Inverse, int NC>
__device__ void reduce_sums(const Problem& p, const Place& place, float (&acc)[kRowsPerWarp][NC], Shared& s) {
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
    for (int j = 0; j < NC; ++j) {
      float v = acc[r][j];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
      const int row = (threadIdx.x / 32) * kRowsPerWarp + r;
      if (Inverse) v = place.row0 + row < p.n ? s.rhs[j][row] - v : 0.0f;
      if (threadIdx.x % 32 == 0) s.sums[row][j] = v;
    }
}

/// One substitution round of the unit lower diagonal block for rows [base, base + kGroup): every
/// lane solves the group from its rows' current values, then updates its own rows below.
template <int Base>
__device__ __forceinline__ void lower_round(float& a, float& b, const float* d, int lane) {
  float t[kGroup];
#pragma unroll
  for (int k = 0; k < kGroup; ++k) t[k] = __shfl_sync(kFullMask, Base < 32 ? a : b, (Base + k) % 32);
#pragma unroll
  for (int k = 1; k < kGroup; ++k)
#pragma unroll
    for (int m = 0; m < k; ++m) t[k] = fmaf(-d[(Base + k) * kNearStride + Base + m], t[m], t[k]);
  auto update = [&](float& v, int row) {  // selects, not branches: the warp never diverges here
    float below = v;
#pragma unroll
    for (int m = 0; m < kGroup; ++m) below = fmaf(-d[row * kNearStride + Base + m], t[m], below);
    v = row >= Base + kGroup ? below : v;
#pragma unroll
    for (int k = 0; k < kGroup; ++k) v = row == Base + k ? t[k] : v;
  };
  update(a, lane);
  update(b, lane + 32);
}

/// The upper diagonal block's round for rows [base, base + kGroup), bottom up. The diagonal enters
/// through its reciprocal, computed at the start: a product on the chain instead of a division,
/// for one more rounding.
template <int Base>
__device__ __forceinline__ void upper_round(float& a, float& b, const float* d, const float* inverse,
                                            int lane) {
  float t[kGroup];
#pragma unroll
  for (int k = 0; k < kGroup; ++k) t[k] = __shfl_sync(kFullMask, Base < 32 ? a : b, (Base + k) % 32);
#pragma unroll
  for (int k = kGroup - 1; k >= 0; --k) {
#pragma unroll
    for (int m = kGroup - 1; m > k; --m) t[k] = fmaf(-d[(Base + k) * kNearStride + Base + m], t[m], t[k]);
    t[k] *= inverse[Base + k];
  }
  auto update = [&](float& v, int row) {
    float above = v;
#pragma unroll
    for (int m = kGroup - 1; m >= 0; --m) above = fmaf(-d[row * kNearStride + Base + m], t[m], above);
    v = row < Base ? above : v;
#pragma unroll
    for (int k = 0; k < kGroup; ++k) v = row == Base + k ? t[k] : v;
  };
  update(a, lane);
  update(b, lane + 32);
}

template <int... Bases>
__device__ __forceinline__ void lower_rounds(float& a, float& b, const float* d, int lane,
                                             std::integer_sequence<int, Bases...>) {
  (lower_round<Bases * kGroup>(a, b, d, lane), ...);
}

template <int... Bases>
__device__ __forceinline__ void upper_rounds(float& a, float& b, const float* d, const float* inverse,
                                             int lane, std::integer_sequence<int, Bases...>) {
  (upper_round<(kBlock / kGroup - 1 - Bases) * kGroup>(a, b, d, inverse, lane), ...);
}

/// Warp j < NC: solves column j of the diagonal block (lane l: rows l and l + 32) and publishes
/// it, the LL words first (the next block waits on them), then y itself.
template <bool Upper>
__device__ void solve_diagonal(const Problem& p, const Place& place, const Shared& s, const float (&rhs)[2]) {
  const int lane = threadIdx.x % 32, j = threadIdx.x / 32;
  // Rows past n start from 0, not from their sums (the sweep's copies of row n - 1): their
  // solutions then stay finite, and the zero columns past n keep them out of the other rows.
  float a = place.row0 + lane < p.n ? rhs[0] - s.sums[lane][j] : 0.0f;
  float b = place.row0 + lane + 32 < p.n ? rhs[1] - s.sums[lane + 32][j] : 0.0f;
  const float* d = s.near + near_offset<Upper>(place.order, place);
  constexpr auto rounds = std::make_integer_sequence<int, kBlock / kGroup>{};
  if constexpr (Upper)
    upper_rounds(a, b, d, s.inverse, lane, rounds);
  else
    lower_rounds(a, b, d, lane, rounds);
  const float v[2] = {a, b};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = place.row0 + lane + 32 * h;
    if (row >= p.n) continue;
    const std::size_t at = static_cast<std::size_t>(j) * p.n + row;
    store_word(p.ll + at, v[h], p.tag);
    p.y[at] = v[h];
  }
}

/// Lane l: the solution at columns col0 + l and col0 + l + 32 (those below n) of column j of the
/// launch (wait_solution for that column alone).
__device__ __forceinline__ void wait_column(const Problem& p, int col0, int j, float (&yv)[2]) {
  float one[2][1] = {{yv[0]}, {yv[1]}};
  wait_solution<1>(p, col0, one, j);
  yv[0] = one[0][0], yv[1] = one[1][0];
}

/// v - m(row, :) y for a kBlock-vector y held as yv[0] (entries 0..31, one per lane) and yv[1]
/// (32..63): lane-by-lane broadcasts, two partial sums (fixed order), one subtraction.
__device__ __forceinline__ float minus_product(float v, const float* m_row, const float (&yv)[2]) {
  float lo = 0.0f, hi = 0.0f;
#pragma unroll
  for (int c = 0; c < 32; ++c) {
    lo = fmaf(m_row[c], __shfl_sync(kFullMask, yv[0], c), lo);
    hi = fmaf(m_row[c + 32], __shfl_sync(kFullMask, yv[1], c), hi);
  }
  return v - (lo + hi);
}

/// With inverses, warps 2j and 2j + 1 (j < NC), lane l: row r = 32 (warp % 2) + l of column j.
/// y_I(r) = X(r, :) c - M_2(r, :) y_J2 - M_1(r, :) y_J1 (c = s.sums: b_I minus the older blocks'
/// sums), each product as soon as its vector is there; then the row is published.
template <bool Upper>
__device__ void chain_inverse(const Problem& p, const Place& place, const Shared& s) {
  const int lane = threadIdx.x % 32, j = threadIdx.x / 64, r = 32 * ((threadIdx.x / 32) % 2) + lane;
  const float* x = s.near + r * kNearStride + near_offset<Upper>(place.order, place);
  float lo = 0.0f, hi = 0.0f;
#pragma unroll 8
  for (int c = 0; c < 32; ++c) {
    lo = fmaf(x[c], s.sums[c][j], lo);
    hi = fmaf(x[c + 32], s.sums[c + 32][j], hi);
  }
  float v = lo + hi;
  for (int q = 2; q >= 1; --q) {  // J2 = the block solved two steps before, then J1
    const int order = place.order - q;
    if (order < 0) continue;
    float yv[2] = {0.0f, 0.0f};
    wait_column(p, block_of<Upper>(order, p.blocks) * kBlock, j, yv);
    v = minus_product(v, s.near + r * kNearStride + near_offset<Upper>(order, place), yv);
  }
  const int row = place.row0 + r;
  if (row < p.n) {
    const std::size_t at = static_cast<std::size_t>(j) * p.n + row;
    store_word(p.ll + at, v, p.tag);
    p.y[at] = v;
  }
}

/// One row block per CTA, in ticket order: forward (L) or backward (U) substitution of NC columns.
/// Two CTAs per SM: ptxas, left alone, squeezes the registers for occupancy and spills.
template <bool Upper, bool Inverse, int NC, int VEC>
__global__ void __launch_bounds__(kThreads, 2) solve_kernel(Problem p) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Shared& s = *reinterpret_cast<Shared*>(shared_bytes);
  const Place place = take_ticket<Upper>(p, s);
  start_near<Upper, Inverse>(p, place, s);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float rhs[2] = {0.0f, 0.0f};  // warp j < NC: column j at rows lane and lane + 32
  if (warp < NC)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = place.row0 + lane + 32 * h;
      if (row < p.n) rhs[h] = __ldcg(p.y + static_cast<std::size_t>(warp) * p.n + row);
      if (Inverse) s.rhs[warp][lane + 32 * h] = rhs[h];  // read after finish_near's barrier
    }
  float acc[kRowsPerWarp][NC] = {};
  sweep_flagged<Upper, NC, VEC>(p, place, s, acc);
  finish_near<Upper, Inverse>(p, place, s);
  add_recent<Upper, NC, Inverse ? 2 : 0>(p, place, s, acc);
  reduce_sums<Inverse, NC>(p, place, acc, s);
  __syncthreads();  // the sums and the reciprocals are complete
  if (Inverse) {
    if (warp < 2 * NC) chain_inverse<Upper>(p, place, s);
  } else if (warp < NC) {
    solve_diagonal<Upper>(p, place, s, rhs);
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // the barrier, then a fence and the flag: cooperative groups' grid sync
    __threadfence();       // release: the block's y, stored by the warps before the barrier
    DeviceAtomic<int>(p.flags[place.block]).store(p.tag, kRelaxed);
  }
}

/// Block (blockIdx.x, triangle blockIdx.y: 0 lower, 1 upper) of lu_block_inverses: thread c
/// computes column c of X = T_II^-1 by substitution, then column c of M_q = X T(I, Jq) for the
/// blocks Jq solved q = 1, 2 steps before I (zero where there is none), the terms in the fixed
/// order below (the tests repeat it on the host, bitwise). Rows and columns past n are the
/// identity's in X and zero in T(I, Jq).
__global__ void __launch_bounds__(kBlock) block_inverse_kernel(const float* __restrict__ lu, int ld, int n,
                                                                float* __restrict__ inverses) {
  __shared__ float t[kBlock][kBlock + 1];
  __shared__ float x[kBlock][kBlock + 1];  ///< x[i][c]: column c of X
  const int block = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
  const int row0 = block * kBlock, c = threadIdx.x;
  const bool upper = blockIdx.y == 1;
  for (int r = 0; r < kBlock; ++r) {
    const int row = row0 + r, col = row0 + c;
    t[r][c] = row < n && col < n ? lu[static_cast<std::size_t>(row) * ld + col] : (r == c ? 1.0f : 0.0f);
  }
  __syncthreads();
  if (!upper) {  // unit lower: x_c = 1, x_i = -sum_{m = c..i-1} l_im x_m for i > c
    for (int i = 0; i < kBlock; ++i) {
      float v = i == c ? 1.0f : 0.0f;
      if (i > c) {
        v = 0.0f;
        for (int m = c; m < i; ++m) v = fmaf(-t[i][m], x[m][c], v);
      }
      x[i][c] = v;
    }
  } else {  // upper: x_c = 1 / u_cc, x_i = (-sum_{m = i+1..c} u_im x_m) (1 / u_ii) for i < c
    for (int i = kBlock - 1; i >= 0; --i) {
      float v = 0.0f;
      if (i == c) {
        v = __frcp_rn(t[i][i]);
      } else if (i < c) {
        for (int m = i + 1; m <= c; ++m) v = fmaf(-t[i][m], x[m][c], v);
        v *= __frcp_rn(t[i][i]);
      }
      x[i][c] = v;
    }
  }
  float* out = inverses + (2 * static_cast<std::size_t>(block) + (upper ? 1 : 0)) * kInverseMatrices * kBlock * kBlock;
  for (int i = 0; i < kBlock; ++i) out[i * kBlock + c] = x[i][c];
  for (int q = 1; q < kInverseMatrices; ++q) {
    const int other = upper ? block + q : block - q;  // Jq
    __syncthreads();  // t is read by every thread until here
    for (int r = 0; r < kBlock; ++r) {
      const int row = row0 + r, col = other * kBlock + c;
      t[r][c] = other >= 0 && other < blocks && row < n && col < n ? lu[static_cast<std::size_t>(row) * ld + col]
                                                                   : 0.0f;
    }
    __syncthreads();
    float* m = out + static_cast<std::size_t>(q) * kBlock * kBlock;
    for (int i = 0; i < kBlock; ++i) {
      float v = 0.0f;
      for (int k = 0; k < kBlock; ++k) v = fmaf(x[i][k], t[k][c], v);
      m[i * kBlock + c] = v;
    }
  }
}

template <bool Upper, int NC, int VEC>
void launch(cudaStream_t stream, const Problem& p) {
  const auto kernel = p.inverses != nullptr ? solve_kernel<Upper, true, NC, VEC> : solve_kernel<Upper, false, NC, VEC>;
  TCSOLVE_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, sizeof(Shared)));
  kernel<<<static_cast<unsigned>(p.blocks), kThreads, sizeof(Shared), stream>>>(p);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

template <bool Upper, int VEC>
void launch_columns(cudaStream_t stream, const Problem& p, int cols) {
  switch (cols) {
    case 1:
      return launch<Upper, 1, VEC>(stream, p);
    case 2:
      return launch<Upper, 2, VEC>(stream, p);
    case 3:
      return launch<Upper, 3, VEC>(stream, p);
    default:
      return launch<Upper, 4, VEC>(stream, p);
  }
}

template <bool Upper>
void launch_solve(cudaStream_t stream, const Problem& p, int cols, bool vectorized) {
  if (vectorized)
    launch_columns<Upper, 4>(stream, p, cols);
  else
    launch_columns<Upper, 1>(stream, p, cols);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

/// The scratch's parts: tickets (two per launch pair), flags, then the 8-byte-aligned LL words.
struct Scratch {
  int* tickets;
  int* flags;
  unsigned long long* ll;
};

Scratch split_scratch(int* scratch, int n, int cols) {
  const int chunks = ceil_div(cols, kMaxCols);
  int* words = scratch + 2 * chunks + ceil_div(n, kBlock);
  if (reinterpret_cast<std::uintptr_t>(words) % 8 != 0) ++words;
  return {scratch, scratch + 2 * chunks, reinterpret_cast<unsigned long long*>(words)};
}

/// The forward launch of the columns [chunk kMaxCols, (chunk + 1) kMaxCols) of y.
Problem forward_problem(const float* lu, const float* inverses, int ld, int n, float* y, const Scratch& parts,
                        int chunk) {
  Problem p;
  p.lu = lu;
  p.inverses = inverses;
  p.ld = ld;
  p.n = n;
  p.blocks = ceil_div(n, kBlock);
  p.y = y + static_cast<std::size_t>(chunk) * kMaxCols * n;
  p.ticket = parts.tickets + 2 * chunk;
  p.flags = parts.flags;
  p.ll = parts.ll;
  p.tag = 2 * chunk + 1;
  return p;
}

}  // namespace

std::size_t lu_block_inverse_floats(int n) {
  return 2 * static_cast<std::size_t>(ceil_div(n, kBlock)) * kInverseMatrices * kBlock * kBlock;
}

void lu_block_inverses(CUstream_st* stream, const float* lu, int ld, int n, float* inverses) {
  if (n < 1 || ld < n)
    throw InvalidInput("lu_block_inverses: n = " + std::to_string(n) + ", ld = " + std::to_string(ld) +
                       " (need n >= 1, ld >= n)");
  block_inverse_kernel<<<dim3(static_cast<unsigned>(ceil_div(n, kBlock)), 2), kBlock, 0, stream>>>(lu, ld, n,
                                                                                                   inverses);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

std::size_t lu_solve_scratch_ints(int n, int cols) {
  const std::size_t chunks = static_cast<std::size_t>(ceil_div(cols, kMaxCols));
  const std::size_t words = static_cast<std::size_t>(n) * std::min(cols, kMaxCols);
  return 2 * chunks + static_cast<std::size_t>(ceil_div(n, kBlock)) + 1 + 2 * words;
}

void lu_solve(CUstream_st* stream, const float* lu, int ld, int n, float* y, int cols, int* scratch,
              const float* inverses) {
  if (n < 1 || cols < 1 || ld < n)
    throw InvalidInput("lu_solve: n = " + std::to_string(n) + ", ld = " + std::to_string(ld) +
                       ", cols = " + std::to_string(cols) + " (need n >= 1, ld >= n, cols >= 1)");
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(scratch, 0, lu_solve_scratch_ints(n, cols) * sizeof(int), stream));
  const Scratch parts = split_scratch(scratch, n, cols);
  // float4 loads need 16-byte rows of the LU and columns of y; n % 4 also keeps the last
  // (partial) column block of the backward sweep whole vectors.
  const bool vectorized = aligned16(lu) && aligned16(y) && ld % 4 == 0 && n % 4 == 0;
  for (int chunk = 0; chunk * kMaxCols < cols; ++chunk) {
    const int width = std::min(kMaxCols, cols - chunk * kMaxCols);
    Problem p = forward_problem(lu, inverses, ld, n, y, parts, chunk);
    launch_solve<false>(stream, p, width, vectorized);
    p.ticket += 1;  // the backward launch: its own ticket counter, the next tag
    p.tag += 1;
    launch_solve<true>(stream, p, width, vectorized);
  }
}

}  // namespace tcsolve::cuda::kernels
