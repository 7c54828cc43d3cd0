// K-means (tcsolve::cluster, the library the CLI, the C API and the bench use): Lloyd's algorithm
// whose distance step is one GEMM through any GEMM variant of tcsolve::gemm, on the host (cpu
// backend) or on the device (cuda backend).
//
// Layout. Points and centroids are stored one per column, column-major:
//   X  (dim x N)   column i is point i: the same bytes as the row-major N x dim dataset `X` of
//                  a K-means file (docs/architecture.md, "HDF5 files"), so nothing is transposed
//   C  (dim x k)   column j is centroid j (the row-major k x dim `init` / `centroids` datasets)
//   G  (N x k)     G(i, j) = x_i . c_j = (X^T C)(i, j): tcsolve::gemm with op(A) = T, op(B) = N,
//                  both operands contiguous along the inner dimension dim. Points are processed
//                  in chunks of rows of G (kDistanceChunkBytes), so G never holds all N x k.
//                  The fused assignment (KmeansAssign) never stores G: the argmin runs in the
//                  GEMM's epilogue (cuda::nearest_columns, cpu::nearest_columns).
//
// One iteration (assignment, then update):
//   1. assignment: label(i) = argmin_j d(i, j) with d(i, j) = ||x_i||^2 - 2 x_i.c_j + ||c_j||^2.
//      ||x_i||^2 is the same for every j and does not change the argmin: it is never formed.
//      The score s(i, j) = ||c_j||^2 - 2 G(i, j) is evaluated in FP64: ||c_j||^2 is the FP64 sum
//      of the squares of the FP32 centroid (exact to 2^-53 relative), G(i, j) is the variant's
//      FP32 result, widened exactly; 2 G is exact and the one subtraction rounds in FP64. So the
//      only error that can move a label is the variant's error in the cross term x_i.c_j: the
//      thing the demo measures. Ties go to the lowest j; a NaN score never wins (a point whose
//      every score is NaN goes to cluster 0).
//   2. update: c_j = mean of the points labelled j, summed in FP64 and rounded once to FP32.
//      Both backends sum each cluster's points in point order (cuda: the points sorted by label
//      with a stable sort, one thread block per cluster), so the sums, and the centroids, are
//      bitwise the same on both and on every run for the same labels.
//      Empty cluster (no point labelled j): its centroid keeps its previous value; counted in
//      KmeansIteration::empty_clusters. It stays a candidate in later assignments.
//      Weighted (KmeansOptions::weights, scikit-learn's sample_weight): c_j = sum_i w_i x_i /
//      sum_i w_i over the points labelled j, both sums in FP64 in point order (w_i x_i one
//      rounded product), rounded once to FP32; a cluster whose weights sum to 0 (no points, or
//      only points of weight 0) is empty. Without weights every step is the unweighted one,
//      bitwise (no multiplication by 1 is inserted).
// Stopping, checked in this order in each iteration:
//   - no label changed in the assignment (iterations >= 2): converged, the centroids are the
//     means of the labels (the update would reproduce them);
//   - tol > 0 and sum_j ||c_j_new - c_j_old||^2 <= tol * mean_d var(X(d, :)) after the update
//     (scikit-learn's KMeans tol, relative to the data's mean per-coordinate variance in FP64);
//   - max_iterations iterations done.
// The labels returned are those of the last assignment and the centroids their means.
// Inertia: sum_i ||x_i - c_label(i)||^2 (weighted: sum_i w_i ||x_i - c_label(i)||^2) computed
// directly in FP64 from the FP32 points and the final FP32 centroids (no cancellation), on the
// backend that ran. The tol scale stays the unweighted variance of X (scikit-learn's).
//
// Start: k-means++ (kmeans_plus_plus in FP64, on the host or the device with bitwise the same
// result, so every variant and both backends start from the same centroids for a seed; with
// weights the draws are proportional to w_i and w_i D(x_i)^2, as scikit-learn's) or centroids
// given by the caller (the file's init).
// Everything runs on the FP32 points: a file's float64 X is rounded once to FP32 on reading,
// and the fp64 variant is the FP64 product of those FP32 values (rounded to FP32 at the end, as
// tcsolve::gemm returns FP32).
//
// Scale: the cross terms x.c are FP32 whatever the variant, so data far from 1 in magnitude
// would leave FP32's range in G: points of order 1e-25 (products 1e-50, below FP32's 1.2e-38)
// or subnormal ones (1e-42) gave G = 0 and every point went to the centroid of least norm, and
// points of order 1e20 overflowed it. So when the largest magnitude M of X and init lies outside
// [2^-40, 2^41) the iterations run on X 2^e and init 2^e instead, e the integer that brings M
// to [2^-40, 2^-39) (from below) or [2^40, 2^41) (from above): a power of two, so the scaled
// values are exact (scaling down, elements below 2^-166 M keep fewer bits) and the run is the
// one an FP32 without exponent limits would make on X -- the same labels, the tol test on the
// same numbers. The centroids are scaled back by 2^-e (exact unless they fall below FP32's
// normal range, where they round), the inertia is computed from them and X (kmeans_inertia),
// and KmeansIteration::shift is at the data's scale. Data inside the range runs unscaled, as
// before. (k-means++ computes its distances in FP64 from the FP32 values: exact at any FP32
// scale, not scaled.)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/where.hpp"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace tcsolve::runtime {
class DeviceGroup;
}

namespace tcsolve::cluster {

/// Bytes of the distance block G: rows of G per GEMM = max(1, kDistanceChunkBytes / (4 k)) on the
/// cpu; on cuda kDistanceChunkBytesCuda, so that N = 1e6, k = 1024 takes one GEMM per iteration
/// (auto reads its FP16/TF32 choice back once per GEMM: with 8 GEMMs of 131072 rows the waits
/// cost auto 0.25 ms of a 5.9 ms iteration on an H100).
inline constexpr std::size_t kDistanceChunkBytes = std::size_t{512} << 20;
inline constexpr std::size_t kDistanceChunkBytesCuda = std::size_t{4} << 30;

/// What one iteration did; given to KmeansOptions::progress after each iteration.
struct KmeansIteration {
  int iteration = 0;       ///< 1-based
  long long changed = 0;   ///< labels that differ from the previous assignment (all in the first)
  double shift = 0;        ///< sum_j ||c_j_new - c_j_old||^2 (0 when no update ran)
  int empty_clusters = 0;  ///< clusters without points in this assignment
  double time_s = 0;       ///< wall time of the iteration (cuda: until its results are back)
  double assign_time_s = 0;  ///< of which the assignment (cuda: until the changed count is back)
  double update_time_s = 0;  ///< and the update (cuda: until the counts and movements are back)
};

/// How the assignment runs. fused: cuda::nearest_columns / cpu::nearest_columns, the argmin in
/// the GEMM's epilogue, G never stored (fp32-simt, ec-fp16, ec-tf32, auto; on cuda the ec
/// variants need Hopper's wgmma kernels). unfused: the GEMM into G (chunks of rows), then the
/// argmin over G. automatic: fused on cuda where nearest_columns_available, else unfused (the
/// cpu runs unfused: no memory traffic to save, and its fp32-simt is Eigen's). The labels of
/// fused and unfused ec variants are bitwise equal (the same D); fused fp32-simt sums FP32 FMAs
/// in k order, not as cuBLAS/Eigen SGEMM, so near-ties may go the other way.
enum class KmeansAssign { automatic, fused, unfused };
/// "auto" | "fused" | "unfused".
KmeansAssign parse_kmeans_assign(const std::string& name);
std::string to_string(KmeansAssign assign);

/// cuda, fused: points per nearest_columns call are at most kFusedChunkBytes / (8 dim) (the
/// FP16/TF32 hi and lo copies of the chunk the split writes). On cuda (fused or not) a chunk is
/// also never larger than the free device memory holds beside X and the per-point and
/// per-cluster arrays, so X up to about the device's memory still clusters, in more chunks; the
/// run is refused (InvalidInput, naming the bytes) before any allocation when not even 128
/// points fit beside X. The prepared points (KmeansOptions::prepare_points) are made only where
/// they fit too.
inline constexpr std::size_t kFusedChunkBytes = std::size_t{4} << 30;

/// GemmOptions with split_k = 1 (KmeansOptions::gemm's default).
inline GemmOptions unsplit_gemm_options() {
  GemmOptions o;
  o.split_k = 1;
  return o;
}

struct KmeansOptions {
  Variant variant = Variant::auto_;      ///< the GEMM variant of the cross term
  Backend backend = Backend::automatic;  ///< automatic: cuda when a usable GPU is present
  /// cuda backend: the stream every kernel, copy and wait of the run goes on (nullptr: the legacy
  /// default stream, as before). The run's cuda::Context is made on it; the run waits for this
  /// stream only, never for the whole device, and returns when its results are on the host. The
  /// labels and centroids are bitwise the same on every stream. Ignored by the cpu backend.
  CUstream_st* stream = nullptr;
  int max_iterations = 300;              ///< >= 1
  double tol = 0;                        ///< >= 0; 0: stop only on unchanged labels or max_iterations
  /// Points per distance GEMM (rows of G per call); 0: kDistanceChunkBytes (cuda:
  /// kDistanceChunkBytesCuda) / (4 k), at most N.
  int chunk_points = 0;
  KmeansAssign assign = KmeansAssign::automatic;
  /// cuda, fused ec-fp16 and auto: the points scaled and split to FP16 once
  /// (cuda::NearestPoints, 4 bytes a value more device memory) instead of in every assignment
  /// (auto splits them again, to TF32, in an assignment where it chooses TF32); the labels are
  /// bitwise the same. false: split every iteration (to compare).
  bool prepare_points = true;
  /// gemm.interrupt (nullptr: never) is also read before every iteration, so that a set flag
  /// stops the run (Interrupted) whatever the assignment; the cpu GEMMs poll it too.
  /// gemm.split_k is 1 here: the fused assignment never splits k (its epilogue needs whole
  /// rows), so the unfused one does not either, and both see the same D.
  GemmOptions gemm = unsplit_gemm_options();
  /// Called after every iteration (for progress lines); may be empty. In a group: by every
  /// member of this process (the same numbers); in a gpus() group from the member threads.
  std::function<void(const KmeansIteration&)> progress;
  /// Where X lives: host memory, or (Where(context), or an mpi() group of GPUs) device memory
  /// of that context's device, read where it is (no copy; it must stay unchanged during the
  /// call). Device points need the cuda backend; with Where(context), points that are not
  /// device memory of the context's GPU are refused (InvalidInput) before any kernel runs.
  runtime::Memory points_memory = runtime::Memory::host;
  /// Sample weights (scikit-learn's sample_weight): `points` FP64 values in host memory, w_i the
  /// weight of point i (column i of X), read during the call only. nullptr (default): every
  /// point weighs 1, the unweighted run bitwise. Each weight must be finite and >= 0, and not
  /// all 0 (InvalidInput naming the first bad one). Weighted, the update takes weighted means,
  /// the inertia is weighted and a cluster of weight 0 is empty (the header comment, "update").
  /// Both backends; on cuda the weights are copied to the device. Groups (Where(group), the
  /// member_X overload) refuse weights (Unavailable).
  const double* weights = nullptr;
};

enum class KmeansStop { labels_unchanged, tolerance, max_iterations };

/// "labels_unchanged" | "tolerance" | "max_iterations".
std::string to_string(KmeansStop stop);

struct KmeansResult {
  std::vector<int> labels;       ///< N labels in [0, k)
  std::vector<float> centroids;  ///< dim x k, column-major (column j = centroid j)
  double inertia = 0;            ///< sum_i ||x_i - c_label(i)||^2 in FP64
  int iterations = 0;            ///< assignments done (each followed by an update, except a final
                                 ///< assignment that changed no label)
  KmeansStop stop = KmeansStop::max_iterations;
  std::vector<KmeansIteration> history;  ///< one entry per iteration
  double time_s = 0;                     ///< the iterations' wall time in all (no seeding, no transfers)
  double time_per_iteration_s = 0;       ///< time_s / iterations
  double assign_time_s = 0;              ///< the iterations' assignments (part of time_s)
  double update_time_s = 0;              ///< the iterations' updates (part of time_s)
  /// Before the iterations, not in time_s: the engine's setup (cuda: X to the device, buffers)
  /// and a warm-up of the assignment and update on a few points into scratch (the GEMM
  /// library's handles and the first loads of its kernels, which cost cuBLAS up to 2 s on a
  /// fresh process with CUDA_MODULE_LOADING=EAGER).
  double setup_time_s = 0;
  Variant resolved_variant = Variant::fp32_simt;  ///< what the first GEMM ran (auto resolved)
  std::string resolved_name;       ///< its name, or "ec-fp16+ec-tf32" when GEMMs resolved differently
  Backend backend = Backend::cpu;  ///< the backend that ran (cpu or cuda)
  int empty_clusters = 0;          ///< empty clusters in the last assignment
  KmeansAssign assign = KmeansAssign::unfused;  ///< what ran: fused or unfused
  bool points_prepared = false;                 ///< the points were split once (prepare_points)
  std::string note;                ///< a GEMM fallback note, empty when none
  int scale_exponent = 0;          ///< the run worked on X 2^scale_exponent (0: unscaled; "Scale")
  /// Distributed runs ("Groups"): labels holds the points first_point .. first_point +
  /// labels.size() - 1 of total_points (one process: all of them, first_point 0); members is
  /// the group's size (1 alone) and group its description (empty alone).
  std::int64_t first_point = 0;
  std::int64_t total_points = 0;
  int members = 1;
  std::string group;
};

/// Lloyd's algorithm on the N points X (dim x N, column-major, host memory) from the k starting
/// centroids `init` (dim x k, column-major, host memory). Throws InvalidInput for N < 1,
/// dim < 1, k < 1 or k > N, init.size() != dim k, a non-finite value in X or init, or bad
/// options; Unavailable when the variant has no implementation on the backend, or the backend
/// is cuda without a usable device (or without CUDA in the build).
KmeansResult kmeans(const float* X, int points, int dim, const std::vector<float>& init,
                    const KmeansOptions& options);

// Groups (runtime::DeviceGroup, Where(group)). The points are split by rows over the members,
// in member order, each member's share a multiple of kRowBlock points except the last
// (kmeans_rows); every member assigns its points, the clusters' FP64 sums and counts are
// all-reduced (NCCL on GPUs, MPI on cpu ranks), and every member finalizes the same centroids.
// The labels are those one process computes from the same centroids; the centroids differ from
// one process' only where the FP64 sums, taken in another order, round to another FP32 value
// (never on integer-valued data, whose sums are exact). The changed counts, the inertia and the
// tol scale are summed over the group too, so every member stops at the same iteration.
//   - gpus() group (one process): X is all the points on the host; each member copies its rows
//     to its GPU and runs on a thread of its own; the result holds all the labels.
//   - mpi() group: X is this rank's rows, kmeans_rows(total, ranks, rank) of them (checked); the
//     result holds this rank's labels (first_point, total_points). A failure one rank meets
//     alone (a non-finite value in its rows, too little device memory) is agreed on first, so
//     every rank throws the same error and none waits in a collective.

/// The points of k-means++'s partial sums (its sub-blocks): a member's share starts at a multiple.
inline constexpr int kRowBlock = 128;

/// The rows member `member` of `members` holds: blocks of kRowBlock points dealt in order, as
/// evenly as possible (a member may hold none when points < kRowBlock members).
struct RowRange {
  std::int64_t first = 0;
  int count = 0;
};
RowRange kmeans_rows(std::int64_t points, int members, int member);

/// kmeans on `where`: Where() the host, Where(context) one GPU (the caller's context: its device
/// and stream; options.backend and options.stream are ignored), Where(group) a group (above).
/// `points` is the number of points X holds (an mpi() group: this rank's).
KmeansResult kmeans(const float* X, int points, int dim, const std::vector<float>& init, const KmeansOptions& options,
                    const runtime::Where& where);

/// kmeans on a gpus() group whose points are on its GPUs already (made there: synthetic.hpp, or
/// read there): member_X[m], device memory of member m's device, holds the `points` rows
/// kmeans_rows(points, group.size(), m) (dim x count, column-major). Nothing is copied. An array
/// that is not device memory of its member's GPU is refused (InvalidInput naming the member)
/// before any kernel runs.
KmeansResult kmeans(const std::vector<const float*>& member_X, std::int64_t points, int dim,
                    const std::vector<float>& init, const KmeansOptions& options, runtime::DeviceGroup& group);

/// k-means++ on a group of GPUs whose points are on its GPUs already: a gpus() group (member_X as
/// the member_X overload of kmeans takes them), or an mpi(Memory::device) group (member_X: this
/// rank's one array, its rows kmeans_rows(points, size, rank) on its GPU; `points` the total):
/// bitwise kmeans_plus_plus's centroids; nothing is copied. The values' finiteness is checked on
/// the members' GPUs (on ranks: a bad value on one ends every rank with the same error).
std::vector<float> kmeans_plus_plus(const std::vector<const float*>& member_X, std::int64_t points, int dim, int k,
                                    std::uint64_t seed, runtime::DeviceGroup& group);

/// k-means++ seeding (Arthur & Vassilvitskii 2007) in FP64: the first centroid is a
/// point drawn uniformly, each next one a point drawn with probability proportional to its
/// squared distance (computed directly, sum of (x - c)^2 in FP64) to the nearest centroid so
/// far; when every remaining distance is 0 (fewer distinct points than k) a point is drawn
/// uniformly. Draws come from std::mt19937_64 (seed), turned into doubles in [0, 1) as
/// (r >> 11) 2^-53, so the result is the same with every standard library. The draw
/// u * sum D^2 is located by three walks over sums taken in point order: blocks of 4096 points,
/// their sub-blocks of 128, the sub-block's points (the device sums the sub-blocks in
/// parallel). Returns dim x k (column-major), each column a copy of a point of X. Throws
/// InvalidInput as kmeans does.
/// backend cuda (automatic: cuda when a usable GPU is present): the same on the device, bitwise
/// the host's centroids (every FP64 operation the same, in the same order; X is copied to the
/// device first); Unavailable without a usable device. Its kernels, copies and waits go on
/// `stream` (cudaStream_t; nullptr: the legacy default stream; ignored on the cpu): the same
/// centroids on every stream.
/// `interrupt` (cpu; nullptr: never): read before each centroid's draw (a pass over the points);
/// when set, throws Interrupted (the C API's tcsolveInterrupt).
/// `weights` (host memory, `points` FP64 values; nullptr: unweighted, bitwise as before):
/// scikit-learn's weighted k-means++: the first centroid is drawn with probability w_i / sum w,
/// each next one with probability w_i D(x_i)^2 / sum_i w_i D(x_i)^2 (the same walks over the
/// products w_i D^2 instead of D^2; the first draw walks the weights' running sum; when every
/// w_i D^2 is 0 the draw is proportional to w_i again). A point of weight 0 is never drawn.
/// Weights as KmeansOptions::weights (InvalidInput otherwise). Weighted seeding runs on the host
/// on either backend (the points copied from the device where they are there): the centroids
/// are the cpu's, bitwise, whatever the backend.
std::vector<float> kmeans_plus_plus(const float* X, int points, int dim, int k, std::uint64_t seed,
                                    Backend backend = Backend::cpu, CUstream_st* stream = nullptr,
                                    const std::atomic<bool>* interrupt = nullptr, const double* weights = nullptr);

/// k-means++ on `where`, bitwise the centroids above for the same points and seed: Where() the
/// host, Where(context) the device (X host memory), and distributed over a group: a gpus() group
/// (X all the points; each member's rows go to its GPU), an mpi() group (X this rank's
/// kmeans_rows; on the rank's GPU for a group of GPUs, on the host for cpu ranks). Every member
/// gets all k centroids: the members compute the D^2 of their points and the sums of their
/// 128-point sub-blocks, all-gather those (NCCL on GPUs, MPI on cpu ranks), and each then takes
/// the same draw over the same sums in point order as one process does; the member holding the
/// drawn point shares it. The interrupt is read on the host paths only.
/// `memory`: where X lives; Memory::device (the context's device) only with Where(context): the
/// points are read where they are.
/// `weights`: as above (host memory); Where() and Where(context) only, groups refuse them
/// (Unavailable).
std::vector<float> kmeans_plus_plus(const float* X, int points, int dim, int k, std::uint64_t seed,
                                    const runtime::Where& where, runtime::Memory memory = runtime::Memory::host,
                                    const std::atomic<bool>* interrupt = nullptr, const double* weights = nullptr);

/// sum_i ||x_i - c_label(i)||^2 on the host in FP64 (X dim x N, centroids dim x k, column-major);
/// with `weights` (N host values; nullptr: none) sum_i w_i ||x_i - c_label(i)||^2.
double kmeans_inertia(const float* X, int points, int dim, const std::vector<int>& labels,
                      const std::vector<float>& centroids, const double* weights = nullptr);

/// Fraction of positions where a and b hold the same label (sizes must match and be non-zero).
double label_agreement(const std::vector<int>& a, const std::vector<int>& b);

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

/// Gaussian blobs as scikit-learn's make_blobs draws them: `clusters` centres uniform in
/// [-10, 10]^dim, each point a centre chosen uniformly plus N(0, 1) noise per coordinate.
struct Blobs {
  std::vector<float> X;        ///< dim x N, column-major
  std::vector<int> truth;      ///< the centre each point was drawn around
  std::vector<float> centres;  ///< dim x clusters, column-major
};

/// Draws `points` blobs points (one seeded std::mt19937_64; centres first, then per point its
/// centre and its noise; normals by Box-Muller). Throws InvalidInput for a size below 1.
Blobs make_blobs(int points, int dim, int clusters, std::uint64_t seed);

}  // namespace tcsolve::cluster
