// The C API's K-means (tcsolve.h, "K-means"): tcsolveKmeans over the library
// (tcsolve/cluster/kmeans.hpp) exactly as `tcsolve kmeans` calls it -- the start is the caller's
// centers or cluster::kmeans_plus_plus(X, seed) on the handle's backend (bitwise the same centroids
// on both), then cluster::kmeans with the variant, max_iterations and tol (the assignment fused
// where it runs, as the CLI's default) -- so its labels, centroids, inertia and iterations are the
// CLI's for the same data and options. Where it runs: Where() on a cpu handle, Where(the handle's
// cuda::Context) on a cuda handle (its device, whatever device the calling thread has current, and
// its stream). On a cuda handle each array is host or device memory (cuda_path.hpp, on_device):
// device points are read where they are (runtime::Memory::device; rows ldx > d apart packed on the
// device first), never copied to the host; centers and labels are read and written where they
// are. Row-major n x d points are the library's dim x N column-major layout: nothing is
// transposed. tcsolveInterrupt stops a cpu tcsolveKmeans or tcsolveKmeansPlusPlus at its next
// check (each k-means++ draw, each iteration, the cpu distance GEMMs' columns), a cuda
// tcsolveKmeans before its next iteration: TCSOLVE_STATUS_INTERRUPTED, outputs unspecified.
// tcsolveKmeansWeighted is tcsolveKmeans with sample weights (host memory), passed to the
// library's weighted k-means++ and Lloyd (KmeansOptions::weights); NULL weights is tcsolveKmeans.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "arguments.hpp"
#include "context.hpp"
#include "cuda_path.hpp"
#include "tcsolve.h"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/where.hpp"

namespace tcsolve::capi {
namespace {

using runtime::Memory;
static_assert(sizeof(int) == sizeof(std::int32_t) && std::is_signed_v<int>, "labels are int32_t in C, int in C++");

/// The library's options from the C parameters (backend: the handle's).
cluster::KmeansOptions kmeans_options(const tcsolveKmeansParams_t& p, Backend backend) {
  cluster::KmeansOptions o;
  o.variant = variant_argument("params->variant", p.variant);
  o.backend = backend;
  if (p.max_iterations < 1)
    throw InvalidInput("params->max_iterations: " + std::to_string(p.max_iterations) + " < 1");
  o.max_iterations = p.max_iterations;
  if (!(p.tol >= 0) || !std::isfinite(p.tol))
    throw InvalidInput("params->tol: " + number(p.tol) + " is not a finite number >= 0");
  o.tol = p.tol;
  if (p.init != 0 && p.init != 1)
    throw InvalidInput("params->init: " + std::to_string(p.init) + " is not 0 (centers given) or 1 (k-means++)");
  return o;
}

/// `rows` rows of `cols` floats, `ld` apart, packed (ld = cols).
std::vector<float> packed(const float* data, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    std::copy_n(data + i * ld, cols, out.begin() + i * cols);
  return out;
}

/// The shapes and pointers of tcsolveKmeans and tcsolveKmeansPlusPlus, checked.
void check_arguments(std::int64_t n, std::int64_t d, const float* X, std::int64_t ldx, std::int64_t k,
                     const float* centers, std::int64_t ldc) {
  if (n < 1) throw InvalidInput("n: " + text(n) + " < 1 (no points)");
  if (d < 1) throw InvalidInput("d: " + text(d) + " < 1");
  if (k < 1) throw InvalidInput("k: " + text(k) + " < 1");
  if (k > n) throw InvalidInput("k: " + text(k) + " exceeds the number of points n = " + text(n));
  leading_dimension("ldx", ldx, d, "d");
  leading_dimension("ldc", ldc, d, "d");
  not_null("X", X);
  not_null("centers", centers);
  as_int("n", n);
  as_int("d", d);
  as_int("k", k);
  as_int("n d", n * d);
  as_int("k d", k * d);
}

/// Where a call of a handle runs: the host (cpu handle) or the handle's context, whose device is
/// made current for the call (the caller's restored after), so that the device arrays made here
/// land there.
struct Place {
  explicit Place(tcsolveContext& h) : handle(h), cuda(h.backend == Backend::cuda) {
    if (cuda) scope.emplace(h.context.device());
  }
  runtime::Where where() const { return cuda ? runtime::Where(handle.context) : runtime::Where(); }
  /// Whether the array argument `p` is device memory (cuda handles only; InvalidInput for another
  /// device's memory).
  bool on_device(const char* name, const void* p) const {
    return cuda && capi::on_device(name, p, handle.context.device());
  }
  tcsolveContext& handle;
  const bool cuda;
  std::optional<runtime::DeviceScope> scope;
};

/// X as the library reads it: n packed rows of d floats (dim x N column-major), where X is --
/// X itself when ldx = d, else a packed copy in the same memory (host, or the handle's device).
struct Points {
  const float* data = nullptr;
  Memory memory = Memory::host;
  std::vector<float> host;
  cuda::DeviceBuffer<float> device;
};

Points points_argument(const Place& place, std::int64_t n, std::int64_t d, const float* X, std::int64_t ldx) {
  Points p;
  p.memory = place.on_device("X", X) ? Memory::device : Memory::host;
  if (ldx == d) {
    p.data = X;
  } else if (p.memory == Memory::host) {
    p.host = packed(X, n, d, ldx);
    p.data = p.host.data();
  } else {  // on the device: rows packed there, no host copy
    p.device = cuda::DeviceBuffer<float>(static_cast<std::size_t>(n * d));
    copy_rows(place.handle.context, p.device.data(), d * sizeof(float), X, ldx * sizeof(float), d * sizeof(float),
              static_cast<std::size_t>(n));
    p.data = p.device.data();
  }
  return p;
}

/// The k x d centers (row-major, ldc) packed on the host, read where they are.
std::vector<float> read_centers(const Place& place, bool device, const float* centers, std::int64_t k,
                                std::int64_t d, std::int64_t ldc) {
  if (!device) return packed(centers, k, d, ldc);
  std::vector<float> out(static_cast<std::size_t>(k * d));
  copy_rows(place.handle.context, out.data(), d * sizeof(float), centers, ldc * sizeof(float), d * sizeof(float),
            static_cast<std::size_t>(k));
  return out;
}

/// Writes the d x k column-major centroids `c` into the k x d centers (row-major, ldc) where they are.
void write_centers(const Place& place, bool device, const std::vector<float>& c, float* centers, std::int64_t k,
                   std::int64_t d, std::int64_t ldc) {
  if (!device) {
    for (std::int64_t j = 0; j < k; ++j) std::copy_n(c.begin() + j * d, d, centers + j * ldc);
    return;
  }
  copy_rows(place.handle.context, centers, ldc * sizeof(float), c.data(), d * sizeof(float), d * sizeof(float),
            static_cast<std::size_t>(k));
}

int stop_code(cluster::KmeansStop stop) {
  switch (stop) {
    case cluster::KmeansStop::labels_unchanged: return 0;
    case cluster::KmeansStop::tolerance: return 1;
    case cluster::KmeansStop::max_iterations: return 2;
  }
  return 2;
}

}  // namespace
}  // namespace tcsolve::capi

using namespace tcsolve;
using namespace tcsolve::capi;

extern "C" {

void tcsolveKmeansParamsDefault(tcsolveKmeansParams_t* params) {
  if (!params) return;
  params->variant = static_cast<int>(Variant::auto_);
  params->max_iterations = 300;
  params->tol = 0.0;
  params->init = 1;
  params->seed = 1;
}

}  // extern "C"

namespace {

/// tcsolveKmeans and tcsolveKmeansWeighted (`name` in messages): `weights` n host values or NULL.
tcsolveStatus_t kmeans_call(const char* name, tcsolveHandle_t h, const tcsolveKmeansParams_t* params, int64_t n,
                            int64_t d, const float* X, int64_t ldx, int64_t k, float* centers, int64_t ldc,
                            int32_t* labels, const double* weights, tcsolveKmeansInfo_t* info) {
  if (const tcsolveStatus_t s = check_handle(h, name)) return s;
  h->interrupt.store(false);  // an interrupt before this call does not stop it
  return guarded(h, name, [&] {
    tcsolveKmeansParams_t p;
    tcsolveKmeansParamsDefault(&p);
    if (params) p = *params;
    cluster::KmeansOptions options = kmeans_options(p, h->backend);
    options.gemm.interrupt = &h->interrupt;  // every iteration; the cpu distance GEMMs poll it too
    check_arguments(n, d, X, ldx, k, centers, ldc);
    const Place place(*h);
    if (weights != nullptr && place.on_device("weights", weights))
      throw InvalidInput("weights: device memory; the sample weights are read from host memory");
    options.weights = weights;  // checked by the library (finite, >= 0, not all 0)
    const bool centers_on_device = place.on_device("centers", centers);
    const bool labels_on_device = labels != nullptr && place.on_device("labels", labels);
    const Points x = points_argument(place, n, d, X, ldx);
    options.points_memory = x.memory;
    const int points = static_cast<int>(n), dim = static_cast<int>(d), clusters = static_cast<int>(k);
    tcsolveKmeansInfo_t out{};
    std::vector<float> start;
    if (p.init == 0) {
      start = read_centers(place, centers_on_device, centers, k, d, ldc);
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      start = cluster::kmeans_plus_plus(x.data, points, dim, clusters, p.seed, place.where(), x.memory,
                                        &h->interrupt, weights);  // bitwise the same on either backend
      out.seeding_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    const cluster::KmeansResult r = cluster::kmeans(x.data, points, dim, start, options, place.where());

    write_centers(place, centers_on_device, r.centroids, centers, k, d, ldc);
    if (labels_on_device)
      cuda::copy_to_device(labels, r.labels.data(), r.labels.size() * sizeof(int), h->context.stream());
    else if (labels)
      std::copy(r.labels.begin(), r.labels.end(), labels);
    out.iterations = r.iterations;
    out.stop = stop_code(r.stop);
    out.resolved_variant = static_cast<int>(r.resolved_variant);
    out.empty_clusters = r.empty_clusters;
    out.inertia = r.inertia;
    out.time_s = r.time_s;
    out.time_per_iteration_s = r.time_per_iteration_s;
    if (info) *info = out;
    return TCSOLVE_STATUS_SUCCESS;
  });
}

}  // namespace

extern "C" {

tcsolveStatus_t tcsolveKmeans(tcsolveHandle_t h, const tcsolveKmeansParams_t* params, int64_t n, int64_t d,
                              const float* X, int64_t ldx, int64_t k, float* centers, int64_t ldc, int32_t* labels,
                              tcsolveKmeansInfo_t* info) {
  return kmeans_call("tcsolveKmeans", h, params, n, d, X, ldx, k, centers, ldc, labels, nullptr, info);
}

tcsolveStatus_t tcsolveKmeansWeighted(tcsolveHandle_t h, const tcsolveKmeansParams_t* params, int64_t n, int64_t d,
                                      const float* X, int64_t ldx, int64_t k, float* centers, int64_t ldc,
                                      int32_t* labels, const double* weights, tcsolveKmeansInfo_t* info) {
  return kmeans_call("tcsolveKmeansWeighted", h, params, n, d, X, ldx, k, centers, ldc, labels, weights, info);
}

tcsolveStatus_t tcsolveKmeansPlusPlus(tcsolveHandle_t h, int64_t n, int64_t d, const float* X, int64_t ldx, int64_t k,
                                      uint64_t seed, float* centers, int64_t ldc) {
  if (const tcsolveStatus_t s = check_handle(h, "tcsolveKmeansPlusPlus")) return s;
  h->interrupt.store(false);  // an interrupt before this call does not stop it
  return guarded(h, "tcsolveKmeansPlusPlus", [&] {
    check_arguments(n, d, X, ldx, k, centers, ldc);
    const Place place(*h);
    const bool centers_on_device = place.on_device("centers", centers);
    const Points x = points_argument(place, n, d, X, ldx);
    const std::vector<float> start =
        cluster::kmeans_plus_plus(x.data, static_cast<int>(n), static_cast<int>(d), static_cast<int>(k), seed,
                                  place.where(), x.memory, &h->interrupt);
    write_centers(place, centers_on_device, start, centers, k, d, ldc);
    return TCSOLVE_STATUS_SUCCESS;
  });
}

}  // extern "C"
