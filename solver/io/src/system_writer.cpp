// A system file written by blocks of rows (system_writer.hpp): HDF5 lays the file out on the
// temporary and closes it; the data go in by pwrite(2) at the datasets' offsets; the output rule
// (output_file.hpp) publishes or removes the temporary.
#include "tcsolve/io/system_writer.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "hdf5_file.hpp"
#include "tcsolve/runtime/error.hpp"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "system_writer.cpp writes native doubles as the file's float64 little-endian (H5T_IEEE_F64LE)"
#endif

namespace tcsolve {
namespace {

using hdf5::fail;
using hdf5::Handle;

/// HDF5 metadata of a system file (superblock, root group, three dataset headers, the
/// attribute): about 2 KiB; counted generously.
constexpr double kMetadataBytes = 64.0 * 1024;

/// Dataset `name` of `dims` (rank 1 or 2) as float64, contiguous, its storage allocated now and
/// never filled (every byte is written later); returns the offset of its first element.
std::uint64_t create_dataset(hid_t file, const std::string& path, const char* name, int rank, const hsize_t* dims) {
  Handle space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
  Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space.valid() || !create.valid() || H5Pset_obj_track_times(create.get(), false) < 0 ||  // as write_system
      H5Pset_layout(create.get(), H5D_CONTIGUOUS) < 0 || H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_EARLY) < 0 ||
      H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER) < 0)
    fail(path, name, "cannot set up the dataset");
  Handle dataset(H5Dcreate2(file, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT),
                 H5Dclose);
  if (!dataset.valid()) fail(path, name, "cannot create the dataset (disk full?)");
  const haddr_t offset = H5Dget_offset(dataset.get());
  if (offset == HADDR_UNDEF) fail(path, name, "cannot locate the dataset's storage");
  if (!dataset.close()) fail(path, name, "cannot create the dataset (disk full?)");
  return static_cast<std::uint64_t>(offset);
}

}  // namespace

double SystemWriter::file_bytes(const Shape& shape) {
  const double n = static_cast<double>(shape.n), nrhs = static_cast<double>(shape.nrhs);
  return 8 * (n * n + (shape.has_x ? 2 : 1) * n * nrhs) + kMetadataBytes;
}

SystemWriter::SystemWriter(const std::string& path, const Shape& shape, const std::string& description,
                           OutputOptions options)
    : path_(path), shape_(shape) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // the library never prints
  if (shape.n < 1) fail(path, "A", "order " + std::to_string(shape.n) + ", expected at least 1");
  if (shape.nrhs < 1) fail(path, "b", std::to_string(shape.nrhs) + " right-hand sides, expected at least 1");
  out_ = std::make_unique<TemporaryOutput>(path, std::move(options));  // the rule; the temporary created
  if (out_->temporary() == path_) {  // a standard stream's name: written directly, no temporary
    out_.reset();
    fail(path, "a standard stream cannot take a system file written by blocks (HDF5 writes it in place: "
               "name a regular file)");
  }
  const bool as_vector = shape.b_is_vector && shape.nrhs == 1;
  const hsize_t a_dims[2] = {static_cast<hsize_t>(shape.n), static_cast<hsize_t>(shape.n)};
  const hsize_t b_dims[2] = {static_cast<hsize_t>(shape.n), static_cast<hsize_t>(shape.nrhs)};
  {
    // The file's structure only: created on the temporary (truncating the empty file the rule
    // made), closed before any data is written.
    Handle file(H5Fcreate(out_->temporary().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!file.valid()) fail(path, "cannot create the HDF5 file (in '" + out_->temporary() + "')");
    a_.offset = create_dataset(file.get(), path, "A", 2, a_dims);
    b_.offset = create_dataset(file.get(), path, "b", as_vector ? 1 : 2, b_dims);
    if (shape.has_x) x_.offset = create_dataset(file.get(), path, "x", as_vector ? 1 : 2, b_dims);
    hdf5::write_string_attribute(file.get(), path, "description", description);
    if (!file.close()) fail(path, "cannot write the HDF5 file's structure (disk full?)");
  }
  a_.cols = shape.n;
  b_.cols = x_.cols = shape.nrhs;
  a_.written.assign(static_cast<std::size_t>(shape.n), false);
  b_.written.assign(static_cast<std::size_t>(shape.n), false);
  if (shape.has_x) x_.written.assign(static_cast<std::size_t>(shape.n), false);
}

SystemWriter::~SystemWriter() = default;  // out_'s destructor removes an unpublished temporary

const std::string& SystemWriter::temporary() const {
  static const std::string none;
  return out_ ? out_->temporary() : none;
}

void SystemWriter::write_a_rows(std::int64_t row0, std::int64_t rows, const double* a) { write_rows(a_, row0, rows, a); }
void SystemWriter::write_b_rows(std::int64_t row0, std::int64_t rows, const double* b) { write_rows(b_, row0, rows, b); }
void SystemWriter::write_x_rows(std::int64_t row0, std::int64_t rows, const double* x) {
  if (!shape_.has_x) fail(path_, "x", "not declared (Shape::has_x is false)");
  write_rows(x_, row0, rows, x);
}

void SystemWriter::write_rows(Dataset& d, std::int64_t row0, std::int64_t rows, const double* data) {
  if (!out_ || out_->fd() < 0) fail(path_, "writing failed: the temporary file is closed");
  if (row0 < 0 || rows < 0 || row0 + rows > shape_.n)
    fail(path_, d.name,
         "rows " + std::to_string(row0) + ".." + std::to_string(row0 + rows - 1) + " outside 0.." +
             std::to_string(shape_.n - 1));
  // Row-major: rows row0.. of a dataset with `cols` doubles a row are one run of bytes.
  const char* p = reinterpret_cast<const char*>(data);
  std::uint64_t at = d.offset + static_cast<std::uint64_t>(row0) * static_cast<std::uint64_t>(d.cols) * 8;
  std::uint64_t left = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(d.cols) * 8;
  while (left > 0) {
    const ssize_t wrote = ::pwrite(out_->fd(), p, static_cast<std::size_t>(std::min<std::uint64_t>(left, 1u << 30)),
                                   static_cast<off_t>(at));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      const int error = wrote < 0 ? errno : EIO;
      out_->discard();
      fail(path_, std::string("writing failed: ") + std::strerror(error));
    }
    p += wrote;
    at += static_cast<std::uint64_t>(wrote);
    left -= static_cast<std::uint64_t>(wrote);
  }
  for (std::int64_t r = row0; r < row0 + rows; ++r) d.written[static_cast<std::size_t>(r)] = true;
}

void SystemWriter::commit() {
  if (!out_) fail(path_, "writing failed: the temporary file was removed");
  for (const Dataset* d : {&a_, &b_, &x_}) {
    if (d == &x_ && !shape_.has_x) continue;
    for (std::size_t r = 0; r < d->written.size(); ++r)
      if (!d->written[r]) {
        out_->discard();
        fail(path_, d->name, "row " + std::to_string(r) + " not written");
      }
  }
  out_->publish();  // fsync, close, the rule again, rename
}

}  // namespace tcsolve
