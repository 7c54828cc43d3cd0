// Internal interface of K-means' cuda part (tcsolve::cluster): the assignment, centroid update, norm and
// inertia kernels (kmeans_cuda.cu); in a build without CUDA every function throws
// tcsolve::Unavailable (kmeans_cuda_stub.cpp). Pointers d_* are device memory, layouts as in
// kmeans.hpp (X dim x N, C dim x k, G rows x k, all column-major). Every function that enqueues
// work takes the caller's `stream` (cudaStream_t; nullptr: the legacy default stream): its
// kernels, copies and memsets go on that stream only, and it returns once they are enqueued,
// except where it says it synchronizes (then it waits for that stream, never for the whole
// device). kmeans_order_bytes enqueues nothing and takes no stream. Nothing outside
// cluster/src includes this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace tcsolve::cluster::detail {

/// k-means++ on the device from the points d_X (dim x N): bitwise kmeans_plus_plus's host result
/// for the seed, with its blocks of block_points points in sub-blocks of sub_points (at most 32
/// per block; kmeans_seed_cuda.cu). d_X must be ready on `stream`; waits for `stream`.
std::vector<float> kmeans_plus_plus_device(const float* d_X, int points, int dim, int k, std::uint64_t seed,
                                           int block_points, int sub_points, CUstream_st* stream);

/// For i < rows: d_labels[i] = argmin_j (d_cnorm[j] - 2 G(i, j)) in FP64, ties to the lowest j,
/// NaN and +inf scores never winning (0 when none wins): the host loop of kmeans.cpp. G has
/// leading dimension ldg >= rows. Adds to *d_changed the number of i whose label differs from
/// the value d_labels[i] held before.
void kmeans_assign(const float* d_G, int ldg, int rows, int k, const double* d_cnorm, int* d_labels,
                   unsigned long long* d_changed, CUstream_st* stream);

/// Scratch of kmeans_accumulate_ordered: keys, indices (0, 1, ..., points - 1: kmeans_order_init,
/// once; the sort only reads them) and order (points ints each), offsets (k + 1 ints), and cub's
/// temp storage of kmeans_order_bytes(points, k) bytes.
struct OrderScratch {
  int *keys;
  const int* indices;
  int *order, *offsets;
  void* temp;
  std::size_t temp_bytes;
};

/// d_indices[i] = i for i < points: OrderScratch::indices, filled once.
void kmeans_order_init(int* d_indices, int points, CUstream_st* stream);

/// Bytes of cub's radix-sort storage for kmeans_accumulate_ordered (a size query: enqueues nothing).
std::size_t kmeans_order_bytes(int points, int k);

/// d_sums (dim x k, FP64) = the sums of each cluster's points and d_counts (k, zero before) +=
/// their number, without atomics on the sums: the points sorted by label (stable), then one block per cluster sums its
/// points in point order, so the sums are bitwise the host's and the same on every run.
/// Weighted (d_weights, `points` FP64 weights on the device; nullptr: unweighted): d_sums holds
/// sum w_i x_i (each product rounded, then added, in point order) and d_weight_sums (k) sum w_i
/// in point order: bitwise the cpu engine's weighted sums.
void kmeans_accumulate_ordered(const float* d_X, const int* d_labels, int points, int dim, int k, double* d_sums,
                               int* d_counts, const OrderScratch& scratch, CUstream_st* stream,
                               const double* d_weights = nullptr, double* d_weight_sums = nullptr);

/// For every centroid j with d_counts[j] > 0: c_j = float(d_sums(:, j) / count) (empty clusters
/// keep their centroid); d_shift2[j] = sum_d (c_new - c_old)^2 and d_cnorm[j] = sum_d c_new^2,
/// in FP64 with d ascending (one thread per centroid: bitwise the host's loop). With
/// d_weight_sums (k; nullptr: unweighted): c_j = float(d_sums(:, j) / d_weight_sums[j]) where
/// that weight is > 0, kept otherwise.
void kmeans_finalize(const double* d_sums, const int* d_counts, float* d_C, double* d_cnorm, double* d_shift2,
                     int k, int dim, CUstream_st* stream, const double* d_weight_sums = nullptr);

/// d_cnorm[j] = sum_d C(d, j)^2 in FP64, d ascending (bitwise the host's loop).
void kmeans_centroid_norms(const float* d_C, int k, int dim, double* d_cnorm, CUstream_st* stream);

/// Returns sum_i ||x_i - c_label(i)||^2 in FP64 (block reductions, their sums added on the host
/// in block order: the same bits on every run); with d_weights (`points` device values; nullptr:
/// unweighted) sum_i w_i ||x_i - c_label(i)||^2. Waits for `stream`.
double kmeans_inertia(const float* d_X, const int* d_labels, const float* d_C, int points, int dim,
                      CUstream_st* stream, const double* d_weights = nullptr);

// Points in device memory (KmeansOptions::points_memory; kmeans_points_cuda.cu): the checks and
// data-wide numbers the host computes for host points.

/// The largest magnitude of the values and the index of the first non-finite one (-1: none).
struct PointScan {
  double max_abs = 0;
  long long first_nonfinite = -1;
};
/// Scans d_X[0, values); waits for `stream`.
PointScan kmeans_scan(const float* d_X, std::size_t values, CUstream_st* stream);

/// Per coordinate d of the points (X dim x N): sum_i x_i(d) in FP64, or with `mean` (dim host
/// values) sum_i (x_i(d) - mean(d))^2; FP64 atomics, so the last bits depend on the order (the
/// tol scale only). Waits for `stream`.
std::vector<double> kmeans_coordinate_sums(const float* d_X, int points, int dim, const std::vector<double>* mean,
                                           CUstream_st* stream);

/// d_out[i] = ldexp(d_in[i], e) for i < n (exact unless the result leaves FP32's normal range).
void kmeans_scale(const float* d_in, float* d_out, std::size_t n, int e, CUstream_st* stream);

}  // namespace tcsolve::cluster::detail

// ---------------------------------------------------------------------------------------------
// k-means++ across the GPUs of a group (kmeans_seed_group_cuda.cu; in a build without CUDA,
// kmeans_seed_group_stub.cpp throws tcsolve::Unavailable)
// ---------------------------------------------------------------------------------------------

namespace tcsolve::runtime {
class DeviceGroup;
}

namespace tcsolve::cluster::detail {

/// k-means++ over a group of GPUs (gpus(), or mpi(Memory::device): one local member, the rank),
/// bitwise kmeans_plus_plus's host centroids for the same `points` points and seed. member_X[m],
/// device memory of local member m's device, holds the rows kmeans_rows(points, group.size(),
/// group.member(m).rank) (dim x count, column-major), ready (no work pending on them); `points`
/// is the group's total. Each member computes the D^2 and 128-point sub-block sums of its rows on
/// its GPU, on its context's stream; the sub-block sums and the chosen rows go through its
/// communicator (NCCL all-gathers and max all-reduces), and every member takes the same draws.
/// One thread per local member (member 0 on the caller's); a member's failure that the others did
/// not agree on aborts the group (DeviceGroup::abort). Returns dim x k (column-major). Checks
/// the sizes (InvalidInput); the values' finiteness is the caller's.
std::vector<float> kmeans_plus_plus_members(const std::vector<const float*>& member_X, std::int64_t points, int dim,
                                            int k, std::uint64_t seed, runtime::DeviceGroup& group);

}  // namespace tcsolve::cluster::detail
