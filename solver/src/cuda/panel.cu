// The leaf of the GPU LU's panel factorization: partial pivoting on an m x w column block (m = n
// - c0 rows, w <= 32 columns) of the row-major FP32 matrix in ONE kernel launch, the block held
// in the registers of a thread block cluster (up to 16 CTAs of 256 threads, 4 rows of 32
// values per thread at n = 16384).
//
// Why: cuSOLVER's sgetrf costs about 4 us per column whatever the panel width (measured on the
// H100, docs/benchmark-history.md), 55-65 ms for the 16384 columns of n = 16384: several kernel
// launches and grid-wide reductions per column. Here a column costs 1.3-1.8 us (measured: one
// CTA to 16), bound by the latency of the chain below, not by the
// arithmetic (docs/benchmark-history.md has the cycle counts per part). Rows come in and go out by one
// bulk copy each (cp.async.bulk), which keeps the whole 128 KB per CTA in flight.
//
// Per column i:
//   1. each thread finds the largest |a(r, i)| of its live rows (rows not yet chosen as pivots),
//      the warp reduces with redux.sync (ties: the lower row), the winning lane stages its
//      whole row in shared memory;
//   2. warp 0 reduces the CTA's warps (redux.sync again) and posts the CTA's candidate (magnitude, row, its w
//      values) into slot [rank] of every CTA of the cluster with st.async, which completes the
//      receiver's mbarrier (each CTA arms its own with the cluster's bytes); slots and
//      barriers alternate by column parity, so a slot is never rewritten before every CTA has
//      read it. (A cluster barrier per column cost 0.7 us by itself: its release is a GPU-wide
//      memory fence.)
//   3. every thread waits for its CTA's barrier phase, every warp picks the winner among the
//      candidates (redux.sync; the same in every CTA: its values are U's row i), retires it if it owns it,
//      and updates its other live rows: l = a(r, i) times the pivot's reciprocal (LAPACK sgetf2's scaling),
//      a(r, c) -= l u(i, c) for c > i, on registers.
// Look-ahead (the default since session 6): step 3 updates column i + 1 first, steps 1 and 2
// for column i + 1 follow at once (the owner stages its row with the rest of the update
// applied: the same fmaf, the same bits), and the rest of step 3's update runs while the
// candidates travel.
// The register columns rotate by kChunk every kChunk steps, so that step i works on register
// column i mod kChunk, a compile-time index, with kChunk steps unrolled instead of 32 (all 32
// unrolled, the kernel was 475 KB of code and no faster). kChunk = 2 (130 KB of code): with
// the look-ahead, 8 (212 KB) and 4 (158 KB) were 3.5 and 0.5 ms slower at n = 16384 (the
// instruction cache: ncu found 15% of the stall samples of the 8-step kernel without the
// look-ahead, 169 KB, to be instruction fetches), every step (1) 1.6 ms slower (its 128 moves
// per step).
// Rows never move inside the kernel: the pivot rows are marked, not swapped. At the end every
// row is written to its final place: the pivot of step i to row c0 + i, the rows of the block
// [c0, c0 + w) that were not chosen to the places the chosen rows below the block left (in
// order), every other row stays. The same permutation, as (dst, src) row pairs in the format
// of interchanges.hpp, goes to `pairs`; with `origin` the kernel also moves those rows in the
// other columns of the LU's 512-column block (one column per thread, as row_swap.cu's
// pairs_kernel would in a launch of its own) and composes them into `origin`, for the block's
// permutation of the columns outside it (row_swap.cu). Any consistent row permutation gives
// P A = L U; this one moves at most 2w rows.
//
// An exactly zero pivot (the column is zero below the diagonal) is reported as the 1-based
// global column in *info (the first one: later leaves leave a set *info alone), the column's
// multipliers are left unscaled (zeros), and the factorization goes on, as LAPACK's sgetf2.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "kernels.hpp"
#include "leaf_device.cuh"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/per_device.hpp"

namespace tcsolve::cuda::kernels {
namespace {

namespace cg = cooperative_groups;

using namespace leaf_device;

/// One CTA's candidate pivot row as posted to the cluster: its w values, |a(r, i)| and the
/// row, padded to whole 16-byte st.async vectors.
template <int W>
struct alignas(16) Candidate {
  static constexpr int kWords = (W + 2 + 3) / 4 * 4;
  static constexpr int kChunks = kWords / 4;
  float words[kWords];  ///< values[0..W), magnitude at W, row (as bits) at W + 1
};

static_assert(sizeof(Candidate<32>) == 16 * Candidate<32>::kChunks, "whole st.async pieces");
static_assert(sizeof(Candidate<8>) == 16 * Candidate<8>::kChunks, "whole st.async pieces");
static_assert(sizeof(Candidate<16>) == 16 * Candidate<16>::kChunks, "whole st.async pieces");

template <int W, int RPT>
struct LeafShared {
  /// The CTA's rows on their way in and out (bulk copies), each padded by 16 bytes so that the
  /// 16-byte reads of 8 consecutive threads' rows hit different banks.
  float rows[kThreads * RPT][W + 4];
  Candidate<W> slot[2][kMaxCluster];     ///< candidates posted by the CTAs of the cluster
  unsigned long long full[2];            ///< mbarriers: slot[p] holds every CTA's candidate
  unsigned long long loaded;             ///< mbarrier: the CTA's rows have arrived
  Candidate<W> stage[kWarps];            ///< each warp's candidate, as it will be posted
  LeafPermutation<W> perm;               ///< the pivots (perm.chosen) and the write-back's permutation
};


template <int W, int RPT, int kChunk, bool Ahead>
__global__ void __launch_bounds__(kThreads, 1)
    leaf_kernel(float* __restrict__ a, int ld, int n, int c0, int w, int* __restrict__ pairs,
                int* __restrict__ info, int block_lo, int block_hi, int* __restrict__ origin, bool allow_bulk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Slot = Candidate<W>;
  extern __shared__ float4 dynamic_shared[];
  LeafShared<W, RPT>& sh = *reinterpret_cast<LeafShared<W, RPT>*>(dynamic_shared);
  cg::cluster_group cluster = cg::this_cluster();
  const int clusters = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int m = n - c0;
  // Thread tid owns rows rank * kThreads RPT + k * kThreads + tid (relative to c0), k < RPT.
  // When the rows are 16-byte aligned and whole (w = W), they come in by one bulk copy each
  // (allow_bulk; the copy engine keeps the whole 128 KB in flight: at 32 columns 8 warps of
  // loads kept 30 KB and took 5-10 us), else thread by thread (16-byte loads where aligned).
  const bool bulk = allow_bulk && w == W && ld % 4 == 0 && c0 % 4 == 0;
  const int first_row = rank * kThreads * RPT;
  const int rows_here = max(0, min(kThreads * RPT, m - first_row));
  if (tid == 0) {
    barrier_init(&sh.full[0], 1);
    barrier_init(&sh.full[1], 1);
    barrier_init(&sh.loaded, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (bulk) barrier_arrive_expect(&sh.loaded, static_cast<unsigned>(rows_here * W * sizeof(float)));
  }
  __syncthreads();  // sh.loaded exists
  float v[RPT][W];
  int row[RPT], step[RPT];
  bool live[RPT];
#pragma unroll
  for (int k = 0; k < RPT; ++k) {
    row[k] = first_row + k * kThreads + tid;
    live[k] = row[k] < m;
    step[k] = -1;
  }
  leaf_issue_loads<W, RPT, kThreads>(sh.rows, a, ld, c0, bulk, row, live, &sh.loaded);
  cluster.sync();  // every CTA's barriers exist before anyone posts
  if (bulk) barrier_wait(&sh.loaded, 0);
  leaf_take_rows<W, RPT, kThreads>(sh.rows, v, a, ld, c0, w, bulk, row, live, false);

  // The columns rotate through the registers: before chunk j, register column p holds matrix
  // column (p + kChunk j) mod W, so step i = kChunk j + t works on register column t, a
  // compile-time index, with only kChunk steps unrolled. (Unrolling all 32 steps made 475 KB
  // of code, and the instruction cache misses cost more than the arithmetic.) Register
  // columns from W - kChunk j on hold the multipliers of the finished columns; the update
  // leaves them alone through a zero in u.

  // 1. The warp's candidate for register column `col`: each thread finds the largest magnitude
  //    among its live rows; magnitudes compare as the bits of non-negative floats (NaN counts
  //    as +inf, so it surfaces; 0 marks "no live row", and a live zero beats it through its
  //    row), so the warp reduces with two redux.sync: the largest magnitude, then the lowest
  //    row among the rows that have it. The owner stages its row, value(k, c) for register
  //    column c, in the order of the step that will read it (shifted by `shift` columns when
  //    that step comes after a rotation); lane 0 the magnitude and the row.
  auto stage_candidate = [&](int col, int shift, auto value) {
    unsigned key = 0u;
    int best_row = INT_MAX, best_k = -1;
#pragma unroll
    for (int k = 0; k < RPT; ++k) {
      float mag = fabsf(v[k][col]);
      if (mag != mag) mag = __int_as_float(0x7f800000);
      const unsigned bits = __float_as_uint(mag);
      if (live[k] && (bits > key || (bits == key && row[k] < best_row))) key = bits, best_row = row[k], best_k = k;
    }
    const int mine = best_row;
    const unsigned warp_key = __reduce_max_sync(kFull, key);
    best_row = __reduce_min_sync(kFull, key == warp_key ? best_row : INT_MAX);
    // Only the owner stages its row (a real branch: the other k's stores are not issued).
    if (best_row == mine && best_k >= 0) {
#pragma unroll
      for (int k = 0; k < RPT; ++k)
        if (k == best_k) {
#pragma unroll
          for (int c = 0; c < W; ++c) sh.stage[warp].words[c] = value(k, (c + shift) % W);
        }
    }
    if (lane == 0) {
      sh.stage[warp].words[W] = __uint_as_float(warp_key);
      sh.stage[warp].words[W + 1] = __int_as_float(best_row);
    }
  };
  // 2. Warp 0, after a __syncthreads: the CTA's candidate, posted to every CTA of the cluster
  //    by st.async: each 16-byte piece completes 16 bytes of the receiver's mbarrier phase,
  //    which the receiver armed with the whole cluster's bytes (tx-counts may arrive before the
  //    arming: the phase cannot complete without the local arrival).
  auto post_candidate = [&](int parity) {
    const unsigned warp_best = lane < kWarps ? __float_as_uint(sh.stage[lane].words[W]) : 0u;
    const int warp_row = lane < kWarps ? __float_as_int(sh.stage[lane].words[W + 1]) : INT_MAX;
    const unsigned cta_key = __reduce_max_sync(kFull, warp_best);
    const int cta_row = __reduce_min_sync(kFull, warp_best == cta_key ? warp_row : INT_MAX);
    const int from = __ffs(__ballot_sync(kFull, lane < kWarps && warp_best == cta_key && warp_row == cta_row)) - 1;
    // Lane d posts the winning warp's stage to CTA d. The whole candidate comes into
    // registers first (all lanes load before any lane stores): once this CTA's own copy has
    // landed, its other warps may go on to the next column and overwrite the stage.
    float4 piece[Slot::kChunks];
#pragma unroll
    for (int c = 0; c < Slot::kChunks; ++c) piece[c] = reinterpret_cast<const float4*>(sh.stage[from].words)[c];
    __syncwarp();
    if (lane == 0) barrier_arrive_expect(&sh.full[parity], clusters * static_cast<unsigned>(sizeof(Slot)));
    if (lane < clusters) {
      const unsigned slot = remote_address(shared_address(&sh.slot[parity][rank]), lane);
      const unsigned bar = remote_address(shared_address(&sh.full[parity]), lane);
#pragma unroll
      for (int c = 0; c < Slot::kChunks; ++c) store_async(slot + 16 * c, piece[c], bar);
    }
  };
  const auto unchanged = [&](int k, int c) { return v[k][c]; };

  // Ahead: column i + 1's candidate is staged and posted within step i, as soon as that
  // column is updated, and the rest of step i's update runs while the candidates travel; the
  // owner stages its row with the rest of the update applied (the same fmaf as its registers
  // get afterwards, so the same bits). Otherwise each step posts its own column's candidate
  // after the previous step's whole update.
  if constexpr (Ahead) {
    stage_candidate(0, 0, unchanged);
    __syncthreads();
    if (warp == 0) post_candidate(0);
  }
  int rotation = 0;
#pragma unroll 1
  for (int j = 0; j * kChunk < w; ++j, rotation += kChunk) {
    const int live_columns = W - kChunk * j;
#pragma unroll
    for (int t = 0; t < kChunk; ++t) {
      const int i = kChunk * j + t;
      if (i >= w) break;
      const int parity = i & 1;
      if constexpr (!Ahead) {
        stage_candidate(t, 0, unchanged);
        __syncthreads();
        if (warp == 0) post_candidate(parity);
      }
      // 3. Every CTA's candidate is in this CTA's slots once the phase completes.
      barrier_wait(&sh.full[parity], (i >> 1) & 1);
      // 4. The pivot, and the update of the live rows (multiplier = a(r, i) times the pivot's
      //    reciprocal, as LAPACK's sgetf2 scales).
      // Every warp finds the winner itself: lane s reads CTA s's candidate.
      const unsigned slot_key = lane < clusters ? __float_as_uint(sh.slot[parity][lane].words[W]) : 0u;
      const int slot_row = lane < clusters ? __float_as_int(sh.slot[parity][lane].words[W + 1]) : INT_MAX;
      const unsigned pivot_key = __reduce_max_sync(kFull, slot_key);
      const int q = __reduce_min_sync(kFull, slot_key == pivot_key ? slot_row : INT_MAX);
      const int from =
          __ffs(__ballot_sync(kFull, lane < clusters && slot_key == pivot_key && slot_row == q)) - 1;
      const float* u = sh.slot[parity][from].words;
      const float pivot = u[t];
      const float reciprocal = 1.0f / pivot;
      if (tid == 0) {
        sh.perm.chosen[i] = q;
        if (rank == 0 && pivot == 0.0f) atomicCAS(info, 0, c0 + i + 1);
      }
      float u_row[W];
#pragma unroll
      for (int c = t + 1; c < W; ++c) u_row[c] = c < live_columns ? u[c] : 0.0f;
      if constexpr (!Ahead) {
#pragma unroll
        for (int k = 0; k < RPT; ++k) {
          if (!live[k]) continue;
          if (row[k] == q) {
            live[k] = false;
            step[k] = i;
            continue;
          }
          const float l = pivot != 0.0f ? v[k][t] * reciprocal : v[k][t];
          v[k][t] = l;
#pragma unroll
          for (int c = t + 1; c < W; ++c) v[k][c] = fmaf(-l, u_row[c], v[k][c]);
        }
      } else {
        // Column i + 1 first (register column t + 1; before a rotation, kChunk < W), ...
        float l[RPT];
        bool update[RPT];
#pragma unroll
        for (int k = 0; k < RPT; ++k) {
          update[k] = live[k] && row[k] != q;
          l[k] = 0.0f;
          if (live[k] && row[k] == q) {
            live[k] = false;
            step[k] = i;
          }
          if (update[k]) {
            l[k] = pivot != 0.0f ? v[k][t] * reciprocal : v[k][t];
            v[k][t] = l[k];
            v[k][t + 1] = fmaf(-l[k], u_row[t + 1], v[k][t + 1]);
          }
        }
        // ... its candidate posted (after a rotation, step i + 1 reads register column c as c
        // + kChunk now) ...
        if (i + 1 < w) {
          stage_candidate(t + 1, t + 1 == kChunk ? kChunk : 0, [&](int k, int c) {
            return c > t + 1 && update[k] ? fmaf(-l[k], u_row[c], v[k][c]) : v[k][c];
          });
          __syncthreads();
          if (warp == 0) post_candidate((i + 1) & 1);
        }
        // ... and the rest of the update while it travels.
#pragma unroll
        for (int k = 0; k < RPT; ++k)
          if (update[k]) {
#pragma unroll
            for (int c = t + 2; c < W; ++c) v[k][c] = fmaf(-l[k], u_row[c], v[k][c]);
          }
      }
    }
    // Rotate by kChunk: register column p takes what p + kChunk held.
#pragma unroll
    for (int k = 0; k < RPT; ++k) {
      float first[kChunk];
#pragma unroll
      for (int c = 0; c < kChunk; ++c) first[c] = v[k][c];
#pragma unroll
      for (int c = 0; c + kChunk < W; ++c) v[k][c] = v[k][c + kChunk];
#pragma unroll
      for (int c = 0; c < kChunk; ++c) v[k][W - kChunk + c] = first[c];
    }
  }
  // Back to matrix column order: the rotation is a whole turn unless the leaf is narrower.
  for (; rotation % W != 0; ++rotation)
#pragma unroll
    for (int k = 0; k < RPT; ++k) {
      const float first = v[k][0];
#pragma unroll
      for (int c = 0; c + 1 < W; ++c) v[k][c] = v[k][c + 1];
      v[k][W - 1] = first;
    }
  leaf_write_back<W, RPT>(sh.perm, sh.rows, v, row, step, a, ld, m, c0, w, bulk, pairs, block_lo, block_hi, origin);
#else
  __trap();  // launched only on compute capability 9.0 (leaf_width() returns 0 elsewhere)
#endif
}

/// A kernel instance: leaf width W, RPT rows per thread (16 CTAs cover 16 * 256 RPT rows),
/// kChunk steps unrolled per rotation of the register columns.
struct LeafKernel {
  int width, rows_per_thread;
  void (*kernel)(float*, int, int, int, int, int*, int*, int, int, int*, bool);
  std::size_t shared_bytes;
};

template <int W, int RPT, int kChunk = 8, bool Ahead = false>
LeafKernel leaf_kernel_of() {
  static_assert(!Ahead || kChunk < W, "the look-ahead updates register column kChunk before the rotation");
  return {W, RPT, &leaf_kernel<W, RPT, kChunk, Ahead>, sizeof(LeafShared<W, RPT>)};
}

int cluster_size(const LeafKernel& k, int m) {
  const int rows = kThreads * k.rows_per_thread;
  return (m + rows - 1) / rows;
}

/// The launch of one cluster of `clusters` CTAs of this kernel on `stream`; the
/// configuration points to `attribute`, which must outlive it.
cudaLaunchConfig_t cluster_launch(cudaStream_t stream, const LeafKernel& k, int clusters,
                                  cudaLaunchAttribute& attribute) {
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(clusters);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(clusters));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = k.shared_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

/// Whether the device can run a cluster of `clusters` CTAs of this kernel (sets the kernel's
/// attributes on the way).
bool schedulable(const LeafKernel& k, int clusters) {
  if (cudaFuncSetAttribute(k.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(k.shared_bytes)) != cudaSuccess ||
      cudaFuncSetAttribute(k.kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_launch(nullptr, k, clusters, attribute);
  int active = 0;
  if (cudaOccupancyMaxActiveClusters(&active, k.kernel, &config) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return active >= 1;
}

constexpr int kKernels = 4;  ///< kernels per LeafVariant (kernels_of)

/// The kernels of one LeafVariant, widest leaf first, then the fewest rows a thread (32 x 4,
/// 16 x 8, 16 x 9, 8 x 16).
const LeafKernel* kernels_of(LeafVariant leaf) {
  // The 32-column leaf rotates its registers every 2 steps and posts column i + 1's candidate
  // before the rest of step i's update (session 6: leaves 37.7 -> 35.8-36.1 ms at n = 16384).
  // To compare (LeafVariant, the plan's leaf_chunk and leaf_ahead): 8, 4 or 1 steps per
  // rotation (8 was session 5's, the code then twice as large: ncu found 15% of its stall
  // samples to be instruction-cache misses) and no look-ahead (each step posts its own
  // column's candidate).
  // The 16- and 8-column kernels: one build each (no look-ahead, rotating every 8 steps); with
  // the look-ahead (rotating every 4 steps) they measured 2-5% slower a leaf (session 26, call i:
  // 36.8 against 35.0 us at 8 columns and 65531 rows, 46.7 against 45.5 at 16 and 32763).
  // The 16-column leaf also comes with 9 rows a thread (36864 rows a cluster; 255 registers, no
  // stack frame by ptxas -v; 10 rows spilled 116 bytes), so that the blocks with 32769-36864
  // rows below them take 16-column leaves, not 8 (session 27).
  static const LeafKernel variants[8][kKernels] = {
      {leaf_kernel_of<32, 4, 2, true>(), leaf_kernel_of<16, 8>(), leaf_kernel_of<16, 9>(), leaf_kernel_of<8, 16>()},
      {leaf_kernel_of<32, 4, 8, true>(), leaf_kernel_of<16, 8>(), leaf_kernel_of<16, 9>(), leaf_kernel_of<8, 16>()},
      {leaf_kernel_of<32, 4, 4, true>(), leaf_kernel_of<16, 8>(), leaf_kernel_of<16, 9>(), leaf_kernel_of<8, 16>()},
      {leaf_kernel_of<32, 4, 1, true>(), leaf_kernel_of<16, 8>(), leaf_kernel_of<16, 9>(), leaf_kernel_of<8, 16>()},
      {leaf_kernel_of<32, 4, 2>(), leaf_kernel_of<16, 8>(), leaf_kernel_of<16, 9>(), leaf_kernel_of<8, 16>()},
      {leaf_kernel_of<32, 4, 8>(), leaf_kernel_of<16, 8>(), leaf_kernel_of<16, 9>(), leaf_kernel_of<8, 16>()},
      {leaf_kernel_of<32, 4, 4>(), leaf_kernel_of<16, 8>(), leaf_kernel_of<16, 9>(), leaf_kernel_of<8, 16>()},
      {leaf_kernel_of<32, 4, 1>(), leaf_kernel_of<16, 8>(), leaf_kernel_of<16, 9>(), leaf_kernel_of<8, 16>()}};
  const int c = leaf.chunk;
  if (c != 2 && c != 8 && c != 4 && c != 1)
    throw InvalidInput("leaf kernel: registers rotate every 1, 2, 4 or 8 steps, got " + std::to_string(c));
  return variants[(c == 8 ? 1 : c == 4 ? 2 : c == 1 ? 3 : 0) + (leaf.ahead ? 0 : 4)];
}

/// Whether the calling thread's device runs kernel k as a cluster of `clusters` CTAs (compute
/// capability 9.0, the cluster schedulable). Remembered per (device, kernel, clusters) (a
/// property of the device, whose kernel attributes are set on the first ask, under that
/// device's lock only: per_device.hpp): the LU asks once per leaf, and GPUs used in turn keep
/// theirs.
bool runs_here(const LeafKernel& k, int clusters) {
  if (clusters < 1 || clusters > kMaxCluster) return false;
  static tcsolve::detail::PerDeviceMap<std::pair<const void*, int>, bool> found;  // (kernel, clusters)
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return found.get({reinterpret_cast<const void*>(k.kernel), clusters}, [&] {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return major == 9 && schedulable(k, clusters);
  });
}

/// The widest kernel (of those, the fewest rows a thread) whose cluster holds `rows` rows on this
/// device, or null; `width` > 0: of that width only.
const LeafKernel* kernel_for(int rows, LeafVariant leaf, int width = 0) {
  const LeafKernel* kernels = kernels_of(leaf);
  for (int i = 0; i < kKernels; ++i)
    if ((width == 0 || kernels[i].width == width) && runs_here(kernels[i], cluster_size(kernels[i], rows)))
      return &kernels[i];
  return nullptr;
}

}  // namespace

int leaf_width(int rows, LeafVariant leaf) {
  const LeafKernel* k = kernel_for(rows, leaf);
  return k ? k->width : 0;
}

void factor_leaf(CUstream_st* stream, LeafVariant leaf, int width, float* a, int ld, int n, int c0, int w, int* pairs,
                 int* info, int block_lo, int block_hi, int* origin) {
  const LeafKernel* k = c0 >= 0 && c0 < n ? kernel_for(n - c0, leaf, width) : nullptr;
  if (!k || w < 1 || w > k->width || c0 < 0 || c0 + w > n)
    throw InvalidInput("factor_leaf: block c0 = " + std::to_string(c0) + ", w = " + std::to_string(w) +
                       " of n = " + std::to_string(n) + " is not a leaf of width " + std::to_string(width) +
                       " this device can factor");
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_launch(stream, *k, cluster_size(*k, n - c0), attribute);
  if (origin != nullptr && (block_lo < 0 || block_lo > c0 || c0 + w > block_hi || block_hi > n))
    throw InvalidInput("factor_leaf: leaf c0 = " + std::to_string(c0) + ", w = " + std::to_string(w) +
                       " not inside the block [" + std::to_string(block_lo) + ", " +
                       std::to_string(block_hi) + ")");
  const bool bulk = leaf.copies == LeafCopies::bulk || (leaf.copies == LeafCopies::automatic && k->width == 32);
  TCSOLVE_CUDA_CHECK(
      cudaLaunchKernelEx(&config, k->kernel, a, ld, n, c0, w, pairs, info, block_lo, block_hi, origin, bulk));
}

}  // namespace tcsolve::cuda::kernels
