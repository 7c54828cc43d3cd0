// K-means (tcsolve::cluster, kmeans.hpp): Lloyd's loop, written once for one member -- alone, or
// one of a group's -- over an Engine (engine.hpp); the checks and the data-wide numbers (scale,
// tol) a group agrees on; the dispatch on Where (host, a context, a group), the threads of a
// gpus() group; inertia and agreement on the host. Seeding is in seeding.cpp, blobs in blobs.cpp.
//
// Built with -ffp-contract=off (cluster/CMakeLists.txt), as every file of cluster/src.
#include "tcsolve/cluster/kmeans.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "common.hpp"
#include "engine.hpp"
#include "kmeans_cuda.hpp"
#include "tcsolve/runtime/members.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"

namespace tcsolve::cluster {
namespace {

using Clock = std::chrono::steady_clock;
using detail::count;
using runtime::Memory;

/// The largest magnitude of the share's X and of init, and the first non-finite value's
/// message (empty: none).
double largest_magnitude(const detail::Share& share, int dim, const std::vector<float>& init, CUstream_st* stream) {
  double m = 0;
  if (share.memory == Memory::host) {  // one pass: the largest magnitude, and a non-finite value named
    const std::size_t n = count(share.points, dim);
    float largest = 0;
    bool finite = true;
    for (std::size_t e = 0; e < n; ++e) {
      const float a = std::fabs(share.X[e]);
      finite = finite && a <= std::numeric_limits<float>::max();  // false for inf and NaN
      largest = std::max(largest, a);
    }
    if (!finite) detail::check_finite(share.X, n, dim, "X", share.first);  // throws, naming the first
    m = largest;
  } else if (share.points > 0) {
    const detail::PointScan scan = detail::kmeans_scan(share.X, count(share.points, dim), stream);
    if (scan.first_nonfinite >= 0)
      detail::throw_nonfinite("X", static_cast<std::size_t>(scan.first_nonfinite), dim, share.first);
    m = scan.max_abs;
  }
  for (float v : init) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

/// mean_d var(X(d, :)) in FP64 over the group's points (two passes, each summed over the group):
/// the scale of the tol test.
double mean_variance(const detail::Share& share, std::int64_t total, int dim, CUstream_st* stream) {
  const std::size_t D = static_cast<std::size_t>(dim);
  std::vector<double> mean(D, 0.0), var(D, 0.0);
  auto reduce = [&](std::vector<double>& v) {
    if (share.comm == nullptr) return;
    for (double& x : v) x = share.comm->sum(x, stream);  // dim scalars: small next to a pass over X
  };
  if (share.memory == Memory::host) {
    for (int i = 0; i < share.points; ++i)
      for (std::size_t d = 0; d < D; ++d) mean[d] += share.X[count(i, dim) + d];
  } else if (share.points > 0) {
    mean = detail::kmeans_coordinate_sums(share.X, share.points, dim, nullptr, stream);
  }
  reduce(mean);
  for (double& m : mean) m /= static_cast<double>(total);
  if (share.memory == Memory::host) {
    for (int i = 0; i < share.points; ++i)
      for (std::size_t d = 0; d < D; ++d) {
        const double diff = share.X[count(i, dim) + d] - mean[d];
        var[d] += diff * diff;
      }
  } else if (share.points > 0) {
    var = detail::kmeans_coordinate_sums(share.X, share.points, dim, &mean, stream);
  }
  reduce(var);
  double s = 0;
  for (double v : var) s += v / static_cast<double>(total);
  return s / dim;
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

/// The checks that need only the arguments (the same on every member).
int check_arguments(std::int64_t total, int dim, const std::vector<float>& init, const KmeansOptions& options) {
  if (dim < 1) throw InvalidInput("kmeans: dimension must be >= 1, got " + std::to_string(dim));
  if (init.size() % static_cast<std::size_t>(dim) != 0)
    throw InvalidInput("kmeans: init has " + std::to_string(init.size()) + " values, not a multiple of dim = " +
                       std::to_string(dim));
  const int k = static_cast<int>(init.size() / static_cast<std::size_t>(dim));
  detail::check_sizes(total, dim, k);
  if (options.max_iterations < 1)
    throw InvalidInput("kmeans: max_iterations must be >= 1, got " + std::to_string(options.max_iterations));
  if (!(options.tol >= 0) || !std::isfinite(options.tol)) throw InvalidInput("kmeans: tol must be a finite number >= 0");
  if (options.chunk_points < 0)
    throw InvalidInput("kmeans: chunk_points must be >= 0, got " + std::to_string(options.chunk_points));
  detail::check_finite(init.data(), init.size(), dim, "init");
  return k;
}

/// The inertia of the share's points (at the data's scale) for its labels and the centroids.
double share_inertia(const detail::Share& share, int dim, const std::vector<int>& labels,
                     const std::vector<float>& centroids, CUstream_st* stream) {
  if (share.points == 0) return 0;
  if (share.memory == Memory::host) return kmeans_inertia(share.X, share.points, dim, labels, centroids, share.weights);
  cuda::DeviceBuffer<int> d_labels(labels);
  cuda::DeviceBuffer<float> d_C(centroids);
  cuda::DeviceBuffer<double> d_weights(share.weights != nullptr ? static_cast<std::size_t>(share.points) : 0);
  if (share.weights != nullptr)
    cuda::copy_to_device(d_weights.data(), share.weights, d_weights.size() * sizeof(double), stream);
  return detail::kmeans_inertia(share.X, d_labels.data(), d_C.data(), share.points, dim, stream,
                                share.weights != nullptr ? d_weights.data() : nullptr);
}

/// The GEMM resolution (variant, name, note) of the group's first member with points, on every
/// member: a member without points ran no GEMM and has none of its own.
void share_resolution(runtime::Communicator& comm, std::int64_t total, KmeansResult& r, CUstream_st* stream) {
  int root = 0;
  while (root + 1 < comm.size() && kmeans_rows(total, comm.size(), root).count == 0) ++root;
  constexpr std::size_t kText = 512;
  std::vector<char> record(sizeof(int) + 2 * kText, 0);
  if (comm.rank() == root) {
    const int v = static_cast<int>(r.resolved_variant);
    std::memcpy(record.data(), &v, sizeof v);
    std::memcpy(record.data() + sizeof v, r.resolved_name.data(), std::min(r.resolved_name.size(), kText - 1));
    std::memcpy(record.data() + sizeof v + kText, r.note.data(), std::min(r.note.size(), kText - 1));
  }
  comm.broadcast_host(record.data(), record.size(), root, stream);
  int v = 0;
  std::memcpy(&v, record.data(), sizeof v);
  r.resolved_variant = static_cast<Variant>(v);
  r.resolved_name = std::string(record.data() + sizeof v);
  r.note = std::string(record.data() + sizeof v + kText);
}

/// Lloyd's loop for one member (kmeans.hpp): `share` its points of the group's `total`, on
/// `backend` (cuda: in `context`). A member alone has share.comm == nullptr.
KmeansResult run_member(const detail::Share& share, std::int64_t total, int dim, const std::vector<float>& init,
                        const KmeansOptions& options, Backend backend, cuda::Context* context) {
  runtime::Communicator* const comm = share.comm;
  CUstream_st* const stream = context ? context->stream() : nullptr;
  KmeansResult r;
  r.backend = backend;
  r.total_points = total;
  r.first_point = share.first;
  r.members = comm ? comm->size() : 1;
  // A member's GEMMs never stop on their own: an interrupt is agreed on between iterations.
  KmeansOptions member = options;
  if (comm != nullptr) member.gemm.interrupt = nullptr;

  // The data-wide numbers: the scale exponent (the largest magnitude over the group) and, with
  // tol, the variance; a non-finite value in any member's rows ends every member.
  double magnitude = 0;
  runtime::agreed(comm, [&] { magnitude = largest_magnitude(share, dim, init, stream); });
  if (comm != nullptr) magnitude = comm->max(magnitude, stream);
  const int exponent = detail::scale_exponent_for(magnitude);
  r.scale_exponent = exponent;
  // Data far from 1 in magnitude: the iterations run on X 2^e and init 2^e ("Scale").
  std::vector<float> X_host_scaled, init_scaled;
  cuda::DeviceBuffer<float> X_device_scaled;
  detail::Share run = share;
  if (exponent != 0) {
    const std::size_t n = count(share.points, dim);
    if (share.memory == Memory::host) {
      X_host_scaled.resize(n);
      for (std::size_t i = 0; i < n; ++i) X_host_scaled[i] = std::ldexp(share.X[i], exponent);
      run.X = X_host_scaled.data();
    } else if (n > 0) {
      X_device_scaled = cuda::DeviceBuffer<float>(n);
      detail::kmeans_scale(share.X, X_device_scaled.data(), n, exponent, stream);
      run.X = X_device_scaled.data();
    }
    init_scaled.resize(init.size());
    for (std::size_t i = 0; i < init.size(); ++i) init_scaled[i] = std::ldexp(init[i], exponent);
  }
  const std::vector<float>& init_s = exponent != 0 ? init_scaled : init;
  const double tol_scale = options.tol > 0 ? options.tol * mean_variance(run, total, dim, stream) : 0.0;

  std::unique_ptr<detail::Engine> engine;
  const Clock::time_point setup = Clock::now();
  runtime::agreed(comm, [&] {
    r.assign = resolve_assign(options, backend);
    engine = detail::make_engine(backend, run, dim, init_s, options.chunk_points, r.assign == KmeansAssign::fused,
                                 context);
    engine->warm_up(member);
  });
  r.points_prepared = engine->prepared();
  r.setup_time_s = std::chrono::duration<double>(Clock::now() - setup).count();

  detail::GemmRecord record;
  std::vector<int> counts;
  std::vector<double> shift2;
  int empty = 0;
  for (int it = 1;; ++it) {
    if (comm == nullptr) {
      check_interrupt(options.gemm.interrupt, "the K-means run");
    } else if (options.gemm.interrupt != nullptr) {  // stop together, or not at all
      const double stop = options.gemm.interrupt->load(std::memory_order_relaxed) ? 1.0 : 0.0;
      if (comm->max(stop, stream) > 0)
        throw runtime::Agreed<Interrupted>("interrupted: the K-means run was stopped at the caller's request");
    }
    const Clock::time_point start = Clock::now();
    KmeansIteration step;
    step.iteration = it;
    step.changed = engine->assign(member, record);
    if (comm != nullptr) step.changed = comm->sum(static_cast<std::int64_t>(step.changed), stream);
    const Clock::time_point assigned = Clock::now();
    step.assign_time_s = std::chrono::duration<double>(assigned - start).count();
    bool done = false;
    if (step.changed == 0 && it >= 2) {
      r.stop = KmeansStop::labels_unchanged;  // the update would reproduce the centroids
      done = true;
    } else {
      engine->update(counts, shift2);  // the group's sums and counts: the same on every member
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
  if (exponent != 0) {  // the centroids at the data's scale, and the inertia of those
    for (float& c : r.centroids) c = std::ldexp(c, -exponent);
    r.inertia = share_inertia(share, dim, r.labels, r.centroids, stream);
  } else {
    r.inertia = engine->inertia();
  }
  if (comm != nullptr) r.inertia = comm->sum(r.inertia, stream);
  r.resolved_variant = record.first();
  r.resolved_name = record.name();
  r.note = record.note();
  if (comm != nullptr) share_resolution(*comm, total, r, stream);
  return r;
}

Backend checked_backend(Backend requested, Variant variant) {
  const Backend backend = resolve_backend(requested);
  if (backend == Backend::cuda && !cuda::device_available())
    throw Unavailable("kmeans: the cuda backend needs a usable CUDA device (" + cuda::device_name() + ")");
  if (!available(variant, backend))
    throw Unavailable("kmeans: variant " + std::string(tcsolve::to_string(variant)) + " is not available on the " +
                      std::string(tcsolve::to_string(backend)) + " backend");
  return backend;
}

/// Unavailable for sample weights on a group (KmeansOptions::weights).
void refuse_group_weights(const KmeansOptions& options) {
  if (options.weights != nullptr)
    throw Unavailable("kmeans: sample weights are not supported on a group (gpus() or mpi()): run weighted "
                      "K-means alone, on the host or one device");
}

/// One process, alone: on the host or in `context`.
KmeansResult run_alone(const float* X, int points, int dim, const std::vector<float>& init,
                       const KmeansOptions& options, Backend backend, cuda::Context* context) {
  check_arguments(points, dim, init, options);
  detail::check_weights(options.weights, points, "kmeans");
  if (options.points_memory == Memory::device && backend != Backend::cuda)
    throw InvalidInput("kmeans: points in device memory need the cuda backend");
  detail::Share share{X, points, 0, options.points_memory, nullptr, options.weights};
  if (backend != Backend::cuda) return run_member(share, points, dim, init, options, backend, nullptr);
  runtime::DeviceScope scope(context->device());
  return run_member(share, points, dim, init, options, backend, context);
}

/// A gpus() group: member m runs rows kmeans_rows(., m) -- share_of(m, rows) says where they
/// are -- on its GPU, on a thread of its own (runtime::run_members: a member's failure the others
/// did not agree on aborts the group's communicators, so that no member stays in a collective).
template <class ShareOf>
KmeansResult run_threads(std::int64_t points, int dim, const std::vector<float>& init, const KmeansOptions& options,
                         runtime::DeviceGroup& group, ShareOf&& share_of) {
  check_arguments(points, dim, init, options);
  refuse_group_weights(options);
  const Backend backend = checked_backend(Backend::cuda, options.variant);
  const int members = group.local_members();
  std::vector<KmeansResult> results(static_cast<std::size_t>(members));
  runtime::run_members(group, [&](int m) {
    runtime::DeviceGroup::Member& me = group.member(m);
    runtime::DeviceScope scope(me.device);
    const RowRange rows = kmeans_rows(points, group.size(), me.rank);
    detail::Share share = share_of(m, rows);
    share.comm = me.communicator;
    KmeansOptions mine = options;
    if (m != 0) mine.progress = nullptr;  // one progress line per iteration
    results[static_cast<std::size_t>(m)] = run_member(share, points, dim, init, mine, backend, me.context);
  });
  KmeansResult r = std::move(results[0]);
  r.labels.reserve(static_cast<std::size_t>(points));
  for (int m = 1; m < members; ++m) {
    const std::vector<int>& l = results[static_cast<std::size_t>(m)].labels;
    r.labels.insert(r.labels.end(), l.begin(), l.end());
    // the slowest member's setup (they wait for each other in every iteration anyway)
    r.setup_time_s = std::max(r.setup_time_s, results[static_cast<std::size_t>(m)].setup_time_s);
    r.points_prepared = r.points_prepared && results[static_cast<std::size_t>(m)].points_prepared;
  }
  r.first_point = 0;
  r.members = group.size();
  r.group = group.describe();
  return r;
}

/// This process' rank of an mpi() group: X its rows.
KmeansResult run_rank(const float* X, int points, int dim, const std::vector<float>& init,
                      const KmeansOptions& options, runtime::DeviceGroup& group) {
  runtime::DeviceGroup::Member& me = group.member(0);
  runtime::Communicator& comm = *me.communicator;
  const std::int64_t total = comm.sum(static_cast<std::int64_t>(points));
  Backend backend = Backend::cpu;
  runtime::DeviceScope scope(me.device);
  runtime::agreed(&comm, [&] {
    check_arguments(total, dim, init, options);
    refuse_group_weights(options);
    backend = group.memory() == Memory::device ? checked_backend(Backend::cuda, options.variant)
                                               : checked_backend(Backend::cpu, options.variant);
    const RowRange rows = kmeans_rows(total, group.size(), me.rank);
    if (rows.count != points)
      throw InvalidInput("kmeans: rank " + std::to_string(me.rank) + " holds " + std::to_string(points) +
                         " points, kmeans_rows gives it " + std::to_string(rows.count) + " of " +
                         std::to_string(total));
    if (options.points_memory == Memory::device && backend != Backend::cuda)
      throw InvalidInput("kmeans: points in device memory need the cuda backend");
  });
  const RowRange rows = kmeans_rows(total, group.size(), me.rank);
  detail::Share share{X, points, rows.first, options.points_memory, &comm};
  KmeansResult r = run_member(share, total, dim, init, options, backend, me.context);
  r.group = group.describe();
  return r;
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
    case KmeansStop::labels_unchanged: return "labels_unchanged";
    case KmeansStop::tolerance: return "tolerance";
    case KmeansStop::max_iterations: return "max_iterations";
  }
  return "unknown";
}

RowRange kmeans_rows(std::int64_t points, int members, int member) {
  if (points < 0 || members < 1 || member < 0 || member >= members)
    throw InvalidInput("kmeans_rows: need points >= 0 and 0 <= member < members");
  const std::int64_t blocks = (points + kRowBlock - 1) / kRowBlock;
  const std::int64_t b0 = blocks * member / members, b1 = blocks * (member + 1) / members;
  RowRange r;
  r.first = std::min(points, b0 * kRowBlock);
  r.count = static_cast<int>(std::min(points, b1 * kRowBlock) - r.first);
  return r;
}

KmeansResult kmeans(const float* X, int points, int dim, const std::vector<float>& init,
                    const KmeansOptions& options) {
  check_arguments(points, dim, init, options);
  const Backend backend = checked_backend(options.backend, options.variant);
  if (backend != Backend::cuda) return run_alone(X, points, dim, init, options, backend, nullptr);
  cuda::Context context(options.stream);
  return run_alone(X, points, dim, init, options, backend, &context);
}

KmeansResult kmeans(const float* X, int points, int dim, const std::vector<float>& init, const KmeansOptions& options,
                    const runtime::Where& where) {
  switch (where.kind()) {
    case runtime::Where::Kind::host:
      return run_alone(X, points, dim, init, options, checked_backend(Backend::cpu, options.variant), nullptr);
    case runtime::Where::Kind::context: {
      check_arguments(points, dim, init, options);
      if (options.points_memory == Memory::device)
        detail::check_on_device(X, points, where.context()->device(), "the points (Memory::device)");
      runtime::DeviceScope scope(where.context()->device());
      return run_alone(X, points, dim, init, options, checked_backend(Backend::cuda, options.variant),
                       where.context());
    }
    case runtime::Where::Kind::group:
      if (where.group()->spans_processes()) return run_rank(X, points, dim, init, options, *where.group());
      if (options.points_memory != Memory::host)
        throw InvalidInput("kmeans: a group of this process' GPUs takes its points in host memory (or one device "
                           "array per member: the overload with member_X)");
      return run_threads(points, dim, init, options, *where.group(), [&](int, const RowRange& rows) {
        return detail::Share{X + count(rows.first, dim), rows.count, rows.first, Memory::host, nullptr};
      });
  }
  throw InvalidInput("kmeans: unknown Where");
}

KmeansResult kmeans(const std::vector<const float*>& member_X, std::int64_t points, int dim,
                    const std::vector<float>& init, const KmeansOptions& options, runtime::DeviceGroup& group) {
  if (group.spans_processes() || group.memory() != Memory::device)
    throw InvalidInput("kmeans: member_X is for a group of this process' GPUs (DeviceGroup::gpus)");
  if (member_X.size() != static_cast<std::size_t>(group.local_members()))
    throw InvalidInput("kmeans: " + std::to_string(member_X.size()) + " point arrays for " +
                       std::to_string(group.local_members()) + " members");
  if (points >= (std::int64_t{1} << 31)) throw InvalidInput("kmeans: more than 2^31 - 1 points");
  for (int m = 0; m < group.local_members(); ++m) {
    const runtime::DeviceGroup::Member& me = group.member(m);
    detail::check_on_device(member_X[static_cast<std::size_t>(m)], kmeans_rows(points, group.size(), me.rank).count,
                            me.device, "member " + std::to_string(m) + "'s points (member_X[" + std::to_string(m) + "])");
  }
  return run_threads(points, dim, init, options, group, [&](int m, const RowRange& rows) {
    return detail::Share{member_X[static_cast<std::size_t>(m)], rows.count, rows.first, Memory::device, nullptr};
  });
}

double kmeans_inertia(const float* X, int points, int dim, const std::vector<int>& labels,
                      const std::vector<float>& centroids, const double* weights) {
  if (labels.size() != static_cast<std::size_t>(points) || dim < 1 || centroids.size() % static_cast<std::size_t>(dim))
    throw InvalidInput("kmeans_inertia: sizes do not match");
  const int k = static_cast<int>(centroids.size() / static_cast<std::size_t>(dim));
  double s = 0;
  for (int i = 0; i < points; ++i) {
    const int l = labels[static_cast<std::size_t>(i)];
    if (l < 0 || l >= k) throw InvalidInput("kmeans_inertia: label " + std::to_string(l) + " out of range");
    const double d2 = detail::squared_distance(X + count(i, dim), centroids.data() + count(l, dim), dim);
    s += weights != nullptr ? weights[i] * d2 : d2;  // unweighted: the plain sum, bitwise
  }
  return s;
}

double label_agreement(const std::vector<int>& a, const std::vector<int>& b) {
  if (a.size() != b.size() || a.empty()) throw InvalidInput("label_agreement: sizes differ or are zero");
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return static_cast<double>(same) / static_cast<double>(a.size());
}

}  // namespace tcsolve::cluster
