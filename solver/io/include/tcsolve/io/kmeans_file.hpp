// K-means data and output files (docs/architecture.md, "HDF5 files"): X (points x dim) and optional
// init (k x dim) in; labels, centroids and the attribute inertia out. The demos' computation is
// tcsolve::cluster (cluster/); its files are read and written here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tcsolve/io/output_file.hpp"

namespace tcsolve {

/// A K-means data file (docs/architecture.md, "HDF5 files"): X (points x dim) and optional init
/// (k x dim), float64 or float32, row-major as h5py writes; held here in FP32, column-major
/// (so X is dim x points, init dim x k: the same element order as the file).
struct KmeansData {
  int points = 0, dim = 0;
  std::vector<float> X;
  std::optional<std::vector<float>> init;
  int init_k = 0;  ///< rows of init (0 without)
};

/// Reads and validates a data file. Throws InvalidInput "<file>: <dataset>: <problem>": missing
/// file, not HDF5, X missing, X not 2-D or empty, a non-float dataset, NaN or inf (position
/// named), a value beyond FP32's range, init not 2-D with dim columns or with no rows.
/// `before_reading_x(points, dim)`, when given, is called once X's shape is known and before its
/// data is read (the CLI checks the memory the run needs there, and may throw).
KmeansData read_kmeans_data(const std::string& path,
                            const std::function<void(std::int64_t, std::int64_t)>& before_reading_x = {});

/// A data file's shape, read without reading X (a distributed run: each rank reads its rows).
struct KmeansShape {
  std::int64_t points = 0;  ///< rows of X
  int dim = 0;              ///< columns of X
  bool has_init = false;
  int init_k = 0;  ///< rows of init (0 without)
};

/// The shapes of X and init, with read_kmeans_data's messages for a missing file, not HDF5, X
/// missing, X or init not 2-D, empty or not float, init without dim columns; no value is read
/// (NaN and inf are found by the readers of the values). Unlike read_kmeans_data it accepts
/// an X of more than 2^31 - 1 values (no process need hold all of it); dim must fit an int.
/// Throws InvalidInput "<file>: <dataset>: <problem>".
KmeansShape read_kmeans_shape(const std::string& path);

/// Rows [begin, begin + count) of X as FP32, dim x count column-major (column i is point
/// begin + i): a hyperslab read of those rows alone, float64 rounded to FP32 as read_kmeans_data
/// does, with its checks (the file and X as read_kmeans_shape; NaN, inf and values beyond FP32's
/// range named at their (row, column) of the whole X). count = 0 reads nothing. Throws
/// InvalidInput, also for begin < 0, count < 0 or begin + count > points.
std::vector<float> read_kmeans_rows(const std::string& path, std::int64_t begin, std::int64_t count);

/// The file's init alone (dim x k column-major; nullopt without one), checked as read_kmeans_data
/// checks it (X's shape included, its values not read). Throws InvalidInput.
std::optional<std::vector<float>> read_kmeans_init(const std::string& path);

/// What `tcsolve kmeans --output` writes beside the labels and centroids.
struct KmeansOutputAttributes {
  double inertia = 0;
  std::string variant, backend;
  int iterations = 0;
};

/// Writes dataset labels (int32, N), centroids (float32, k x dim row-major: the dim x k
/// column-major `centroids`) and the attributes inertia (float64), variant and backend
/// (variable-length UTF-8 strings) and iterations (int32), by the output rule
/// (tcsolve/io/output_file.hpp: never one of options.inputs, an existing regular file only
/// with options.force, a temporary beside `path` renamed over it). Throws InvalidInput.
void write_kmeans_output(const std::string& path, const std::vector<int>& labels,
                         const std::vector<float>& centroids, int k, int dim,
                         const KmeansOutputAttributes& attributes, const OutputOptions& options);

/// A file written by write_kmeans_output, read back (tests, examples).
struct KmeansOutput {
  std::vector<int> labels;
  std::vector<float> centroids;  ///< dim x k, column-major
  int k = 0, dim = 0;
  double inertia = 0;
};
KmeansOutput read_kmeans_output(const std::string& path);

}  // namespace tcsolve
