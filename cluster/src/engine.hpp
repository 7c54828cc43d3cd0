// The engines of K-means' Lloyd loop (tcsolve::cluster, kmeans.cpp): the state of one member's
// run on one backend -- CpuEngine on host arrays, CudaEngine on device arrays in a cuda::Context
// -- and the one switch between them (make_engine). A member holds a share of the points (all of
// them when it runs alone); its engine assigns them, accumulates its clusters' sums and counts,
// sums those over the group through the member's Communicator (nullptr: alone), and then every
// member finalizes the same centroids. Nothing outside cluster/src includes this.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/runtime/communicator.hpp"

namespace tcsolve::cuda {
class Context;
}

namespace tcsolve::cluster::detail {

/// The GEMMs' resolved variants and notes over a run.
class GemmRecord {
 public:
  void add(const GemmInfo& info);
  Variant first() const { return first_; }
  std::string name() const;
  const std::string& note() const { return note_; }

 private:
  bool any_ = false;
  Variant first_ = Variant::fp32_simt;
  std::set<std::string> names_;
  std::string note_;
};

/// One member's points and place: X (dim x points, column-major) holds the group's points
/// first .. first + points - 1; in host memory, or (cuda) in the context device's memory.
struct Share {
  const float* X = nullptr;
  int points = 0;
  std::int64_t first = 0;
  runtime::Memory memory = runtime::Memory::host;
  runtime::Communicator* comm = nullptr;  ///< nullptr: the member is alone
  /// The points' sample weights (host memory, `points` values, checked; KmeansOptions::weights);
  /// nullptr: unweighted. Only a member alone has them (groups refuse weights).
  const double* weights = nullptr;
};

class Engine {
 public:
  virtual ~Engine() = default;
  /// One assignment of the member's points with the current centroids; returns the number of
  /// its labels that changed (the caller sums it over the group).
  virtual long long assign(const KmeansOptions& options, GemmRecord& record) = 0;
  /// Runs the assignment's GEMM path and the update's kernels once on a few points into scratch
  /// (library handles, first kernel loads), so that iterations time the work alone.
  /// cuda: also scales and splits the points once where options.prepare_points applies.
  virtual void warm_up(const KmeansOptions& /*options*/) {}
  /// Whether the points were prepared (KmeansResult::points_prepared).
  virtual bool prepared() const { return false; }
  /// One update from the current labels: the sums and counts of every member's points (summed
  /// over the group), then the same centroids on every member; the counts (k) and squared
  /// movements (k) come back. Weighted (Share::weights): the weighted sums over the weights'
  /// sums, and a cluster whose weights sum to 0 comes back with count 0 (empty, centroid kept).
  /// inertia() is then weighted too.
  virtual void update(std::vector<int>& counts, std::vector<double>& shift2) = 0;
  /// The member's labels, the centroids, and sum ||x - c||^2 over the member's points.
  virtual std::vector<int> labels() const = 0;
  virtual std::vector<float> centroids() const = 0;
  virtual double inertia() const = 0;
};

/// The engine of `backend` (cpu or cuda) for the member's share, starting from `init` (dim x k,
/// host). cuda: in `context` (its device, its stream); a host share is copied to the device, a
/// device share used where it is.
std::unique_ptr<Engine> make_engine(Backend backend, const Share& share, int dim, const std::vector<float>& init,
                                    int chunk, bool fused, cuda::Context* context);

/// Data far from 1 in magnitude runs scaled by 2^e (kmeans.hpp, "Scale"): e for the largest
/// magnitude m of X and init (0 when 2^-40 <= m < 2^41, and for m = 0).
int scale_exponent_for(double m);

}  // namespace tcsolve::cluster::detail
