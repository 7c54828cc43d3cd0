// K-means (tcsolve::cluster, kmeans.hpp): Lloyd's loop written once over an Engine with one
// implementation per backend (CpuEngine on host arrays, CudaEngine on device arrays; dispatch in
// make_engine), k-means++ seeding, blobs, agreement and inertia on the host.
//
// Built with -ffp-contract=off (cluster/CMakeLists.txt): the FP64 sums of the update
// round after every operation, as finalize_kernel does with explicit __dadd_rn / __dmul_rn, so
// both backends compute bitwise the same centroids, norms and movements from the same sums.
#include "tcsolve/cluster/kmeans.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "kmeans_cuda.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster {
namespace {

using Clock = std::chrono::steady_clock;
using Rng64 = std::mt19937_64;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kSeedBlock = 4096;    ///< points per partial sum of the k-means++ sampling
constexpr int kSeedSub = 128;       ///< points per sub-block: a block's sum is its sub-blocks' sums
static_assert(kSeedBlock % kSeedSub == 0 && kSeedBlock / kSeedSub <= 32, "a block's sub-blocks fit a warp");
constexpr double kBlobsBox = 10.0;  ///< make_blobs' centre_box (-10, 10)
constexpr int kScaleBelow = 40;     ///< data whose largest magnitude is below 2^-40 is scaled up
constexpr int kScaleAbove = 40;     ///< and from 2^41 on down (scale_exponent)

std::size_t count(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

/// Uniform double in [0, 1) from 53 random bits: the same on every standard library.
double uniform01(Rng64& rng) { return static_cast<double>(rng() >> 11) * 0x1p-53; }

/// Uniform index in [0, n): floor(u n) with u from uniform01 (n < 2^31, so every index can occur).
int uniform_index(Rng64& rng, int n) { return std::min(n - 1, static_cast<int>(uniform01(rng) * n)); }

void check_sizes(int points, int dim, int k) {
  if (points < 1) throw InvalidInput("kmeans: no points (N = " + std::to_string(points) + ")");
  if (dim < 1) throw InvalidInput("kmeans: dimension must be >= 1, got " + std::to_string(dim));
  if (k < 1) throw InvalidInput("kmeans: k must be >= 1, got " + std::to_string(k));
  if (k > points)
    throw InvalidInput("kmeans: k = " + std::to_string(k) + " exceeds the number of points (" +
                       std::to_string(points) + ")");
}

void check_finite(const float* v, std::size_t n, int dim, const char* what) {
  for (std::size_t e = 0; e < n; ++e)
    if (!std::isfinite(v[e]))
      throw InvalidInput(std::string("kmeans: ") + what + " has a non-finite value at (" +
                         std::to_string(e / dim) + ", " + std::to_string(e % dim) + ")");
}

/// Throws Interrupted when the caller's flag is set (nullptr: never).
void check_interrupt(const std::atomic<bool>* interrupt) { tcsolve::check_interrupt(interrupt, "the K-means run"); }

/// The exponent e of the power of two the run scales X and init by (0: none; see kmeans.hpp,
/// "Scale"): M = the largest magnitude of X and init; e = 0 when 2^-40 <= M < 2^41, else the e
/// that brings M into [2^-40, 2^-39) from below or into [2^40, 2^41) from above.
int scale_exponent(const float* X, std::size_t n, const std::vector<float>& init) {
  float m = 0;
  for (std::size_t e = 0; e < n; ++e) m = std::max(m, std::fabs(X[e]));
  for (float v : init) m = std::max(m, std::fabs(v));
  if (m == 0) return 0;
  const int b = std::ilogb(m);  // the true exponent, for subnormals too
  if (b < -kScaleBelow) return -kScaleBelow - b;
  if (b > kScaleAbove) return kScaleAbove - b;
  return 0;
}

/// v 2^e, element by element (exact for upward scaling; below 2^-126 after downward scaling an
/// element keeps fewer bits).
std::vector<float> scaled(const float* v, std::size_t n, int e) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = std::ldexp(v[i], e);
  return out;
}

/// sum_d (x_d - c_d)^2 in FP64: four partial sums over d = 0, 1, 2, 3 mod 4 (independent
/// chains: 3-4x the speed of one, and the same result on every run), then the tail.
double squared_distance(const float* x, const float* c, int dim) {
  double s[4] = {0, 0, 0, 0};
  int d = 0;
  for (; d + 4 <= dim; d += 4)
    for (int q = 0; q < 4; ++q) {
      const double diff = static_cast<double>(x[d + q]) - static_cast<double>(c[d + q]);
      s[q] += diff * diff;
    }
  double total = (s[0] + s[1]) + (s[2] + s[3]);
  for (; d < dim; ++d) {
    const double diff = static_cast<double>(x[d]) - static_cast<double>(c[d]);
    total += diff * diff;
  }
  return total;
}

/// The last index <= from with dist > 0, else the first after it (-1 when none: all are 0).
int nearest_positive(const std::vector<double>& dist, int from) {
  for (int i = from; i >= 0; --i)
    if (dist[static_cast<std::size_t>(i)] > 0) return i;
  for (std::size_t i = static_cast<std::size_t>(from) + 1; i < dist.size(); ++i)
    if (dist[i] > 0) return static_cast<int>(i);
  return -1;
}

/// mean_d var(X(d, :)) in FP64 (two passes): the scale of the tol test.
double mean_variance(const float* X, int points, int dim) {
  std::vector<double> mean(static_cast<std::size_t>(dim), 0.0), var(static_cast<std::size_t>(dim), 0.0);
  for (int i = 0; i < points; ++i)
    for (int d = 0; d < dim; ++d) mean[d] += X[count(i, dim) + d];
  for (double& m : mean) m /= points;
  for (int i = 0; i < points; ++i)
    for (int d = 0; d < dim; ++d) {
      const double diff = X[count(i, dim) + d] - mean[d];
      var[d] += diff * diff;
    }
  double s = 0;
  for (double v : var) s += v / points;
  return s / dim;
}

/// The GEMMs' resolved variants and notes over a run.
class GemmRecord {
 public:
  void add(const GemmInfo& info) {
    if (!any_) first_ = info.resolved;
    any_ = true;
    names_.insert(std::string(tcsolve::to_string(info.resolved)));
    if (!info.note.empty() && note_.empty()) note_ = info.note;
  }
  Variant first() const { return first_; }
  std::string name() const {
    std::string s;
    for (const std::string& n : names_) s += (s.empty() ? "" : "+") + n;
    return s;
  }
  const std::string& note() const { return note_; }

 private:
  bool any_ = false;
  Variant first_ = Variant::fp32_simt;
  std::set<std::string> names_;
  std::string note_;
};

// ---------------------------------------------------------------------------------------------
// Engines: the state of one run on one backend
// ---------------------------------------------------------------------------------------------

/// Rows of G per GEMM call: `requested` when positive, else as many as `bytes` hold.
int chunk_rows(int points, int k, int requested, std::size_t bytes = kDistanceChunkBytes) {
  const std::size_t rows =
      requested > 0
          ? static_cast<std::size_t>(requested)
          : std::max<std::size_t>(1, bytes / (sizeof(float) * static_cast<std::size_t>(k)));
  return static_cast<int>(std::min<std::size_t>(rows, static_cast<std::size_t>(points)));
}

class Engine {
 public:
  virtual ~Engine() = default;
  /// One assignment with the current centroids; returns the number of labels that changed.
  virtual long long assign(const KmeansOptions& options, GemmRecord& record) = 0;
  /// Runs the assignment's GEMM path and the update's kernels once on a few points into scratch
  /// (library handles, first kernel loads), so that iterations time the work alone.
  /// cuda: also scales and splits the points once where options.prepare_points applies.
  virtual void warm_up(const KmeansOptions& /*options*/) {}
  /// Whether the points were prepared (KmeansResult::points_prepared).
  virtual bool prepared() const { return false; }
  /// One update from the current labels: counts (k) and squared movements (k) come back.
  virtual void update(std::vector<int>& counts, std::vector<double>& shift2) = 0;
  virtual std::vector<int> labels() const = 0;
  virtual std::vector<float> centroids() const = 0;
  virtual double inertia() const = 0;
};

/// Host arrays; the GEMM on Backend::cpu.
class CpuEngine final : public Engine {
 public:
  CpuEngine(const float* X, int points, int dim, const std::vector<float>& init, int chunk, bool fused)
      : fused_(fused),
        X_(X),
        n_(points),
        dim_(dim),
        k_(static_cast<int>(init.size() / dim)),
        C_(init),
        labels_(static_cast<std::size_t>(points), -1),
        cnorm_(static_cast<std::size_t>(k_)),
        rows_(chunk_rows(points, k_, chunk)),
        G_(fused ? 0 : count(rows_, k_)) {
    for (int j = 0; j < k_; ++j) cnorm_[j] = norm2(&C_[count(j, dim_)]);
  }

  long long assign(const KmeansOptions& options, GemmRecord& record) override {
    long long changed = 0;
    if (fused_) {  // the argmin tile by tile, as the cuda kernels (cpu::nearest_columns)
      for (int i0 = 0; i0 < n_; i0 += rows_) {
        const int rows = std::min(rows_, n_ - i0);
        record.add(cpu::nearest_columns(options.variant, rows, k_, dim_, X_ + count(i0, dim_), dim_, C_.data(), dim_,
                                        cnorm_.data(), labels_.data() + i0, &changed, options.gemm));
      }
      return changed;
    }
    std::vector<double> best(static_cast<std::size_t>(rows_));
    std::vector<int> best_j(static_cast<std::size_t>(rows_));
    for (int i0 = 0; i0 < n_; i0 += rows_) {
      const int rows = std::min(rows_, n_ - i0);
      // G(i, j) = x_(i0+i) . c_j: X^T C with both operands contiguous along dim.
      record.add(gemm(Backend::cpu, options.variant, Op::t, Op::n, rows, k_, dim_, 1.0f, X_ + count(i0, dim_),
                      dim_, C_.data(), dim_, 0.0f, G_.data(), rows, options.gemm));
      std::fill(best.begin(), best.end(), kInf);
      std::fill(best_j.begin(), best_j.end(), 0);  // a point no score wins goes to cluster 0
      for (int j = 0; j < k_; ++j) {               // j ascending, strict <: ties go to the lowest j
        const float* g = G_.data() + count(j, rows);
        for (int i = 0; i < rows; ++i) {
          const double s = cnorm_[j] - 2.0 * static_cast<double>(g[i]);
          if (s < best[i]) {
            best[i] = s;
            best_j[i] = j;
          }
        }
      }
      for (int i = 0; i < rows; ++i) {
        int& label = labels_[static_cast<std::size_t>(i0 + i)];
        changed += label != best_j[i];
        label = best_j[i];
      }
    }
    return changed;
  }

  void update(std::vector<int>& counts, std::vector<double>& shift2) override {
    std::vector<double> sums(count(k_, dim_), 0.0);
    counts.assign(static_cast<std::size_t>(k_), 0);
    shift2.assign(static_cast<std::size_t>(k_), 0.0);
    for (int i = 0; i < n_; ++i) {
      const int l = labels_[static_cast<std::size_t>(i)];
      const float* x = X_ + count(i, dim_);
      double* s = sums.data() + count(l, dim_);
      for (int d = 0; d < dim_; ++d) s[d] += static_cast<double>(x[d]);
      ++counts[static_cast<std::size_t>(l)];
    }
    for (int j = 0; j < k_; ++j) {  // as finalize_kernel: d ascending, every operation rounded
      const int n = counts[static_cast<std::size_t>(j)];
      float* c = &C_[count(j, dim_)];
      const double* s = sums.data() + count(j, dim_);
      double shift = 0, norm = 0;
      for (int d = 0; d < dim_; ++d) {
        const float old = c[d];
        const float v = n > 0 ? static_cast<float>(s[d] / static_cast<double>(n)) : old;  // empty: kept
        c[d] = v;
        const double diff = static_cast<double>(v) - static_cast<double>(old);
        shift += diff * diff;
        norm += static_cast<double>(v) * static_cast<double>(v);
      }
      shift2[static_cast<std::size_t>(j)] = shift;
      cnorm_[static_cast<std::size_t>(j)] = norm;
    }
  }

  std::vector<int> labels() const override { return labels_; }
  std::vector<float> centroids() const override { return C_; }
  double inertia() const override { return kmeans_inertia(X_, n_, dim_, labels_, C_); }

 private:
  double norm2(const float* c) const {
    double norm = 0;
    for (int d = 0; d < dim_; ++d) norm += static_cast<double>(c[d]) * static_cast<double>(c[d]);
    return norm;
  }

  bool fused_;
  const float* X_;
  int n_, dim_, k_;
  std::vector<float> C_;
  std::vector<int> labels_;
  std::vector<double> cnorm_;
  int rows_;
  std::vector<float> G_;
};

/// Points per cuda GEMM or nearest_columns call: `requested` when positive; unfused as many as
/// kDistanceChunkBytesCuda of G holds, fused as many as kFusedChunkBytes of split operands hold.
/// The device bytes of a cuda run, apart from the points' chunks: X, labels, the sort's three
/// arrays and cub's storage (per point), the per-cluster arrays, the context's scratch.
std::size_t cuda_fixed_bytes(int points, int dim, int k) {
  const std::size_t n = static_cast<std::size_t>(points), d = static_cast<std::size_t>(dim),
                    kk = static_cast<std::size_t>(k);
  const std::size_t per_point = 4 * d + 16 + 8;     // X, labels, the sort's 3 arrays, cub
  const std::size_t per_cluster = 12 * d + 32 + 8 * (d + 64);  // C, FP64 sums, counts, norms, C's split
  return n * per_point + kk * per_cluster + (std::size_t{64} << 20);
}

/// Device bytes per point of a chunk: the split copies of the points (8 bytes a value: auto's
/// TF32 hi and lo, padded) and, unfused, its row of G.
std::size_t cuda_chunk_bytes_per_point(int dim, int k, bool fused) {
  return 8 * (static_cast<std::size_t>(dim) + 64) + (fused ? 0 : 4 * static_cast<std::size_t>(k));
}

/// Points per cuda GEMM or nearest_columns call: `requested` when positive; else unfused as many
/// as kDistanceChunkBytesCuda of G holds, fused as many as kFusedChunkBytes of split operands
/// hold; and never more than the free device memory beside the fixed arrays holds (X larger than
/// a pass still clusters, in more chunks). InvalidInput, naming the bytes, when not even 128
/// points fit beside X.
int cuda_chunk_rows(int points, int dim, int k, int requested, bool fused) {
  std::size_t rows;
  if (requested > 0) {
    rows = static_cast<std::size_t>(requested);
  } else if (!fused) {
    rows = static_cast<std::size_t>(chunk_rows(points, k, 0, kDistanceChunkBytesCuda));
  } else {
    rows = std::max<std::size_t>(1, kFusedChunkBytes / (8 * static_cast<std::size_t>(dim)));
  }
  rows = std::min<std::size_t>(rows, static_cast<std::size_t>(points));
  const std::size_t fixed = cuda_fixed_bytes(points, dim, k), per = cuda_chunk_bytes_per_point(dim, k, fused);
  const std::size_t free = cuda::device_memory().free;
  const std::size_t fit = free > fixed ? (free - fixed) / per : 0;
  if (fit < std::min<std::size_t>(128, static_cast<std::size_t>(points)))
    throw InvalidInput("kmeans: " + std::to_string(points) + " x " + std::to_string(dim) + " points with k = " +
                       std::to_string(k) + " need about " + std::to_string(fixed + 128 * per) +
                       " bytes of device memory, " + std::to_string(free) + " are free (" + cuda::device_name() +
                       ")");
  return static_cast<int>(std::min(rows, fit / 128 * 128 > 0 ? fit / 128 * 128 : fit));
}

/// Device arrays; the GEMM (or nearest_columns) in the engine's context, the rest in
/// kmeans_cuda.cu, all on the caller's stream (KmeansOptions::stream): every kernel, copy and
/// wait of the run goes on it; the engine waits for that stream only, never for the device.
class CudaEngine final : public Engine {
 public:
  CudaEngine(const float* X, int points, int dim, const std::vector<float>& init, int chunk, bool fused,
             CUstream_st* stream)
      : context_(stream),
        fused_(fused),
        n_(points),
        dim_(dim),
        k_(static_cast<int>(init.size() / dim)),
        rows_(cuda_chunk_rows(points, dim, k_, chunk, fused)),  // checks the memory first
        X_(count(points, dim)),
        C_(init.size()),
        G_(fused ? 0 : count(rows_, k_)),
        labels_(static_cast<std::size_t>(points)),
        counts_(static_cast<std::size_t>(k_)),
        order_(3 * static_cast<std::size_t>(points)),  // keys, indices, order
        offsets_(static_cast<std::size_t>(k_) + 1),
        cnorm_(static_cast<std::size_t>(k_)),
        shift2_(static_cast<std::size_t>(k_)),
        sums_(count(k_, dim)),
        changed_(1),
        sort_temp_(detail::kmeans_order_bytes(points, k_)) {
    CUstream_st* const s = context_.stream();
    cuda::copy_to_device(X_.data(), X, count(points, dim) * sizeof(float), s);
    C_.upload(init, s);
    cuda::device_memset(labels_.data(), 0xff, labels_.size() * sizeof(int), s);  // -1: no label yet
    detail::kmeans_centroid_norms(C_.data(), k_, dim_, cnorm_.data(), s);
    detail::kmeans_order_init(order_.data() + count(points, 1), points, s);  // the sort's indices
    context_.synchronize();
  }

  long long assign(const KmeansOptions& options, GemmRecord& record) override {
    cuda::device_memset(changed_.data(), 0, sizeof(unsigned long long), stream());
    for (int i0 = 0; i0 < n_; i0 += rows_) {
      const int rows = std::min(rows_, n_ - i0);
      if (!prepared_.empty()) {  // ec-fp16 or auto on points split once
        record.add(cuda::nearest_columns(context_, prepared_[static_cast<std::size_t>(i0 / rows_)], k_, C_.data(), dim_,
                                         cnorm_.data(), labels_.data() + i0, changed_.data(), options.gemm));
        continue;
      }
      if (fused_) {
        record.add(cuda::nearest_columns(context_, options.variant, rows, k_, dim_, X_.data() + count(i0, dim_), dim_,
                                         C_.data(), dim_, cnorm_.data(), labels_.data() + i0, changed_.data(),
                                         options.gemm));
        continue;
      }
      record.add(cuda::gemm(context_, options.variant, Op::t, Op::n, rows, k_, dim_, 1.0f,
                            X_.data() + count(i0, dim_), dim_, C_.data(), dim_, 0.0f, G_.data(), rows,
                            options.gemm));
      detail::kmeans_assign(G_.data(), rows, rows, k_, cnorm_.data(), labels_.data() + i0, changed_.data(),
                            stream());
    }
    return static_cast<long long>(changed_.download(stream())[0]);
  }

  bool prepared() const override { return !prepared_.empty(); }

  detail::OrderScratch scratch() {
    const std::size_t n = static_cast<std::size_t>(n_);
    return {order_.data(), order_.data() + n, order_.data() + 2 * n, offsets_.data(), sort_temp_.data(),
            sort_temp_.size()};
  }

  void warm_up(const KmeansOptions& options) override {
    // the prepared points need 4 bytes a value more: only where they fit (else points_prepared
    // stays false and every assignment splits its chunk)
    const std::size_t prepared = static_cast<std::size_t>(ceil_div(n_, rows_)) *
                                 cuda::NearestPoints::bytes(std::min(rows_, n_), dim_);
    if (fused_ && options.prepare_points && (options.variant == Variant::ec_fp16 || options.variant == Variant::auto_) &&
        cuda::NearestPoints::available(options.gemm) &&
        prepared + (std::size_t{256} << 20) + cuda_chunk_bytes_per_point(dim_, k_, true) * rows_ <=
            cuda::device_memory().free)
      for (int i0 = 0; i0 < n_; i0 += rows_)
        prepared_.emplace_back(context_, std::min(rows_, n_ - i0), dim_, X_.data() + count(i0, dim_), dim_,
                               options.gemm, options.variant);  // auto: X_ stays for its TF32 calls
    const int rows = std::min({n_, 256, rows_});  // G_ holds rows_ rows
    cuda::DeviceBuffer<int> labels(static_cast<std::size_t>(rows));
    cuda::DeviceBuffer<unsigned long long> changed(1);
    GemmRecord ignored;
    if (fused_) {
      cuda::nearest_columns(context_, options.variant, rows, k_, dim_, X_.data(), dim_, C_.data(), dim_, cnorm_.data(),
                            labels.data(), changed.data(), options.gemm);
    } else {
      cuda::gemm(context_, options.variant, Op::t, Op::n, rows, k_, dim_, 1.0f, X_.data(), dim_, C_.data(), dim_, 0.0f,
                 G_.data(), rows, options.gemm);
      detail::kmeans_assign(G_.data(), rows, rows, k_, cnorm_.data(), labels.data(), changed.data(), stream());
    }
    cuda::device_memset(labels.data(), 0, labels.size() * sizeof(int), stream());
    cuda::device_memset(counts_.data(), 0, counts_.size() * sizeof(int), stream());
    detail::kmeans_accumulate_ordered(X_.data(), labels.data(), rows, dim_, k_, sums_.data(), counts_.data(),
                                      scratch(), stream());
    context_.synchronize();  // before the scratch labels are freed
  }

  void update(std::vector<int>& counts, std::vector<double>& shift2) override {
    // the counts from 0; the sums are overwritten
    cuda::device_memset(counts_.data(), 0, counts_.size() * sizeof(int), stream());
    detail::kmeans_accumulate_ordered(X_.data(), labels_.data(), n_, dim_, k_, sums_.data(), counts_.data(),
                                      scratch(), stream());
    detail::kmeans_finalize(sums_.data(), counts_.data(), C_.data(), cnorm_.data(), shift2_.data(), k_, dim_,
                            stream());
    counts = counts_.download(stream());
    shift2 = shift2_.download(stream());
  }

  std::vector<int> labels() const override { return labels_.download(stream()); }
  std::vector<float> centroids() const override { return C_.download(stream()); }
  double inertia() const override {
    return detail::kmeans_inertia(X_.data(), labels_.data(), C_.data(), n_, dim_, stream());
  }

 private:
  CUstream_st* stream() const { return context_.stream(); }

  cuda::Context context_;  // first: destroyed after the buffers' last use
  bool fused_;
  int n_, dim_, k_, rows_;
  cuda::DeviceBuffer<float> X_, C_, G_;
  cuda::DeviceBuffer<int> labels_, counts_, order_, offsets_;
  cuda::DeviceBuffer<double> cnorm_, shift2_, sums_;
  cuda::DeviceBuffer<unsigned long long> changed_;
  cuda::DeviceBuffer<unsigned char> sort_temp_;  ///< cub's radix-sort storage
  std::vector<cuda::NearestPoints> prepared_;  ///< per chunk of rows_ points (ec-fp16, auto; prepare_points)
};

/// The one switch between backends.
std::unique_ptr<Engine> make_engine(Backend backend, const float* X, int points, int dim,
                                    const std::vector<float>& init, int chunk, bool fused, CUstream_st* stream) {
  if (backend == Backend::cuda) return std::make_unique<CudaEngine>(X, points, dim, init, chunk, fused, stream);
  return std::make_unique<CpuEngine>(X, points, dim, init, chunk, fused);
}

bool has_fused(Variant v) {
  return v == Variant::fp32_simt || v == Variant::ec_fp16 || v == Variant::ec_tf32 || v == Variant::auto_;
}

/// The assignment that runs (KmeansAssign); throws Unavailable for fused where it cannot.
KmeansAssign resolve_assign(const KmeansOptions& o, Backend backend) {
  const bool can = backend == Backend::cuda ? cuda::nearest_columns_available(o.variant, o.gemm) : has_fused(o.variant);
  switch (o.assign) {
    case KmeansAssign::unfused: return KmeansAssign::unfused;
    case KmeansAssign::automatic: return backend == Backend::cuda && can ? KmeansAssign::fused : KmeansAssign::unfused;
    case KmeansAssign::fused:
      if (!can)
        throw Unavailable("kmeans: no fused assignment for " + std::string(tcsolve::to_string(o.variant)) + " on the " +
                          std::string(tcsolve::to_string(backend)) +
                          " backend (fp32-simt, ec-fp16, ec-tf32, auto; on cuda the ec variants need an sm_90 GPU)");
      return KmeansAssign::fused;
  }
  return KmeansAssign::unfused;
}

}  // namespace

KmeansAssign parse_kmeans_assign(const std::string& name) {
  if (name == "auto") return KmeansAssign::automatic;
  if (name == "fused") return KmeansAssign::fused;
  if (name == "unfused") return KmeansAssign::unfused;
  throw InvalidInput("kmeans: assignment must be auto, fused or unfused, got '" + name + "'");
}

std::string to_string(KmeansAssign assign) {
  switch (assign) {
    case KmeansAssign::automatic: return "auto";
    case KmeansAssign::fused: return "fused";
    case KmeansAssign::unfused: return "unfused";
  }
  return "unknown";
}

std::string to_string(KmeansStop stop) {
  switch (stop) {
    case KmeansStop::labels_unchanged:
      return "labels_unchanged";
    case KmeansStop::tolerance:
      return "tolerance";
    case KmeansStop::max_iterations:
      return "max_iterations";
  }
  return "unknown";
}

KmeansResult kmeans(const float* X, int points, int dim, const std::vector<float>& init,
                    const KmeansOptions& options) {
  if (dim < 1) throw InvalidInput("kmeans: dimension must be >= 1, got " + std::to_string(dim));
  if (init.size() % static_cast<std::size_t>(dim) != 0)
    throw InvalidInput("kmeans: init has " + std::to_string(init.size()) +
                       " values, not a multiple of dim = " + std::to_string(dim));
  const int k = static_cast<int>(init.size() / static_cast<std::size_t>(dim));
  check_sizes(points, dim, k);
  if (options.max_iterations < 1)
    throw InvalidInput("kmeans: max_iterations must be >= 1, got " + std::to_string(options.max_iterations));
  if (!(options.tol >= 0) || !std::isfinite(options.tol))
    throw InvalidInput("kmeans: tol must be a finite number >= 0");
  if (options.chunk_points < 0)
    throw InvalidInput("kmeans: chunk_points must be >= 0, got " + std::to_string(options.chunk_points));
  check_finite(X, count(points, dim), dim, "X");
  check_finite(init.data(), init.size(), dim, "init");
  // Data far from 1 in magnitude (subnormal, 1e-30, 1e30): the iterations run on X 2^e and
  // init 2^e, the centroids come back scaled by 2^-e ("Scale" in kmeans.hpp).
  const int exponent = scale_exponent(X, count(points, dim), init);
  std::vector<float> X_scaled, init_scaled;
  if (exponent != 0) {
    X_scaled = scaled(X, count(points, dim), exponent);
    init_scaled = scaled(init.data(), init.size(), exponent);
  }
  const float* const Xs = exponent != 0 ? X_scaled.data() : X;
  const std::vector<float>& init_s = exponent != 0 ? init_scaled : init;

  KmeansResult r;
  r.scale_exponent = exponent;
  r.backend = resolve_backend(options.backend);
  if (r.backend == Backend::cuda && !cuda::device_available())
    throw Unavailable("kmeans: the cuda backend needs a usable CUDA device (" + cuda::device_name() + ")");
  if (!available(options.variant, r.backend))
    throw Unavailable("kmeans: variant " + std::string(tcsolve::to_string(options.variant)) +
                      " is not available on the " + std::string(tcsolve::to_string(r.backend)) + " backend");
  const double tol_scale = options.tol > 0 ? options.tol * mean_variance(Xs, points, dim) : 0.0;

  r.assign = resolve_assign(options, r.backend);
  Clock::time_point setup = Clock::now();
  std::unique_ptr<Engine> engine =
      make_engine(r.backend, Xs, points, dim, init_s, options.chunk_points, r.assign == KmeansAssign::fused,
                  options.stream);
  engine->warm_up(options);
  r.points_prepared = engine->prepared();
  r.setup_time_s = std::chrono::duration<double>(Clock::now() - setup).count();
  GemmRecord record;
  std::vector<int> counts;
  std::vector<double> shift2;
  int empty = 0;
  for (int it = 1;; ++it) {
    check_interrupt(options.gemm.interrupt);
    const Clock::time_point start = Clock::now();
    KmeansIteration step;
    step.iteration = it;
    step.changed = engine->assign(options, record);
    const Clock::time_point assigned = Clock::now();
    step.assign_time_s = std::chrono::duration<double>(assigned - start).count();
    bool done = false;
    if (step.changed == 0 && it >= 2) {
      r.stop = KmeansStop::labels_unchanged;  // the update would reproduce the centroids
      done = true;
    } else {
      engine->update(counts, shift2);
      step.update_time_s = std::chrono::duration<double>(Clock::now() - assigned).count();
      empty = static_cast<int>(std::count(counts.begin(), counts.end(), 0));
      for (double s : shift2) step.shift += s;  // j ascending on both backends
      if (options.tol > 0 && step.shift <= tol_scale) {
        r.stop = KmeansStop::tolerance;
        done = true;
      } else if (it >= options.max_iterations) {
        r.stop = KmeansStop::max_iterations;
        done = true;
      }
    }
    step.shift = std::ldexp(step.shift, -2 * exponent);  // back to the data's scale (exact in FP64)
    step.empty_clusters = empty;
    step.time_s = std::chrono::duration<double>(Clock::now() - start).count();
    r.time_s += step.time_s;
    r.assign_time_s += step.assign_time_s;
    r.update_time_s += step.update_time_s;
    r.history.push_back(step);
    if (options.progress) options.progress(step);
    if (done) break;
  }
  r.iterations = static_cast<int>(r.history.size());
  r.time_per_iteration_s = r.time_s / r.iterations;
  r.empty_clusters = empty;
  r.labels = engine->labels();
  r.centroids = engine->centroids();
  r.inertia = engine->inertia();
  if (exponent != 0) {  // the centroids at the data's scale, and the inertia of those (on the host)
    for (float& c : r.centroids) c = std::ldexp(c, -exponent);
    r.inertia = kmeans_inertia(X, points, dim, r.labels, r.centroids);
  }
  r.resolved_variant = record.first();
  r.resolved_name = record.name();
  r.note = record.note();
  return r;
}

std::vector<float> kmeans_plus_plus(const float* X, int points, int dim, int k, std::uint64_t seed, Backend backend,
                                    CUstream_st* stream, const std::atomic<bool>* interrupt) {
  check_sizes(points, dim, k);
  check_finite(X, count(points, dim), dim, "X");
  if (resolve_backend(backend) == Backend::cuda) {
    if (!cuda::device_available())
      throw Unavailable("kmeans++: the cuda backend needs a usable CUDA device (" + cuda::device_name() + ")");
    const std::size_t need = count(points, dim) * sizeof(float) + count(points, 12) + count(k, 4 * dim + 24);
    const cuda::DeviceMemory mem = cuda::device_memory();
    if (need > mem.free)
      throw InvalidInput("kmeans++: " + std::to_string(points) + " x " + std::to_string(dim) + " points need about " +
                         std::to_string(need) + " bytes of device memory, " + std::to_string(mem.free) + " are free");
    cuda::DeviceBuffer<float> d_X(count(points, dim));
    cuda::copy_to_device(d_X.data(), X, count(points, dim) * sizeof(float), stream);
    return detail::kmeans_plus_plus_device(d_X.data(), points, dim, k, seed, kSeedBlock, kSeedSub, stream);
  }
  Rng64 rng(seed);
  std::vector<float> C(count(k, dim));
  std::vector<double> dist(static_cast<std::size_t>(points), kInf);  // D(x)^2: to the nearest centroid so far
  std::vector<int> nearest(static_cast<std::size_t>(points), -1);    // which one
  std::vector<double> between(static_cast<std::size_t>(k));          // ||c_j - c_t||^2, j < t
  const int blocks = (points + kSeedBlock - 1) / kSeedBlock;
  constexpr int kSubs = kSeedBlock / kSeedSub;
  std::vector<double> block_sum(static_cast<std::size_t>(blocks));
  std::vector<double> sub_sum(static_cast<std::size_t>(blocks) * kSubs);  // block b's at b kSubs
  int chosen = uniform_index(rng, points);
  for (int t = 0;; ++t) {
    check_interrupt(interrupt);
    const float* c = X + count(chosen, dim);
    std::copy(c, c + dim, C.begin() + static_cast<std::ptrdiff_t>(count(t, dim)));
    if (t + 1 == k) break;
    for (int j = 0; j < t; ++j)
      between[static_cast<std::size_t>(j)] = squared_distance(C.data() + count(j, dim), c, dim);
      // D(x)^2 against the new centroid c_t. Skipped where the triangle inequality shows c_t is no
      // closer: ||c_a - c_t|| >= 2 ||x - c_a|| gives ||x - c_t|| >= ||x - c_a|| (a = nearest; a
      // relative margin of 2^-20 covers the rounding of both squares). Partial sums per block in
      // point order, so the result does not depend on the number of threads.
#pragma omp parallel for schedule(dynamic, 1) if (blocks > 1)
    for (int b = 0; b < blocks; ++b) {
      const int end = std::min(points, (b + 1) * kSeedBlock);
      bool changed = false;
      for (int i = b * kSeedBlock; i < end; ++i) {
        double& d = dist[static_cast<std::size_t>(i)];
        const int a = nearest[static_cast<std::size_t>(i)];
        if (a >= 0 && between[static_cast<std::size_t>(a)] >= 4.0 * d * (1.0 + 0x1p-20)) continue;
        const double e = squared_distance(X + count(i, dim), c, dim);
        if (e < d) {
          d = e;
          nearest[static_cast<std::size_t>(i)] = t;
          changed = true;
        }
      }
      if (!changed) continue;
      // each sub-block's sum in point order, then the block's as the sum of those in order (the
      // device sums the sub-blocks in parallel: the same operations, so the same bits)
      double s = 0;
      for (int u = 0, i0 = b * kSeedBlock; i0 < end; ++u, i0 += kSeedSub) {
        double sub = 0;
        for (int i = i0; i < std::min(end, i0 + kSeedSub); ++i) sub += dist[static_cast<std::size_t>(i)];
        sub_sum[static_cast<std::size_t>(b) * kSubs + u] = sub;
        s += sub;
      }
      block_sum[static_cast<std::size_t>(b)] = s;
    }
    double total = 0;
    for (double s : block_sum) total += s;
    const double u = uniform01(rng);
    if (!(total > 0) || !std::isfinite(total)) {  // every point is a centroid already
      chosen = uniform_index(rng, points);
      continue;
    }
    // The point whose running sum first exceeds u * total: the block, the sub-block, then the
    // point (each walk over the sums of the level below, in order).
    const double target = u * total;
    double before = 0;
    int b = 0;
    while (b + 1 < blocks && before + block_sum[static_cast<std::size_t>(b)] <= target)
      before += block_sum[static_cast<std::size_t>(b++)];
    const double local = target - before;
    const int block_end = std::min(points, (b + 1) * kSeedBlock);
    const int subs = (block_end - b * kSeedBlock + kSeedSub - 1) / kSeedSub;
    const double* sums = sub_sum.data() + static_cast<std::size_t>(b) * kSubs;
    double before_sub = 0;
    int v = 0;
    while (v + 1 < subs && before_sub + sums[v] <= local) before_sub += sums[v++];
    const double local_sub = local - before_sub;
    const int i0 = b * kSeedBlock + v * kSeedSub, i1 = std::min(block_end, i0 + kSeedSub);
    double run = 0;
    chosen = -1;
    for (int i = i0; i < i1; ++i) {
      const double d = dist[static_cast<std::size_t>(i)];
      if (d <= 0) continue;
      run += d;
      if (run > local_sub) {
        chosen = i;
        break;
      }
    }
    // rounding left the target past the sub-block's end: the last point with D^2 > 0 before it
    // (else the first after it; total > 0, so one exists)
    if (chosen < 0) chosen = nearest_positive(dist, i1 - 1);
  }
  return C;
}

double kmeans_inertia(const float* X, int points, int dim, const std::vector<int>& labels,
                      const std::vector<float>& centroids) {
  if (labels.size() != static_cast<std::size_t>(points) || dim < 1 ||
      centroids.size() % static_cast<std::size_t>(dim))
    throw InvalidInput("kmeans_inertia: sizes do not match");
  const int k = static_cast<int>(centroids.size() / static_cast<std::size_t>(dim));
  double s = 0;
  for (int i = 0; i < points; ++i) {
    const int l = labels[static_cast<std::size_t>(i)];
    if (l < 0 || l >= k) throw InvalidInput("kmeans_inertia: label " + std::to_string(l) + " out of range");
    s += squared_distance(X + count(i, dim), centroids.data() + count(l, dim), dim);
  }
  return s;
}

double label_agreement(const std::vector<int>& a, const std::vector<int>& b) {
  if (a.size() != b.size() || a.empty()) throw InvalidInput("label_agreement: sizes differ or are zero");
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return static_cast<double>(same) / static_cast<double>(a.size());
}

Blobs make_blobs(int points, int dim, int clusters, std::uint64_t seed) {
  if (points < 1 || dim < 1 || clusters < 1)
    throw InvalidInput("make_blobs: points, dim and clusters must be >= 1, got " + std::to_string(points) +
                       ", " + std::to_string(dim) + ", " + std::to_string(clusters));
  Rng64 rng(seed);
  // Standard normals by Box-Muller from 53-bit uniforms (std::normal_distribution's algorithm
  // is the library's choice; this is the same everywhere).
  bool has_spare = false;
  double spare = 0;
  auto normal = [&]() {
    if (has_spare) {
      has_spare = false;
      return spare;
    }
    const double u1 = (static_cast<double>(rng() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
    const double u2 = uniform01(rng);
    const double radius = std::sqrt(-2.0 * std::log(u1));
    constexpr double kTwoPi = 6.283185307179586476925;
    spare = radius * std::sin(kTwoPi * u2);
    has_spare = true;
    return radius * std::cos(kTwoPi * u2);
  };
  Blobs b;
  b.centres.resize(count(clusters, dim));
  for (float& c : b.centres) c = static_cast<float>(-kBlobsBox + 2.0 * kBlobsBox * uniform01(rng));
  b.X.resize(count(points, dim));
  b.truth.resize(static_cast<std::size_t>(points));
  for (int i = 0; i < points; ++i) {
    const int t = uniform_index(rng, clusters);
    b.truth[static_cast<std::size_t>(i)] = t;
    for (int d = 0; d < dim; ++d)
      b.X[count(i, dim) + d] = static_cast<float>(b.centres[count(t, dim) + d] + normal());
  }
  return b;
}

}  // namespace tcsolve::cluster
