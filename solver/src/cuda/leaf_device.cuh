// Device pieces shared by the two cluster leaf kernels of the GPU LU's panel (panel.cu's partial
// pivoting, leaf_tournament.cu's tournament pivoting): the PTX wrappers for distributed shared
// memory, mbarriers and bulk copies (sm_90), and the leaf's write-back: given each step's pivot
// row, the final row permutation (pivot of step i to row c0 + i, the rows of [c0, c0 + w) that
// were not chosen to the places the chosen rows below the block left, in order), its (dst, src)
// pairs in interchanges.hpp's format, the rows written to their places, and (with `origin`) the
// same rows moved in the block's other columns and composed into `origin`.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>

namespace tcsolve::cuda::kernels::leaf_device {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;  ///< threads per CTA of both leaf kernels
constexpr int kWarps = kThreads / 32;
constexpr int kMaxCluster = 16;  ///< H100's non-portable maximum (8 is portable)

/// The leaf's permutation as the write-back builds it from `chosen` (the kernel fills chosen[i]
/// with step i's pivot row, relative to c0, before leaf_write_back).
template <int W>
struct LeafPermutation {
  int chosen[W];                         ///< pivot row (relative to c0) of each step
  int below[W];                          ///< the chosen rows below the block [0, w), in step order
  unsigned top;                          ///< bit r: row r < w was chosen
  int pair_dst[2 * W], pair_src[2 * W];  ///< the leaf's interchanges as (dst, src) row pairs
  int pair_count;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// The shared::cluster address of the same shared variable in CTA `rank`.
__device__ __forceinline__ unsigned remote_address(unsigned local, int rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

/// 16 bytes into another CTA's shared memory, completing 16 bytes of its mbarrier's phase.
__device__ __forceinline__ void store_async(unsigned remote, const float4& v, unsigned remote_barrier) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(
          remote),
      "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(__float_as_uint(v.z)),
      "r"(__float_as_uint(v.w)), "r"(remote_barrier)
      : "memory");
}

__device__ __forceinline__ void barrier_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void barrier_arrive_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
}

/// Copies `bytes` (a multiple of 16, both addresses 16-byte aligned) from global memory into
/// this CTA's shared memory, completing them on the mbarrier.
__device__ __forceinline__ void bulk_load(void* shared, const void* global, unsigned bytes,
                                          unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          shared_address(shared)),
      "l"(global), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}

/// The reverse, tracked by the thread's bulk group (bulk_store_wait()).
__device__ __forceinline__ void bulk_store(void* global, const void* shared, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(global),
               "r"(shared_address(shared)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void bulk_store_wait() {
  asm volatile(
      "cp.async.bulk.commit_group;\n"
      "cp.async.bulk.wait_group 0;\n" ::
          : "memory");
}

/// Waits until the phase of `parity` completes; acquire at cluster scope, so the other CTAs'
/// st.async data is visible.
__device__ __forceinline__ void barrier_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

/// The loads of a CTA's rows of the leaf: thread tid's rows row[k] (relative to c0; live: below
/// m), by one bulk copy each into rows[k Threads + tid] (`bulk`: whole 16-byte aligned rows),
/// completing on `loaded` (armed by thread 0 with the CTA's bytes); nothing without `bulk`.
template <int W, int RPT, int Threads>
__device__ __forceinline__ void leaf_issue_loads(float (*rows)[W + 4], const float* __restrict__ a, int ld,
                                                 int c0, bool bulk, const int (&row)[RPT],
                                                 const bool (&live)[RPT], unsigned long long* loaded) {
  const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int k = 0; k < RPT; ++k)
    if (bulk && live[k])
      bulk_load(rows[k * Threads + tid], a + static_cast<std::size_t>(c0 + row[k]) * ld + c0,
                W * sizeof(float), loaded);
}

/// The rows into the registers v (after the wait for `loaded` when bulk): from the bulk copies,
/// else from global memory (16-byte loads where the rows are whole and aligned), zero past the
/// leaf's w columns and for rows past m; `keep`: the
/// latter also into rows[k Threads + tid] (the tournament keeps the originals there).
template <int W, int RPT, int Threads>
__device__ __forceinline__ void leaf_take_rows(float (*rows)[W + 4], float (&v)[RPT][W],
                                               const float* __restrict__ a, int ld, int c0, int w, bool bulk,
                                               const int (&row)[RPT], const bool (&live)[RPT], bool keep) {
  const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int k = 0; k < RPT; ++k) {
    float* kept = rows[k * Threads + tid];
    if (bulk) {
#pragma unroll
      for (int c = 0; c < W; c += 4) {
        const float4 x = *reinterpret_cast<const float4*>(kept + c);
        v[k][c] = x.x, v[k][c + 1] = x.y, v[k][c + 2] = x.z, v[k][c + 3] = x.w;
      }
    } else {
      const float* src = a + static_cast<std::size_t>(c0 + (live[k] ? row[k] : 0)) * ld + c0;
      if (w == W && reinterpret_cast<std::size_t>(src) % 16 == 0) {  // whole 16-byte rows
#pragma unroll
        for (int c = 0; c < W; c += 4) {
          const float4 x = live[k] ? __ldcg(reinterpret_cast<const float4*>(src + c)) : make_float4(0, 0, 0, 0);
          v[k][c] = x.x, v[k][c + 1] = x.y, v[k][c + 2] = x.z, v[k][c + 3] = x.w;
        }
      } else {
#pragma unroll
        for (int c = 0; c < W; ++c) v[k][c] = live[k] && c < w ? src[c] : 0.0f;
      }
      if (keep)
#pragma unroll
        for (int c = 0; c < W; ++c) kept[c] = v[k][c];
    }
  }
}

/// The write-back, by every thread of every CTA of the cluster, after the kernel has set
/// p.chosen[0..w) (visible after a __syncthreads) and holds its final rows in v (thread tid of
/// CTA `rank` owns rows row[k] = rank * Threads RPT + k Threads + tid relative to c0, k <
/// RPT; step[k]: the step that chose it, or -1). `rows`: the CTA's padded row buffer, where
/// each thread stages its own rows for the bulk stores (bulk: w = W and 16-byte aligned rows).
/// Ends with a cluster barrier: no CTA leaves while another may still address its shared memory.
template <int W, int RPT, int Threads = kThreads>
__device__ __forceinline__ void leaf_write_back(LeafPermutation<W>& p, float (*rows)[W + 4],
                                                float (&v)[RPT][W], const int (&row)[RPT],
                                                const int (&step)[RPT], float* __restrict__ a, int ld, int m,
                                                int c0, int w, bool bulk, int* __restrict__ pairs,
                                                int block_lo, int block_hi, int* __restrict__ origin) {
  cg::cluster_group cluster = cg::this_cluster();
  const int clusters = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  __syncthreads();  // p.chosen
  // The final permutation. Warp 0: `top` marks the rows r < w chosen as pivots; `below` lists
  // the chosen rows below the block in step order (ballot compaction); rank 0 writes the pairs.
  if (warp == 0) {
    const int chosen = lane < w ? p.chosen[lane] : -1;
    const unsigned lower = (1u << lane) - 1;
    const unsigned leaving = __ballot_sync(kFull, chosen >= w);
    // bit r: some step chose row r < w.
    const unsigned chosen_top = __reduce_or_sync(kFull, (chosen >= 0 && chosen < w) ? 1u << chosen : 0u);
    if (chosen >= w) p.below[__popc(leaving & lower)] = chosen;
    if (lane == 0) p.top = chosen_top;
    __syncwarp();
    {  // every CTA: the pairs in shared memory (for the block's other columns, below)
      int* dst = p.pair_dst;
      int* src = p.pair_src;
      const bool moved = lane < w && chosen != lane;  // row c0 + lane receives its pivot row
      const unsigned moved_mask = __ballot_sync(kFull, moved);
      if (moved) dst[__popc(moved_mask & lower)] = c0 + lane, src[__popc(moved_mask & lower)] = c0 + chosen;
      const bool leaves = lane < w && !(chosen_top >> lane & 1);  // row c0 + lane goes below
      const unsigned leaves_mask = __ballot_sync(kFull, leaves);
      if (leaves) {
        const int at = __popc(moved_mask) + __popc(leaves_mask & lower);
        dst[at] = c0 + p.below[__popc(leaves_mask & lower)], src[at] = c0 + lane;
      }
      const int count = __popc(moved_mask) + __popc(leaves_mask);
      if (lane == 0) p.pair_count = count;
      __syncwarp();
      if (rank == 0) {  // and in the pairs format of row_swap.cu
        for (int t = lane; t < count; t += 32) pairs[1 + t] = dst[t], pairs[1 + 2 * w + t] = src[t];
        if (lane == 0) pairs[0] = count;
        if (origin != nullptr) {  // origin[dst] = old origin[src]
          int moved_origin[2];
#pragma unroll
          for (int h = 0; h < 2; ++h)
            moved_origin[h] = lane + 32 * h < count ? origin[src[lane + 32 * h]] : 0;
          __syncwarp();
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (lane + 32 * h < count) origin[dst[lane + 32 * h]] = moved_origin[h];
        }
      }
    }
  }
  __syncthreads();  // p.top, p.below
  const unsigned chosen_top = p.top;
#pragma unroll  // v[k] must stay in registers (a loop over k at run time puts v in local memory)
  for (int k = 0; k < RPT; ++k) {
    if (!(row[k] < m)) continue;
    int dest = row[k];
    if (step[k] >= 0)
      dest = step[k];
    else if (row[k] < w)
      dest = p.below[__popc(~chosen_top & ((1u << row[k]) - 1))];
    float* out = a + static_cast<std::size_t>(c0 + dest) * ld + c0;
    if (bulk) {
      // Into this thread's own padded row, then out by one bulk copy to its destination.
      float* staged = rows[k * Threads + tid];
#pragma unroll
      for (int c = 0; c < W; c += 4)
        *reinterpret_cast<float4*>(staged + c) = make_float4(v[k][c], v[k][c + 1], v[k][c + 2], v[k][c + 3]);
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // visible to the copy engine
      bulk_store(out, staged, W * sizeof(float));
    } else if (w == W && reinterpret_cast<std::size_t>(out) % 16 == 0) {  // whole 16-byte rows
#pragma unroll
      for (int c = 0; c < W; c += 4)
        *reinterpret_cast<float4*>(out + c) = make_float4(v[k][c], v[k][c + 1], v[k][c + 2], v[k][c + 3]);
    } else {
#pragma unroll
      for (int c = 0; c < W; ++c)
        if (c < w) out[c] = v[k][c];
    }
  }
  // The interchanges in the block's other columns [block_lo, block_hi) minus the leaf (origin
  // given); every src value is read before any dst value is written (the moved rows are a
  // permutation of themselves). Spread over every thread of the cluster (element e: pair
  // e / others, column e % others), the reads before the cluster barrier below and the writes
  // after it, when they fit in kMovesPerThread registers per thread; else a column per thread,
  // its reads before its writes.
  constexpr int kMovesPerThread = 16;
  const int count = origin != nullptr ? p.pair_count : 0, others = block_hi - block_lo - w;
  const int moves = count * others, threads = clusters * Threads, first = rank * Threads + tid;
  const bool spread = moves <= threads * kMovesPerThread;
  float moved_spread[kMovesPerThread];
  // Element e's column: the block's others-th column outside the leaf, and where it sits.
  const auto column_of = [&](int e) {
    const int q = e % others;
    return block_lo + q + (block_lo + q >= c0 ? w : 0);
  };
  if (origin != nullptr && spread) {
#pragma unroll
    for (int u = 0; u < kMovesPerThread; ++u) {
      const int e = first + u * threads;
      if (e < moves)
        moved_spread[u] = a[static_cast<std::size_t>(p.pair_src[e / others]) * ld + column_of(e)];
    }
  } else if (origin != nullptr) {
    for (int q = first; q < others; q += threads) {
      const int col = column_of(q);
      float moved[2 * W];
#pragma unroll
      for (int t = 0; t < 2 * W; ++t)
        if (t < count) moved[t] = a[static_cast<std::size_t>(p.pair_src[t]) * ld + col];
#pragma unroll
      for (int t = 0; t < 2 * W; ++t)
        if (t < count) a[static_cast<std::size_t>(p.pair_dst[t]) * ld + col] = moved[t];
    }
  }
  if (bulk) bulk_store_wait();
  cluster.sync();  // no CTA leaves while another may still address its shared memory; and
                   // every spread read of the moved rows is done before any write
  if (origin != nullptr && spread) {
#pragma unroll
    for (int u = 0; u < kMovesPerThread; ++u) {
      const int e = first + u * threads;
      if (e < moves)
        a[static_cast<std::size_t>(p.pair_dst[e / others]) * ld + column_of(e)] = moved_spread[u];
    }
  }
}
#endif

}  // namespace tcsolve::cuda::kernels::leaf_device
