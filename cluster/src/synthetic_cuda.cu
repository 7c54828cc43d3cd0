// Synthetic blobs by rows on the device (synthetic.hpp, blob_rows_device): one kernel, bitwise
// the host reference blob_rows, since both compute every value with synthetic_draw.hpp.
//
// blob_rows_kernel: the rows are cut into tiles of tile_points = max(1, kTileValues / dim) points
// (about kTileValues values); a block takes a tile at a time (grid-stride over tiles), draws the
// tile's labels into shared memory (thread per point), then writes the tile's dim x tile_points
// values in memory order (thread per value: consecutive threads, consecutive addresses). Each value
// costs five 64-bit draws (its centre coordinate and four noise draws); the centres are drawn in
// the kernel, so nothing is allocated or copied and the call never waits on the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "synthetic_draw.hpp"
#include "tcsolve/cluster/synthetic.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cluster {
namespace {

constexpr int kThreads = 256;                               ///< threads per block
constexpr int kTileValues = 4096;                           ///< values per tile (16 per thread)
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;  ///< grid cap; larger ranges loop over tiles

struct BlobParams {
  detail::BlobKeys keys;
  std::int64_t begin;  ///< first point of the range
  std::int64_t count;  ///< points in the range
  std::int64_t tiles;  ///< ceil(count / tile_points)
  int dim, clusters;
  int tile_points;  ///< points per tile, <= kTileValues
  float* X;         ///< dim x count, column-major
  int* truth;       ///< count, or null
};

__global__ void __launch_bounds__(kThreads) blob_rows_kernel(const BlobParams p) {
  __shared__ int labels[kTileValues];
  for (std::int64_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
    const std::int64_t first = tile * p.tile_points;  // tile's first point, relative to begin
    const int points = static_cast<int>(min(static_cast<std::int64_t>(p.tile_points), p.count - first));
    for (int t = threadIdx.x; t < points; t += kThreads) {
      const int label = detail::point_label(p.keys, p.begin + first + t, p.clusters);
      labels[t] = label;
      if (p.truth) p.truth[first + t] = label;
    }
    __syncthreads();
    const int values = points * p.dim;  // <= max(kTileValues, dim)
    float* x = p.X + first * p.dim;
    for (int e = threadIdx.x; e < values; e += kThreads) {
      const int t = e / p.dim;  // point within the tile
      const int d = e - t * p.dim;
      const float centre = detail::centre_value(p.keys, p.dim, labels[t], d);
      x[e] = detail::blob_value(p.keys, p.begin + first + t, centre, p.dim, d);
    }
    __syncthreads();  // labels is rewritten by the next tile
  }
}

}  // namespace

void blob_rows_device(const BlobsSpec& spec, std::int64_t begin, std::int64_t count, float* d_X, int* d_truth,
                      CUstream_st* stream) {
  detail::check_blob_rows("blob_rows_device", spec, begin, count, d_X);
  if (count == 0) return;
  BlobParams p{};
  p.keys = detail::blob_keys(spec.seed);
  p.begin = begin;
  p.count = count;
  p.dim = spec.dim;
  p.clusters = spec.clusters;
  p.tile_points = std::max(1, kTileValues / spec.dim);
  p.tiles = (count + p.tile_points - 1) / p.tile_points;
  p.X = d_X;
  p.truth = d_truth;
  const auto blocks = static_cast<unsigned>(std::min(p.tiles, kMaxBlocks));
  blob_rows_kernel<<<blocks, kThreads, 0, stream>>>(p);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace tcsolve::cluster
