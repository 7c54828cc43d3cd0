// K-means++ on cuda ranks (tcsolve_mpi_tests under `mpirun -np P` on a GPU machine; skipped with
// a warning where this process sees no GPU or the build has no NCCL, as on CI): each rank makes
// its rows kmeans_rows(N, P, rank) of the synthetic blobs on its own GPU (blob_rows_device) and
// the ranks seed over an mpi(Memory::device) group from those device rows (the member_X
// overload: nothing copied). Checks: bitwise the single-process host centroids (blob_rows of
// every point, kmeans_plus_plus on the cpu), on every rank; a NaN in the last rank's device rows
// ends every rank with the same error naming its global point.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/cluster/synthetic.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/group.hpp"

namespace {

namespace cluster = tcsolve::cluster;
namespace cuda = tcsolve::cuda;
namespace runtime = tcsolve::runtime;

/// Whether every rank passed `ok`.
bool all(bool ok, runtime::DeviceGroup& g) { return g.host_communicator()->sum(std::int64_t{ok ? 0 : 1}) == 0; }

}  // namespace

TEST_CASE("cuda ranks: k-means++ on the rows made on each rank's GPU gives the single-process centroids",
          "[mpi][kmeans][gpu]") {
  if (runtime::device_count() == 0 || !runtime::have_nccl()) {
    WARN("no CUDA device or no NCCL in this build: skipping the cuda ranks' k-means++");
    return;
  }
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::device);
  const runtime::DeviceGroup::Member& me = group.member(0);
  const runtime::DeviceScope on(me.device);
  // several 4096-point blocks, a share that is no multiple of 128 on the last rank, k > 128
  for (const cluster::BlobsSpec spec : {cluster::BlobsSpec{5000, 3, 7, 9}, cluster::BlobsSpec{70001, 16, 40, 3}})
    for (int k : {1, 17, 300})
      for (std::uint64_t seed : {1u, 99u}) {
        INFO(spec.points << " x " << spec.dim << " k = " << k << " seed " << seed << " on " << group.describe());
        std::vector<float> X(static_cast<std::size_t>(spec.points) * spec.dim);
        cluster::blob_rows(spec, 0, spec.points, X.data(), nullptr);
        const std::vector<float> single =
            cluster::kmeans_plus_plus(X.data(), static_cast<int>(spec.points), spec.dim, k, seed);
        const cluster::RowRange r = cluster::kmeans_rows(spec.points, group.size(), me.rank);
        cuda::DeviceBuffer<float> rows(static_cast<std::size_t>(r.count) * spec.dim);
        cluster::blob_rows_device(spec, r.first, r.count, rows.data(), nullptr, me.context->stream());
        const std::vector<float> mine =
            cluster::kmeans_plus_plus(std::vector<const float*>{rows.data()}, spec.points, spec.dim, k, seed, group);
        CHECK(all(mine == single, group));
      }
  SECTION("a NaN in the last rank's device rows ends every rank with the same error") {
    const cluster::BlobsSpec spec{5000, 3, 7, 9};
    const cluster::RowRange r = cluster::kmeans_rows(spec.points, group.size(), me.rank);
    cuda::DeviceBuffer<float> rows(static_cast<std::size_t>(r.count) * spec.dim);
    cluster::blob_rows_device(spec, r.first, r.count, rows.data(), nullptr, me.context->stream());
    if (me.rank == group.size() - 1) {
      const float nan = std::nanf("");
      cuda::copy_to_device(rows.data() + static_cast<std::size_t>(r.count - 1) * spec.dim + 2, &nan, sizeof(float),
                           me.context->stream());
    }
    CHECK_THROWS_WITH(
        cluster::kmeans_plus_plus(std::vector<const float*>{rows.data()}, spec.points, spec.dim, 3, 1, group),
        "kmeans: X has a non-finite value at (" + std::to_string(spec.points - 1) + ", 2)");
  }
}
