// K-means' engines (engine.hpp): CpuEngine on host arrays, CudaEngine on device arrays in a
// cuda::Context, the chunk sizes of their GEMMs, and make_engine, the one switch between them.
// A member of a group sums its clusters' FP64 sums and counts over the group (one all-reduce
// each through its Communicator) before finalizing: every member then holds the same centroids.
//
// Built with -ffp-contract=off (cluster/CMakeLists.txt): the FP64 sums of the update
// round after every operation, as finalize_kernel does with explicit __dadd_rn / __dmul_rn, so
// both backends compute bitwise the same centroids, norms and movements from the same sums.
// Weighted (Share::weights): both sum w_i x_i (one rounded product, then the add) and w_i in
// point order and divide by the weights' sum: bitwise the same on both backends too.
#include "engine.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "common.hpp"
#include "kmeans_cuda.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster::detail {

void GemmRecord::add(const GemmInfo& info) {
  if (!any_) first_ = info.resolved;
  any_ = true;
  names_.insert(std::string(tcsolve::to_string(info.resolved)));
  if (!info.note.empty() && note_.empty()) note_ = info.note;
}

std::string GemmRecord::name() const {
  std::string s;
  for (const std::string& n : names_) s += (s.empty() ? "" : "+") + n;
  return s;
}

int scale_exponent_for(double m) {
  constexpr int kScaleBelow = 40;  ///< data whose largest magnitude is below 2^-40 is scaled up
  constexpr int kScaleAbove = 40;  ///< and from 2^41 on down
  if (m == 0) return 0;
  const int b = std::ilogb(m);  // the true exponent, for subnormals too
  if (b < -kScaleBelow) return -kScaleBelow - b;
  if (b > kScaleAbove) return kScaleAbove - b;
  return 0;
}

namespace {

/// Rows of G per GEMM call: `requested` when positive, else as many as `bytes` hold.
int chunk_rows(int points, int k, int requested, std::size_t bytes = kDistanceChunkBytes) {
  const std::size_t rows =
      requested > 0
          ? static_cast<std::size_t>(requested)
          : std::max<std::size_t>(1, bytes / (sizeof(float) * static_cast<std::size_t>(k)));
  return static_cast<int>(std::min<std::size_t>(rows, static_cast<std::size_t>(points)));
}

/// Host arrays; the GEMM on Backend::cpu.
class CpuEngine final : public Engine {
 public:
  CpuEngine(const Share& share, int dim, const std::vector<float>& init, int chunk, bool fused)
      : fused_(fused),
        comm_(share.comm),
        X_(share.X),
        weights_(share.weights),
        n_(share.points),
        dim_(dim),
        k_(static_cast<int>(init.size() / dim)),
        C_(init),
        labels_(static_cast<std::size_t>(share.points), -1),
        cnorm_(static_cast<std::size_t>(k_)),
        rows_(std::max(1, chunk_rows(share.points, k_, chunk))),
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
    if (weights_ != nullptr) return weighted_update(counts, shift2);
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
    if (comm_ != nullptr) {  // the group's sums and counts (MPI, in place)
      comm_->allreduce_sum(sums.data(), sums.size(), nullptr);
      comm_->allreduce_sum(counts.data(), counts.size(), nullptr);
    }
    for (int j = 0; j < k_; ++j)
      finalize(j, sums.data() + count(j, dim_), static_cast<double>(counts[static_cast<std::size_t>(j)]), shift2);
  }

  std::vector<int> labels() const override { return labels_; }
  std::vector<float> centroids() const override { return C_; }
  double inertia() const override { return cluster::kmeans_inertia(X_, n_, dim_, labels_, C_, weights_); }

 private:
  /// update with weights (a member alone: groups refuse them): c_j = sum w_i x_i / sum w_i over
  /// the points labelled j, in point order, the division and the rounding to FP32 as the
  /// unweighted finalize; a cluster of weight 0 keeps its centroid and counts as empty.
  void weighted_update(std::vector<int>& counts, std::vector<double>& shift2) {
    std::vector<double> sums(count(k_, dim_), 0.0), weight(static_cast<std::size_t>(k_), 0.0);
    counts.assign(static_cast<std::size_t>(k_), 0);
    shift2.assign(static_cast<std::size_t>(k_), 0.0);
    for (int i = 0; i < n_; ++i) {
      const int l = labels_[static_cast<std::size_t>(i)];
      const double w = weights_[i];
      const float* x = X_ + count(i, dim_);
      double* s = sums.data() + count(l, dim_);
      for (int d = 0; d < dim_; ++d) s[d] += w * static_cast<double>(x[d]);
      weight[static_cast<std::size_t>(l)] += w;
      ++counts[static_cast<std::size_t>(l)];
    }
    for (int j = 0; j < k_; ++j) {
      const double wj = weight[static_cast<std::size_t>(j)];
      if (!(wj > 0)) counts[static_cast<std::size_t>(j)] = 0;  // weight 0: empty
      finalize(j, sums.data() + count(j, dim_), wj, shift2);
    }
  }

  /// Centroid j = s / denominator (the count, or the weight), as finalize_kernel: d ascending,
  /// every operation rounded; denominator not > 0: empty, the centroid kept. Its squared move
  /// into shift2[j] and its squared norm into cnorm_.
  void finalize(int j, const double* s, double denominator, std::vector<double>& shift2) {
    float* c = &C_[count(j, dim_)];
    double shift = 0, norm = 0;
    for (int d = 0; d < dim_; ++d) {
      const float old = c[d];
      const float v = denominator > 0 ? static_cast<float>(s[d] / denominator) : old;
      c[d] = v;
      const double diff = static_cast<double>(v) - static_cast<double>(old);
      shift += diff * diff;
      norm += static_cast<double>(v) * static_cast<double>(v);
    }
    shift2[static_cast<std::size_t>(j)] = shift;
    cnorm_[static_cast<std::size_t>(j)] = norm;
  }

  double norm2(const float* c) const {
    double norm = 0;
    for (int d = 0; d < dim_; ++d) norm += static_cast<double>(c[d]) * static_cast<double>(c[d]);
    return norm;
  }

  bool fused_;
  runtime::Communicator* comm_;
  const float* X_;
  const double* weights_;  ///< nullptr: unweighted
  int n_, dim_, k_;
  std::vector<float> C_;
  std::vector<int> labels_;
  std::vector<double> cnorm_;
  int rows_;
  std::vector<float> G_;
};

/// The device bytes of a cuda run, apart from the points' chunks: X (when copied), labels, the
/// sort's three arrays and cub's storage (per point), the per-cluster arrays, the context's scratch.
std::size_t cuda_fixed_bytes(int points, int dim, int k, bool copies_points) {
  const std::size_t n = static_cast<std::size_t>(points), d = static_cast<std::size_t>(dim),
                    kk = static_cast<std::size_t>(k);
  const std::size_t per_point = (copies_points ? 4 * d : 0) + 16 + 8;  // X, labels, the sort's 3 arrays, cub
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
/// points fit beside X. At least 1 (a member without points runs no chunk).
int cuda_chunk_rows(int points, int dim, int k, int requested, bool fused, bool copies_points) {
  if (points == 0) return 1;
  std::size_t rows;
  if (requested > 0) {
    rows = static_cast<std::size_t>(requested);
  } else if (!fused) {
    rows = static_cast<std::size_t>(chunk_rows(points, k, 0, kDistanceChunkBytesCuda));
  } else {
    rows = std::max<std::size_t>(1, kFusedChunkBytes / (8 * static_cast<std::size_t>(dim)));
  }
  rows = std::min<std::size_t>(rows, static_cast<std::size_t>(points));
  const std::size_t fixed = cuda_fixed_bytes(points, dim, k, copies_points),
                    per = cuda_chunk_bytes_per_point(dim, k, fused);
  const std::size_t free = cuda::device_memory().free;
  const std::size_t fit = free > fixed ? (free - fixed) / per : 0;
  if (fit < std::min<std::size_t>(128, static_cast<std::size_t>(points)))
    throw InvalidInput("kmeans: " + std::to_string(points) + " x " + std::to_string(dim) + " points with k = " +
                       std::to_string(k) + " need about " + std::to_string(fixed + 128 * per) +
                       " bytes of device memory, " + std::to_string(free) + " are free (" + cuda::device_name() +
                       ")");
  return static_cast<int>(std::min(rows, fit / 128 * 128 > 0 ? fit / 128 * 128 : fit));
}

/// Device arrays; the GEMM (or nearest_columns) in the member's context, the rest in
/// kmeans_cuda.cu, all on the context's stream: every kernel, copy and wait of the run goes on
/// it; the engine waits for that stream only, never for the device. The sums and counts of a
/// group member are all-reduced on that stream too (NCCL), between the accumulation and the
/// finalize.
class CudaEngine final : public Engine {
 public:
  CudaEngine(const Share& share, int dim, const std::vector<float>& init, int chunk, bool fused,
             cuda::Context& context)
      : context_(context),
        comm_(share.comm),
        fused_(fused),
        n_(share.points),
        dim_(dim),
        k_(static_cast<int>(init.size() / dim)),
        rows_(cuda_chunk_rows(n_, dim, k_, chunk, fused, share.memory == runtime::Memory::host)),
        X_owned_(share.memory == runtime::Memory::host ? count(n_, dim) : 0),
        C_(init.size()),
        G_(fused || n_ == 0 ? 0 : count(rows_, k_)),
        labels_(static_cast<std::size_t>(n_)),
        counts_(static_cast<std::size_t>(k_)),
        order_(3 * static_cast<std::size_t>(n_)),  // keys, indices, order
        offsets_(static_cast<std::size_t>(k_) + 1),
        cnorm_(static_cast<std::size_t>(k_)),
        shift2_(static_cast<std::size_t>(k_)),
        sums_(count(k_, dim)),
        weights_(share.weights != nullptr ? static_cast<std::size_t>(n_) : 0),
        weight_sums_(share.weights != nullptr ? static_cast<std::size_t>(k_) : 0),
        changed_(1),
        sort_temp_(n_ > 0 ? kmeans_order_bytes(n_, k_) : 0) {
    CUstream_st* const s = stream();
    if (share.weights != nullptr && n_ > 0)  // host weights (KmeansOptions::weights) to the device
      cuda::copy_to_device(weights_.data(), share.weights, static_cast<std::size_t>(n_) * sizeof(double), s);
    if (share.memory == runtime::Memory::host) {
      cuda::copy_to_device(X_owned_.data(), share.X, count(n_, dim) * sizeof(float), s);
      X_ = X_owned_.data();
    } else {
      X_ = share.X;  // read where it is
    }
    C_.upload(init, s);
    if (n_ > 0) {
      cuda::device_memset(labels_.data(), 0xff, labels_.size() * sizeof(int), s);  // -1: no label yet
      kmeans_order_init(order_.data() + count(n_, 1), n_, s);                    // the sort's indices
    }
    kmeans_centroid_norms(C_.data(), k_, dim_, cnorm_.data(), s);
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
        record.add(cuda::nearest_columns(context_, options.variant, rows, k_, dim_, X_ + count(i0, dim_), dim_,
                                         C_.data(), dim_, cnorm_.data(), labels_.data() + i0, changed_.data(),
                                         options.gemm));
        continue;
      }
      record.add(cuda::gemm(context_, options.variant, Op::t, Op::n, rows, k_, dim_, 1.0f, X_ + count(i0, dim_), dim_,
                            C_.data(), dim_, 0.0f, G_.data(), rows, options.gemm));
      kmeans_assign(G_.data(), rows, rows, k_, cnorm_.data(), labels_.data() + i0, changed_.data(), stream());
    }
    return static_cast<long long>(changed_.download(stream())[0]);
  }

  bool prepared() const override { return !prepared_.empty(); }

  OrderScratch scratch() {
    const std::size_t n = static_cast<std::size_t>(n_);
    return {order_.data(), order_.data() + n, order_.data() + 2 * n, offsets_.data(), sort_temp_.data(),
            sort_temp_.size()};
  }

  void warm_up(const KmeansOptions& options) override {
    if (n_ == 0) return;
    // the prepared points need 4 bytes a value more: only where they fit (else points_prepared
    // stays false and every assignment splits its chunk)
    const std::size_t prepared = static_cast<std::size_t>(ceil_div(n_, rows_)) *
                                 cuda::NearestPoints::bytes(std::min(rows_, n_), dim_);
    if (fused_ && options.prepare_points && (options.variant == Variant::ec_fp16 || options.variant == Variant::auto_) &&
        cuda::NearestPoints::available(options.gemm) &&
        prepared + (std::size_t{256} << 20) + cuda_chunk_bytes_per_point(dim_, k_, true) * rows_ <=
            cuda::device_memory().free)
      for (int i0 = 0; i0 < n_; i0 += rows_)
        prepared_.emplace_back(context_, std::min(rows_, n_ - i0), dim_, X_ + count(i0, dim_), dim_, options.gemm,
                               options.variant);  // auto: X_ stays for its TF32 calls
    const int rows = std::min({n_, 256, rows_});  // G_ holds rows_ rows
    cuda::DeviceBuffer<int> labels(static_cast<std::size_t>(rows));
    cuda::DeviceBuffer<unsigned long long> changed(1);
    if (fused_) {
      cuda::nearest_columns(context_, options.variant, rows, k_, dim_, X_, dim_, C_.data(), dim_, cnorm_.data(),
                            labels.data(), changed.data(), options.gemm);
    } else {
      cuda::gemm(context_, options.variant, Op::t, Op::n, rows, k_, dim_, 1.0f, X_, dim_, C_.data(), dim_, 0.0f,
                 G_.data(), rows, options.gemm);
      kmeans_assign(G_.data(), rows, rows, k_, cnorm_.data(), labels.data(), changed.data(), stream());
    }
    cuda::device_memset(labels.data(), 0, labels.size() * sizeof(int), stream());
    cuda::device_memset(counts_.data(), 0, counts_.size() * sizeof(int), stream());
    kmeans_accumulate_ordered(X_, labels.data(), rows, dim_, k_, sums_.data(), counts_.data(), scratch(), stream());
    context_.synchronize();  // before the scratch labels are freed
  }

  void update(std::vector<int>& counts, std::vector<double>& shift2) override {
    // the counts from 0; the sums are overwritten (set to 0 by a member without points)
    cuda::device_memset(counts_.data(), 0, counts_.size() * sizeof(int), stream());
    if (n_ > 0)
      kmeans_accumulate_ordered(X_, labels_.data(), n_, dim_, k_, sums_.data(), counts_.data(), scratch(), stream(),
                                weighted() ? weights_.data() : nullptr, weighted() ? weight_sums_.data() : nullptr);
    else
      cuda::device_memset(sums_.data(), 0, sums_.size() * sizeof(double), stream());
    if (comm_ != nullptr) {  // the group's sums and counts (NCCL, in place, on the stream)
      comm_->allreduce_sum(sums_.data(), sums_.size(), stream());
      comm_->allreduce_sum(counts_.data(), counts_.size(), stream());
    }
    kmeans_finalize(sums_.data(), counts_.data(), C_.data(), cnorm_.data(), shift2_.data(), k_, dim_, stream(),
                    weighted() ? weight_sums_.data() : nullptr);
    counts = counts_.download(stream());
    shift2 = shift2_.download(stream());
    if (weighted()) {  // a cluster of weight 0 is empty (its centroid was kept), as on the cpu
      const std::vector<double> w = weight_sums_.download(stream());
      for (int j = 0; j < k_; ++j)
        if (!(w[static_cast<std::size_t>(j)] > 0)) counts[static_cast<std::size_t>(j)] = 0;
    }
  }

  std::vector<int> labels() const override { return labels_.download(stream()); }
  std::vector<float> centroids() const override { return C_.download(stream()); }
  double inertia() const override {
    return n_ > 0 ? kmeans_inertia(X_, labels_.data(), C_.data(), n_, dim_, stream(),
                                   weighted() ? weights_.data() : nullptr)
                  : 0.0;
  }

 private:
  CUstream_st* stream() const { return context_.stream(); }
  bool weighted() const { return weight_sums_.size() != 0; }

  cuda::Context& context_;  // the caller's: outlives the engine
  runtime::Communicator* comm_;
  bool fused_;
  int n_, dim_, k_, rows_;
  const float* X_ = nullptr;  ///< the points on the device: X_owned_, or the caller's
  cuda::DeviceBuffer<float> X_owned_, C_, G_;
  cuda::DeviceBuffer<int> labels_, counts_, order_, offsets_;
  cuda::DeviceBuffer<double> cnorm_, shift2_, sums_;
  cuda::DeviceBuffer<double> weights_, weight_sums_;  ///< empty: unweighted (Share::weights)
  cuda::DeviceBuffer<unsigned long long> changed_;
  cuda::DeviceBuffer<unsigned char> sort_temp_;  ///< cub's radix-sort storage
  std::vector<cuda::NearestPoints> prepared_;  ///< per chunk of rows_ points (ec-fp16, auto; prepare_points)
};

}  // namespace

std::unique_ptr<Engine> make_engine(Backend backend, const Share& share, int dim, const std::vector<float>& init,
                                    int chunk, bool fused, cuda::Context* context) {
  if (backend == Backend::cuda) {
    if (context == nullptr) throw InvalidInput("kmeans: the cuda engine needs a context");
    return std::make_unique<CudaEngine>(share, dim, init, chunk, fused, *context);
  }
  if (share.memory != runtime::Memory::host)
    throw InvalidInput("kmeans: points in device memory need the cuda backend");
  return std::make_unique<CpuEngine>(share, dim, init, chunk, fused);
}

}  // namespace tcsolve::cluster::detail
