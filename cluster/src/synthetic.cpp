// Synthetic blobs by rows on the host (synthetic.hpp): the reference the device path matches
// bitwise. Every value comes from the draws of synthetic_draw.hpp; the points are independent, so
// the loop over them runs in parallel (OpenMP, when the library is built with it).
#include "tcsolve/cluster/synthetic.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "synthetic_draw.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster {

void check_blobs_spec(const BlobsSpec& spec) {
  auto fail = [](const char* field, long long value) {
    throw InvalidInput(std::string("synthetic blobs: ") + field + " must be >= 1, got " +
                       std::to_string(value));
  };
  if (spec.points < 1) fail("points", spec.points);
  if (spec.dim < 1) fail("dim", spec.dim);
  if (spec.clusters < 1) fail("clusters", spec.clusters);
}

namespace detail {

void check_blob_rows(const char* who, const BlobsSpec& spec, std::int64_t begin, std::int64_t count,
                     const void* X) {
  check_blobs_spec(spec);
  if (begin < 0 || count < 0 || begin > spec.points || count > spec.points - begin)
    throw InvalidInput(std::string(who) + ": rows [" + std::to_string(begin) + ", " + std::to_string(begin) +
                       " + " + std::to_string(count) + ") outside the " + std::to_string(spec.points) +
                       " points");
  if (count > 0 && X == nullptr) throw InvalidInput(std::string(who) + ": X is null");
}

}  // namespace detail

namespace {

/// Centres [0, clusters) into `out` (dim x clusters): one draw per coordinate.
void draw_centres(const detail::BlobKeys& keys, int dim, int clusters, float* out) {
#pragma omp parallel for schedule(static)
  for (int j = 0; j < clusters; ++j)
    for (int d = 0; d < dim; ++d)
      out[static_cast<std::size_t>(j) * static_cast<std::size_t>(dim) + static_cast<std::size_t>(d)] =
          detail::centre_value(keys, dim, j, d);
}

}  // namespace

std::vector<float> blob_centres(const BlobsSpec& spec) {
  check_blobs_spec(spec);
  std::vector<float> centres(static_cast<std::size_t>(spec.dim) * static_cast<std::size_t>(spec.clusters));
  draw_centres(detail::blob_keys(spec.seed), spec.dim, spec.clusters, centres.data());
  return centres;
}

void blob_rows(const BlobsSpec& spec, std::int64_t begin, std::int64_t count, float* X, int* truth) {
  detail::check_blob_rows("blob_rows", spec, begin, count, X);
  const detail::BlobKeys keys = detail::blob_keys(spec.seed);
  const int dim = spec.dim;
  // The centres drawn once into a table when it is no larger than the rows (a fifth of the draws
  // saved), else per value as the kernel does; the same numbers either way.
  std::vector<float> table;
  if (spec.clusters <= count) {
    table.resize(static_cast<std::size_t>(dim) * static_cast<std::size_t>(spec.clusters));
    draw_centres(keys, dim, spec.clusters, table.data());
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t point = begin + i;
    const int label = detail::point_label(keys, point, spec.clusters);
    if (truth) truth[i] = label;
    float* x = X + i * dim;
    const float* centre = table.empty() ? nullptr : table.data() + static_cast<std::size_t>(label) * dim;
    for (int d = 0; d < dim; ++d)
      x[d] = detail::blob_value(keys, point, centre ? centre[d] : detail::centre_value(keys, dim, label, d),
                                dim, d);
  }
}

}  // namespace tcsolve::cluster
