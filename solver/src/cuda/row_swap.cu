// Row interchanges of one LU panel applied to the columns outside it (LAPACK slaswp's effect),
// in two kernels (the composition is explained in interchanges.hpp):
//   compose_kernel  one block: the panel's w sequential exchanges composed into at most 2w
//                   (dst, src) pairs, "row dst receives the old row src";
//   gather_kernel   one block per column outside the panel: reads the src rows of the column
//                   into shared memory, then writes them to the dst rows, so every touched row
//                   of every column moves once (one swap at a time would walk each column w times).
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
constexpr int kGatherThreads = 256;
constexpr int kMaxGatherBlocks = 1 << 20;  ///< columns beyond it loop (grid-stride)

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

/// Columns c of a outside [j, j+w): the c0-th of them is c0 (left of the panel) or c0 + w.
__global__ void __launch_bounds__(kGatherThreads)
    gather_kernel(float* __restrict__ a, int lda, int j, int w, int columns, const int* __restrict__ pairs) {
  extern __shared__ float values[];
  const int count = pairs[0];
  const int* dst = pairs + 1;
  const int* src = dst + 2 * w;
  for (int c0 = blockIdx.x; c0 < columns; c0 += gridDim.x) {
    float* col = a + static_cast<std::size_t>(c0 < j ? c0 : c0 + w) * lda;
    for (int t = threadIdx.x; t < count; t += kGatherThreads) values[t] = col[src[t]];
    __syncthreads();
    for (int t = threadIdx.x; t < count; t += kGatherThreads) col[dst[t]] = values[t];
    __syncthreads();
  }
}

}  // namespace

void apply_panel_interchanges(float* a, int lda, int n, int j, int w, const int* ipiv, int* pairs) {
  if (w < 1 || w > kMaxPanelWidth || j < 0 || j + w > n)
    throw InvalidInput("apply_panel_interchanges: panel j = " + std::to_string(j) +
                       ", w = " + std::to_string(w) + " outside n = " + std::to_string(n) +
                       " or wider than " + std::to_string(kMaxPanelWidth));
  const int columns = n - w;
  if (columns == 0) return;
  compose_kernel<<<1, kComposeThreads, 5 * static_cast<std::size_t>(w) * sizeof(int)>>>(ipiv, j, w, n, pairs);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  gather_kernel<<<static_cast<unsigned>(std::min(columns, kMaxGatherBlocks)), kGatherThreads,
                  2 * static_cast<std::size_t>(w) * sizeof(float)>>>(a, lda, j, w, columns, pairs);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cuda::kernels
