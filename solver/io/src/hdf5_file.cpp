// HDF5 file helpers (hdf5_file.hpp).
#include "hdf5_file.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/gemm/error.hpp"
#include "tcsolve/io/matrix_market.hpp"
#include "tcsolve/io/hdf5_version.hpp"

namespace tcsolve::hdf5 {

[[noreturn]] void fail(const std::string& file, const std::string& problem) {
  throw InvalidInput(file + ": " + problem);
}

[[noreturn]] void fail(const std::string& file, const std::string& name, const std::string& problem) {
  throw InvalidInput(file + ": " + name + ": " + problem);
}

OutputFile::OutputFile(const std::string& path, OutputOptions options)
    : path_(path), options_(std::move(options)) {
  check_output(path_, options_);  // refuse before anything is built
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), kGrowBytes, false) < 0)
    fail(path, "cannot set up the HDF5 file in memory");
  // The name only identifies the file inside HDF5 (unique among the open ones: this object's
  // address): nothing is created under it.
  const std::string name = "tcsolve-in-memory-" + std::to_string(reinterpret_cast<std::uintptr_t>(this));
  file_ = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  if (file_ < 0) fail(path, "cannot create the HDF5 file in memory");
}

void OutputFile::commit() {
  // Metadata still in HDF5's cache is in no image until flushed (to memory: nothing fails).
  if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) fail(path_, "cannot assemble the HDF5 file");
  const ssize_t size = H5Fget_file_image(file_, nullptr, 0);
  if (size < 0) fail(path_, "cannot assemble the HDF5 file");
  std::vector<char> image(static_cast<std::size_t>(size));
  if (H5Fget_file_image(file_, image.data(), image.size()) != size)
    fail(path_, "cannot assemble the HDF5 file");
  H5Fclose(file_);  // in memory: nothing to flush
  file_ = H5I_INVALID_HID;

  TemporaryOutput out(path_, options_);
  out.write(image.data(), image.size());
  out.publish();
}

/// A scalar attribute of `loc`: `file_type` in the file, written from `value` of `mem_type`.
void write_attribute(hid_t loc, const std::string& path, const char* name, hid_t file_type, hid_t mem_type,
                     const void* value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attr(H5Acreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!space.valid() || !attr.valid() || H5Awrite(attr.get(), mem_type, value) < 0 || !attr.close())
    fail(path, name, "cannot write the attribute");
}

/// A variable-length UTF-8 string attribute (h5py reads it as a Python str).
void write_string_attribute(hid_t loc, const std::string& path, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const char* text = value.c_str();
  write_attribute(loc, path, name, type.get(), type.get(), &text);
}

Handle open_for_reading(const std::string& path, const std::string& matrix_market_hint) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) fail(path, "no such file");
  if (std::filesystem::is_directory(st)) fail(path, "is a directory");
  if (!std::ifstream(path, std::ios::binary)) fail(path, "cannot be read (permission denied?)");
  if (H5Fis_hdf5(path.c_str()) <= 0)
    fail(path, is_matrix_market_file(path) ? "a Matrix Market file, not HDF5 (" + matrix_market_hint + ")"
                                           : std::string("not an HDF5 file"));
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) fail(path, "cannot be opened as HDF5 (damaged, or locked by another process)");
  return file;
}

}  // namespace tcsolve::hdf5

namespace tcsolve {

std::string hdf5_library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace tcsolve
