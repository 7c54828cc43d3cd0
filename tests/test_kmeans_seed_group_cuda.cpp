// k-means++ across the GPUs of a group (kmeans_plus_plus with Where(group); kmeans_cuda.hpp's
// kmeans_plus_plus_members underneath): each member's D^2 and sub-block sums on its GPU, the sums
// all-gathered with NCCL, the same draws on every member -- bitwise the host's centroids.
//   [gpu]        a gpus({current device}) group (NCCL over one rank);
//   [multi_gpu]  a gpus({0, 1}) group (two devices or more), including a member with no points.
// The cases: N not a multiple of 128, N over two 4096-point blocks, dimensions not a multiple of 4,
// duplicated points (D^2 = 0, and fewer distinct points than k: the uniform draws), k = 1.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda_test_util.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/where.hpp"

namespace {

using namespace tcsolve;
namespace runtime = tcsolve::runtime;

struct Case {
  int points, dim, k;
  std::uint64_t seed;
  int distinct;  ///< 0: blobs; else the points repeat this many distinct ones
};

/// Blobs, or `distinct` blob points repeated in turn (so D^2 = 0 for the copies of a centroid).
std::vector<float> points_of(const Case& c) {
  if (c.distinct == 0) return cluster::make_blobs(c.points, c.dim, 8, c.seed + 100).X;
  const std::vector<float> few = cluster::make_blobs(c.distinct, c.dim, 4, c.seed + 200).X;
  std::vector<float> X(static_cast<std::size_t>(c.points) * c.dim);
  for (int i = 0; i < c.points; ++i)
    for (int d = 0; d < c.dim; ++d)
      X[static_cast<std::size_t>(i) * c.dim + d] = few[static_cast<std::size_t>(i % c.distinct) * c.dim + d];
  return X;
}

std::vector<Case> cases() {
  return {
      {1000, 7, 5, 1, 0},     // N not a multiple of 128, dim not a multiple of 4
      {9000, 16, 24, 2, 0},   // over two blocks of 4096
      {12000, 3, 40, 3, 0},   // three blocks, the last partial
      {5000, 8, 30, 4, 50},   // duplicated points: D^2 = 0 for many
      {300, 5, 9, 5, 4},      // fewer distinct points than k: uniform draws
      {777, 4, 1, 6, 0},      // k = 1
      {100, 6, 10, 7, 0},     // fewer than two sub-blocks: one member of two holds none
      {4096 * 2 + 128, 12, 17, 8, 0},
  };
}

void check_group(runtime::DeviceGroup& group) {
  for (const Case& c : cases()) {
    INFO("N = " << c.points << ", dim = " << c.dim << ", k = " << c.k << ", seed = " << c.seed
                << ", distinct = " << c.distinct);
    const std::vector<float> X = points_of(c);
    const std::vector<float> host = cluster::kmeans_plus_plus(X.data(), c.points, c.dim, c.k, c.seed);
    const std::vector<float> grouped =
        cluster::kmeans_plus_plus(X.data(), c.points, c.dim, c.k, c.seed, runtime::Where(group));
    REQUIRE(grouped.size() == host.size());
    CHECK(std::memcmp(grouped.data(), host.data(), host.size() * sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("k-means++ on a one-GPU group gives bitwise the host's centroids", "[gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("k-means++ on a group of one GPU");
  if (!runtime::have_nccl()) {
    WARN("built without NCCL: the group's k-means++ is not checked");
    return;
  }
  runtime::DeviceGroup group = runtime::DeviceGroup::gpus({cuda::current_device()});  // the device under test
  check_group(group);
}

TEST_CASE("multi_gpu: k-means++ on a group of two GPUs gives bitwise the host's centroids", "[multi_gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("k-means++ on a group of two GPUs");
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2 || !runtime::have_nccl()) {
    WARN("fewer than two CUDA devices or no NCCL: the two-GPU k-means++ is not checked");
    return;
  }
  runtime::DeviceGroup group = runtime::DeviceGroup::gpus({0, 1});
  check_group(group);
}

#else

TEST_CASE("k-means++ on a group of GPUs (built without CUDA)", "[gpu]") {
  WARN("tcsolve was built without CUDA: skipping k-means++ on a group of GPUs");
}

#endif
