// HDF5 file helpers (hdf5_file.hpp).
#include "tcsolve/solver/hdf5_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tcsolve/gemm/error.hpp"

namespace tcsolve::hdf5 {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& file, const std::string& problem) {
  throw InvalidInput(file + ": " + problem);
}

[[noreturn]] void fail(const std::string& file, const std::string& name, const std::string& problem) {
  throw InvalidInput(file + ": " + name + ": " + problem);
}

OutputFile::OutputFile(const std::string& path) : path_(path) {
  const fs::path target(path);
  dir_ = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) fail(path, "directory '" + dir_.string() + "' does not exist");
  if (::access(dir_.c_str(), W_OK) != 0)
    fail(path, "cannot write in directory '" + dir_.string() + "' (permission denied)");
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), kGrowBytes, false) < 0)
    fail(path, "cannot set up the HDF5 file in memory");
  // The name only identifies the file inside HDF5: nothing is created under it.
  static std::atomic<unsigned> counter{0};
  const std::string name =
      "tcsolve-in-memory-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
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

  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = (dir_ / ("." + fs::path(path_).filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                   std::to_string(counter++)))
              .string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0)
    fail(path_, "cannot create a temporary file in '" + dir_.string() + "': " + std::strerror(errno));
  const char* p = image.data();
  std::size_t left = image.size();
  int error = 0;
  while (left > 0 && error == 0) {
    const ssize_t wrote = ::write(fd, p, left);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      error = wrote < 0 ? errno : EIO;
      break;
    }
    p += wrote;
    left -= static_cast<std::size_t>(wrote);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && std::rename(tmp.c_str(), path_.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(tmp.c_str());
    fail(path_, std::string("writing failed: ") + std::strerror(error));
  }
}

/// Same file: std::filesystem::equivalent when both exist, else the absolute, lexically
/// normal paths compared.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  return fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal();
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

}  // namespace tcsolve::hdf5
