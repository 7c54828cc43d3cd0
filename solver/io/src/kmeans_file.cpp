// K-means data and output files (docs/architecture.md, "HDF5 files": X, optional init; labels,
// centroids, attribute inertia) through the HDF5 C API, with the conventions of
// system_file.cpp, whose helpers it shares (hdf5_file.hpp):
//   - row-major datasets as h5py writes them: a points x dim dataset has the bytes of the
//     column-major dim x points array the demo uses, so no transposition is needed;
//   - X read whole (read_kmeans_data) or by rows (read_kmeans_rows: a hyperslab of those rows, so
//     each rank of a distributed run reads its own), in blocks of rows widened to FP64 and
//     rounded once to FP32, with the same checks and messages either way;
//   - HDF5's own error printing off; every failure one InvalidInput "<file>: <dataset>: <problem>";
//   - output built in memory (HDF5 core driver), written by the output rule
//     (tcsolve/io/output_file.hpp); nothing is left behind on failure.
#include "tcsolve/io/kmeans_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hdf5_file.hpp"
#include "tcsolve/io/matrix_market.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve {
namespace {

using hdf5::fail;
using hdf5::Handle;
using hdf5::OutputFile;
using hdf5::write_attribute;
using hdf5::write_string_attribute;



std::string shape_text(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return "a scalar";
  std::string s = std::to_string(dims.size()) + "-D (";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? " x " : "") + std::to_string(static_cast<unsigned long long>(dims[i]));
  return s + ")";
}

Handle open_for_reading(const std::string& path) {
  return hdf5::open_for_reading(
      path, "K-means reads datasets X and optionally init from an HDF5 file, as h5py writes them");
}

/// A dataset of `file`, opened after checking it exists and is one; nullopt when absent and not
/// required. `dims` receives its shape, `cls` and `size` its type class and byte size.
std::optional<Handle> open_dataset(hid_t file, const std::string& path, const char* name, bool required,
                                   std::vector<hsize_t>& dims, H5T_class_t& cls, std::size_t& size) {
  const htri_t exists = H5Lexists(file, name, H5P_DEFAULT);
  if (exists < 0) fail(path, name, "cannot be looked up");
  if (exists == 0) {
    if (required) fail(path, name, "dataset missing");
    return std::nullopt;
  }
  {
    Handle object(H5Oopen(file, name, H5P_DEFAULT), H5Oclose);
    if (!object.valid()) fail(path, name, "cannot be opened (dangling link?)");
    if (H5Iget_type(object.get()) != H5I_DATASET) fail(path, name, "not a dataset (a group?)");
  }
  std::optional<Handle> d;
  d.emplace(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  if (!d->valid()) fail(path, name, "cannot be opened");
  Handle type(H5Dget_type(d->get()), H5Tclose);
  Handle space(H5Dget_space(d->get()), H5Sclose);
  if (!type.valid() || !space.valid()) fail(path, name, "cannot read its type or shape");
  cls = H5Tget_class(type.get());
  size = H5Tget_size(type.get());
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail(path, name, "cannot read its shape");
  dims.assign(static_cast<std::size_t>(rank), 0);
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    fail(path, name, "cannot read its shape");
  return d;
}

/// A 2-D float dataset, opened and checked (float64 or float32, 2-D, not empty), not yet read.
struct FloatMatrix {
  Handle dataset;
  hsize_t rows = 0, cols = 0;
};

/// Dataset `name` of `file` as a FloatMatrix; nullopt when absent and not required. Rejects other
/// types, other ranks and empty datasets ("expected <expected>").
std::optional<FloatMatrix> open_matrix(hid_t file, const std::string& path, const char* name, bool required,
                                       const std::string& expected) {
  std::vector<hsize_t> dims;
  H5T_class_t cls = H5T_NO_CLASS;
  std::size_t size = 0;
  std::optional<Handle> d = open_dataset(file, path, name, required, dims, cls, size);
  if (!d) return std::nullopt;
  if (cls != H5T_FLOAT || (size != 4 && size != 8))
    fail(path, name,
         std::string("type ") +
             (cls == H5T_INTEGER ? "integer"
              : cls == H5T_FLOAT ? "float" + std::to_string(size * 8)
                                 : "non-numeric") +
             ", expected float64 or float32");
  if (dims.size() != 2) fail(path, name, shape_text(dims) + ", expected 2-D (" + expected + ")");
  if (dims[0] == 0 || dims[1] == 0) fail(path, name, "empty " + shape_text(dims) + ", expected " + expected);
  return FloatMatrix{std::move(*d), dims[0], dims[1]};
}

/// Refuses a dataset this program cannot hold whole (more than 2^31 - 1 values or rows), or
/// whose columns (dim) do not fit an int when `whole` is false (it is read by rows).
void check_size(const FloatMatrix& m, const std::string& path, const char* name, bool whole) {
  const hsize_t int_max = static_cast<hsize_t>(std::numeric_limits<int>::max());
  const bool too_large =
      whole ? m.rows * m.cols > int_max || m.rows > int_max
            : m.cols > int_max || m.rows > static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max());
  if (too_large) fail(path, name, shape_text({m.rows, m.cols}) + ": too large for this program");
}

/// Rows [begin, begin + count) of m as FP32 in file (row-major) order: count x cols. Read as FP64
/// (float32 widens exactly) in hyperslabs of about kReadBlockValues values and rounded once to
/// FP32; NaN, inf and values beyond FP32's range are refused, named at their (row, column) of the
/// whole dataset.
std::vector<float> read_rows(const FloatMatrix& m, const std::string& path, const char* name, hsize_t begin,
                             hsize_t count) {
  constexpr hsize_t kReadBlockValues = hsize_t{1} << 22;  // 32 MiB of FP64 at a time
  const hsize_t cols = m.cols;
  std::vector<float> out(static_cast<std::size_t>(count * cols));
  const hsize_t block_rows = std::max<hsize_t>(1, kReadBlockValues / cols);
  std::vector<double> buffer(static_cast<std::size_t>(std::min(count, block_rows) * cols));
  for (hsize_t r0 = 0; r0 < count; r0 += block_rows) {
    const hsize_t rows = std::min(block_rows, count - r0);
    const hsize_t start[2] = {begin + r0, 0}, extent[2] = {rows, cols};
    Handle file_space(H5Dget_space(m.dataset.get()), H5Sclose);
    Handle memory_space(H5Screate_simple(2, extent, nullptr), H5Sclose);
    if (!file_space.valid() || !memory_space.valid() ||
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, extent, nullptr) < 0 ||
        H5Dread(m.dataset.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT,
                buffer.data()) < 0)
      fail(path, name, "cannot read the data (damaged file?)");
    float* block = out.data() + static_cast<std::size_t>(r0 * cols);
    for (std::size_t e = 0; e < static_cast<std::size_t>(rows * cols); ++e) {
      const double v = buffer[e];
      block[e] = static_cast<float>(v);
      if (std::isfinite(block[e])) continue;
      const std::string where =
          "(" + std::to_string(begin + r0 + e / cols) + ", " + std::to_string(e % cols) + ")";
      if (std::isnan(v)) fail(path, name, "contains NaN at " + where);
      if (std::isinf(v))
        fail(path, name, std::string("contains ") + (v > 0 ? "inf" : "-inf") + " at " + where);
      char text[32];
      std::snprintf(text, sizeof text, "%.6g", v);  // not std::to_string: 1e200 has 201 digits in %f
      fail(path, name, "value " + std::string(text) + " at " + where + " exceeds FP32's range (3.4e38)");
    }
  }
  return out;
}

/// A 2-D float dataset read whole as FP32 in file (row-major) order: rows x cols. Rejects other
/// types, other ranks, NaN, inf and values beyond FP32's range, naming the (row, column).
std::vector<float> read_matrix(hid_t file, const std::string& path, const char* name, bool required,
                               hsize_t& rows, hsize_t& cols, bool& present, const std::string& expected,
                               const std::function<void(std::int64_t, std::int64_t)>& before_reading = {}) {
  std::optional<FloatMatrix> m = open_matrix(file, path, name, required, expected);
  present = m.has_value();
  if (!present) return {};
  rows = m->rows;
  cols = m->cols;
  check_size(*m, path, name, true);
  if (before_reading) before_reading(static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols));
  return read_rows(*m, path, name, 0, rows);
}

/// X opened and checked, for the readers by rows (no limit on its number of values).
FloatMatrix open_x(hid_t file, const std::string& path) {
  FloatMatrix x = std::move(*open_matrix(file, path, "X", true, "points x dim"));
  check_size(x, path, "X", false);
  return x;
}

/// init's columns must be X's dim.
void check_init_columns(const std::string& path, hsize_t init_rows, hsize_t init_cols, hsize_t dim) {
  if (init_cols != dim)
    fail(path, "init",
         std::to_string(init_rows) + " x " + std::to_string(init_cols) + ", expected k x " +
             std::to_string(dim) + " (X has dim = " + std::to_string(dim) + ")");
}

/// The optional init read whole and checked against X's dim; init_k receives its rows.
std::optional<std::vector<float>> read_init(hid_t file, const std::string& path, hsize_t dim, int& init_k) {
  hsize_t rows = 0, cols = 0;
  bool present = false;
  std::vector<float> init = read_matrix(file, path, "init", false, rows, cols, present, "k x dim");
  if (!present) return std::nullopt;
  check_init_columns(path, rows, cols, dim);
  init_k = static_cast<int>(rows);
  return init;
}

/// Dataset `name` of `rank` dims from `data` (memory type mem_type, file type file_type).
void write_dataset(hid_t file, const std::string& path, const char* name, int rank, const hsize_t* dims,
                   hid_t file_type, hid_t mem_type, const void* data) {
  Handle space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
  Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_obj_track_times(create.get(), false);  // same results, same bytes
  Handle dataset(H5Dcreate2(file, name, file_type, space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT),
                 H5Dclose);
  if (!space.valid() || !dataset.valid() ||
      H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 || !dataset.close())
    fail(path, name, "cannot write the dataset");
}


}  // namespace

KmeansData read_kmeans_data(const std::string& path,
                            const std::function<void(std::int64_t, std::int64_t)>& before_reading_x) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file = open_for_reading(path);
  KmeansData data;
  hsize_t rows = 0, cols = 0;
  bool present = false;
  data.X = read_matrix(file.get(), path, "X", true, rows, cols, present, "points x dim", before_reading_x);
  data.points = static_cast<int>(rows);
  data.dim = static_cast<int>(cols);
  data.init = read_init(file.get(), path, cols, data.init_k);
  return data;
}

KmeansShape read_kmeans_shape(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file = open_for_reading(path);
  const FloatMatrix x = open_x(file.get(), path);
  KmeansShape shape;
  shape.points = static_cast<std::int64_t>(x.rows);
  shape.dim = static_cast<int>(x.cols);
  if (std::optional<FloatMatrix> init = open_matrix(file.get(), path, "init", false, "k x dim")) {
    check_size(*init, path, "init", true);  // read whole, as read_kmeans_data does
    check_init_columns(path, init->rows, init->cols, x.cols);
    shape.has_init = true;
    shape.init_k = static_cast<int>(init->rows);
  }
  return shape;
}

std::vector<float> read_kmeans_rows(const std::string& path, std::int64_t begin, std::int64_t count) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file = open_for_reading(path);
  const FloatMatrix x = open_x(file.get(), path);
  const auto points = static_cast<std::int64_t>(x.rows);
  if (begin < 0 || count < 0)
    fail(path, "X",
         "rows from " + std::to_string(begin) + ", count " + std::to_string(count) +
             ": begin and count must be >= 0");
  if (begin > points || count > points - begin)
    fail(path, "X",
         "rows [" + std::to_string(begin) + ", " +
             std::to_string(static_cast<unsigned long long>(begin) + static_cast<unsigned long long>(count)) +
             ") outside its " + std::to_string(points) + " rows");
  if (static_cast<hsize_t>(count) > std::numeric_limits<std::size_t>::max() / sizeof(double) / x.cols)
    fail(path, "X",
         std::to_string(count) + " rows of " + std::to_string(x.cols) + ": too large for this program");
  return read_rows(x, path, "X", static_cast<hsize_t>(begin), static_cast<hsize_t>(count));
}

std::optional<std::vector<float>> read_kmeans_init(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file = open_for_reading(path);
  const FloatMatrix x = open_x(file.get(), path);
  int init_k = 0;
  return read_init(file.get(), path, x.cols, init_k);
}

void write_kmeans_output(const std::string& path, const std::vector<int>& labels,
                         const std::vector<float>& centroids, int k, int dim,
                         const KmeansOutputAttributes& attributes, const OutputOptions& options) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  check_output(path, options);  // an input named as the output: refused before the shapes
  if (labels.empty()) fail(path, "labels", "no labels to write");
  if (k < 1 || dim < 1 || centroids.size() != static_cast<std::size_t>(k) * static_cast<std::size_t>(dim))
    fail(path, "centroids",
         std::to_string(centroids.size()) + " values, expected k x dim = " + std::to_string(k) + " x " +
             std::to_string(dim));
  OutputFile out(path, options);
  const hsize_t label_dims[1] = {labels.size()};
  write_dataset(out.get(), path, "labels", 1, label_dims, H5T_STD_I32LE, H5T_NATIVE_INT, labels.data());
  const hsize_t centroid_dims[2] = {static_cast<hsize_t>(k), static_cast<hsize_t>(dim)};
  write_dataset(out.get(), path, "centroids", 2, centroid_dims, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT,
                centroids.data());
  write_attribute(out.get(), path, "inertia", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &attributes.inertia);
  write_string_attribute(out.get(), path, "variant", attributes.variant);
  write_string_attribute(out.get(), path, "backend", attributes.backend);
  write_attribute(out.get(), path, "iterations", H5T_STD_I32LE, H5T_NATIVE_INT, &attributes.iterations);
  out.commit();
}

KmeansOutput read_kmeans_output(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file = open_for_reading(path);
  KmeansOutput r;
  std::vector<hsize_t> dims;
  H5T_class_t cls = H5T_NO_CLASS;
  std::size_t size = 0;
  {
    std::optional<Handle> d = open_dataset(file.get(), path, "labels", true, dims, cls, size);
    if (cls != H5T_INTEGER || dims.size() != 1 || dims[0] == 0)
      fail(path, "labels", "expected a non-empty 1-D integer dataset");
    r.labels.resize(static_cast<std::size_t>(dims[0]));
    if (H5Dread(d->get(), H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.labels.data()) < 0)
      fail(path, "labels", "cannot read the data");
  }
  hsize_t rows = 0, cols = 0;
  bool present = false;
  r.centroids = read_matrix(file.get(), path, "centroids", true, rows, cols, present, "k x dim");
  r.k = static_cast<int>(rows);
  r.dim = static_cast<int>(cols);
  if (H5Aexists(file.get(), "inertia") <= 0) fail(path, "inertia", "attribute missing");
  Handle attr(H5Aopen(file.get(), "inertia", H5P_DEFAULT), H5Aclose);
  if (!attr.valid() || H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &r.inertia) < 0)
    fail(path, "inertia", "cannot read the attribute");
  return r;
}

}  // namespace tcsolve
