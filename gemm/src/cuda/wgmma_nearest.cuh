// The nearest-column epilogue of the wgmma kernels (wgmma_gemm.cu's Epilogue::nearest instances,
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
// column in FP64, bit for bit. The same bound holds between any two columns of a row, so the
// comparisons across tiles are made in FP32 too: a tile whose smallest s32 exceeds the s32 of
// the row's best column so far by more than T (of that s32) holds no winner, and a tile's lone
// smallest s32 below the best's by more than T is the new best, with no FP64 score computed.
// Only scores within T of each other are compared in FP64, and each row's best once more at
// the end, where the four lanes of a row merge theirs: the FP64 work and its dependent loads
// leave the common path.
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

/// Column j's data for the FP64 scores: its weight and scaling exponent (padding columns
/// j >= n: {+inf, 0}: their FP64 score is +inf, which never wins; the exact path still stops at
/// n, which keeps ptxas from hoisting all its loads).
struct NearestExactColumn {
  double w;
  int sb;
  int unused;
};

/// One block: columns[j] and exact[j] for j < np, and *bounds (min / max reductions: any
/// order, the same result).
__global__ void __launch_bounds__(1024) nearest_columns_prep_kernel(int n, int np, const int* shift_b,
                                                                    const double* weights, float2* columns,
                                                                    NearestExactColumn* exact,
                                                                    NearestBounds* bounds) {
  int lo = INT_MAX, hi = INT_MIN;
  float w = 0.0f;
  for (int j = threadIdx.x; j < np; j += blockDim.x) {
    float2 c = make_float2(1.0f, CUDART_INF_F);
    NearestExactColumn x{CUDART_INF, 0, 0};
    if (j < n) {
      const int sb = shift_b != nullptr ? shift_b[j] : 0;
      lo = min(lo, sb), hi = max(hi, sb);
      c.x = -sb >= -126 && -sb <= 127 ? scale_factor(-sb) : 1.0f;  // out of range: sb_min / max say so
      c.y = __double2float_rn(weights[j]);
      const float a = fabsf(c.y);
      w = isfinite(c.y) ? fmaxf(w, a) : CUDART_INF_F;
      x.w = weights[j], x.sb = sb;
    }
    columns[j] = c;
    exact[j] = x;
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

/// A thread's two rows (row0, row0 + 8) of the current row block: the column of the best score
/// so far (INT_MAX: none), its D (the unscaled FP32 product: its FP64 score is computed only
/// where two scores must be compared in FP64, and at the row block's end), its FP32 score s32
/// (+inf with no column) and the rows' scaling exponents.
struct NearestRows {
  int best_j[2];
  float best_d[2];
  float best32[2];
  int sa[2];
};

/// The state of a new row block: no best yet, and the rows' exponents loaded (their first use
/// is the row block's first epilogue, a tile later in the ec consumer, so the loads' latency is
/// hidden).
__device__ __forceinline__ void nearest_rows_start(const MainParams& p, int row0, NearestRows& r) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    r.best_j[h] = INT_MAX, r.best_d[h] = 0.0f, r.best32[h] = CUDART_INF_F;
    r.sa[h] = p.shift_a != nullptr && row0 + 8 * h < p.m ? p.shift_a[row0 + 8 * h] : 0;
  }
}

/// The FP64 score of column j whose unscaled product is d: weights[j] - 2 d, one rounding (2 d
/// is exact), as the unfused path scores it; +inf for no column.
__device__ __forceinline__ double nearest_score64(const MainParams& p, int j, float d) {
  return j == INT_MAX ? CUDART_INF : p.exact[j].w - 2.0 * static_cast<double>(d);
}

/// T(s) = 2^-21 (W + |s|) + 2^-126: a column whose FP32 score exceeds s + T(s) scores strictly
/// worse in FP64 than the column whose FP32 score is s (the header's bound, twice over).
__device__ __forceinline__ float nearest_margin(float w_bound, float s) {
  return __fmaf_rn(0x1p-21f, __fadd_rn(w_bound, fabsf(s)), 0x1p-126f);
}

/// The exact path: every column of the thread's two rows unscaled by unscale() and scored in
/// FP64 against the best so far, in ascending j. Rescoring a column already scored, or one that
/// cannot win, leaves the best as it is (strict <), so both rows are always scored. The best's
/// FP32 score is then recomputed from its D (the bound holds for any column's s32).
__device__ __forceinline__ void nearest_score_exact(const MainParams& p, const float (&acc)[64], int col0,
                                                    NearestRows& r) {
  double best[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) best[h] = nearest_score64(p, r.best_j[h], r.best_d[h]);
#pragma unroll
  for (int c = 0; c < 16; ++c) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int gj = col0 + 8 * c + e;
      if (gj >= p.n) continue;  // (padding columns score +inf; the check keeps ptxas from hoisting every load)
      const NearestExactColumn x = p.exact[gj];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float v = p.shift_a != nullptr ? unscale(acc[4 * c + 2 * h + e], r.sa[h], x.sb) : acc[4 * c + 2 * h + e];
        // 2 v is exact: fused or not, the subtraction rounds once (the unfused scores)
        const double s = x.w - 2.0 * static_cast<double>(v);
        if (s < best[h]) best[h] = s, r.best_j[h] = gj, r.best_d[h] = v;
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h)
    r.best32[h] = r.best_j[h] == INT_MAX ? CUDART_INF_F : __fmaf_rn(-2.0f, r.best_d[h], p.columns[r.best_j[h]].y);
}

/// The tile's scores of the thread's two rows and 32 columns (col0 + 8 c + e) folded into r
/// (the columns in ascending order, strict <: the lowest j on ties; the tiles of a row come in
/// ascending tn, so the same holds across tiles). acc: the raw accumulators. Per row, with
/// s_min the tile's smallest FP32 score and b the best column's:
///   - s_min > b + T(b): no column of the tile can win; nothing more is done;
///   - s_min alone within T(s_min) in the tile and b > s_min + T(s_min): its column is the new
///     best, without an FP64 score;
///   - s_min alone otherwise: its column's FP64 score against the best's;
///   - else (near ties, non-finite scores) both rows take the exact path.
__device__ __forceinline__ void nearest_score_tile(const MainParams& p, const NearestBounds& nb, const float (&acc)[64],
                                                   int col0, NearestRows& r) {
  // one multiplication by 2^-sa 2^-sb is unscale() when -sa, -sb and -(sa + sb) are normal exponents
  bool fast = true;
  float fa[2] = {1.0f, 1.0f};
  if (p.shift_a != nullptr) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int sa = r.sa[h];
      fast = fast && -sa >= -126 && -sa <= 127 && -(sa + nb.sb_max) >= -126 && -(sa + nb.sb_min) <= 127;
      fa[h] = scale_factor(min(127, max(-126, -sa)));
    }
    fast = fast && -nb.sb_max >= -126 && -nb.sb_min <= 127;
  }
  if (!__all_sync(0xffffffffu, fast)) {
    nearest_score_exact(p, acc, col0, r);
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
  bool exact = false;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float b = r.best32[h];
    // every column of the tile scores worse than the best (both finite: an FP32 overflow
    // says nothing)
    if (isfinite(b) && smin[h] < CUDART_INF_F && smin[h] > __fadd_rn(b, nearest_margin(nb.w_bound, b))) continue;
    const float thr = __fadd_rn(smin[h], nearest_margin(nb.w_bound, smin[h]));
    if (jmin[h] >= 0 && snext[h] > thr) {  // jmin alone can win in the tile
      bool take = b > thr;                  // and beats the best so far (none: b = +inf)
      if (!take) take = p.exact[jmin[h]].w - 2.0 * static_cast<double>(dmin[h]) <
                        nearest_score64(p, r.best_j[h], r.best_d[h]);  // equal: the lower j, the best's
      if (take) r.best_j[h] = jmin[h], r.best_d[h] = dmin[h], r.best32[h] = smin[h];
    } else {
      exact = true;
    }
  }
  // near ties or non-finite scores: every column in FP64 (there unscale() is the one
  // multiplication above, bit for bit)
  if (exact) nearest_score_exact(p, acc, col0, r);
}

/// The row block's last tile: the 4 lanes of a row merge their best by FP64 score (the lower
/// j on ties), lane % 4 == 0 writes the label and counts it when it changed.
__device__ __forceinline__ void nearest_finish_rows(const MainParams& p, int row0, int lane, const NearestRows& r) {
  bool moved[2] = {false, false};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    double best = nearest_score64(p, r.best_j[h], r.best_d[h]);
    int best_j = r.best_j[h];
#pragma unroll
    for (int off = 1; off <= 2; off *= 2) {
      const double s = __shfl_xor_sync(0xffffffffu, best, off);
      const int j = __shfl_xor_sync(0xffffffffu, best_j, off);
      if (nearer(s, j, best, best_j)) best = s, best_j = j;
    }
    const int gi = row0 + 8 * h;
    if (lane % 4 == 0 && gi < p.m) {
      const int label = best_j == INT_MAX ? 0 : best_j;  // no score won: cluster 0
      moved[h] = p.labels[gi] != label;
      p.labels[gi] = label;
    }
  }
  const int count = __popc(__ballot_sync(0xffffffffu, moved[0])) + __popc(__ballot_sync(0xffffffffu, moved[1]));
  if (lane == 0 && count != 0) atomicAdd(p.changed, static_cast<unsigned long long>(count));
}

#endif
