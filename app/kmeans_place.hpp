// Where `tcsolve kmeans` runs and where its points live, over tcsolve::cluster's Where
// (tcsolve/cluster/kmeans.hpp, "Groups"; tcsolve/runtime/group.hpp):
//   host   the cpu backend in this process: the points on the host;
//   gpu    one GPU (a cuda::Context on it): points read from a file stay on the host (the run
//          copies them), --synthetic points are made on the device;
//   gpus   several GPUs of this process (--gpus: a gpus() DeviceGroup, NCCL): points read from a
//          file on the host, --synthetic ones made by each member on its GPU (its kmeans_rows);
//   ranks  this process' rank of an mpirun job (an mpi() DeviceGroup: cpu ranks, or one GPU a
//          rank): its kmeans_rows, read from the file by rows or made (on its GPU for cuda).
// --synthetic points come from tcsolve/cluster/synthetic.hpp: blob_rows on the host,
// blob_rows_device on a GPU, bitwise the same. Under mpirun the steps a rank can fail alone
// (reading or making its rows) are agreed by the caller (ranks.hpp); the collectives (making the
// group, k-means++, the runs, gathering the labels) are called by every rank.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ranks.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/cluster/synthetic.hpp"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/where.hpp"

namespace tcsolve::app {

struct KmeansPlace {
  enum class Kind { host, gpu, gpus, ranks };
  Kind kind = Kind::host;
  Backend backend = Backend::cpu;               ///< cpu or cuda
  std::unique_ptr<cuda::Context> context;       ///< gpu
  std::unique_ptr<runtime::DeviceGroup> group;  ///< gpus, ranks
  std::vector<int> devices;                     ///< the GPUs in member order (ranks: every rank's); empty on the cpu
  int rank = 0, ranks = 1;                      ///< this process in an mpirun job (1 rank alone)

  /// The ranks' communicator on host buffers (ranks), else nullptr: for runtime::agreed and sums.
  runtime::Communicator* comm() const { return kind == Kind::ranks ? group->host_communicator() : nullptr; }
  runtime::Where where() const;
  /// The group's description ("nccl x 2 (devices 0,1)", "mpi x 3 (cpu)"); empty alone.
  std::string group_text() const { return group ? group->describe() : std::string(); }
  /// What the run's (first) member runs on: the GPU's name or the host CPU's.
  std::string device_text() const;
  /// The rows this process holds of `points`: all of them, or its rank's kmeans_rows.
  cluster::RowRange rows(std::int64_t points) const;
};

/// The place for `requested` (auto | cpu | cuda), `gpus` (--gpus: "" for none, N, all, 0,1) in
/// this process' `job`. auto resolves to cuda when a usable GPU is present (under mpirun: on
/// every rank, with NCCL in the build), else cpu, said once on stderr. Throws InvalidInput (a bad
/// --gpus list, --gpus under mpirun) or Unavailable (--gpus with the cpu backend or without a
/// GPU or NCCL; cuda without a GPU; ranks without MPI): agreed over the ranks.
KmeansPlace make_place(Backend requested, const std::string& gpus, const JobRanks& job);

/// This process' points: the rows `rows` of `total`, on the host or on the GPUs.
struct KmeansPoints {
  std::int64_t total = 0;
  int dim = 0;
  cluster::RowRange mine;                         ///< this process' rows
  std::vector<float> host;                        ///< dim x mine.count on the host; empty on GPUs
  std::vector<cuda::DeviceBuffer<float>> device;  ///< on GPUs: one array a local member (its rows)
  std::optional<cluster::BlobsSpec> blobs;        ///< --synthetic: what they are made from
  bool on_device() const { return !device.empty(); }
};

/// This process' rows of the file's X (read_kmeans_rows), on the host. Throws InvalidInput.
KmeansPoints read_points(const KmeansPlace& place, const std::string& path, std::int64_t total, int dim);
/// The --synthetic points, made where they are clustered: on the GPU(s) on cuda (each member its
/// rows; their device memory checked first), on the host on the cpu. Throws InvalidInput.
KmeansPoints make_points(const KmeansPlace& place, const cluster::BlobsSpec& spec);

/// k-means++ (seed) of k centroids on `seeding` (cpu or cuda), bitwise the same everywhere:
/// under mpirun distributed over the ranks' rows, on the ranks' backend (cuda ranks: on their
/// GPUs, --synthetic points where they were made);
/// --synthetic points on GPUs on the device (gpus: distributed over the members' GPUs, each
/// drawing on its own rows), or made on the host for --seeding cpu.
std::vector<float> seed_points(const KmeansPlace& place, const KmeansPoints& points, int k, std::uint64_t seed,
                               Backend seeding);

/// cluster::kmeans on the place's points from `init` (options.points_memory is set here).
cluster::KmeansResult run_points(const KmeansPlace& place, const KmeansPoints& points, const std::vector<float>& init,
                                 cluster::KmeansOptions options);

/// The fraction of all the run's points whose labels in `a` and `b` are equal (under mpirun the
/// ranks' equal labels summed: every rank calls it).
double label_agreement(const KmeansPlace& place, const KmeansPoints& points, const std::vector<int>& a,
                       const std::vector<int>& b);

/// All the run's labels in point order (under mpirun gathered from the ranks: every rank calls
/// it, every rank gets them).
std::vector<int> all_labels(const KmeansPlace& place, const KmeansPoints& points, const std::vector<int>& labels);

}  // namespace tcsolve::app
