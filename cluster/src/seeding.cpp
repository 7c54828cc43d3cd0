// k-means++ seeding (tcsolve::cluster, kmeans.hpp): on the host, on the device (dispatch to
// kmeans_seed_cuda.cu), and over the ranks of an mpi() group -- one draw algorithm, the same
// sums in the same order everywhere, so every path gives bitwise the same centroids for a seed.
//
// The draw: D(x)^2 per point against the nearest centroid so far; the sums of 128-point
// sub-blocks in point order; a 4096-point block's sum as its sub-blocks' sums in order; the
// total as the blocks' sums in order; the point whose running sum first exceeds u * total found
// by walking blocks, then sub-blocks, then points. A rank computes D^2 and the sub-block sums of
// its rows (its rows start at a sub-block: kmeans_rows), the sub-block sums are all-gathered,
// every rank walks the same sums to the same sub-block, and the rank holding it walks its
// points and broadcasts the chosen point.
//
// Weighted (sample weights w, kmeans.hpp): the same walks over p_i = w_i D(x_i)^2 instead of
// D(x_i)^2, and the first draw (and the draw when every p_i is 0) walks the running sum of the
// weights instead of taking a uniform index; one process on the host only (the cuda backend
// seeds weighted fits here too, groups refuse weights).
//
// Built with -ffp-contract=off (cluster/CMakeLists.txt).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common.hpp"
#include "kmeans_cuda.hpp"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"

namespace tcsolve::cluster {
namespace {

using detail::count;
using detail::kInf;
using detail::kSeedBlock;
using detail::kSeedSub;
constexpr int kSubs = kSeedBlock / kSeedSub;

void check_interrupt(const std::atomic<bool>* interrupt) { tcsolve::check_interrupt(interrupt, "the K-means run"); }

/// The points' D^2 to the nearest centroid so far, kept from draw to draw: points [first,
/// first + n) of the data, X their rows. The draws walk p(i): D^2, or w_i D^2 with weights.
struct Distances {
  const float* X;
  int n, dim;
  std::vector<double> dist;  ///< D(x)^2
  std::vector<int> nearest;  ///< which centroid
  const double* w = nullptr;  ///< sample weights (nullptr: unweighted)

  Distances(const float* x, int points, int d, const double* weights = nullptr)
      : X(x), n(points), dim(d), dist(static_cast<std::size_t>(points), kInf), nearest(static_cast<std::size_t>(points), -1),
        w(weights) {}

  /// What the draw is proportional to: D(x_i)^2, or w_i D(x_i)^2 (one rounded product).
  double p(int i) const {
    const double d = dist[static_cast<std::size_t>(i)];
    return w != nullptr ? w[i] * d : d;
  }

  /// D(x)^2 against the new centroid c (number t) for points [i0, i1); whether one changed.
  /// Skipped where the triangle inequality shows c is no closer: ||c_a - c_t|| >= 2 ||x - c_a||
  /// gives ||x - c_t|| >= ||x - c_a|| (a = nearest; a relative margin of 2^-20 covers the
  /// rounding of both squares).
  bool update(int i0, int i1, const float* c, int t, const std::vector<double>& between) {
    bool changed = false;
    for (int i = i0; i < i1; ++i) {
      double& d = dist[static_cast<std::size_t>(i)];
      const int a = nearest[static_cast<std::size_t>(i)];
      if (a >= 0 && between[static_cast<std::size_t>(a)] >= 4.0 * d * (1.0 + 0x1p-20)) continue;
      const double e = detail::squared_distance(X + count(i, dim), c, dim);
      if (e < d) {
        d = e;
        nearest[static_cast<std::size_t>(i)] = t;
        changed = true;
      }
    }
    return changed;
  }

  /// The sum of p over points [i0, i1) in order.
  double sum(int i0, int i1) const {
    double s = 0;
    for (int i = i0; i < i1; ++i) s += p(i);
    return s;
  }

  /// The first point of [i0, i1) whose running sum of p exceeds `target` (-1: none).
  int walk(int i0, int i1, double target) const {
    double run = 0;
    for (int i = i0; i < i1; ++i) {
      const double d = p(i);
      if (d <= 0) continue;
      run += d;
      if (run > target) return i;
    }
    return -1;
  }

  /// The last point <= from with p > 0 (-1: none), and the first after it.
  int last_positive(int from) const {
    for (int i = std::min(from, n - 1); i >= 0; --i)
      if (p(i) > 0) return i;
    return -1;
  }
  int first_positive(int after) const {
    for (int i = std::max(0, after + 1); i < n; ++i)
      if (p(i) > 0) return i;
    return -1;
  }
};

/// A point drawn with probability w_i / sum w (one draw u: the first point whose running sum of
/// the weights, in point order, exceeds u * total; `total` that sum): the weighted first
/// centroid. A point of weight 0 is never drawn (when rounding leaves the target past the end:
/// the last point of positive weight).
int weighted_index(detail::Rng64& rng, const double* w, int n, double total) {
  const double target = detail::uniform01(rng) * total;
  double run = 0;
  int last = -1;
  for (int i = 0; i < n; ++i) {
    if (!(w[i] > 0)) continue;
    last = i;
    run += w[i];
    if (run > target) return i;
  }
  return last;
}

/// The walk over the group's sub-block sums (all of them, in point order): the block, then
/// the sub-block, whose running sum first exceeds `target`; returns the global sub-block and
/// the remainder of the target within it.
struct SubTarget {
  std::int64_t sub;
  double local;
};
SubTarget walk_blocks(const std::vector<double>& block_sum, const std::vector<double>& sub_sum, double target) {
  const std::int64_t blocks = static_cast<std::int64_t>(block_sum.size());
  double before = 0;
  std::int64_t b = 0;
  while (b + 1 < blocks && before + block_sum[static_cast<std::size_t>(b)] <= target)
    before += block_sum[static_cast<std::size_t>(b++)];
  const double local = target - before;
  const std::int64_t sub_end = std::min<std::int64_t>(static_cast<std::int64_t>(sub_sum.size()), (b + 1) * kSubs);
  const std::int64_t subs = sub_end - b * kSubs;
  const double* sums = sub_sum.data() + b * kSubs;
  double before_sub = 0;
  std::int64_t v = 0;
  while (v + 1 < subs && before_sub + sums[v] <= local) before_sub += sums[v++];
  return {b * kSubs + v, local - before_sub};
}

/// Blocks' sums from the sub-blocks' (in order), and the total from the blocks' (in order).
double block_sums(const std::vector<double>& sub_sum, std::vector<double>& block_sum) {
  const std::size_t subs = sub_sum.size();
  block_sum.assign((subs + kSubs - 1) / kSubs, 0.0);
  for (std::size_t b = 0; b < block_sum.size(); ++b) {
    double s = 0;
    for (std::size_t u = b * kSubs; u < std::min(subs, (b + 1) * kSubs); ++u) s += sub_sum[u];
    block_sum[b] = s;
  }
  double total = 0;
  for (double s : block_sum) total += s;
  return total;
}

/// One process, all the points on the host; `weights` nullptr (unweighted) or checked.
std::vector<float> seed_host(const float* X, int points, int dim, int k, std::uint64_t seed,
                             const std::atomic<bool>* interrupt, const double* weights = nullptr) {
  detail::Rng64 rng(seed);
  double weight_total = 0;  // the weights' sum in point order
  if (weights != nullptr)
    for (int i = 0; i < points; ++i) weight_total += weights[i];
  // a uniform index, or with weights one proportional to them
  auto first = [&] {
    return weights != nullptr ? weighted_index(rng, weights, points, weight_total) : detail::uniform_index(rng, points);
  };
  std::vector<float> C(count(k, dim));
  Distances D(X, points, dim, weights);
  std::vector<double> between(static_cast<std::size_t>(k));  // ||c_j - c_t||^2, j < t
  const int subs = (points + kSeedSub - 1) / kSeedSub;
  const int blocks = (points + kSeedBlock - 1) / kSeedBlock;
  std::vector<double> sub_sum(static_cast<std::size_t>(subs)), block_sum;
  int chosen = first();
  for (int t = 0;; ++t) {
    check_interrupt(interrupt);
    const float* c = X + count(chosen, dim);
    std::copy(c, c + dim, C.begin() + static_cast<std::ptrdiff_t>(count(t, dim)));
    if (t + 1 == k) break;
    for (int j = 0; j < t; ++j) between[static_cast<std::size_t>(j)] = detail::squared_distance(C.data() + count(j, dim), c, dim);
      // per block, so the result does not depend on the number of threads
#pragma omp parallel for schedule(dynamic, 1) if (blocks > 1)
    for (int b = 0; b < blocks; ++b) {
      const int end = std::min(points, (b + 1) * kSeedBlock);
      if (!D.update(b * kSeedBlock, end, c, t, between)) continue;
      for (int u = b * kSubs, i0 = b * kSeedBlock; i0 < end; ++u, i0 += kSeedSub)
        sub_sum[static_cast<std::size_t>(u)] = D.sum(i0, std::min(end, i0 + kSeedSub));
    }
    const double total = block_sums(sub_sum, block_sum);
    const double u = detail::uniform01(rng);
    if (!(total > 0) || !std::isfinite(total)) {  // every point (of positive weight) is a centroid already
      chosen = first();
      continue;
    }
    const SubTarget at = walk_blocks(block_sum, sub_sum, u * total);
    const int i0 = static_cast<int>(at.sub) * kSeedSub, i1 = std::min(points, i0 + kSeedSub);
    chosen = D.walk(i0, i1, at.local);
    // rounding left the target past the sub-block's end: the last point with D^2 > 0 before it
    // (else the first after it; total > 0, so one exists)
    if (chosen < 0) chosen = D.last_positive(i1 - 1);
    if (chosen < 0) chosen = D.first_positive(i1 - 1);
  }
  return C;
}

/// The group's number of points, after every rank checked the same things of its rows X (host,
/// kmeans_rows of that total) -- sizes, the row split, finiteness -- agreed over `comm` (MPI), so
/// a bad value in one rank's rows ends them all.
std::int64_t checked_rank_rows(const float* X, int points, int dim, int k, runtime::Communicator& comm) {
  const std::int64_t total = comm.sum(static_cast<std::int64_t>(points));
  runtime::agreed(&comm, [&] {
    detail::check_sizes(total, dim, k);
    if (total >= (std::int64_t{1} << 31)) throw InvalidInput("kmeans++: more than 2^31 - 1 points");
    const RowRange mine = kmeans_rows(total, comm.size(), comm.rank());
    if (mine.count != points)
      throw InvalidInput("kmeans++: rank " + std::to_string(comm.rank()) + " holds " + std::to_string(points) +
                         " points, kmeans_rows gives it " + std::to_string(mine.count));
    detail::check_finite(X, count(points, dim), dim, "X", mine.first);
  });
  return total;
}

/// One rank of an mpi() group: X its rows (kmeans_rows), comm over host buffers (MPI).
std::vector<float> seed_ranks(const float* X, int points, int dim, int k, std::uint64_t seed,
                              runtime::Communicator& comm, const std::atomic<bool>* interrupt) {
  const int P = comm.size(), me = comm.rank();
  const std::int64_t total_points = checked_rank_rows(X, points, dim, k, comm);
  const int N = static_cast<int>(total_points);
  std::vector<RowRange> ranges(static_cast<std::size_t>(P));
  int most_subs = 0;
  for (int r = 0; r < P; ++r) {
    ranges[static_cast<std::size_t>(r)] = kmeans_rows(N, P, r);
    most_subs = std::max(most_subs, (ranges[static_cast<std::size_t>(r)].count + kSeedSub - 1) / kSeedSub);
  }
  const RowRange mine = ranges[static_cast<std::size_t>(me)];
  auto owner = [&](std::int64_t point) {
    for (int r = 0; r < P; ++r)
      if (point < ranges[static_cast<std::size_t>(r)].first + ranges[static_cast<std::size_t>(r)].count) return r;
    return P - 1;
  };

  detail::Rng64 rng(seed);
  std::vector<float> C(count(k, dim));
  Distances D(X, points, dim);
  std::vector<double> between(static_cast<std::size_t>(k));
  const int my_subs = (points + kSeedSub - 1) / kSeedSub;
  std::vector<double> my_sums(static_cast<std::size_t>(std::max(1, most_subs)), 0.0);
  std::vector<double> gathered(my_sums.size() * static_cast<std::size_t>(P));
  std::vector<double> sub_sum(static_cast<std::size_t>((N + kSeedSub - 1) / kSeedSub)), block_sum;
  std::int64_t chosen = detail::uniform_index(rng, N);
  for (int t = 0;; ++t) {
    // an interrupt seen by any rank stops all of them
    const double stop = interrupt != nullptr && interrupt->load(std::memory_order_relaxed) ? 1.0 : 0.0;
    if (comm.max(stop) > 0)
      throw runtime::Agreed<Interrupted>("interrupted: the K-means run was stopped at the caller's request");
    // the chosen point from the rank that holds it
    std::vector<float> c(static_cast<std::size_t>(dim));
    const int root = owner(chosen);
    if (root == me) std::copy_n(X + count(chosen - mine.first, dim), dim, c.begin());
    comm.broadcast(c.data(), c.size() * sizeof(float), root, nullptr);
    std::copy(c.begin(), c.end(), C.begin() + static_cast<std::ptrdiff_t>(count(t, dim)));
    if (t + 1 == k) break;
    for (int j = 0; j < t; ++j)
      between[static_cast<std::size_t>(j)] = detail::squared_distance(C.data() + count(j, dim), c.data(), dim);
#pragma omp parallel for schedule(dynamic, 1) if (my_subs > 32)
    for (int u = 0; u < my_subs; ++u) {
      const int i0 = u * kSeedSub, i1 = std::min(points, i0 + kSeedSub);
      if (D.update(i0, i1, c.data(), t, between)) my_sums[static_cast<std::size_t>(u)] = D.sum(i0, i1);
    }
    comm.allgather(my_sums.data(), gathered.data(), my_sums.size() * sizeof(double), nullptr);
    for (int r = 0; r < P; ++r) {  // the group's sub-block sums in point order
      const RowRange& range = ranges[static_cast<std::size_t>(r)];
      const int subs = (range.count + kSeedSub - 1) / kSeedSub;
      std::copy_n(gathered.begin() + static_cast<std::ptrdiff_t>(r) * static_cast<std::ptrdiff_t>(my_sums.size()), subs,
                  sub_sum.begin() + range.first / kSeedSub);
    }
    const double total = block_sums(sub_sum, block_sum);
    const double u = detail::uniform01(rng);
    if (!(total > 0) || !std::isfinite(total)) {
      chosen = detail::uniform_index(rng, N);
      continue;
    }
    const SubTarget at = walk_blocks(block_sum, sub_sum, u * total);
    const std::int64_t i0 = at.sub * kSeedSub, i1 = std::min<std::int64_t>(N, i0 + kSeedSub);
    // the holder of the sub-block walks its points; the others offer nothing (-1)
    double found = -1;
    if (owner(i0) == me) {
      const int local = D.walk(static_cast<int>(i0 - mine.first), static_cast<int>(i1 - mine.first), at.local);
      if (local >= 0) found = static_cast<double>(local + mine.first);
    }
    found = comm.max(found);
    if (found < 0) {  // past the sub-block's end: the last point before with D^2 > 0, else the first after
      const int last = D.last_positive(static_cast<int>(std::min<std::int64_t>(i1 - 1 - mine.first, points - 1)));
      const double before = i1 - 1 >= mine.first && last >= 0 ? static_cast<double>(last + mine.first) : -1;
      found = comm.max(before);
      if (found < 0) {
        const int first = D.first_positive(static_cast<int>(std::max<std::int64_t>(i1 - 1 - mine.first, -1)));
        const double after = first >= 0 ? -static_cast<double>(first + mine.first) : -static_cast<double>(N);
        found = -comm.max(after);
      }
    }
    chosen = static_cast<std::int64_t>(found);
  }
  return C;
}

}  // namespace

std::vector<float> kmeans_plus_plus(const float* X, int points, int dim, int k, std::uint64_t seed, Backend backend,
                                    CUstream_st* stream, const std::atomic<bool>* interrupt, const double* weights) {
  detail::check_sizes(points, dim, k);
  detail::check_finite(X, count(points, dim), dim, "X");
  detail::check_weights(weights, points, "kmeans++");
  // weighted: on the host whatever the backend (kmeans.hpp), the cpu's centroids
  if (weights != nullptr) return seed_host(X, points, dim, k, seed, interrupt, weights);
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
  return seed_host(X, points, dim, k, seed, interrupt);
}

std::vector<float> kmeans_plus_plus(const float* X, int points, int dim, int k, std::uint64_t seed,
                                    const runtime::Where& where, runtime::Memory memory,
                                    const std::atomic<bool>* interrupt, const double* weights) {
  if (weights != nullptr && where.kind() == runtime::Where::Kind::group)
    throw Unavailable("kmeans++: sample weights are not supported on a group (gpus() or mpi()): draw the weighted "
                      "start alone, on the host or one device");
  if (memory == runtime::Memory::device) {
    if (where.kind() != runtime::Where::Kind::context)
      throw InvalidInput("kmeans++: points in device memory need Where(context)");
    detail::check_sizes(points, dim, k);
    detail::check_on_device(X, points, where.context()->device(), "the points (Memory::device)");
    runtime::DeviceScope scope(where.context()->device());
    CUstream_st* const stream = where.context()->stream();
    const detail::PointScan scan = detail::kmeans_scan(X, count(points, dim), stream);
    if (scan.first_nonfinite >= 0) detail::throw_nonfinite("X", static_cast<std::size_t>(scan.first_nonfinite), dim);
    if (weights != nullptr) {  // weighted: drawn on the host (kmeans.hpp), from a copy of the points
      detail::check_weights(weights, points, "kmeans++");
      std::vector<float> host(count(points, dim));
      cuda::copy_to_host(host.data(), X, host.size() * sizeof(float), stream);
      return seed_host(host.data(), points, dim, k, seed, interrupt, weights);
    }
    return detail::kmeans_plus_plus_device(X, points, dim, k, seed, kSeedBlock, kSeedSub, stream);
  }
  switch (where.kind()) {
    case runtime::Where::Kind::host:
      return kmeans_plus_plus(X, points, dim, k, seed, Backend::cpu, nullptr, interrupt, weights);
    case runtime::Where::Kind::context: {
      runtime::DeviceScope scope(where.context()->device());
      return kmeans_plus_plus(X, points, dim, k, seed, Backend::cuda, where.context()->stream(), interrupt, weights);
    }
    case runtime::Where::Kind::group: {
      runtime::DeviceGroup& group = *where.group();
      if (!group.spans_processes()) {  // one process, X every point: each member's rows to its GPU
        detail::check_sizes(points, dim, k);
        detail::check_finite(X, count(points, dim), dim, "X");
        std::vector<cuda::DeviceBuffer<float>> rows;
        std::vector<const float*> member_X;
        rows.reserve(static_cast<std::size_t>(group.local_members()));
        for (int m = 0; m < group.local_members(); ++m) {
          const runtime::DeviceGroup::Member& me = group.member(m);
          runtime::DeviceScope scope(me.device);
          const RowRange r = kmeans_rows(points, group.size(), me.rank);
          rows.emplace_back(count(r.count, dim));
          if (r.count > 0)
            cuda::copy_to_device(rows.back().data(), X + count(r.first, dim), count(r.count, dim) * sizeof(float),
                                 me.context->stream());
          member_X.push_back(rows.back().data());
        }
        return detail::kmeans_plus_plus_members(member_X, points, dim, k, seed, group);
      }
      runtime::Communicator* host = group.host_communicator();
      if (host == nullptr) throw InvalidInput("kmeans++: the group has no host communicator");
      if (group.memory() != runtime::Memory::device) return seed_ranks(X, points, dim, k, seed, *host, interrupt);
      // this rank's GPU: its rows checked as seed_ranks checks them, then copied there
      const std::int64_t total = checked_rank_rows(X, points, dim, k, *host);
      const runtime::DeviceGroup::Member& me = group.member(0);
      runtime::DeviceScope scope(me.device);
      cuda::DeviceBuffer<float> rows;
      runtime::agreed(host, [&] {  // too little device memory on one rank ends them all
        rows = cuda::DeviceBuffer<float>(count(points, dim));
        if (points > 0) cuda::copy_to_device(rows.data(), X, count(points, dim) * sizeof(float), me.context->stream());
      });
      return detail::kmeans_plus_plus_members({rows.data()}, total, dim, k, seed, group);
    }
  }
  throw InvalidInput("kmeans++: unknown Where");
}

std::vector<float> kmeans_plus_plus(const std::vector<const float*>& member_X, std::int64_t points, int dim, int k,
                                    std::uint64_t seed, runtime::DeviceGroup& group) {
  if (group.memory() != runtime::Memory::device)
    throw InvalidInput("kmeans++: member_X is for a group of GPUs (DeviceGroup::gpus or mpi(Memory::device))");
  if (member_X.size() != static_cast<std::size_t>(group.local_members()))
    throw InvalidInput("kmeans++: " + std::to_string(member_X.size()) + " point arrays for " +
                       std::to_string(group.local_members()) + " members");
  detail::check_sizes(points, dim, k);
  auto scan_members = [&] {  // finiteness on each member's GPU
    for (int m = 0; m < group.local_members(); ++m) {
      const runtime::DeviceGroup::Member& me = group.member(m);
      runtime::DeviceScope scope(me.device);
      const RowRange r = kmeans_rows(points, group.size(), me.rank);
      detail::check_on_device(member_X[static_cast<std::size_t>(m)], r.count, me.device,
                              "member " + std::to_string(m) + "'s points (member_X[" + std::to_string(m) + "])");
      const detail::PointScan scan = detail::kmeans_scan(member_X[static_cast<std::size_t>(m)],
                                                         count(r.count, dim), me.context->stream());
      if (scan.first_nonfinite >= 0)
        detail::throw_nonfinite("X", static_cast<std::size_t>(scan.first_nonfinite), dim, r.first);
    }
  };
  if (group.spans_processes()) {  // a bad value on one rank ends every rank the same way
    runtime::Communicator* host = group.host_communicator();
    if (host == nullptr) throw InvalidInput("kmeans++: the group has no host communicator");
    runtime::agreed(host, scan_members);
  } else {
    scan_members();
  }
  return detail::kmeans_plus_plus_members(member_X, points, dim, k, seed, group);
}

}  // namespace tcsolve::cluster
