// The C API's K-means (tcsolve.h, "K-means"): tcsolveKmeans over the demo library
// (tcsolve/cluster/kmeans.hpp) exactly as `tcsolve kmeans` calls it -- the start is the caller's
// centers or cluster::kmeans_plus_plus(X, seed) on the handle's backend (bitwise the same centroids
// on both), then cluster::kmeans with the variant, the handle's backend, max_iterations and tol
// (the assignment fused where it runs, as the CLI's default) -- so its labels, centroids,
// inertia and iterations are the CLI's for the same data and options. Row-major n x d points are the demo's dim x N
// column-major layout: nothing is transposed. tcsolveInterrupt stops a cpu tcsolveKmeans or
// tcsolveKmeansPlusPlus at its next check (each k-means++ draw, each iteration, the cpu distance
// GEMMs' columns): TCSOLVE_STATUS_INTERRUPTED, outputs unspecified.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "context.hpp"
#include "tcsolve.h"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::capi {
namespace {

/// The demo's options from the C parameters (backend: the handle's).
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

/// The shapes and pointers of tcsolveKmeans and tcsolveKmeansPlusPlus, checked; X packed when
/// its rows are not (the demo reads dim x N, column-major, ld = dim), into `storage`.
const float* checked_points(std::int64_t n, std::int64_t d, const float* X, std::int64_t ldx, std::int64_t k,
                            const float* centers, std::int64_t ldc, std::vector<float>& storage) {
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
  if (ldx == d) return X;
  storage = packed(X, n, d, ldx);
  return storage.data();
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

tcsolveStatus_t tcsolveKmeans(tcsolveHandle_t h, const tcsolveKmeansParams_t* params, int64_t n, int64_t d,
                              const float* X, int64_t ldx, int64_t k, float* centers, int64_t ldc, int32_t* labels,
                              tcsolveKmeansInfo_t* info) {
  if (const tcsolveStatus_t s = check_handle(h, "tcsolveKmeans")) return s;
  h->interrupt.store(false);  // an interrupt before this call does not stop it
  return guarded(h, "tcsolveKmeans", [&] {
    tcsolveKmeansParams_t p;
    tcsolveKmeansParamsDefault(&p);
    if (params) p = *params;
    cluster::KmeansOptions options = kmeans_options(p, h->backend);
    options.stream = h->context.stream();  // the handle's stream (tcsolveSetStream)
    options.gemm.interrupt = &h->interrupt;  // cpu: the distance GEMMs poll it (tcsolveInterrupt)
    std::vector<float> x_packed;
    const float* x = checked_points(n, d, X, ldx, k, centers, ldc, x_packed);
    const int points = static_cast<int>(n), dim = static_cast<int>(d), clusters = static_cast<int>(k);
    tcsolveKmeansInfo_t out{};
    std::vector<float> start;
    if (p.init == 0) {
      start = packed(centers, k, d, ldc);
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      start = cluster::kmeans_plus_plus(x, points, dim, clusters, p.seed, h->backend,  // bitwise on either
                                      h->context.stream(), &h->interrupt);
      out.seeding_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    const cluster::KmeansResult r = cluster::kmeans(x, points, dim, start, options);

    for (std::int64_t j = 0; j < k; ++j)
      std::copy_n(r.centroids.begin() + j * d, d, centers + j * ldc);
    if (labels) std::copy(r.labels.begin(), r.labels.end(), labels);
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

tcsolveStatus_t tcsolveKmeansPlusPlus(tcsolveHandle_t h, int64_t n, int64_t d, const float* X, int64_t ldx, int64_t k,
                                      uint64_t seed, float* centers, int64_t ldc) {
  if (const tcsolveStatus_t s = check_handle(h, "tcsolveKmeansPlusPlus")) return s;
  h->interrupt.store(false);  // an interrupt before this call does not stop it
  return guarded(h, "tcsolveKmeansPlusPlus", [&] {
    std::vector<float> x_packed;
    const float* x = checked_points(n, d, X, ldx, k, centers, ldc, x_packed);
    const std::vector<float> start =
        cluster::kmeans_plus_plus(x, static_cast<int>(n), static_cast<int>(d), static_cast<int>(k), seed, h->backend,
                                h->context.stream(), &h->interrupt);
    for (std::int64_t j = 0; j < k; ++j) std::copy_n(start.begin() + j * d, d, centers + j * ldc);
    return TCSOLVE_STATUS_SUCCESS;
  });
}

}  // extern "C"
