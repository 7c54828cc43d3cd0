// Row interchanges of the LU on the row-major FP32 matrix, in two kernels:
//   compose_kernel  one block: the w sequential exchanges that cuSOLVER's sgetrf reports for a
//                   panel (LAPACK's ipiv) composed into at most 2w (dst, src) pairs, "row dst
//                   receives the old row src" (interchanges.hpp explains the composition); the
//                   leaf kernel (panel.cu) writes its pairs in the same format directly;
//   pairs_kernel    applies the pairs to the columns outside the factored block: each thread
//                   owns one column, reads all src rows of it into registers, then writes the
//                   dst rows, so every moved row moves once; the rows are contiguous in memory,
//                   so a warp reads and writes 128 bytes of one row at a time. One extra block
//                   applies the same pairs to the permutation vector.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "interchanges.hpp"
#include "kernels.hpp"
#include "tcsolve/gemm/cuda_check.hpp"
#include "tcsolve/gemm/error.hpp"

namespace tcsolve::cuda::kernels {
namespace {

constexpr int kComposeThreads = 256;
constexpr int kPairsThreads = 128;
constexpr int kMaxLeafPairs = 2 * kMaxLeafWidth;
static_assert(kMaxLeafPairs <= kPairsThreads, "the permutation block moves one pair per thread");

/// pairs = [count, dst[0..2w), src[0..2w)].
__global__ void __launch_bounds__(kComposeThreads)
    compose_kernel(const int* __restrict__ ipiv, int j, int w, int n, int* __restrict__ pairs) {
  extern __shared__ int shared[];
  int* p = shared;    // target row of step i
  int* prev = p + w;  // previous step with the same target below the block, or -1
  int* last = prev + w;
  int* cont = last + w;
  int* out = cont + w;
  for (int i = threadIdx.x; i < w; i += kComposeThreads) p[i] = interchanges::target_row(ipiv[i], i, j, n);
  __syncthreads();
  for (int i = threadIdx.x; i < w; i += kComposeThreads) {
    int pv = -1;
    bool is_last = true;
    if (p[i] >= j + w) is_last = interchanges::previous_same_target(p, w, i, pv);
    prev[i] = pv;
    last[i] = is_last ? 1 : 0;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int* dst = pairs + 1;
    int* src = dst + 2 * w;
    pairs[0] = interchanges::compose(p, prev, last, j, w, cont, out, dst, src);
  }
}

/// The pairs of the block [c0, c0 + w) applied to the columns outside it, and to perm.
__global__ void __launch_bounds__(kPairsThreads)
    pairs_kernel(float* __restrict__ a, int ld, int n, int c0, int w, const int* __restrict__ pairs,
                 int* __restrict__ perm) {
  const int count = pairs[0];
  const int* dst = pairs + 1;
  const int* src = dst + 2 * w;
  if (blockIdx.x == gridDim.x - 1) {  // the permutation vector: count <= 2w <= kPairsThreads
    const int t = static_cast<int>(threadIdx.x);
    const int moved = t < count ? perm[src[t]] : 0;
    __syncthreads();
    if (t < count) perm[dst[t]] = moved;
    return;
  }
  int col = static_cast<int>(blockIdx.x * kPairsThreads + threadIdx.x);
  if (col >= c0) col += w;
  if (col >= n) return;
  float values[kMaxLeafPairs];
#pragma unroll
  for (int t = 0; t < kMaxLeafPairs; ++t)
    if (t < count) values[t] = a[static_cast<std::size_t>(src[t]) * ld + col];
#pragma unroll
  for (int t = 0; t < kMaxLeafPairs; ++t)
    if (t < count) a[static_cast<std::size_t>(dst[t]) * ld + col] = values[t];
}

}  // namespace

void compose_interchanges(const int* ipiv, int j, int w, int n, int* pairs) {
  if (w < 1 || w > kMaxLeafWidth || j < 0 || j + w > n)
    throw InvalidInput("compose_interchanges: panel j = " + std::to_string(j) + ", w = " + std::to_string(w) +
                       " outside n = " + std::to_string(n) + " or wider than " +
                       std::to_string(kMaxLeafWidth));
  compose_kernel<<<1, kComposeThreads, 5 * static_cast<std::size_t>(w) * sizeof(int)>>>(ipiv, j, w, n, pairs);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void apply_row_pairs(float* a, int ld, int n, int c0, int w, const int* pairs, int* perm) {
  if (w < 1 || w > kMaxLeafWidth || c0 < 0 || c0 + w > n)
    throw InvalidInput("apply_row_pairs: block c0 = " + std::to_string(c0) + ", w = " + std::to_string(w) +
                       " outside n = " + std::to_string(n) + " or wider than " +
                       std::to_string(kMaxLeafWidth));
  const int columns = n - w;
  const unsigned blocks = static_cast<unsigned>((columns + kPairsThreads - 1) / kPairsThreads) + 1;
  pairs_kernel<<<blocks, kPairsThreads>>>(a, ld, n, c0, w, pairs, perm);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
