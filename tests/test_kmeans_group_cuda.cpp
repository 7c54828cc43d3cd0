// K-means on device points and on groups of GPUs (tcsolve/cluster/kmeans.hpp, "Groups";
// tcsolve/runtime/group.hpp). [gpu], one device:
//   - points in device memory (KmeansOptions::points_memory, Where(context)) give bitwise the
//     labels and centroids of the same points in host memory, and k-means++ on device points
//     bitwise the host's centroids;
//   - a gpus({current device}) group of one member (NCCL over one rank: every all-reduce is the
//     identity) gives bitwise the single-context run, from host points and from member arrays;
//   - host memory passed as device points is refused by name before any kernel runs.
// [multi_gpu], two devices or more: a gpus({0, 1}) group gives the single-GPU labels, the
// centroids within one FP32 ulp (the FP64 sums of the two halves are added in another order),
// the same iterations; from host points and from points made on each member's GPU; points on
// GPU 1 given to a member on GPU 0 are refused by name.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cuda_test_util.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/group.hpp"

namespace {

using namespace tcsolve;
namespace runtime = tcsolve::runtime;

/// 20000 blobs points in 16 dimensions, 12 centres, and a k-means++ start of 12.
struct Data {
  cluster::Blobs blobs = cluster::make_blobs(20000, 16, 12, 3);
  std::vector<float> start = cluster::kmeans_plus_plus(blobs.X.data(), 20000, 16, 12, 4);
};
const Data& data() {
  static const Data d;
  return d;
}

cluster::KmeansOptions options(Variant v) {
  cluster::KmeansOptions o;
  o.variant = v;
  o.backend = Backend::cuda;
  o.max_iterations = 40;
  return o;
}

float ulp(float x) { return std::nextafter(std::fabs(x), std::numeric_limits<float>::infinity()) - std::fabs(x); }

std::vector<Variant> variants() {
  std::vector<Variant> v = {Variant::fp32_simt, Variant::fp64};
  if (cuda::compute_capability() >= 90) {
    v.push_back(Variant::ec_fp16);
    v.push_back(Variant::auto_);
  }
  return v;
}

}  // namespace

TEST_CASE("device points give bitwise the host points' K-means and k-means++", "[gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("K-means on device points");
  const Data& d = data();
  cuda::Context context;
  cuda::DeviceBuffer<float> X(d.blobs.X);
  for (Variant v : variants()) {
    INFO(to_string(v));
    const cluster::KmeansResult host = cluster::kmeans(d.blobs.X.data(), 20000, 16, d.start, options(v),
                                                       runtime::Where(context));
    cluster::KmeansOptions o = options(v);
    o.points_memory = runtime::Memory::device;
    const cluster::KmeansResult device = cluster::kmeans(X.data(), 20000, 16, d.start, o, runtime::Where(context));
    CHECK(device.labels == host.labels);
    CHECK(device.centroids == host.centroids);
    CHECK(device.iterations == host.iterations);
  }
  const std::vector<float> seeds = cluster::kmeans_plus_plus(X.data(), 20000, 16, 12, 4, runtime::Where(context),
                                                             runtime::Memory::device);
  CHECK(seeds == d.start);
}

TEST_CASE("a one-member group of GPUs gives bitwise the single-context run", "[gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("a group of one GPU");
  if (!runtime::have_nccl()) {
    WARN("built without NCCL: the group tests are skipped");
    return;
  }
  const Data& d = data();
  runtime::DeviceGroup group = runtime::DeviceGroup::gpus({cuda::current_device()});  // the device under test
  cuda::DeviceBuffer<float> X(d.blobs.X);
  cuda::Context context;
  for (Variant v : variants()) {
    INFO(to_string(v));
    const cluster::KmeansResult single = cluster::kmeans(d.blobs.X.data(), 20000, 16, d.start, options(v),
                                                         runtime::Where(context));
    const cluster::KmeansResult grouped = cluster::kmeans(d.blobs.X.data(), 20000, 16, d.start, options(v),
                                                          runtime::Where(group));
    CHECK(grouped.labels == single.labels);
    CHECK(grouped.centroids == single.centroids);
    CHECK(grouped.members == 1);
    const cluster::KmeansResult members = cluster::kmeans(std::vector<const float*>{X.data()}, 20000, 16, d.start, options(v), group);
    CHECK(members.labels == single.labels);
    CHECK(members.centroids == single.centroids);
  }
}

TEST_CASE("multi_gpu: a group of two GPUs gives the single-GPU labels", "[multi_gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("a group of two GPUs");
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2 || !runtime::have_nccl()) {
    WARN("fewer than two CUDA devices or no NCCL: the two-GPU group is not checked");
    return;
  }
  const Data& d = data();
  runtime::DeviceGroup group = runtime::DeviceGroup::gpus({0, 1});
  // each member's rows on its own GPU
  std::vector<cuda::DeviceBuffer<float>> rows;
  std::vector<const float*> member_X;
  for (int m = 0; m < 2; ++m) {
    runtime::DeviceScope scope(group.member(m).device);
    const cluster::RowRange r = cluster::kmeans_rows(20000, 2, m);
    rows.emplace_back(std::vector<float>(d.blobs.X.begin() + r.first * 16, d.blobs.X.begin() + (r.first + r.count) * 16));
    member_X.push_back(rows.back().data());
    CHECK(rows.back().device() == group.member(m).device);
  }
  cuda::Context context;
  for (Variant v : variants()) {
    INFO(to_string(v));
    const cluster::KmeansResult single = cluster::kmeans(d.blobs.X.data(), 20000, 16, d.start, options(v),
                                                         runtime::Where(context));
    for (int from_members = 0; from_members < 2; ++from_members) {
      const cluster::KmeansResult two =
          from_members ? cluster::kmeans(member_X, 20000, 16, d.start, options(v), group)
                       : cluster::kmeans(d.blobs.X.data(), 20000, 16, d.start, options(v), runtime::Where(group));
      CHECK(two.members == 2);
      CHECK(two.labels == single.labels);
      CHECK(two.iterations == single.iterations);
      REQUIRE(two.centroids.size() == single.centroids.size());
      for (std::size_t i = 0; i < single.centroids.size(); ++i)
        CHECK(std::fabs(two.centroids[i] - single.centroids[i]) <= ulp(single.centroids[i]));
      CHECK(std::fabs(two.inertia - single.inertia) <= 1e-9 * single.inertia);
    }
  }
}

TEST_CASE("points not on the GPU they are used on are refused by name, before any kernel", "[gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the device checks of the points");
  const Data& d = data();
  cuda::Context context;
  cluster::KmeansOptions o = options(Variant::ec_fp16);
  o.points_memory = runtime::Memory::device;
  const float* host = d.blobs.X.data();  // host memory said to be device memory
  const std::string not_device =
      "kmeans: the points (Memory::device) are not device memory, not on GPU " + std::to_string(context.device()) +
      ", where they are used";
  CHECK_THROWS_WITH(cluster::kmeans(host, 20000, 16, d.start, o, runtime::Where(context)), not_device);
  CHECK_THROWS_WITH(cluster::kmeans_plus_plus(host, 20000, 16, 12, 4, runtime::Where(context), runtime::Memory::device),
                    not_device);
  if (runtime::have_nccl()) {
    runtime::DeviceGroup group = runtime::DeviceGroup::gpus({context.device()});
    const std::string member = "kmeans: member 0's points (member_X[0]) are not device memory, not on GPU " +
                               std::to_string(context.device()) + ", where they are used";
    CHECK_THROWS_WITH(cluster::kmeans(std::vector<const float*>{host}, 20000, 16, d.start, options(Variant::ec_fp16),
                                      group),
                      member);
    CHECK_THROWS_WITH(cluster::kmeans_plus_plus(std::vector<const float*>{host}, 20000, 16, 12, 4, group), member);
  }
  // the device is still usable: nothing faulted
  cuda::DeviceBuffer<float> X(d.blobs.X);
  CHECK(cluster::kmeans(X.data(), 20000, 16, d.start, o, runtime::Where(context)).total_points == 20000);
}

TEST_CASE("multi_gpu: points on another GPU than their member's are refused by name", "[multi_gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("points on the wrong GPU");
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2 || !runtime::have_nccl()) {
    WARN("fewer than two CUDA devices or no NCCL: the wrong-GPU check is not made");
    return;
  }
  const Data& d = data();
  cuda::DeviceBuffer<float> on1;
  {
    const runtime::DeviceScope one(1);
    on1 = cuda::DeviceBuffer<float>(d.blobs.X);
  }
  runtime::DeviceGroup group = runtime::DeviceGroup::gpus({0});
  const std::string expected =
      "kmeans: member 0's points (member_X[0]) are on GPU 1, not on GPU 0, where they are used";
  CHECK_THROWS_WITH(cluster::kmeans(std::vector<const float*>{on1.data()}, 20000, 16, d.start,
                                    options(Variant::ec_fp16), group),
                    expected);
  CHECK_THROWS_WITH(cluster::kmeans_plus_plus(std::vector<const float*>{on1.data()}, 20000, 16, 12, 4, group),
                    expected);
}

#else

TEST_CASE("K-means on device points and groups (built without CUDA)", "[gpu]") {
  WARN("tcsolve was built without CUDA: skipping K-means on device points and groups");
}

#endif
