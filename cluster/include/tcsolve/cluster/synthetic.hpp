// Synthetic K-means data (tcsolve::cluster): Gaussian-like blobs made from a seed by rows, any
// range of points independently, bitwise the same on the host (the reference) and on the device.
// Each GPU or rank of a distributed run makes its own rows; no point depends on another.
//
// Distribution, for a BlobsSpec {points N, dim, clusters k, seed}:
//   centres  c_j (j < k), coordinates uniform on the 2^24 points -10 + 20 m 2^-24 (m < 2^24) of
//            [-10, 10), rounded once to FP32 (make_blobs' box);
//   labels   t_i uniform on [0, k) (floor(h k / 2^64) of a 64-bit draw h: exact in integers);
//   values   x_i(d) = fl32(c_{t_i}(d) + z_i(d)), one FP64 addition of the FP32 centre coordinate
//            and the noise, rounded once to FP32;
//   noise    z = sum_{t<12} u_t - 6, Irwin-Hall of 12 uniforms u_t = (m_t + 1/2) 2^-21 (m_t 21
//            random bits): exact in FP64, in (-6, 6), symmetric about 0, mean exactly 0 and
//            variance 1 - 2^-42 (12 times the variance (1 - 2^-42) / 12 of one u_t); approximately
//            N(0, 1) (its tails stop at 6 sigma). Every coordinate's noise is drawn on its own.
// Randomness: counter-based (splitmix64's output function on key + counter; synthetic_draw.hpp),
// one stream per (seed, purpose): every value is a function of (seed, point index, coordinate)
// alone. No transcendental functions (CUDA's log and sin differ from glibc's in the last bit):
// integers, exact FP64 operations, one rounded FP64 addition and one rounding to FP32, the same
// on both sides. These are not make_blobs' points (one sequential std::mt19937_64 stream, Box-Muller
// normals): the same kind of data, drawn differently.
//
// Layout as kmeans.hpp: points are columns of a dim x count column-major array (column i is
// point begin + i: the bytes of the row-major rows of a K-means file's X), centres the columns
// of dim x k.
#pragma once

#include <cstdint>
#include <vector>

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace tcsolve::cluster {

/// The synthetic data set: `points` points in `dim` dimensions around `clusters` centres, drawn
/// from `seed`. Every field must be >= 1 (check_blobs_spec).
struct BlobsSpec {
  std::int64_t points = 0;
  int dim = 0;
  int clusters = 0;
  std::uint64_t seed = 0;
};

/// Throws InvalidInput naming the field when points, dim or clusters is below 1.
void check_blobs_spec(const BlobsSpec& spec);

/// The centres: dim x clusters, column-major (column j is centre j). Throws InvalidInput (a bad
/// spec).
std::vector<float> blob_centres(const BlobsSpec& spec);

/// Host reference: points [begin, begin + count) as the columns of X (dim x count, column-major:
/// column i is point begin + i) and, when truth is not null, truth[i] = the centre of point
/// begin + i. Parallel over points with OpenMP where the library was built with it. count = 0
/// writes nothing. Throws InvalidInput for a bad spec, begin < 0, count < 0, begin + count >
/// points, or a null X with count > 0.
void blob_rows(const BlobsSpec& spec, std::int64_t begin, std::int64_t count, float* X, int* truth);

/// The same on the device, bitwise equal to blob_rows: d_X (dim x count) and d_truth (count,
/// nullable) are device memory of the current device; one kernel is enqueued on `stream` (no
/// allocation, no host synchronisation; the centres are drawn in the kernel). Throws InvalidInput
/// as blob_rows, CudaError when the launch fails, Unavailable in a build without CUDA.
void blob_rows_device(const BlobsSpec& spec, std::int64_t begin, std::int64_t count, float* d_X, int* d_truth,
                      CUstream_st* stream);

}  // namespace tcsolve::cluster
