// HDF5 file helpers shared by the system files and the K-means data files, internal to
// tcsolve::io (the one target that sees HDF5): identifier ownership, the in-memory output file
// written by the output rule (tcsolve/io/output_file.hpp), and the one-line errors "<file>: <problem>" / "<file>: <dataset>: <problem>" (InvalidInput).
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <string>
#include <utility>

#include "tcsolve/io/output_file.hpp"

namespace tcsolve::hdf5 {

[[noreturn]] void fail(const std::string& file, const std::string& problem);
[[noreturn]] void fail(const std::string& file, const std::string& name, const std::string& problem);

/// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  ~Handle() { close(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now; false when HDF5 reports a failure (for a file: data not flushed).
  bool close() {
    if (id_ < 0) return true;
    const herr_t status = closer_(id_);
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }

 private:
  hid_t id_;
  Closer closer_;
};

/// An output file: built in memory by HDF5 (the core driver without a backing store), then
/// written by commit() by the output rule (output_file.hpp): a temporary beside the target,
/// synced, renamed; nothing is left on disk when anything fails. All disk I/O is ours, not
/// HDF5's: a write that fails inside HDF5 (disk full) leaves it holding a half-closed file,
/// which HDF5 1.10 then crashes on when it closes its files at exit (H5F__close_cb).
/// commit() writes the core driver's own buffer (kept track of through HDF5's file image
/// callbacks), not a copy of it: the image of a 33 GB system is not held twice.
class OutputFile {
 public:
  /// Checks `path` by the output rule (check_output: refusals throw InvalidInput "<path>:
  /// <problem>") and sets up the in-memory file.
  OutputFile(const std::string& path, OutputOptions options);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (file_ >= 0) H5Fclose(file_);
  }

  hid_t get() const { return file_; }

  /// Writes the file's bytes to a TemporaryOutput beside the target and publishes it (force:
  /// replaces; else only while the name is free). Throws InvalidInput.
  void commit();

  /// The core driver's buffer, as HDF5's file image callbacks allocate and grow it.
  struct Image {
    void* memory = nullptr;
    std::size_t size = 0;
  };

 private:
  static constexpr std::size_t kGrowBytes = std::size_t{1} << 20;  ///< the in-memory file grows by 1 MiB
  std::string path_;
  OutputOptions options_;
  Image image_;
  hid_t file_ = H5I_INVALID_HID;
};

/// The file `path` opened read-only, after checking that it exists, is a regular readable file
/// and is HDF5; an empty file is named empty; a Matrix Market file (by its banner, or by a
/// ".mtx" name) is named as such, with `matrix_market_hint` (what the reader wants instead) in
/// the message. Throws InvalidInput.
Handle open_for_reading(const std::string& path, const std::string& matrix_market_hint);

/// A scalar attribute of `loc`: `file_type` in the file, written from `value` of `mem_type`.
void write_attribute(hid_t loc, const std::string& path, const char* name, hid_t file_type, hid_t mem_type,
                     const void* value);
/// A variable-length UTF-8 string attribute (h5py reads it as a Python str).
void write_string_attribute(hid_t loc, const std::string& path, const char* name, const std::string& value);

}  // namespace tcsolve::hdf5
