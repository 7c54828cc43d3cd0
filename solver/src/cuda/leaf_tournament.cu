// The leaf of the GPU LU's panel with tournament pivoting (CudaLuPlan::Leaf::tournament): the
// m x w column block (m = n - c0 rows, w <= 32 columns) of the row-major FP32 matrix, held by a
// cluster of up to 16 CTAs of 512 threads (1024 rows a CTA, 2 of 32 values per thread), factored as
//   P A_leaf = L U,  with the w pivot rows chosen by a two-level tournament.
// Tournament pivoting is CALU's panel factorization (Grigori, Demmel and Xiang, "CALU: a
// communication optimal LU factorization algorithm", SIAM J. Matrix Anal. Appl. 32 (2011);
// TSLU with a flat reduction tree of two levels):
//   1. every CTA runs partial pivoting on its own rows (up to 1024) and keeps the w rows it chose
//      as its candidates (their ORIGINAL values, held in shared memory);
//   2. every CTA reads the cluster's candidates (up to 16 x 32 = 512 rows) through distributed
//      shared memory and runs partial pivoting on them: its w pivots, in order, are the leaf's,
//      and its eliminated pivot rows are U. Every CTA does the same arithmetic on the same
//      values, so all of them hold the same pivots and U without another exchange;
//   3. every row r then gets its multipliers by substitution with those pivots, l_r = a_r U^-1,
//      as the steps of partial pivoting would give them (l = a(r, i) times the pivot's
//      reciprocal, a(r, c) -= l u(i, c) with fmaf, step after step), so a pivot row's columns
//      from its step on are bitwise its row of U.
// Why: partial pivoting's leaf (panel.cu) makes one cluster-wide exchange per column, a chain
// of about 3000 cycles each (docs/benchmark-history.md), 36 ms of the 16384 columns at n = 16384. Here
// the steps inside a CTA need no exchange between CTAs (one __syncthreads a step), and the
// cluster exchanges once per leaf. CALU's worst-case growth factor is larger than partial
// pivoting's, and in practice alike (the paper's experiments); the refinement corrects the LU's
// error in any case. Measured (H100, session 15): 0.7-0.9 us a step, 96 steps a leaf, so the
// panel takes 56.5 ms against the cluster kernel's 50.7 at n = 16384: a step is a chain of
// 130-195 dependent instructions per warp with or without an exchange (docs/benchmark-history.md has
// the ncu stall breakdown). An option to compare, not the default. 512 threads x 2 rows: 256 x
// 4 took 55.6 ms (fewer warps to hide the chain), 1024 x 1 the same as 512 x 2.
//
// Rows never move inside the kernel; the write-back (leaf_device.cuh, shared with panel.cu)
// puts them in their places, writes the (dst, src) pairs and moves the rows in the block's
// other columns, as panel.cu's leaf does. An exactly zero pivot of the final tournament is
// reported as the 1-based global column in *info (the first one), its multipliers are left
// unscaled, and the factorization goes on, as LAPACK's sgetf2.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "kernels.hpp"
#include "leaf_device.cuh"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/per_device.hpp"

namespace tcsolve::cuda::kernels {
namespace {

namespace cg = cooperative_groups;
using namespace leaf_device;

constexpr int kW = kMaxLeafWidth;  ///< 32 columns
constexpr int kCtaRows = 1024;     ///< rows per CTA (16 CTAs: n <= 16384)
constexpr int kLeafThreads = 512;  ///< threads per CTA
constexpr int kLeafWarps = kLeafThreads / 32;
constexpr int kRows = kCtaRows / kLeafThreads;  ///< rows per thread
/// Candidates per thread in the final round: 16 x 32 = 512 in all.
constexpr int kCandidateRows = (kMaxCluster * kW + kLeafThreads - 1) / kLeafThreads;

static_assert(kCandidateRows <= kRows && kLeafWarps <= 32, "the final round's candidates fit the registers");

/// A warp's pivot candidate for one step: its row's values from the step's column on, |a(r, i)|
/// as bits, and the row (relative to c0).
struct alignas(16) Stage {
  float values[kW];
  unsigned key;
  int row;
  int pad[2];
};

struct TournamentShared {
  /// The CTA's rows as loaded (the original values: the final round and the substitution read
  /// them), then the write-back's staging; padded by 16 bytes (panel.cu's bank argument).
  float rows[kCtaRows][kW + 4];
  Stage stage[2][kLeafWarps];   ///< the warps' candidates, by step parity
  int candidates[kW];           ///< this CTA's first-round pivots (rows relative to c0; -1: none)
  alignas(16) float u[kW][kW];  ///< the final round's pivot rows: U (row i from column i on)
  float scale[kW];              ///< the reciprocals of U's diagonal (1 for a zero pivot)
  int step_of[kCtaRows];        ///< the step that chose each of this CTA's rows, or -1
  unsigned long long loaded;    ///< mbarrier: the CTA's rows have arrived
  LeafPermutation<kW> perm;     ///< perm.chosen: the leaf's pivots
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

/// What a round of eliminate() does.
enum class Round {
  own,          ///< choose pivots among the CTA's rows (the first round)
  final_round,  ///< choose them among the cluster's candidates, keep U, report a zero pivot
  substitute,   ///< take the final round's pivots and U (the multipliers of every row)
};

/// The w steps of partial pivoting, by the whole CTA, on the rows its threads hold: thread tid
/// holds kRows rows v[k] (row ids row[k], relative to c0; live[k]: not chosen yet and present).
/// A choosing round's step i (one __syncthreads): each warp's largest |v(., i)| (NaN as +inf,
/// ties to the lower row; redux.sync), whose owner stages its row; every warp then picks the
/// CTA's winner q among the stages the same way. A substituting step takes q = chosen[i] and its
/// row from U. Then the step retires q and updates every other live row:
/// l = v(r, i) times the pivot's reciprocal (LAPACK's sgetf2), v(r, c) -= l u(c) by fmaf.
/// chosen[i] = the pivot row (-1: no live row left in a choosing round). One body for the three
/// rounds (a runtime switch): the code is 4 x 496 FMAs a round, and three unrolled copies made a
/// 350 KB kernel.
__device__ __forceinline__ void eliminate(TournamentShared& sh, Round round, float (&v)[kRows][kW],
                                          const int (&row)[kRows], bool (&live)[kRows], int w, int* chosen,
                                          int* info, int c0, bool report) {
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
#pragma unroll
  for (int i = 0; i < kW; ++i) {
    if (i >= w) break;
    const float* u;
    int q;
    float scale;
    if (round == Round::substitute) {  // nothing of this step waits for the one before
      q = chosen[i];
      u = sh.u[i];
      scale = sh.scale[i];
    } else {
      Stage* stage = sh.stage[i & 1];
      unsigned key = 0u;
      int best_row = INT_MAX, best_k = -1;
#pragma unroll
      for (int k = 0; k < kRows; ++k) {
        float mag = fabsf(v[k][i]);
        if (mag != mag) mag = __int_as_float(0x7f800000);
        const unsigned bits = __float_as_uint(mag);
        if (live[k] && (bits > key || (bits == key && row[k] < best_row)))
          key = bits, best_row = row[k], best_k = k;
      }
      const unsigned warp_key = __reduce_max_sync(kFull, key);
      const int warp_row = __reduce_min_sync(kFull, key == warp_key ? best_row : INT_MAX);
      if (best_k >= 0 && best_row == warp_row) {
#pragma unroll
        for (int k = 0; k < kRows; ++k)
          if (k == best_k) {
#pragma unroll
            for (int c = i; c < kW; ++c) stage[warp].values[c] = v[k][c];
          }
      }
      if (lane == 0) stage[warp].key = warp_key, stage[warp].row = warp_row;
      __syncthreads();
      // Every warp finds the CTA's winner itself: lane s reads warp s's stage.
      const unsigned stage_key = lane < kLeafWarps ? stage[lane].key : 0u;
      const int stage_row = lane < kLeafWarps ? stage[lane].row : INT_MAX;
      const unsigned pivot_key = __reduce_max_sync(kFull, stage_key);
      q = __reduce_min_sync(kFull, stage_key == pivot_key ? stage_row : INT_MAX);
      if (q == INT_MAX) {  // no live row in the CTA (its rows are fewer than w): no candidate
        if (tid == 0) chosen[i] = -1;
        continue;
      }
      const int from =
          __ffs(__ballot_sync(kFull, lane < kLeafWarps && stage_key == pivot_key && stage_row == q)) - 1;
      u = stage[from].values;
      const float pivot = u[i];
      // l = v times the pivot's reciprocal (__frcp_rn: 1.0f / pivot, correctly rounded, without
      // the division's slow path), or v itself under a zero pivot (v * 1 is v: one code path,
      // where a select between the two made the compiler copy the whole update)
      scale = pivot != 0.0f ? __frcp_rn(pivot) : 1.0f;
      if (tid == 0) {
        chosen[i] = q;
        if (report && pivot == 0.0f) atomicCAS(info, 0, c0 + i + 1);
      }
      if (round == Round::final_round && warp == 0) {
        sh.u[i][lane] = lane >= i ? u[lane] : 0.0f;
        if (lane == 0) sh.scale[i] = scale;
      }
    }
    float u_row[kW];  // by 16-byte loads (the stages and U's rows are 16-byte aligned)
#pragma unroll
    for (int c = (i + 1) / 4 * 4; c < kW; c += 4) {
      const float4 x = *reinterpret_cast<const float4*>(u + c);
      u_row[c] = x.x, u_row[c + 1] = x.y, u_row[c + 2] = x.z, u_row[c + 3] = x.w;
    }
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      if (!live[k]) continue;
      if (row[k] == q) {
        live[k] = false;
        continue;
      }
      const float l = v[k][i] * scale;
      v[k][i] = l;
#pragma unroll
      for (int c = i + 1; c < kW; ++c) v[k][c] = fmaf(-l, u_row[c], v[k][c]);
    }
  }
}

#endif

__global__ void __launch_bounds__(kLeafThreads, 1)
    tournament_leaf_kernel(float* __restrict__ a, int ld, int n, int c0, int w, int* __restrict__ pairs,
                           int* __restrict__ info, int block_lo, int block_hi, int* __restrict__ origin) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ float4 dynamic_shared[];
  TournamentShared& sh = *reinterpret_cast<TournamentShared*>(dynamic_shared);
  cg::cluster_group cluster = cg::this_cluster();
  const int clusters = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const int tid = static_cast<int>(threadIdx.x);
  const int m = n - c0;
  // Thread tid owns rows first_row + k kLeafThreads + tid (relative to c0), k < kRows; whole
  // aligned rows come in by one bulk copy each (panel.cu).
  const bool bulk = w == kW && ld % 4 == 0 && c0 % 4 == 0;
  const int first_row = rank * kCtaRows;
  const int rows_here = max(0, min(kCtaRows, m - first_row));
  if (tid == 0) {
    barrier_init(&sh.loaded, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (bulk) barrier_arrive_expect(&sh.loaded, static_cast<unsigned>(rows_here * kW * sizeof(float)));
  }
  __syncthreads();  // sh.loaded exists
  float v[kRows][kW];
  int row[kRows], step[kRows];
  bool live[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    row[k] = first_row + k * kLeafThreads + tid;
    live[k] = row[k] < m;
    sh.step_of[k * kLeafThreads + tid] = -1;
  }
  leaf_issue_loads<kW, kRows, kLeafThreads>(sh.rows, a, ld, c0, bulk, row, live, &sh.loaded);
  if (bulk) barrier_wait(&sh.loaded, 0);
  leaf_take_rows<kW, kRows, kLeafThreads>(sh.rows, v, a, ld, c0, w, bulk, row, live, true);

  // The three rounds in one loop, so that eliminate()'s body is in the code once (inlined per
  // round, the kernel was 350 KB of straight-line code).
  //   own:         the CTA's w candidates among its rows (their original values stay in sh.rows);
  //   final_round: in every CTA, candidate j = k kLeafThreads + tid (k < kCandidateRows) is CTA
  //                j / 32's j % 32-th (absent: a CTA that does not exist or had fewer rows than
  //                w); the registers of k >= kCandidateRows stay empty;
  //   substitute:  every row's multipliers with the leaf's pivots and U, a pivot row retired at
  //                its own step (its columns from there are its row of U, bitwise).
  int ids[kRows];
#pragma unroll 1
  for (int r = 0; r < 3; ++r) {
    const Round round = static_cast<Round>(r);
    if (round == Round::final_round) {
      cluster.sync();  // every CTA's candidates (and rows) readable by the others
#pragma unroll
      for (int k = 0; k < kRows; ++k) {
        const int j = k * kLeafThreads + tid, owner = j / kW, at = j % kW;
        ids[k] = INT_MAX;
        live[k] = false;
        if (k < kCandidateRows && owner < clusters && at < w) {
          TournamentShared* remote = cluster.map_shared_rank(&sh, owner);
          const int id = remote->candidates[at];
          if (id >= 0) {
            ids[k] = id;
            live[k] = true;
            const float4* src = reinterpret_cast<const float4*>(remote->rows[id - owner * kCtaRows]);
#pragma unroll
            for (int c = 0; c < kW; c += 4) {
              const float4 x = src[c / 4];
              v[k][c] = x.x, v[k][c + 1] = x.y, v[k][c + 2] = x.z, v[k][c + 3] = x.w;
            }
          }
        }
      }
    } else {
      if (round == Round::substitute) {
        cluster.sync();  // every remote read done: the rows may be overwritten (the write-back)
        if (tid < w) {
          const int at = sh.perm.chosen[tid] - first_row;
          if (at >= 0 && at < kCtaRows) sh.step_of[at] = tid;
        }
        __syncthreads();  // sh.step_of, sh.u
      }
#pragma unroll
      for (int k = 0; k < kRows; ++k) {
        ids[k] = row[k];
        live[k] = row[k] < m;
        if (round == Round::substitute) {
          step[k] = sh.step_of[k * kLeafThreads + tid];
          const float* kept = sh.rows[k * kLeafThreads + tid];
#pragma unroll
          for (int c = 0; c < kW; c += 4) {
            const float4 x = *reinterpret_cast<const float4*>(kept + c);
            v[k][c] = x.x, v[k][c + 1] = x.y, v[k][c + 2] = x.z, v[k][c + 3] = x.w;
          }
        }
      }
    }
    eliminate(sh, round, v, ids, live, w, round == Round::own ? sh.candidates : sh.perm.chosen, info, c0,
              round == Round::final_round && rank == 0);
  }
  leaf_write_back<kW, kRows, kLeafThreads>(sh.perm, sh.rows, v, row, step, a, ld, m, c0, w, bulk, pairs,
                                           block_lo, block_hi, origin);
#else
  __trap();  // launched only on compute capability 9.0 (tournament_leaf_width() returns 0 elsewhere)
#endif
}

cudaLaunchConfig_t cluster_launch(cudaStream_t stream, int clusters, cudaLaunchAttribute& attribute) {
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(clusters);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(clusters));
  config.blockDim = dim3(kLeafThreads);
  config.dynamicSmemBytes = sizeof(TournamentShared);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}

int clusters_for(int m) { return (m + kCtaRows - 1) / kCtaRows; }

/// Whether this device runs the kernel for order n: compute capability 9.0 and the cluster of
/// n rows schedulable. Remembered per (device, n) (a property of the device, whose kernel
/// attributes are set on the first ask, under that device's lock only: per_device.hpp; the LU
/// asks once per leaf).
bool runs_here(int n) {
  static tcsolve::detail::PerDeviceMap<int, bool> found;  // by n
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return found.get(n, [&] {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    const int clusters = clusters_for(n);
    if (major != 9 || n < 1 || clusters > kMaxCluster) return false;
    if (cudaFuncSetAttribute(tournament_leaf_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(sizeof(TournamentShared))) != cudaSuccess ||
        cudaFuncSetAttribute(tournament_leaf_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
            cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config = cluster_launch(nullptr, clusters, attribute);
    int active = 0;
    if (cudaOccupancyMaxActiveClusters(&active, tournament_leaf_kernel, &config) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return active >= 1;
  });
}

}  // namespace

int tournament_leaf_width(int n) { return runs_here(n) ? kW : 0; }

void factor_leaf_tournament(CUstream_st* stream, float* a, int ld, int n, int c0, int w, int* pairs,
                            int* info, int block_lo, int block_hi, int* origin) {
  if (!runs_here(n) || w < 1 || w > kW || c0 < 0 || c0 + w > n)
    throw InvalidInput("factor_leaf_tournament: block c0 = " + std::to_string(c0) +
                       ", w = " + std::to_string(w) + " of n = " + std::to_string(n) +
                       " is not a leaf this device can factor");
  if (origin != nullptr && (block_lo < 0 || block_lo > c0 || c0 + w > block_hi || block_hi > n))
    throw InvalidInput("factor_leaf_tournament: leaf c0 = " + std::to_string(c0) +
                       ", w = " + std::to_string(w) + " not inside the block [" + std::to_string(block_lo) +
                       ", " + std::to_string(block_hi) + ")");
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_launch(stream, clusters_for(n - c0), attribute);
  TCSOLVE_CUDA_CHECK(cudaLaunchKernelEx(&config, tournament_leaf_kernel, a, ld, n, c0, w, pairs, info,
                                        block_lo, block_hi, origin));
}

}  // namespace tcsolve::cuda::kernels
