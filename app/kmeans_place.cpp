// Where `tcsolve kmeans` runs and where its points live (kmeans_place.hpp).
#include "kmeans_place.hpp"

#include <algorithm>
#include <cstddef>
#include <iostream>
#include <string>
#include <utility>

#include "cli_util.hpp"
#include "input.hpp"
#include "tcsolve/io/kmeans_file.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::app {
namespace {

using runtime::DeviceGroup;
using runtime::Memory;

std::size_t values(std::int64_t points, int dim) { return static_cast<std::size_t>(points) * static_cast<std::size_t>(dim); }

std::string synthetic_text(const cluster::BlobsSpec& spec) {
  return "--synthetic " + std::to_string(spec.points) + ":" + std::to_string(spec.dim);
}

/// --gpus in one process: one device -> a context on it; several -> a gpus() group (NCCL).
KmeansPlace place_on_gpus(Backend requested, const std::string& text) {
  // The list's form first (a bad list is a bad argument on any machine), then what it needs.
  constexpr int kAnyDevices = 1 << 20;  // more than any list parse_device_list accepts names
  if (text != "all") (void)runtime::parse_device_list(text, kAnyDevices);
  if (requested == Backend::cpu)
    throw Unavailable("--gpus " + text + " runs on GPUs, --backend cpu on the host: leave out one of them");
  const std::vector<int> devices = runtime::parse_device_list(text, runtime::device_count());
  for (int d : devices) {
    runtime::DeviceScope scope(d);
    if (!cuda::device_available())
      throw Unavailable("--gpus " + text + ": device " + std::to_string(d) + " (" + cuda::device_name() +
                        ") is not usable: compute capability 7.0 or above is needed");
  }
  KmeansPlace place;
  place.backend = Backend::cuda;
  place.devices = devices;
  if (devices.size() == 1) {
    runtime::DeviceScope scope(devices[0]);
    place.kind = KmeansPlace::Kind::gpu;
    place.context = std::make_unique<cuda::Context>();  // bound to the current device
    return place;
  }
  if (!runtime::have_nccl())
    throw Unavailable("--gpus " + text + ": " + std::to_string(devices.size()) +
                      " GPUs in one process need NCCL, and this tcsolve was built without it (cmake "
                      "-DTCSOLVE_NCCL=ON); use one GPU");
  place.kind = KmeansPlace::Kind::gpus;
  place.group = std::make_unique<DeviceGroup>(DeviceGroup::gpus(devices));
  return place;
}

/// This process as one rank of the mpirun job: cpu ranks, or one GPU a rank (NCCL).
KmeansPlace place_on_ranks(Backend requested, const std::string& gpus, const JobRanks& job) {
  runtime::Communicator* const world = job.world.get();
  runtime::agreed(world, [&] {
    if (!gpus.empty())
      throw InvalidInput("--gpus " + gpus + ": under mpirun each rank takes one GPU (by its rank on the node); "
                         "leave --gpus out");
    if (requested != Backend::cuda) return;
    if (!cuda::device_available())
      throw Unavailable("--backend cuda: rank " + std::to_string(job.rank) + " has no usable CUDA device (" +
                        cuda::device_name() + ")");
    if (!runtime::have_nccl())
      throw Unavailable("--backend cuda under mpirun: one GPU a rank needs NCCL, and this tcsolve was built "
                        "without it (cmake -DTCSOLVE_NCCL=ON); use --backend cpu");
  });
  KmeansPlace place;
  place.kind = KmeansPlace::Kind::ranks;
  place.rank = job.rank;
  place.ranks = job.size;
  place.backend = requested == Backend::cpu ? Backend::cpu : Backend::cuda;
  if (requested == Backend::automatic) {  // cuda only where every rank can take its GPU
    const bool usable = cuda::device_available() && runtime::have_nccl();
    const std::int64_t with = world->sum(std::int64_t{usable ? 1 : 0});
    if (with < job.size) {
      place.backend = Backend::cpu;
      if (job.speaks())
        std::cerr << "tcsolve: "
                  << (!runtime::have_nccl() ? std::string("no NCCL in this build (one GPU a rank needs it)")
                      : with == 0           ? std::string("no usable CUDA device")
                                            : std::to_string(job.size - with) + " of " + std::to_string(job.size) +
                                                  " ranks without a usable CUDA device")
                  << ", using the cpu backend on every rank" << std::endl;
    }
  }
  place.group = std::make_unique<DeviceGroup>(
      DeviceGroup::mpi(place.backend == Backend::cuda ? Memory::device : Memory::host));
  if (place.backend == Backend::cuda) {  // every rank's GPU, in rank order
    const int mine = place.group->member(0).device;
    place.devices.resize(static_cast<std::size_t>(job.size));
    place.comm()->allgather(&mine, place.devices.data(), sizeof mine, nullptr);
  }
  return place;
}

/// Rows `rows` of the blobs on `context`'s GPU, after checking its free memory; made on its
/// stream and waited for, so that they are complete whatever reads them next.
cuda::DeviceBuffer<float> blobs_on_device(const cluster::BlobsSpec& spec, cluster::RowRange rows,
                                          cuda::Context& context) {
  runtime::DeviceScope scope(context.device());
  require_device_memory(synthetic_text(spec) + ": points " + std::to_string(rows.first) + " to " +
                            std::to_string(rows.first + rows.count) + " on device " +
                            std::to_string(context.device()),
                        4.0 * static_cast<double>(values(rows.count, spec.dim)));
  cuda::DeviceBuffer<float> X(values(rows.count, spec.dim));
  cluster::blob_rows_device(spec, rows.first, rows.count, X.data(), nullptr, context.stream());
  context.synchronize();
  return X;
}

/// Rows `rows` of the blobs on the host.
std::vector<float> blobs_on_host(const cluster::BlobsSpec& spec, cluster::RowRange rows) {
  std::vector<float> X(values(rows.count, spec.dim));
  cluster::blob_rows(spec, rows.first, rows.count, X.data(), nullptr);
  return X;
}

}  // namespace

runtime::Where KmeansPlace::where() const {
  switch (kind) {
    case Kind::host: return runtime::Where();
    case Kind::gpu: return runtime::Where(*context);
    case Kind::gpus:
    case Kind::ranks: return runtime::Where(*group);
  }
  return runtime::Where();
}

std::string KmeansPlace::device_text() const {
  if (backend != Backend::cuda) return device_description(Backend::cpu);
  runtime::DeviceScope scope(kind == Kind::gpu ? context->device() : group->member(0).device);
  return device_description(Backend::cuda);
}

cluster::RowRange KmeansPlace::rows(std::int64_t points) const {
  if (kind == Kind::ranks) return cluster::kmeans_rows(points, ranks, rank);
  return cluster::RowRange{0, static_cast<int>(points)};
}

KmeansPlace make_place(Backend requested, const std::string& gpus, const JobRanks& job) {
  if (job.size > 1) return place_on_ranks(requested, gpus, job);
  if (!gpus.empty()) return place_on_gpus(requested, gpus);
  KmeansPlace place;
  place.backend = choose_backend(requested);
  if (place.backend == Backend::cuda) {
    place.kind = KmeansPlace::Kind::gpu;
    place.context = std::make_unique<cuda::Context>();
    place.devices = {place.context->device()};
  }
  return place;
}

KmeansPoints read_points(const KmeansPlace& place, const std::string& path, std::int64_t total, int dim) {
  KmeansPoints p;
  p.total = total;
  p.dim = dim;
  p.mine = place.rows(total);
  p.host = read_kmeans_rows(path, p.mine.first, p.mine.count);
  return p;
}

KmeansPoints make_points(const KmeansPlace& place, const cluster::BlobsSpec& spec) {
  KmeansPoints p;
  p.total = spec.points;
  p.dim = spec.dim;
  p.mine = place.rows(spec.points);
  p.blobs = spec;
  switch (place.backend == Backend::cuda ? place.kind : KmeansPlace::Kind::host) {
    case KmeansPlace::Kind::host: p.host = blobs_on_host(spec, p.mine); break;
    case KmeansPlace::Kind::gpu:
      p.device.push_back(blobs_on_device(spec, p.mine, *place.context));
      break;
    case KmeansPlace::Kind::gpus:  // each member its rows, on its GPU and its stream
      for (int m = 0; m < place.group->local_members(); ++m) {
        const DeviceGroup::Member& member = place.group->member(m);
        const cluster::RowRange rows = cluster::kmeans_rows(spec.points, place.group->size(), member.rank);
        p.device.push_back(blobs_on_device(spec, rows, *member.context));
      }
      break;
    case KmeansPlace::Kind::ranks: {
      const DeviceGroup::Member& member = place.group->member(0);
      p.device.push_back(blobs_on_device(spec, p.mine, *member.context));
      break;
    }
  }
  return p;
}

std::vector<float> seed_points(const KmeansPlace& place, const KmeansPoints& points, int k, std::uint64_t seed,
                               Backend seeding) {
  const int dim = points.dim;
  if (place.kind == KmeansPlace::Kind::ranks) {  // distributed over the ranks' rows
    // (seeding is the ranks' backend: cmd_kmeans refuses another)
    if (!points.on_device())  // host rows: on the host (cpu ranks), or copied to the rank's GPU
      return cluster::kmeans_plus_plus(points.host.data(), points.mine.count, dim, k, seed, place.where());
    // --synthetic points on the ranks' GPUs: seeded where they are
    return cluster::kmeans_plus_plus(std::vector<const float*>{points.device[0].data()}, points.total, dim, k, seed,
                                     *place.group);
  }
  const int n = static_cast<int>(points.total);
  if (!points.on_device()) {
    if (seeding == Backend::cpu) return cluster::kmeans_plus_plus(points.host.data(), n, dim, k, seed, runtime::Where());
    if (place.kind != KmeansPlace::Kind::host)  // the context's GPU, or the group's first
      return cluster::kmeans_plus_plus(points.host.data(), n, dim, k, seed, place.where());
    cuda::Context context;  // --seeding cuda beside the cpu backend
    return cluster::kmeans_plus_plus(points.host.data(), n, dim, k, seed, runtime::Where(context));
  }
  // --synthetic points on GPUs
  if (seeding == Backend::cpu) {
    const std::vector<float> X = blobs_on_host(*points.blobs, points.mine);
    return cluster::kmeans_plus_plus(X.data(), n, dim, k, seed, runtime::Where());
  }
  if (place.kind == KmeansPlace::Kind::gpu)
    return cluster::kmeans_plus_plus(points.device[0].data(), n, dim, k, seed, runtime::Where(*place.context),
                                     Memory::device);
  // gpus: distributed over the members' GPUs, each on its own rows (bitwise the one-GPU draw)
  std::vector<const float*> member_X;
  for (const cuda::DeviceBuffer<float>& rows : points.device) member_X.push_back(rows.data());
  return cluster::kmeans_plus_plus(member_X, points.total, dim, k, seed, *place.group);
}

cluster::KmeansResult run_points(const KmeansPlace& place, const KmeansPoints& points, const std::vector<float>& init,
                                 cluster::KmeansOptions options) {
  options.points_memory = points.on_device() ? Memory::device : Memory::host;
  const float* X = points.on_device() ? points.device[0].data() : points.host.data();
  switch (place.kind) {
    case KmeansPlace::Kind::host:
    case KmeansPlace::Kind::gpu:
      return cluster::kmeans(X, static_cast<int>(points.total), points.dim, init, options, place.where());
    case KmeansPlace::Kind::gpus: {
      if (!points.on_device())
        return cluster::kmeans(X, static_cast<int>(points.total), points.dim, init, options, place.where());
      std::vector<const float*> member_X;
      for (const cuda::DeviceBuffer<float>& rows : points.device) member_X.push_back(rows.data());
      return cluster::kmeans(member_X, points.total, points.dim, init, options, *place.group);
    }
    case KmeansPlace::Kind::ranks:
      return cluster::kmeans(X, points.mine.count, points.dim, init, options, place.where());
  }
  throw InvalidInput("kmeans: unknown place");
}

double label_agreement(const KmeansPlace& place, const KmeansPoints& points, const std::vector<int>& a,
                       const std::vector<int>& b) {
  if (place.kind != KmeansPlace::Kind::ranks) return cluster::label_agreement(a, b);
  std::int64_t same = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) same += a[i] == b[i];
  return static_cast<double>(place.comm()->sum(same)) / static_cast<double>(points.total);
}

std::vector<int> all_labels(const KmeansPlace& place, const KmeansPoints& points, const std::vector<int>& labels) {
  if (place.kind != KmeansPlace::Kind::ranks) return labels;
  // an allgather of every rank's labels, padded to the longest share
  int most = 1;
  for (int r = 0; r < place.ranks; ++r) most = std::max(most, cluster::kmeans_rows(points.total, place.ranks, r).count);
  std::vector<int> padded(static_cast<std::size_t>(most), -1);
  std::copy(labels.begin(), labels.end(), padded.begin());
  std::vector<int> gathered(padded.size() * static_cast<std::size_t>(place.ranks));
  place.comm()->allgather(padded.data(), gathered.data(), padded.size() * sizeof(int), nullptr);
  std::vector<int> all;
  all.reserve(static_cast<std::size_t>(points.total));
  for (int r = 0; r < place.ranks; ++r) {
    const auto from = gathered.begin() + static_cast<std::ptrdiff_t>(r) * most;
    all.insert(all.end(), from, from + cluster::kmeans_rows(points.total, place.ranks, r).count);
  }
  return all;
}

}  // namespace tcsolve::app
