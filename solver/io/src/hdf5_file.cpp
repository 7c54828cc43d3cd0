// HDF5 file helpers (hdf5_file.hpp).
#include "hdf5_file.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/io/hdf5_version.hpp"
#include "tcsolve/io/matrix_market.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::hdf5 {

[[noreturn]] void fail(const std::string& file, const std::string& problem) {
  throw InvalidInput(file + ": " + problem);
}

[[noreturn]] void fail(const std::string& file, const std::string& name, const std::string& problem) {
  throw InvalidInput(file + ": " + name + ": " + problem);
}

namespace {

// The core driver's allocations, through HDF5's file image callbacks (H5Pset_file_image_callbacks),
// recorded in the OutputFile's Image (udata) so that commit() can write the buffer itself.
void* image_malloc(std::size_t size, H5FD_file_image_op_t, void* udata) {
  auto* image = static_cast<OutputFile::Image*>(udata);
  image->memory = std::malloc(size);
  image->size = image->memory != nullptr ? size : 0;
  return image->memory;
}

void* image_memcpy(void* dest, const void* src, std::size_t size, H5FD_file_image_op_t, void*) {
  return std::memcpy(dest, src, size);
}

void* image_realloc(void* ptr, std::size_t size, H5FD_file_image_op_t, void* udata) {
  auto* image = static_cast<OutputFile::Image*>(udata);
  void* grown = std::realloc(ptr, size);
  if (grown != nullptr) image->memory = grown, image->size = size;
  return grown;
}

herr_t image_free(void* ptr, H5FD_file_image_op_t, void* udata) {
  auto* image = static_cast<OutputFile::Image*>(udata);
  if (ptr == image->memory) image->memory = nullptr, image->size = 0;
  std::free(ptr);
  return 0;
}

void* udata_copy(void* udata) { return udata; }  // the OutputFile's Image, shared by the copies
herr_t udata_free(void*) { return 0; }

/// Offset of the file consistency flags in a version 0 or 1 superblock (HDF5 file format
/// specification, "Superblock"); H5Fget_file_image clears them in its copy of a file open for
/// writing, and commit() does the same in what it writes.
constexpr std::size_t kConsistencyFlags = 20;

}  // namespace

OutputFile::OutputFile(const std::string& path, OutputOptions options)
    : path_(path), options_(std::move(options)) {
  check_output(path_, options_);  // refuse before anything is built
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5FD_file_image_callbacks_t callbacks = {image_malloc, image_memcpy, image_realloc, image_free,
                                           udata_copy,   udata_free,   &image_};
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), kGrowBytes, false) < 0 ||
      H5Pset_file_image_callbacks(fapl.get(), &callbacks) < 0)
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
  const ssize_t size = H5Fget_file_image(file_, nullptr, 0);  // the size only
  if (size < 0) fail(path_, "cannot assemble the HDF5 file");
  const auto bytes = static_cast<std::size_t>(size);
  const auto* memory = static_cast<const unsigned char*>(image_.memory);
  TemporaryOutput out(path_, options_);
  if (memory != nullptr && bytes <= image_.size && bytes > kConsistencyFlags + 4 && memory[8] <= 1) {
    // The driver's buffer is the file: written as it is, but for the consistency flags of a
    // version 0/1 superblock (byte 8), which say "open for writing" until the file is closed.
    unsigned char head[kConsistencyFlags + 4];
    std::memcpy(head, memory, sizeof head);
    std::memset(head + kConsistencyFlags, 0, 4);
    out.write(head, sizeof head);
    out.write(memory + sizeof head, bytes - sizeof head);
  } else {  // another superblock version: HDF5's own copy of the image
    std::vector<char> copy(bytes);
    if (H5Fget_file_image(file_, copy.data(), copy.size()) != size) fail(path_, "cannot assemble the HDF5 file");
    out.write(copy.data(), copy.size());
  }
  H5Fclose(file_);  // in memory: nothing to flush
  file_ = H5I_INVALID_HID;
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
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    if (is_matrix_market_file(path)) fail(path, "a Matrix Market file, not HDF5 (" + matrix_market_hint + ")");
    const bool empty = std::filesystem::file_size(path, ec) == 0 && !ec;
    const std::string problem = empty ? "empty file (0 bytes), not an HDF5 file" : "not an HDF5 file";
    if (has_matrix_market_extension(path))
      fail(path, problem + " (named as a Matrix Market file: " + matrix_market_hint + ")");
    fail(path, problem);
  }
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
