// K-means data and output files (ARCHITECTURE.md, "HDF5 files": X, optional init; labels,
// centroids, attribute inertia) through the HDF5 C API, with the conventions of
// system_file.cpp, whose helpers it shares (hdf5_file.hpp):
//   - row-major datasets as h5py writes them: a points x dim dataset has the bytes of the
//     column-major dim x points array the demo uses, so no transposition is needed;
//   - HDF5's own error printing off; every failure one InvalidInput "<file>: <dataset>: <problem>";
//   - output built in memory (HDF5 core driver), written by the output rule
//     (tcsolve/io/output_file.hpp); nothing is left behind on failure.
#include "tcsolve/io/kmeans_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

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

/// A 2-D float dataset read as FP32 in file (row-major) order: rows x cols. Rejects other types,
/// other ranks, NaN, inf and values beyond FP32's range, naming the (row, column).
std::vector<float> read_matrix(hid_t file, const std::string& path, const char* name, bool required,
                               hsize_t& rows, hsize_t& cols, bool& present, const std::string& expected,
                               const std::function<void(std::int64_t, std::int64_t)>& before_reading = {}) {
  std::vector<hsize_t> dims;
  H5T_class_t cls = H5T_NO_CLASS;
  std::size_t size = 0;
  std::optional<Handle> d = open_dataset(file, path, name, required, dims, cls, size);
  present = d.has_value();
  if (!present) return {};
  if (cls != H5T_FLOAT || (size != 4 && size != 8))
    fail(path, name,
         std::string("type ") +
             (cls == H5T_INTEGER ? "integer"
              : cls == H5T_FLOAT ? "float" + std::to_string(size * 8)
                                 : "non-numeric") +
             ", expected float64 or float32");
  if (dims.size() != 2) fail(path, name, shape_text(dims) + ", expected 2-D (" + expected + ")");
  rows = dims[0];
  cols = dims[1];
  if (rows == 0 || cols == 0) fail(path, name, "empty " + shape_text(dims) + ", expected " + expected);
  if (rows * cols > static_cast<hsize_t>(std::numeric_limits<int>::max()) ||
      rows > static_cast<hsize_t>(std::numeric_limits<int>::max()))
    fail(path, name, shape_text(dims) + ": too large for this program");
  if (before_reading) before_reading(static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols));
  std::vector<double> buffer(static_cast<std::size_t>(rows * cols));
  if (H5Dread(d->get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0)
    fail(path, name, "cannot read the data (damaged file?)");
  std::vector<float> out(buffer.size());
  for (std::size_t e = 0; e < buffer.size(); ++e) {
    const double v = buffer[e];
    const std::string where = "(" + std::to_string(e / cols) + ", " + std::to_string(e % cols) + ")";
    if (std::isnan(v)) fail(path, name, "contains NaN at " + where);
    if (std::isinf(v)) fail(path, name, std::string("contains ") + (v > 0 ? "inf" : "-inf") + " at " + where);
    out[e] = static_cast<float>(v);
    if (std::isinf(out[e])) {
      char text[32];
      std::snprintf(text, sizeof text, "%.6g", v);  // not std::to_string: 1e200 has 201 digits in %f
      fail(path, name, "value " + std::string(text) + " at " + where + " exceeds FP32's range (3.4e38)");
    }
  }
  return out;
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
  hsize_t init_rows = 0, init_cols = 0;
  std::vector<float> init =
      read_matrix(file.get(), path, "init", false, init_rows, init_cols, present, "k x dim");
  if (present) {
    if (init_cols != cols)
      fail(path, "init",
           std::to_string(init_rows) + " x " + std::to_string(init_cols) + ", expected k x " +
               std::to_string(cols) + " (X has dim = " + std::to_string(cols) + ")");
    data.init = std::move(init);
    data.init_k = static_cast<int>(init_rows);
  }
  return data;
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
