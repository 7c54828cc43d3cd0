// System and solution files (docs/architecture.md, "HDF5 files") through the HDF5 C API.
//
// Layout. h5py/NumPy write row-major (C order) arrays: element (i, j) of a dataset of dims
// (rows, cols) lies at offset i * cols + j. Eigen matrices here are column-major. Every 2-D
// dataset is therefore read into a row-major buffer and copied into the column-major matrix
// through a RowMajor Eigen::Map of that buffer (and written back the same way), so the matrix
// in memory has A(i, j) = the file's A[i][j]. A 1-D dataset of length n is an n x 1 matrix.
//
// Errors. HDF5's automatic printing of its error stack is switched off (H5Eset_auto2 with no
// handler) at every entry point; each failure becomes one InvalidInput line
//   "<file>: <dataset>: <problem>"   or   "<file>: <problem>"
// with the file named as the caller gave it. Element positions in messages are 0-based
// (row, column), as NumPy indexes the dataset.
//
// Writing. HDF5 builds the file in memory; its bytes are written by the output rule
// (output_file.hpp): a temporary "<name>.tcsolve-tmp-<pid>-<k>" beside the target, published
// only when complete and synced; on any failure the temporary file is removed (OutputFile).
#include "tcsolve/io/system_file.hpp"

#include <algorithm>
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
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
using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;


/// No HDF5 error stack on stderr: the library never prints (docs/architecture.md, "Layout").
void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }


std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? " x " : "") + std::to_string(static_cast<unsigned long long>(dims[i]));
  return s;
}

/// "2-D (3 x 4)", "1-D (length 5)", "a scalar".
std::string rank_text(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return "a scalar";
  if (dims.size() == 1) return "1-D (length " + shape_text(dims) + ")";
  return std::to_string(dims.size()) + "-D (" + shape_text(dims) + ")";
}

/// "float16", "int64", "uint8", "string", ...: what a user recognises from NumPy.
std::string type_text(hid_t type) {
  const std::size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return "float" + std::to_string(bits);
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
    case H5T_STRING:
      return "string";
    case H5T_ENUM:
      return "enum (bool?)";
    case H5T_COMPOUND:
      return "compound (complex?)";
    case H5T_ARRAY:
      return "array type";
    case H5T_BITFIELD:
      return "bitfield";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_REFERENCE:
      return "reference";
    case H5T_VLEN:
      return "variable-length sequence";
    default:
      return "unknown type";
  }
}

Handle open_for_reading(const std::string& path) {
  return hdf5::open_for_reading(path, "solve and compare read it directly; `tcsolve import` turns it into a system file");
}

/// The indices one process holds along one dimension of a block-cyclic layout, as HDF5
/// hyperslab runs: the full blocks (start p nb, stride P nb, block nb) and the last, shorter block
/// when it is this process'.
namespace hdf5_runs {

struct Run {
  hsize_t start = 0, stride = 1, count = 0, block = 1;
};

std::vector<Run> of(const CyclicMap& m, int proc) {
  std::vector<Run> runs;
  const hsize_t n = static_cast<hsize_t>(m.n), nb = static_cast<hsize_t>(m.nb), P = static_cast<hsize_t>(m.procs);
  const hsize_t p = static_cast<hsize_t>(proc), full = n / nb;  // blocks of nb
  const hsize_t mine = full > p ? (full - p + P - 1) / P : 0;    // full blocks p, p + P, ...
  if (mine > 0) runs.push_back({p * nb, mine > 1 ? P * nb : nb, mine, nb});
  if (n % nb != 0 && full % P == p) runs.push_back({full * nb, n % nb, 1, n % nb});
  return runs;
}

hsize_t total(const std::vector<Run>& runs) {
  hsize_t t = 0;
  for (const Run& r : runs) t += r.count * r.block;
  return t;
}

/// The file index of the k-th selected index (in increasing order).
hsize_t index(const std::vector<Run>& runs, hsize_t k) {
  for (const Run& r : runs) {
    if (k < r.count * r.block) return r.start + (k / r.block) * r.stride + k % r.block;
    k -= r.count * r.block;
  }
  return 0;
}

}  // namespace hdf5_runs

/// A floating-point dataset, opened; its data read on demand as FP64 in file (row-major) order.
class FloatDataset {
 public:
  /// Opens `name` in `file`; nullopt when absent and not `required`. Checks that it is a dataset
  /// of float32 or float64 and has a simple dataspace; shapes are the caller's to check.
  static std::optional<FloatDataset> open(hid_t file, const std::string& path, const std::string& name,
                                          bool required) {
    const htri_t exists = H5Lexists(file, name.c_str(), H5P_DEFAULT);
    if (exists < 0) fail(path, name, "cannot be looked up");
    if (exists == 0) {
      if (required) fail(path, name, "dataset missing");
      return std::nullopt;
    }
    {
      Handle object(H5Oopen(file, name.c_str(), H5P_DEFAULT), H5Oclose);
      if (!object.valid()) fail(path, name, "cannot be opened (dangling link?)");
      if (H5Iget_type(object.get()) != H5I_DATASET) fail(path, name, "not a dataset (a group?)");
    }
    FloatDataset d(path, name, H5Dopen2(file, name.c_str(), H5P_DEFAULT));
    if (!d.dataset_.valid()) fail(path, name, "cannot be opened");
    Handle type(H5Dget_type(d.dataset_.get()), H5Tclose);
    if (!type.valid()) fail(path, name, "cannot read its type");
    const std::size_t size = H5Tget_size(type.get());
    if (H5Tget_class(type.get()) != H5T_FLOAT || (size != 4 && size != 8))
      fail(path, name, "type " + type_text(type.get()) + ", expected float64 or float32");
    d.element_bytes_ = static_cast<int>(size);
    Handle space(H5Dget_space(d.dataset_.get()), H5Sclose);
    if (!space.valid()) fail(path, name, "cannot read its shape");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0) fail(path, name, "cannot read its shape");
    d.dims_.assign(static_cast<std::size_t>(rank), 0);
    if (rank > 0 && H5Sget_simple_extent_dims(space.get(), d.dims_.data(), nullptr) < 0)
      fail(path, name, "cannot read its shape");
    return d;
  }

  const std::vector<hsize_t>& dims() const { return dims_; }
  int element_bytes() const { return element_bytes_; }

  /// The elements of the 2-D dataset at file rows `r` x file columns `c` (each a union of
  /// regular runs), as FP64 in the file's C order of the selected elements: element (ir, jc) at
  /// ir * |c| + jc. Rejects NaN and inf, naming the first by its file index.
  std::vector<double> read_runs(const std::vector<hdf5_runs::Run>& r, const std::vector<hdf5_runs::Run>& c) const {
    const hsize_t nr = hdf5_runs::total(r), nc = hdf5_runs::total(c);
    std::vector<double> buffer(static_cast<std::size_t>(nr * nc));
    if (buffer.empty()) return buffer;
    Handle space(H5Dget_space(dataset_.get()), H5Sclose);
    if (!space.valid()) fail(path_, name_, "cannot read its shape");
    bool first = true;
    for (const hdf5_runs::Run& rr : r)
      for (const hdf5_runs::Run& cr : c) {
        const hsize_t start[2] = {rr.start, cr.start}, stride[2] = {rr.stride, cr.stride},
                      count[2] = {rr.count, cr.count}, block[2] = {rr.block, cr.block};
        if (H5Sselect_hyperslab(space.get(), first ? H5S_SELECT_SET : H5S_SELECT_OR, start, stride, count, block) < 0)
          fail(path_, name_, "cannot select this process' blocks");
        first = false;
      }
    const hsize_t mem_dims[1] = {static_cast<hsize_t>(buffer.size())};
    Handle memory(H5Screate_simple(1, mem_dims, nullptr), H5Sclose);
    if (H5Dread(dataset_.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), H5P_DEFAULT, buffer.data()) < 0)
      fail(path_, name_, "cannot read the data (damaged file?)");
    for (std::size_t k = 0; k < buffer.size(); ++k) {
      const double v = buffer[k];
      if (std::isfinite(v)) continue;
      const std::string what = std::isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf";
      const hsize_t i = hdf5_runs::index(r, k / nc), j = hdf5_runs::index(c, k % nc);
      fail(path_, name_, "contains " + what + " at (" + std::to_string(i) + ", " + std::to_string(j) + ")");
    }
    return buffer;
  }

  /// The dims as the matrix has them: the file's dims, reversed for a 2-D dataset of a
  /// column-major file (system.hpp, Layout).
  std::vector<hsize_t> logical_dims(Layout layout) const {
    if (layout == Layout::column_major && dims_.size() == 2) return {dims_[1], dims_[0]};
    return dims_;
  }

  /// The data as an Eigen matrix, dims (r) -> r x 1, dims (r, c) -> r x c with M(i, j) = the
  /// file's element [i][j] (row-major), or c x r with M(i, j) = [j][i] (column-major). Rejects
  /// NaN and inf, naming the first one by its file index.
  Eigen::MatrixXd read(Layout layout = Layout::row_major) const {
    const Eigen::Index rows = static_cast<Eigen::Index>(dims_.at(0));
    const Eigen::Index cols = dims_.size() == 2 ? static_cast<Eigen::Index>(dims_[1]) : 1;
    RowMajorMatrix buffer(rows, cols);  // the file's C order, element [i][j] at i * cols + j
    if (buffer.size() > 0 &&
        H5Dread(dataset_.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0)
      fail(path_, name_, "cannot read the data (damaged file?)");
    for (Eigen::Index k = 0; k < buffer.size(); ++k) {
      const double v = buffer.data()[k];
      if (std::isfinite(v)) continue;
      const std::string what = std::isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf";
      const std::string where = dims_.size() == 2
                                    ? "(" + std::to_string(k / cols) + ", " + std::to_string(k % cols) + ")"
                                    : "(" + std::to_string(k) + ")";
      fail(path_, name_, "contains " + what + " at " + where);
    }
    // The file's C-order buffer read column-major is the transpose: no copy of the order.
    if (layout == Layout::column_major && dims_.size() == 2)
      return Eigen::Map<const Eigen::MatrixXd>(buffer.data(), cols, rows);
    return buffer;  // RowMajor -> column-major copy: A(i, j) stays A(i, j)
  }

 private:
  FloatDataset(std::string path, std::string name, hid_t id)
      : path_(std::move(path)), name_(std::move(name)), dataset_(id, H5Dclose) {}

  std::string path_, name_;
  Handle dataset_;
  std::vector<hsize_t> dims_;
  int element_bytes_ = 8;
};

/// A scalar string attribute of `loc` (fixed or variable length), nullopt when absent or not a
/// scalar string.
std::optional<std::string> read_string_attribute(hid_t loc, const char* name) {
  if (H5Aexists(loc, name) <= 0) return std::nullopt;
  Handle attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return std::nullopt;
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (!type.valid() || !space.valid() || H5Tget_class(type.get()) != H5T_STRING ||
      H5Sget_simple_extent_type(space.get()) != H5S_SCALAR)
    return std::nullopt;
  Handle memtype(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_cset(memtype.get(), H5Tget_cset(type.get()));
  if (H5Tis_variable_str(type.get()) > 0) {
    H5Tset_size(memtype.get(), H5T_VARIABLE);
    char* text = nullptr;
    if (H5Aread(attr.get(), memtype.get(), &text) < 0) return std::nullopt;
    std::string s = text ? text : "";
    H5free_memory(text);
    return s;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string s(size, '\0');
  H5Tset_size(memtype.get(), size);
  H5Tset_strpad(memtype.get(), H5T_STR_NULLPAD);
  if (size > 0 && H5Aread(attr.get(), memtype.get(), s.data()) < 0) return std::nullopt;
  s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
  return s;
}

/// The bool type h5py writes for NumPy bool: an enum over int8 with FALSE = 0 and TRUE = 1, so
/// `h5py.File(f).attrs["converged"]` is a numpy.bool_. `base` is the file or memory int8 type.
Handle bool_enum_type(hid_t base) {
  Handle type(H5Tenum_create(base), H5Tclose);
  const signed char no = 0, yes = 1;
  H5Tenum_insert(type.get(), "FALSE", &no);
  H5Tenum_insert(type.get(), "TRUE", &yes);
  return type;
}

// --- writing --------------------------------------------------------------------------------


/// Elements of one block of rows in write_matrix's C-order copy (32 MiB of doubles).
constexpr hsize_t kWriteBlockElements = hsize_t{1} << 22;

/// Dataset `name` = m as float64, row-major; 1-D (length rows) when `as_vector`.
void write_matrix(hid_t file, const std::string& path, const char* name, const Eigen::MatrixXd& m,
                  bool as_vector) {
  const hsize_t dims[2] = {static_cast<hsize_t>(m.rows()), static_cast<hsize_t>(m.cols())};
  Handle space(H5Screate_simple(as_vector ? 1 : 2, dims, nullptr), H5Sclose);
  // No modification times in the object header: the same system gives the same bytes.
  Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_obj_track_times(create.get(), false);
  // Matrices of 64 Ki to 4 Mi elements are stored shuffled and deflated in chunks of 64 rows:
  // the sparse test matrices of inputs/ shrink from megabytes to kilobytes, while the large
  // benchmark systems stay uncompressed (deflating gigabytes would dominate their generation).
  // Readers (this one, h5py) decompress transparently.
  const hsize_t elements = dims[0] * (as_vector ? 1 : dims[1]);
  if (!as_vector && elements >= (hsize_t{1} << 16) && elements <= (hsize_t{1} << 22) &&
      H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    const hsize_t chunk[2] = {std::min<hsize_t>(dims[0], 64), dims[1]};
    H5Pset_chunk(create.get(), 2, chunk);
    H5Pset_shuffle(create.get());
    H5Pset_deflate(create.get(), 6);
  }
  Handle dataset(H5Dcreate2(file, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT),
                 H5Dclose);
  if (!space.valid() || !dataset.valid()) fail(path, name, "cannot create the dataset");
  // C order, as h5py writes, by blocks of rows of at most kWriteBlockElements: the copy in C
  // order never holds more than a block (a whole one was another n^2 doubles of host memory:
  // 33 GB at n = 64000). The bytes in the file are the same either way.
  const hsize_t cols = dims[1], rows_per_block = std::max<hsize_t>(1, kWriteBlockElements / std::max<hsize_t>(cols, 1));
  for (hsize_t r0 = 0; r0 < dims[0]; r0 += rows_per_block) {
    const hsize_t rows = std::min(rows_per_block, dims[0] - r0);
    const RowMajorMatrix buffer = m.middleRows(static_cast<Eigen::Index>(r0), static_cast<Eigen::Index>(rows));
    const hsize_t start[2] = {r0, 0}, count[2] = {rows, cols};
    Handle file_space(H5Dget_space(dataset.get()), H5Sclose);
    Handle memory_space(H5Screate_simple(as_vector ? 1 : 2, count, nullptr), H5Sclose);
    if (!file_space.valid() || !memory_space.valid() ||
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT,
                 buffer.data()) < 0)
      fail(path, name, "cannot write the dataset (disk full?)");
  }
  if (!dataset.close()) fail(path, name, "cannot write the dataset (disk full?)");
}



}  // namespace

// --- public ---------------------------------------------------------------------------------

Layout parse_layout(std::string_view name) {
  if (name == "row-major") return Layout::row_major;
  if (name == "column-major") return Layout::column_major;
  throw InvalidInput("unknown layout '" + std::string(name) + "' (valid: row-major, column-major)");
}

std::string_view to_string(Layout layout) { return layout == Layout::column_major ? "column-major" : "row-major"; }

namespace {

/// A system file opened and its shapes checked (read_system's and inspect_system's first part).
struct OpenedSystem {
  Handle file;
  std::optional<FloatDataset> A, b, x;
  std::vector<hsize_t> b_dims;  ///< logical (Layout applied)
};

/// to = from for an optional of a move-constructible, not move-assignable type.
void assign(std::optional<FloatDataset>& to, std::optional<FloatDataset>&& from) {
  to.reset();
  if (from) to.emplace(std::move(*from));
}

OpenedSystem open_system(const std::string& path, Layout layout) {
  silence_hdf5();
  OpenedSystem o{open_for_reading(path), std::nullopt, std::nullopt, std::nullopt, {}};
  const hid_t file = o.file.get();
  assign(o.A, FloatDataset::open(file, path, "A", true));
  const std::vector<hsize_t> a = o.A->logical_dims(layout);
  if (a.size() != 2) fail(path, "A", rank_text(a) + ", expected 2-D (n x n)");
  if (a[0] != a[1]) fail(path, "A", "not square (" + shape_text(a) + ")");
  if (a[0] == 0) fail(path, "A", "empty (0 x 0)");
  const hsize_t n = a[0];

  assign(o.b, FloatDataset::open(file, path, "b", true));
  o.b_dims = o.b->logical_dims(layout);
  const std::vector<hsize_t>& bd = o.b_dims;
  const char* hint = layout == Layout::row_major ? " (a column-major file? see --layout)" : "";
  if (bd.size() != 1 && bd.size() != 2)
    fail(path, "b", rank_text(bd) + ", expected 1-D (n) or 2-D (n x nrhs)");
  if (bd.size() == 1 && bd[0] != n)
    fail(path, "b", "length " + shape_text(bd) + ", expected " + std::to_string(n) + " (rows of A)");
  if (bd.size() == 2 && bd[0] != n)
    fail(path, "b", shape_text(bd) + ", expected " + std::to_string(n) + " rows (rows of A)" + hint);
  if (bd.size() == 2 && bd[1] == 0) fail(path, "b", shape_text(bd) + ", no right-hand side");

  assign(o.x, FloatDataset::open(file, path, "x", false));
  if (o.x && o.x->logical_dims(layout) != bd)
    fail(path, "x", "shape (" + shape_text(o.x->logical_dims(layout)) + "), expected (" + shape_text(bd) + ") as b");
  return o;
}

}  // namespace

bool is_hdf5_file(const std::string& path) {
  silence_hdf5();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  return H5Fis_hdf5(path.c_str()) > 0;
}

SystemShape inspect_system(const std::string& path, Layout layout) {
  const OpenedSystem o = open_system(path, layout);
  SystemShape shape;
  shape.n = static_cast<std::int64_t>(o.b_dims[0]);
  shape.nrhs = o.b_dims.size() == 2 ? static_cast<std::int64_t>(o.b_dims[1]) : 1;
  shape.has_x = o.x.has_value();
  shape.a_bytes_per_element = o.A->element_bytes();
  return shape;
}

LinearSystem read_system(const std::string& path, Layout layout) {
  const OpenedSystem o = open_system(path, layout);
  LinearSystem sys;
  sys.A = o.A->read(layout);
  sys.b = o.b->read(layout);
  sys.b_is_vector = o.b_dims.size() == 1;
  if (o.x) sys.x_true = o.x->read(layout);
  sys.description = read_string_attribute(o.file.get(), "description").value_or("");
  return sys;
}

SystemPiece read_system_piece(const std::string& path, Layout layout, const CyclicMap& rows, int prow,
                              const CyclicMap& cols, int pcol) {
  const OpenedSystem o = open_system(path, layout);
  const std::int64_t n = static_cast<std::int64_t>(o.b_dims[0]);
  if (rows.n != n || cols.n != n)
    throw InvalidInput(path + ": A: order " + std::to_string(n) + ", but the layout is for " + std::to_string(rows.n) +
                       " x " + std::to_string(cols.n));
  SystemPiece piece;
  piece.local_rows = rows.count(prow);
  piece.local_cols = cols.count(pcol);
  piece.ld = std::max(1, piece.local_rows);
  piece.a.assign(static_cast<std::size_t>(piece.ld) * static_cast<std::size_t>(std::max(1, piece.local_cols)), 0.0);
  const std::vector<hdf5_runs::Run> r = hdf5_runs::of(rows, prow), c = hdf5_runs::of(cols, pcol);
  const std::size_t mr = static_cast<std::size_t>(piece.local_rows), mc = static_cast<std::size_t>(piece.local_cols);
  if (layout == Layout::row_major) {  // file [i][j] = A(i, j): the buffer is the piece, row-major
    const std::vector<double> buffer = o.A->read_runs(r, c);
    for (std::size_t i = 0; i < mr; ++i)
      for (std::size_t j = 0; j < mc; ++j) piece.a[j * static_cast<std::size_t>(piece.ld) + i] = buffer[i * mc + j];
  } else {  // file [j][i] = A(i, j): the buffer is the piece, column-major with leading dimension mr
    const std::vector<double> buffer = o.A->read_runs(c, r);
    for (std::size_t j = 0; j < mc; ++j)
      std::copy_n(buffer.data() + j * mr, mr, piece.a.data() + j * static_cast<std::size_t>(piece.ld));
  }
  piece.b = o.b->read(layout);
  piece.b_is_vector = o.b_dims.size() == 1;
  if (o.x) piece.x_true = o.x->read(layout);
  piece.description = read_string_attribute(o.file.get(), "description").value_or("");
  return piece;
}

void write_system(const std::string& path, const LinearSystem& system, const OutputOptions& options) {
  silence_hdf5();
  const Eigen::Index n = system.A.rows();
  if (n < 1 || system.A.cols() != n)
    fail(path, "A", "not square (" + std::to_string(n) + " x " + std::to_string(system.A.cols()) + ")");
  if (system.b.rows() != n || system.b.cols() < 1)
    fail(path, "b",
         std::to_string(system.b.rows()) + " x " + std::to_string(system.b.cols()) + ", expected " +
             std::to_string(n) + " x nrhs");
  if (system.x_true && (system.x_true->rows() != n || system.x_true->cols() != system.b.cols()))
    fail(path, "x",
         std::to_string(system.x_true->rows()) + " x " + std::to_string(system.x_true->cols()) +
             ", expected the shape of b");

  const bool as_vector = system.b_is_vector && system.b.cols() == 1;
  OutputFile out(path, options);  // the output rule, checked before anything is built
  write_matrix(out.get(), path, "A", system.A, false);
  write_matrix(out.get(), path, "b", system.b, as_vector);
  if (system.x_true) write_matrix(out.get(), path, "x", *system.x_true, as_vector);
  write_string_attribute(out.get(), path, "description", system.description);
  out.commit();
}

void write_solution(const std::string& path, const Eigen::MatrixXd& x, bool as_vector,
                    const SolutionAttributes& attributes, const OutputOptions& options) {
  silence_hdf5();
  check_output(path, options);  // an input named as the output: refused before the shape
  if (x.rows() < 1 || x.cols() < 1 || (as_vector && x.cols() != 1))
    fail(path, "x",
         std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
             (as_vector ? ", expected a vector" : ", expected n x nrhs"));

  OutputFile out(path, options);
  write_matrix(out.get(), path, "x", x, as_vector);
  write_string_attribute(out.get(), path, "variant", attributes.variant);
  write_string_attribute(out.get(), path, "backend", attributes.backend);
  const int iterations = attributes.iterations;
  write_attribute(out.get(), path, "iterations", H5T_STD_I32LE, H5T_NATIVE_INT, &iterations);
  const double backward_error = attributes.backward_error;
  write_attribute(out.get(), path, "backward_error", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &backward_error);
  // converged: h5py's bool (enum over int8, FALSE = 0, TRUE = 1), read by h5py as numpy.bool_.
  const Handle file_bool = bool_enum_type(H5T_STD_I8LE);
  const Handle mem_bool = bool_enum_type(H5T_NATIVE_SCHAR);
  const signed char converged = attributes.converged ? 1 : 0;
  write_attribute(out.get(), path, "converged", file_bool.get(), mem_bool.get(), &converged);
  out.commit();
}

Solution read_solution(const std::string& path) {
  silence_hdf5();
  Handle file = open_for_reading(path);
  const std::optional<FloatDataset> x = FloatDataset::open(file.get(), path, "x", true);
  const std::vector<hsize_t>& dims = x->dims();
  if (dims.size() != 1 && dims.size() != 2)
    fail(path, "x", rank_text(dims) + ", expected 1-D (n) or 2-D (n x nrhs)");
  if (dims[0] == 0 || (dims.size() == 2 && dims[1] == 0)) fail(path, "x", "empty (" + shape_text(dims) + ")");
  Solution s;
  s.x = x->read();
  s.x_is_vector = dims.size() == 1;

  const auto text = [&](const char* name) {
    std::optional<std::string> v = read_string_attribute(file.get(), name);
    if (!v) fail(path, name, "attribute missing or not a string");
    return *v;
  };
  s.attributes.variant = text("variant");
  s.attributes.backend = text("backend");

  // Numbers: read through HDF5's conversion into the native type; enums (h5py's bool) through
  // the same enum in memory.
  // `integer`: value is an int (else a double).
  const auto number = [&](const char* name, bool integer, void* value) {
    if (H5Aexists(file.get(), name) <= 0) fail(path, name, "attribute missing");
    Handle attr(H5Aopen(file.get(), name, H5P_DEFAULT), H5Aclose);
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    Handle space(H5Aget_space(attr.get()), H5Sclose);
    if (!attr.valid() || !type.valid() || !space.valid() ||
        H5Sget_simple_extent_type(space.get()) != H5S_SCALAR)
      fail(path, name, "attribute not a scalar");
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls == H5T_ENUM) {
      const Handle mem_bool = bool_enum_type(H5T_NATIVE_SCHAR);
      signed char v = 0;
      if (H5Aread(attr.get(), mem_bool.get(), &v) < 0) fail(path, name, "enum attribute is not a bool");
      if (integer)
        *static_cast<int*>(value) = v;
      else
        *static_cast<double*>(value) = v;
      return;
    }
    if (cls != H5T_INTEGER && cls != H5T_FLOAT)
      fail(path, name, "attribute of type " + type_text(type.get()) + ", expected a number");
    if (H5Aread(attr.get(), integer ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE, value) < 0)
      fail(path, name, "cannot read the attribute");
  };
  number("iterations", true, &s.attributes.iterations);
  number("backward_error", false, &s.attributes.backward_error);
  int converged = 0;
  number("converged", true, &converged);
  s.attributes.converged = converged != 0;
  return s;
}

}  // namespace tcsolve
