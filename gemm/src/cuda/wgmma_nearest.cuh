// The nearest-column epilogue of the wgmma kernels (wgmma_gemm.cu's kNearest instances,
// cuda::nearest_columns): per output tile, each point's best (score, j) over the tile's
// centroid columns, where score_j = weights[j] - 2 D(i, j) in FP64 (one rounding; D the
// unscaled FP32 product, as the unfused path stores it), the lowest j on ties.
//
// FP64 per element is the epilogue's cost on Hopper (a conversion to FP64 issues at 16 per
// clock per SM), so the tile is first scored in FP32 and only possible winners in FP64:
//   s32_j = fl32(w32_j - 2 D_j), w32_j = fl32(weights[j])       (one FFMA)
//   |s32_j - score_j| <= 2^-24 (1 + 2^-22) (W + |s32_j|) + 2^-148, W = max_j |w32_j|,
// so a column whose s32 exceeds the thread's smallest s32 by more than
//   T = 2^-21 (W + |s32_min|) + 2^-126        (twice the sum of the two columns' bounds)
// scores strictly worse in FP64 than the smallest one's column and cannot win. Usually the
// smallest s32's column is the only one within T: its FP64 score alone is computed. Otherwise
// (ties, a non-finite score, W overflowing) every column of the row is scored in FP64, in
// ascending j, as the unfused path compares them. The labels are those of scoring every
// column in FP64, bit for bit.
// The unscaling D = v 2^-(sa + sb) is one multiplication by the exact power of two
// 2^-sa 2^-sb when every exponent involved is a normal FP32 number (the bounds prepared per
// call below); a warp with a row outside that range takes unscale()'s two-step path and
// scores every column in FP64 (the exact path).
// Included by wgmma_gemm.cu after unscale() and nearer(), inside its anonymous namespace.
#pragma once

/// The per-call column data of the nearest-column epilogue: column j of B's {2^-sb_j, w32_j}
/// (padding columns j >= n: {1, +inf}, never a smallest score), and the bounds below.
struct NearestBounds {
  int sb_min, sb_max;  ///< the columns' scaling exponents' range (0, 0 without scaling)
  float w_bound;       ///< W = max_j |w32_j| (inf when a weight is not finite in FP32)
};

/// One block: columns[j] for j < np and *bounds (min / max reductions: any order, the same
/// result).
__global__ void __launch_bounds__(1024) nearest_columns_prep_kernel(int n, int np, const int* shift_b,
                                                                    const double* weights, float2* columns,
                                                                    NearestBounds* bounds) {
  int lo = INT_MAX, hi = INT_MIN;
  float w = 0.0f;
  for (int j = threadIdx.x; j < np; j += blockDim.x) {
    float2 c = make_float2(1.0f, CUDART_INF_F);
    if (j < n) {
      const int sb = shift_b != nullptr ? shift_b[j] : 0;
      lo = min(lo, sb), hi = max(hi, sb);
      c.x = -sb >= -126 && -sb <= 127 ? scale_factor(-sb) : 1.0f;  // out of range: sb_min / max say so
      c.y = __double2float_rn(weights[j]);
      const float a = fabsf(c.y);
      w = isfinite(c.y) ? fmaxf(w, a) : CUDART_INF_F;
    }
    columns[j] = c;
  }
  __shared__ int s_lo[32], s_hi[32];
  __shared__ float s_w[32];
  for (int off = 16; off > 0; off /= 2) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
    w = fmaxf(w, __shfl_xor_sync(0xffffffffu, w, off));
  }
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (threadIdx.x % 32 == 0) s_lo[warp] = lo, s_hi[warp] = hi, s_w[warp] = w;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int q = 1; q < warps; ++q) lo = min(lo, s_lo[q]), hi = max(hi, s_hi[q]), w = fmaxf(w, s_w[q]);
    *bounds = NearestBounds{n > 0 ? lo : 0, n > 0 ? hi : 0, w};
  }
}

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)

/// The exact path: every column unscaled by unscale() and scored in FP64, for the rows h
/// without skip[h].
__device__ __forceinline__ void nearest_score_exact(const MainParams& p, const float (&acc)[64], const int (&sa)[2],
                                                    int col0, const bool (&skip)[2], double (&best)[2],
                                                    int (&best_j)[2]) {
#pragma unroll
  for (int c = 0; c < 16; ++c) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int gj = col0 + 8 * c + e;
      if (gj >= p.n) continue;
      const int sb = p.shift_b != nullptr ? p.shift_b[gj] : 0;
      const double w = p.weights[gj];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (skip[h]) continue;
        const float v = p.shift_a != nullptr ? unscale(acc[4 * c + 2 * h + e], sa[h], sb) : acc[4 * c + 2 * h + e];
        // 2 v is exact: fused or not, the subtraction rounds once (the unfused scores)
        const double s = w - 2.0 * static_cast<double>(v);
        if (s < best[h]) best[h] = s, best_j[h] = gj;
      }
    }
  }
}

/// The tile's scores of the thread's two rows (row0, row0 + 8) and 32 columns (col0 + 8 c + e)
/// folded into best / best_j (the columns in ascending order, strict <: the lowest j on ties;
/// the tiles of a row come in ascending tn, so the same holds across tiles). acc: the raw
/// accumulators.
__device__ __forceinline__ void nearest_score_tile(const MainParams& p, const NearestBounds& nb, const float (&acc)[64],
                                                   int row0, int col0, double (&best)[2], int (&best_j)[2]) {
  int sa[2] = {0, 0};
  if (p.shift_a != nullptr) {
    if (row0 < p.m) sa[0] = p.shift_a[row0];
    if (row0 + 8 < p.m) sa[1] = p.shift_a[row0 + 8];
  }
  // one multiplication by 2^-sa 2^-sb is unscale() when -sa, -sb and -(sa + sb) are normal exponents
  bool fast = true;
  float fa[2] = {1.0f, 1.0f};
  if (p.shift_a != nullptr) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      fast = fast && -sa[h] >= -126 && -sa[h] <= 127 && -(sa[h] + nb.sb_max) >= -126 && -(sa[h] + nb.sb_min) <= 127;
      fa[h] = scale_factor(min(127, max(-126, -sa[h])));
    }
    fast = fast && -nb.sb_max >= -126 && -nb.sb_min <= 127;
  }
  if (!__all_sync(0xffffffffu, fast)) {
    const bool none[2] = {false, false};
    nearest_score_exact(p, acc, sa, col0, none, best, best_j);
    return;
  }
  const float2* columns = p.columns;  // padded to whole tiles
  // the smallest FP32 score, its column and D, and the second smallest (fmin / fmax skip NaN:
  // a NaN score is NaN in FP64 too, and never wins)
  float smin[2] = {CUDART_INF_F, CUDART_INF_F}, snext[2] = {CUDART_INF_F, CUDART_INF_F}, dmin[2] = {0.0f, 0.0f};
  int jmin[2] = {-1, -1};
#pragma unroll
  for (int c = 0; c < 16; ++c) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int gj = col0 + 8 * c + e;
      const float2 col = columns[gj];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float d = __fmul_rn(acc[4 * c + 2 * h + e], __fmul_rn(fa[h], col.x));
        const float s = __fmaf_rn(-2.0f, d, col.y);
        snext[h] = fminf(snext[h], fmaxf(s, smin[h]));
        if (s < smin[h]) smin[h] = s, dmin[h] = d, jmin[h] = gj;
      }
    }
  }
  // jmin alone can win when every other column's FP32 score exceeds smin + T
  bool alone[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float thr = __fadd_rn(smin[h], __fmaf_rn(0x1p-21f, __fadd_rn(nb.w_bound, fabsf(smin[h])), 0x1p-126f));
    alone[h] = jmin[h] >= 0 && snext[h] > thr;
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (alone[h]) {  // the usual case: jmin alone can win
      const double s = p.weights[jmin[h]] - 2.0 * static_cast<double>(dmin[h]);
      if (s < best[h]) best[h] = s, best_j[h] = jmin[h];
    }
  }
  if (alone[0] && alone[1]) return;
  // near ties or non-finite scores: every column in FP64 (there unscale() is the one
  // multiplication above, bit for bit)
  nearest_score_exact(p, acc, sa, col0, alone, best, best_j);
}

/// The row block's last tile: the 4 lanes of a row merge their best, lane % 4 == 0 writes the
/// label and counts it when it changed; best / best_j are reset for the next row block.
__device__ __forceinline__ void nearest_finish_rows(const MainParams& p, int row0, int lane, double (&best)[2],
                                                    int (&best_j)[2]) {
  bool moved[2] = {false, false};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int off = 1; off <= 2; off *= 2) {
      const double s = __shfl_xor_sync(0xffffffffu, best[h], off);
      const int j = __shfl_xor_sync(0xffffffffu, best_j[h], off);
      if (nearer(s, j, best[h], best_j[h])) best[h] = s, best_j[h] = j;
    }
    const int gi = row0 + 8 * h;
    if (lane % 4 == 0 && gi < p.m) {
      const int label = best_j[h] == INT_MAX ? 0 : best_j[h];  // no score won: cluster 0
      moved[h] = p.labels[gi] != label;
      p.labels[gi] = label;
    }
    best[h] = CUDART_INF, best_j[h] = INT_MAX;
  }
  const int count = __popc(__ballot_sync(0xffffffffu, moved[0])) + __popc(__ballot_sync(0xffffffffu, moved[1]));
  if (lane == 0 && count != 0) atomicAdd(p.changed, static_cast<unsigned long long>(count));
}

#endif
