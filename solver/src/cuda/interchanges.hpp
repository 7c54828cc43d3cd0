// The row interchanges of one LU panel composed into one permutation (row_swap.cu), and dgetrf's
// whole-matrix interchanges into one (compose_pivots), written as host+device functions so the
// logic can be checked on the host against sequential swaps.
//
// cuSOLVER's sgetrf on the panel (rows j..n-1, columns j..j+w-1) returns pivots ipiv[0..w), 1-based
// within the panel: step i exchanged rows j+i and p_i = j + ipiv[i] - 1 >= j+i (LAPACK's order).
// The columns outside the panel need the same exchanges, applied in order (laswp). Done one
// swap at a time, each column would be walked w times; composed, every touched row moves once:
//   - after step i, row j+i is never touched again (later steps exchange rows j+i' > j+i with
//     rows >= j+i'), so its final content is what row p_i held just before step i;
//   - a row q >= j+w below the panel block receives row j+i's current content at every step i
//     with p_i = q, and gives its own current content to row j+i: its current content is what
//     the previous step with the same target (prev_i) left there, or row q itself.
// With prev_i found for all i in parallel (O(w) each), one sequential pass of w steps over
// `cont` (content of rows j..j+w-1) and `out` (content a target row q received at step i) gives
// the permutation as pairs (dst, src): row dst receives the old row src; at most 2w pairs, the
// rows of the panel block first. Rows whose content does not change are left out.
#pragma once

#include "tcsolve/gemm/config.hpp"

namespace tcsolve::cuda::interchanges {

/// dgetrf's n exchanges over the whole matrix composed in place into a permutation, one after the
/// other in LAPACK's order: perm enters as the identity, `pivots` holds 0-based ipiv[i] - 1 >= i,
/// and perm leaves with row i of P A being row perm[i] of A (the FP64 LU's solves: row_swap.cu's
/// permutation_kernel and lu_apply.cu, each on one thread over shared memory).
TCSOLVE_HOST_DEVICE inline void compose_pivots(const int* pivots, int n, int* perm) {
  for (int i = 0; i < n; ++i) {
    const int q = pivots[i];
    const int t = perm[i];
    perm[i] = perm[q];
    perm[q] = t;
  }
}

/// Global row exchanged with row j+i at step i, from the 1-based panel pivot. A pivot outside
/// [i+1, n-j] (which sgetrf never returns) is read as no exchange, so that no access leaves A.
TCSOLVE_HOST_DEVICE inline int target_row(int ipiv_i, int i, int j, int n) {
  const int q = j + ipiv_i - 1;
  return (q < j + i || q >= n) ? j + i : q;
}

/// For step i (target p[i] below the block, p[i] >= j+w): prev = the last step before i with
/// the same target (-1 if none); returns whether no later step has that target.
TCSOLVE_HOST_DEVICE inline bool previous_same_target(const int* p, int w, int i, int& prev) {
  prev = -1;
  bool last = true;
  for (int k = 0; k < w; ++k) {
    if (p[k] != p[i]) continue;
    if (k < i) prev = k;
    if (k > i) last = false;
  }
  return last;
}

/// The sequential pass: p, prev, last (1/0) per step as above; cont and out are scratch of w
/// ints each; writes the pairs to dst and src (room for 2w each) and returns their number.
TCSOLVE_HOST_DEVICE inline int compose(const int* p, const int* prev, const int* last, int j, int w,
                                       int* cont, int* out, int* dst, int* src) {
  for (int k = 0; k < w; ++k) cont[k] = j + k;
  for (int i = 0; i < w; ++i) {
    const int q = p[i];
    if (q < j + w) {  // inside the block: a plain exchange of two contents
      const int t = cont[i];
      cont[i] = cont[q - j];
      cont[q - j] = t;
    } else {
      const int held = prev[i] >= 0 ? out[prev[i]] : q;  // what row q holds now
      out[i] = cont[i];
      cont[i] = held;
    }
  }
  int count = 0;
  for (int k = 0; k < w; ++k)
    if (cont[k] != j + k) dst[count] = j + k, src[count] = cont[k], ++count;
  for (int i = 0; i < w; ++i)
    if (p[i] >= j + w && last[i] && out[i] != p[i]) dst[count] = p[i], src[count] = out[i], ++count;
  return count;
}

}  // namespace tcsolve::cuda::interchanges
