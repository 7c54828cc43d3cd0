// k-means++ across the GPUs of a group (kmeans_cuda.hpp, kmeans_plus_plus_members): each member
// holds its rows kmeans_rows(N, size, rank) on its GPU and every member ends with the same k
// centroids, bitwise those of one process (seeding.cpp's seed_host and seed_ranks, and the one-GPU
// kmeans_plus_plus_device). Per centroid t, on every member, on its context's stream, with no
// wait on the host (the chosen point lives on the device from draw to draw):
//   offer_kernel        the holder of the chosen point copies its row out;
//   allgather           the members' offers (dim floats each);
//   take_kernel         C column t = the holder's row (the same bits on every member);
//   between_kernel, distance_kernel, block_sum_kernel (kmeans_seed_kernels.cuh)
//                       D^2 of the member's points against c_t with the host's skip, and the sums
//                       of its 128-point sub-blocks in point order (its rows start at a sub-block,
//                       so these are sub-blocks of the group's points);
//   allgather           the sub-block sums (padded to the largest member's count);
//   scatter_kernel      the group's sub-block sums in point order;
//   group_block_kernel  the 4096-point blocks' sums (0, += sub-block sums in order);
//   group_pick_kernel   the total (0, += block sums in order), the host's draw (one per step, one
//                       more when every D^2 is 0) and its walks over blocks and sub-blocks: the
//                       sub-block g and what is left of u * total;
//   walk_kernel         the holder of g walks its points (the host's D.walk): the chosen point or
//                       -1 (the target rounded past the sub-block's end);
//   allreduce max       the walk's point;
//   fallback_kernel     when none: the member's last point <= end - 1 with D^2 > 0 and its first
//                       after (the host's last_positive / first_positive);
//   allreduce max       those two (the second negated);
//   resolve_kernel      the chosen point, the same on every member.
// The draws are the host's mt19937_64(seed) outputs, uploaded once.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"
#include "kmeans_cuda.hpp"
#include "kmeans_seed_kernels.cuh"
#include "tcsolve/runtime/members.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"

namespace tcsolve::cluster::detail {
namespace {

constexpr int kSmall = 128;  ///< threads of the one-block kernels

/// One member's view of the group's draw (device pointers).
struct GroupSeed {
  SeedState s;             ///< this member's points (s.points of them from global point `first`), C, between, draws
  int N;                   ///< the group's points
  int first;               ///< the global index of this member's first point
  int members;             ///< the group's size
  int most_subs;           ///< the largest member's sub-block count (the all-gather's padding)
  int subs_all, blocks_all;
  const int* range_first;  ///< per member: its first point
  const int* range_count;  ///< per member: its number of points
  float* offer;            ///< dim: the chosen row, written by its holder
  float* rows;             ///< members x dim: every member's offer
  double* gathered;        ///< members x most_subs: every member's sub-block sums
  double* sub_all;         ///< subs_all: the group's sub-block sums in point order
  double* block_all;       ///< blocks_all: the group's block sums
  long long* found;        ///< [0] the walk's point (-1: none), [1] the last D^2 > 0 before, [2] -(the first after)
  int* target_sub;         ///< the drawn sub-block (-1: drawn uniformly, chosen is set)
  double* target_local;    ///< what is left of u * total in it
};

__global__ void group_first_kernel(GroupSeed g) {
  *g.s.chosen = uniform_index(g.s.draws[0], g.N);
  *g.s.cursor = 1;
}

__global__ void offer_kernel(GroupSeed g) {
  const int c = *g.s.chosen;
  if (c < g.first || c >= g.first + g.s.points) return;  // the same for the whole block
  const float* x = g.s.X + static_cast<std::size_t>(c - g.first) * g.s.dim;
  for (int d = threadIdx.x; d < g.s.dim; d += blockDim.x) g.offer[d] = x[d];
}

__global__ void take_kernel(GroupSeed g, int t) {
  const int c = *g.s.chosen;
  int holder = g.members - 1;  // seed_ranks' owner(): the first member whose rows end after c
  for (int r = 0; r < g.members; ++r)
    if (c < g.range_first[r] + g.range_count[r]) {
      holder = r;
      break;
    }
  const float* x = g.rows + static_cast<std::size_t>(holder) * g.s.dim;
  float* column = g.s.C + static_cast<std::size_t>(t) * g.s.dim;
  for (int d = threadIdx.x; d < g.s.dim; d += blockDim.x) column[d] = x[d];
}

/// Member r's sub-block sums (gathered[r most_subs, r most_subs + its count)) to their place.
__global__ void scatter_kernel(GroupSeed g) {
  const long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= static_cast<long long>(g.members) * g.most_subs) return;
  const int r = static_cast<int>(e / g.most_subs), j = static_cast<int>(e % g.most_subs);
  const int subs = (g.range_count[r] + g.s.sub_points - 1) / g.s.sub_points;
  if (j < subs) g.sub_all[g.range_first[r] / g.s.sub_points + j] = g.gathered[e];
}

/// Block b's sum: 0, += its sub-blocks' sums in order (seeding.cpp's block_sums).
__global__ void group_block_kernel(GroupSeed g) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= g.blocks_all) return;
  const int u1 = min(g.subs_all, (b + 1) * g.s.subs);
  double sum = 0;
  for (int u = b * g.s.subs; u < u1; ++u) sum = __dadd_rn(sum, g.sub_all[u]);
  g.block_all[b] = sum;
}

/// The total, the draw and the walks over blocks and sub-blocks (seed_host, walk_blocks).
__global__ void group_pick_kernel(GroupSeed g) {
  double total = 0;
  for (int b = 0; b < g.blocks_all; ++b) total = __dadd_rn(total, g.block_all[b]);
  int cursor = *g.s.cursor;
  const double u = uniform01(g.s.draws[cursor++]);
  if (!(total > 0) || isinf(total) || isnan(total)) {  // every point is a centroid already
    *g.s.chosen = uniform_index(g.s.draws[cursor++], g.N);
    *g.target_sub = -1;
  } else {
    const double target = __dmul_rn(u, total);
    double before = 0;
    int b = 0;
    while (b + 1 < g.blocks_all && __dadd_rn(before, g.block_all[b]) <= target)
      before = __dadd_rn(before, g.block_all[b++]);
    const double local = __dsub_rn(target, before);
    const int sub_end = min(g.subs_all, (b + 1) * g.s.subs);
    const int subs = sub_end - b * g.s.subs;
    const double* sums = g.sub_all + static_cast<std::size_t>(b) * g.s.subs;
    double before_sub = 0;
    int v = 0;
    while (v + 1 < subs && __dadd_rn(before_sub, sums[v]) <= local) before_sub = __dadd_rn(before_sub, sums[v++]);
    *g.target_sub = b * g.s.subs + v;
    *g.target_local = __dsub_rn(local, before_sub);
  }
  *g.s.cursor = cursor;
}

/// The holder of the drawn sub-block walks its points (Distances::walk); the others offer -1.
__global__ void walk_kernel(GroupSeed g) {
  const int sub = *g.target_sub;
  if (sub < 0) {  // drawn uniformly: the same on every member
    g.found[0] = *g.s.chosen;
    return;
  }
  long long found = -1;
  const int i0 = sub * g.s.sub_points - g.first;  // local
  if (i0 >= 0 && i0 < g.s.points) {
    const int i1 = min(g.s.points, i0 + g.s.sub_points);
    const double target = *g.target_local;
    double run = 0;
    for (int i = i0; i < i1; ++i) {
      const double d = g.s.dist[i];
      if (d <= 0) continue;
      run = __dadd_rn(run, d);
      if (run > target) {
        found = static_cast<long long>(g.first) + i;
        break;
      }
    }
  }
  g.found[0] = found;
}

/// When the walk found nothing (rounding left the target past the sub-block's end): this
/// member's last point <= end - 1 with D^2 > 0 (-1: none) and -(its first after; -N: none).
__global__ void fallback_kernel(GroupSeed g) {
  long long before = -1, after = -static_cast<long long>(g.N);
  if (g.found[0] < 0) {
    // the sub-block's end (global; in 64 bits: the last sub-block's may pass 2^31 - 1)
    const int end = static_cast<int>(min(static_cast<long long>(g.N), (*g.target_sub + 1LL) * g.s.sub_points));
    for (int i = min(end - 1 - g.first, g.s.points - 1); i >= 0; --i)
      if (g.s.dist[i] > 0) {
        before = static_cast<long long>(g.first) + i;
        break;
      }
    for (int i = max(end - g.first, 0); i < g.s.points; ++i)
      if (g.s.dist[i] > 0) {
        after = -(static_cast<long long>(g.first) + i);
        break;
      }
  }
  g.found[1] = before;
  g.found[2] = after;
}

__global__ void resolve_kernel(GroupSeed g) {
  long long c = g.found[0] >= 0 ? g.found[0] : g.found[1] >= 0 ? g.found[1] : -g.found[2];
  c = c < 0 ? 0 : c >= g.N ? g.N - 1 : c;  // never out of range (total > 0: a point with D^2 > 0 exists)
  *g.s.chosen = static_cast<int>(c);
}

int blocks_for(long long n, int threads) { return static_cast<int>((n + threads - 1) / threads); }

/// One member's part: its device buffers, then the k steps, every collective on `comm` and
/// every kernel on `stream` (the member's device is current).
std::vector<float> seed_member(const float* d_X, const std::vector<RowRange>& ranges, int me, int N, int dim, int k,
                               std::uint64_t seed, runtime::Communicator& comm, CUstream_st* stream) {
  const int P = static_cast<int>(ranges.size());
  const int n = ranges[static_cast<std::size_t>(me)].count;
  int most_subs = 1;
  std::vector<int> h_first(static_cast<std::size_t>(P)), h_count(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    h_first[static_cast<std::size_t>(r)] = static_cast<int>(ranges[static_cast<std::size_t>(r)].first);
    h_count[static_cast<std::size_t>(r)] = ranges[static_cast<std::size_t>(r)].count;
    most_subs = std::max(most_subs, ceil_div(ranges[static_cast<std::size_t>(r)].count, kSeedSub));
  }
  const int subs = kSeedBlock / kSeedSub;
  const int blocks = ceil_div(n, kSeedBlock);  // this member's blocks (0 when it holds no points)
  const int subs_all = ceil_div(N, kSeedSub), blocks_all = ceil_div(N, kSeedBlock);
  const std::size_t local_subs = std::max<std::size_t>(static_cast<std::size_t>(blocks) * subs, static_cast<std::size_t>(most_subs));

  std::mt19937_64 rng(seed);
  std::vector<unsigned long long> draws(2 * static_cast<std::size_t>(k) + 1);
  for (auto& r : draws) r = rng();  // at most 1 + 2 (k - 1) are used

  // every member allocates, or every member throws the same error (none waits in a collective)
  struct Buffers {
    cuda::DeviceBuffer<unsigned long long> draws;
    cuda::DeviceBuffer<float> C, offer, rows;
    cuda::DeviceBuffer<double> dist, between, block_sum, sub_sum, gathered, sub_all, block_all, target_local;
    cuda::DeviceBuffer<int> nearest, changed, scalars, range_first, range_count;
    cuda::DeviceBuffer<long long> found;
  } buf;
  runtime::agreed(&comm, [&] {
    const std::size_t need = static_cast<std::size_t>(n) * 12 + static_cast<std::size_t>(k) * (4 * dim + 8) +
                             (local_subs + static_cast<std::size_t>(P) * most_subs + subs_all + blocks_all) * 8 +
                             static_cast<std::size_t>(P) * dim * 4;
    const cuda::DeviceMemory mem = cuda::device_memory();
    if (need > mem.free)
      throw InvalidInput("kmeans++: member " + std::to_string(comm.rank()) + " needs about " + std::to_string(need) +
                         " bytes of device memory for " + std::to_string(n) + " points, " + std::to_string(mem.free) +
                         " are free");
    buf.draws = cuda::DeviceBuffer<unsigned long long>(draws.size());
    buf.C = cuda::DeviceBuffer<float>(static_cast<std::size_t>(k) * dim);
    buf.offer = cuda::DeviceBuffer<float>(static_cast<std::size_t>(dim));
    buf.rows = cuda::DeviceBuffer<float>(static_cast<std::size_t>(P) * dim);
    buf.dist = cuda::DeviceBuffer<double>(static_cast<std::size_t>(std::max(n, 1)));
    buf.nearest = cuda::DeviceBuffer<int>(static_cast<std::size_t>(std::max(n, 1)));
    buf.between = cuda::DeviceBuffer<double>(static_cast<std::size_t>(k));
    buf.block_sum = cuda::DeviceBuffer<double>(static_cast<std::size_t>(std::max(blocks, 1)));
    buf.changed = cuda::DeviceBuffer<int>(static_cast<std::size_t>(std::max(blocks, 1)));
    buf.sub_sum = cuda::DeviceBuffer<double>(local_subs);
    buf.gathered = cuda::DeviceBuffer<double>(static_cast<std::size_t>(P) * most_subs);
    buf.sub_all = cuda::DeviceBuffer<double>(static_cast<std::size_t>(subs_all));
    buf.block_all = cuda::DeviceBuffer<double>(static_cast<std::size_t>(blocks_all));
    buf.target_local = cuda::DeviceBuffer<double>(1);
    buf.scalars = cuda::DeviceBuffer<int>(3);  // chosen, cursor, target_sub
    buf.range_first = cuda::DeviceBuffer<int>(static_cast<std::size_t>(P));
    buf.range_count = cuda::DeviceBuffer<int>(static_cast<std::size_t>(P));
    buf.found = cuda::DeviceBuffer<long long>(3);
    buf.draws.upload(draws, stream);
    buf.range_first.upload(h_first, stream);
    buf.range_count.upload(h_count, stream);
    cuda::device_memset(buf.sub_sum.data(), 0, local_subs * sizeof(double), stream);
    cuda::device_memset(buf.offer.data(), 0, static_cast<std::size_t>(dim) * sizeof(float), stream);
  }, stream);

  GroupSeed g{};
  g.s = SeedState{d_X,           n,          dim,      k,
                  blocks,        kSeedBlock, kSeedSub, subs,
                  buf.C.data(),  buf.dist.data(), buf.nearest.data(), buf.between.data(),
                  buf.block_sum.data(), buf.sub_sum.data(), buf.changed.data(), buf.scalars.data(),
                  buf.scalars.data() + 1, buf.draws.data()};
  g.N = N;
  g.first = h_first[static_cast<std::size_t>(me)];
  g.members = P;
  g.most_subs = most_subs;
  g.subs_all = subs_all;
  g.blocks_all = blocks_all;
  g.range_first = buf.range_first.data();
  g.range_count = buf.range_count.data();
  g.offer = buf.offer.data();
  g.rows = buf.rows.data();
  g.gathered = buf.gathered.data();
  g.sub_all = buf.sub_all.data();
  g.block_all = buf.block_all.data();
  g.found = buf.found.data();
  g.target_sub = buf.scalars.data() + 2;
  g.target_local = buf.target_local.data();

  if (n > 0) init_kernel<<<ceil_div(std::max(n, blocks * subs), kThreads), kThreads, 0, stream>>>(g.s);
  group_first_kernel<<<1, 1, 0, stream>>>(g);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  for (int t = 0;; ++t) {
    offer_kernel<<<1, kSmall, 0, stream>>>(g);
    comm.allgather(g.offer, g.rows, static_cast<std::size_t>(dim) * sizeof(float), stream);
    take_kernel<<<1, kSmall, 0, stream>>>(g, t);
    if (t + 1 == k) break;
    if (t > 0) between_kernel<<<ceil_div(t, kSmall), kSmall, 0, stream>>>(g.s, t);
    if (n > 0) {
      distance_kernel<<<ceil_div(n, kThreads), kThreads, 0, stream>>>(g.s, t);
      block_sum_kernel<<<blocks, 32, 0, stream>>>(g.s);
    }
    comm.allgather(g.s.sub_sum, g.gathered, static_cast<std::size_t>(most_subs) * sizeof(double), stream);
    scatter_kernel<<<blocks_for(static_cast<long long>(P) * most_subs, kThreads), kThreads, 0, stream>>>(g);
    group_block_kernel<<<blocks_for(blocks_all, kThreads), kThreads, 0, stream>>>(g);
    group_pick_kernel<<<1, 1, 0, stream>>>(g);
    walk_kernel<<<1, 1, 0, stream>>>(g);
    comm.allreduce_max(g.found, 1, runtime::Element::i64, stream);
    fallback_kernel<<<1, 1, 0, stream>>>(g);
    comm.allreduce_max(g.found + 1, 2, runtime::Element::i64, stream);
    resolve_kernel<<<1, 1, 0, stream>>>(g);
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
  }
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  return buf.C.download(stream);  // waits for the stream: every collective of this member is done
}

}  // namespace

std::vector<float> kmeans_plus_plus_members(const std::vector<const float*>& member_X, std::int64_t points, int dim,
                                            int k, std::uint64_t seed, runtime::DeviceGroup& group) {
  if (group.memory() != runtime::Memory::device)
    throw InvalidInput("kmeans++: the group's members are not GPUs (a group of GPUs: gpus() or mpi(Memory::device))");
  const int members = group.local_members();
  if (member_X.size() != static_cast<std::size_t>(members))
    throw InvalidInput("kmeans++: " + std::to_string(member_X.size()) + " point arrays for " + std::to_string(members) +
                       " members");
  check_sizes(points, dim, k);
  if (points >= (std::int64_t{1} << 31)) throw InvalidInput("kmeans++: more than 2^31 - 1 points");
  const int P = group.size();
  std::vector<RowRange> ranges(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) ranges[static_cast<std::size_t>(r)] = kmeans_rows(points, P, r);

  std::vector<std::vector<float>> results(static_cast<std::size_t>(members));
  runtime::run_members(group, [&](int m) {
    runtime::DeviceGroup::Member& me = group.member(m);
    if (me.context == nullptr || me.communicator == nullptr)
      throw InvalidInput("kmeans++: member " + std::to_string(me.rank) + " has no context or communicator");
    runtime::DeviceScope scope(me.device);
    results[static_cast<std::size_t>(m)] = seed_member(member_X[static_cast<std::size_t>(m)], ranges, me.rank,
                                                       static_cast<int>(points), dim, k, seed, *me.communicator,
                                                       me.context->stream());
  });
  return std::move(results[0]);
}

}  // namespace tcsolve::cluster::detail
