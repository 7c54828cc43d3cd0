// The output rule, the registry of live temporaries and the search for stale ones
// (output_file.hpp).
#include "tcsolve/io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tcsolve/runtime/error.hpp"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1U << 0)  // linux/fs.h
#endif

namespace tcsolve {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& path, const std::string& problem) {
  throw InvalidInput(path + ": " + problem);
}

/// "a FIFO", "a socket", ... for a file that is not regular.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

/// The directory `file` lives in ("." for a bare name).
fs::path directory_of(const fs::path& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

/// `name` in the directory of `file`, written as `file` names its directory.
std::string beside(const fs::path& file, const std::string& name) {
  return file.has_parent_path() ? (file.parent_path() / name).string() : name;
}

/// The descriptor (1 or 2) a name of the standard output or error stands for, else -1.
int standard_stream(const std::string& path) {
  if (path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1") return STDOUT_FILENO;
  if (path == "/dev/stderr" || path == "/dev/fd/2" || path == "/proc/self/fd/2") return STDERR_FILENO;
  return -1;
}

/// Refuses a directory `dir` that is missing: names the nearest ancestor that exists but is not
/// a directory ("'file.h5' is not a directory"), else says it does not exist.
[[noreturn]] void refuse_missing_directory(const std::string& path, const fs::path& dir) {
  for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) refuse(path, "'" + p.string() + "' is not a directory");
      break;
    }
    if (errno != ENOTDIR && errno != ENOENT) break;
    if (p == p.parent_path()) break;
  }
  refuse(path, "directory '" + dir.string() + "' does not exist");
}

/// The name of temporary number `k` of this process for the file named `name`:
/// "<name>.tcsolve-tmp-<pid>-<k>", with <name> cut short (at a UTF-8 character boundary) when
/// the whole would exceed the directory's longest file name, `name_max` bytes.
std::string temporary_name(const std::string& name, long pid, int k, std::size_t name_max) {
  const std::string suffix = std::string(kTemporaryMarker) + std::to_string(pid) + "-" + std::to_string(k);
  if (name.size() + suffix.size() <= name_max) return name + suffix;
  std::size_t keep = name_max > suffix.size() ? name_max - suffix.size() : 1;
  while (keep > 1 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;  // not mid-character
  return name.substr(0, std::max<std::size_t>(keep, 1)) + suffix;
}

/// The rule without the search for stale temporaries; returns the file that will be replaced
/// or created: `path`, or the regular file a symbolic link `path` names (a standard stream's
/// name: `path` itself).
std::string check_rule(const std::string& path, const OutputOptions& options) {
  if (path.empty()) throw InvalidInput("output file name is empty");
  const fs::path name = fs::path(path).filename();
  if (name.empty() || name == "." || name == "..") refuse(path, "names a directory, not a file");
  for (const std::string& input : options.inputs)
    if (!input.empty() && same_file(path, input))
      refuse(path, "is the input file " + input + "; write the output to another file");
  if (const int fd = standard_stream(path); fd >= 0) {
    const int flags = ::fcntl(fd, F_GETFL);
    const char* stream = fd == STDOUT_FILENO ? "the standard output" : "the standard error";
    if (flags < 0) refuse(path, std::string(stream) + " is closed");
    if ((flags & O_ACCMODE) == O_RDONLY) refuse(path, std::string(stream) + " is open for reading only");
    return path;
  }

  std::string target = path;
  struct stat st {};
  bool exists = false;
  if (::lstat(path.c_str(), &st) == 0) {
    exists = true;
    if (S_ISLNK(st.st_mode)) {
      if (::stat(path.c_str(), &st) != 0) {
        const int error = errno;
        if (error == ELOOP) refuse(path, "is a symbolic link loop; refusing to write through it");
        std::error_code ec;
        const fs::path to = fs::read_symlink(path, ec);
        if (error == ENOENT)
          refuse(path, "is a dangling symbolic link to '" + to.string() + "'; refusing to write through it");
        refuse(path, "is a symbolic link that cannot be followed: " + std::string(std::strerror(error)));
      }
      char* real = ::realpath(path.c_str(), nullptr);
      if (!real) refuse(path, "cannot resolve the symbolic link: " + std::string(std::strerror(errno)));
      target = real;
      std::free(real);
    }
  } else if (errno != ENOENT && errno != ENOTDIR) {
    refuse(path, "cannot be examined: " + std::string(std::strerror(errno)));
  }
  if (exists) {
    if (S_ISDIR(st.st_mode)) refuse(path, "is a directory");
    if (!S_ISREG(st.st_mode))
      refuse(path, "is " + kind_of(st.st_mode) + ", not a regular file; refusing to replace it");
    if (!options.force) refuse(path, "exists (use --force to overwrite)");
  }
  const fs::path dir = directory_of(target);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) refuse_missing_directory(path, dir);
  if (::access(dir.c_str(), W_OK) != 0)
    refuse(path, "cannot write in directory '" + dir.string() + "' (permission denied)");
  return target;
}

/// "<pid>-<k>", both decimal: the pid, else 0.
long parse_pid(const std::string& suffix) {
  const std::size_t dash = suffix.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == suffix.size() || dash > 18) return 0;
  const auto digits = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(suffix.substr(0, dash)) || !digits(suffix.substr(dash + 1))) return 0;
  return std::strtol(suffix.substr(0, dash).c_str(), nullptr, 10);
}

/// rename(2) that fails with EEXIST when `to` exists, atomically: renameat2(RENAME_NOREPLACE),
/// else link(2) + unlink(2) where the kernel or file system lacks it; 0 or an errno value.
int rename_no_replace(const std::string& from, const std::string& to) {
#ifdef SYS_renameat2
  if (::syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP && errno != EOPNOTSUPP) return errno;
#endif
  if (::link(from.c_str(), to.c_str()) == 0) {
    ::unlink(from.c_str());
    return 0;
  }
  if (errno != EPERM && errno != ENOSYS && errno != ENOTSUP && errno != EOPNOTSUPP) return errno;
  // Neither: a file system without hard links (FAT). The check and the rename are two steps.
  struct stat st {};
  if (::lstat(to.c_str(), &st) == 0) return EEXIST;
  return std::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

}  // namespace

// --- TempFileRegistry ------------------------------------------------------------------------

int TempFileRegistry::add(const std::string& path) noexcept {
  if (path.empty() || path.size() + 1 > kMaxPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slots_[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) continue;
    std::memcpy(slots_[i].path, path.c_str(), path.size() + 1);
    slots_[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  return -1;
}

void TempFileRegistry::remove(int slot) noexcept {
  if (slot >= 0 && slot < kSlots) slots_[slot].state.store(kFree, std::memory_order_release);
}

void TempFileRegistry::unlink_all() const noexcept {
  for (const Slot& s : slots_)
    if (s.state.load(std::memory_order_acquire) == kLive) ::unlink(s.path);
}

int TempFileRegistry::size() const noexcept {
  int n = 0;
  for (const Slot& s : slots_) n += s.state.load(std::memory_order_acquire) == kLive;
  return n;
}

// --- the rule ----------------------------------------------------------------------------------

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ea), ea);
  const fs::path pb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  if (!ea && !eb) return pa == pb;
  return fs::absolute(a, ea).lexically_normal() == fs::absolute(b, eb).lexically_normal();
}

std::vector<StaleTemporary> check_output(const std::string& path, const OutputOptions& options) {
  const std::string target = check_rule(path, options);
  if (standard_stream(path) >= 0) return {};  // written directly: no temporaries beside it
  return find_stale_temporaries(target);
}

std::vector<StaleTemporary> find_stale_temporaries(const std::string& path) {
  std::vector<StaleTemporary> stale;
  const fs::path file(path);
  std::error_code ec;
  fs::directory_iterator it(directory_of(file), ec);
  if (ec) return stale;
  const long self = static_cast<long>(::getpid());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    const std::size_t at = name.rfind(kTemporaryMarker);
    if (at == std::string::npos || at == 0) continue;
    const long pid = parse_pid(name.substr(at + kTemporaryMarker.size()));
    if (pid <= 0 || pid == self) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (EPERM: another user's)
    stale.push_back({beside(file, name), pid});
  }
  std::sort(stale.begin(), stale.end(),
            [](const StaleTemporary& x, const StaleTemporary& y) { return x.path < y.path; });
  return stale;
}

// --- TemporaryOutput ---------------------------------------------------------------------------

TemporaryOutput::TemporaryOutput(const std::string& path, OutputOptions options)
    : path_(path), options_(std::move(options)) {
  target_ = check_rule(path_, options_);
  if (const int stream = standard_stream(path_); stream >= 0) {
    // Written directly, in order: a pipe, terminal or the shell's file cannot be replaced by a
    // rename, and nothing is created, so nothing is recorded or removed.
    stream_ = true;
    temporary_ = path_;
    fd_ = ::fcntl(stream, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0) refuse(path_, std::string("cannot be written: ") + std::strerror(errno));
    return;
  }
  stale_ = find_stale_temporaries(target_);
  const fs::path target(target_);
  const long name_max = ::pathconf(directory_of(target).c_str(), _PC_NAME_MAX);
  const std::size_t longest = name_max > 0 ? static_cast<std::size_t>(name_max) : 255;  // NAME_MAX
  for (int k = 0; k < 10000; ++k) {
    temporary_ = beside(target, temporary_name(target.filename().string(), ::getpid(), k, longest));
    // Recorded before it exists: a signal in between finds nothing to remove, never a file it
    // does not know of.
    slot_ = options_.temporaries ? options_.temporaries->add(temporary_) : -1;
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
    const int error = errno;
    if (options_.temporaries) options_.temporaries->remove(slot_);
    slot_ = -1;
    if (error != EEXIST)
      refuse(path_, "cannot create a temporary file in '" + directory_of(target).string() +
                        "': " + std::strerror(error));
  }
  refuse(path_, "cannot create a temporary file in '" + directory_of(target).string() +
                    "': too many temporaries of this process");
}

TemporaryOutput::~TemporaryOutput() { discard(); }

void TemporaryOutput::write(const void* data, std::size_t size) {
  if (done_ || fd_ < 0) refuse(path_, "writing failed: the temporary file is closed");
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t wrote = ::write(fd_, p, size);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      const int error = wrote < 0 ? errno : EIO;
      discard();
      refuse(path_, std::string("writing failed: ") + std::strerror(error));
    }
    p += wrote;
    size -= static_cast<std::size_t>(wrote);
  }
}

void TemporaryOutput::publish() {
  if (done_) refuse(path_, "writing failed: the temporary file was removed");
  int error = 0;
  if (stream_) {  // nothing to sync (a pipe or terminal cannot be) or rename
    done_ = true;
    if (fd_ >= 0 && ::close(fd_) != 0 && errno != EINTR) error = errno;
    fd_ = -1;
    if (error != 0) refuse(path_, std::string("writing failed: ") + std::strerror(error));
    return;
  }
  if (fd_ >= 0) {
    if (::fsync(fd_) != 0) error = errno;
    if (::close(fd_) != 0 && error == 0) error = errno;
    fd_ = -1;
  }
  if (error != 0) {
    discard();
    refuse(path_, std::string("writing failed: ") + std::strerror(error));
  }
  // The rule again, now: the name may have become an input's, a link or a FIFO meanwhile.
  std::string target;
  try {
    target = check_rule(path_, options_);
  } catch (...) {
    discard();
    throw;
  }
  if (directory_of(fs::path(target)) != directory_of(fs::path(target_))) {
    discard();
    refuse(path_, "changed while it was being written (a symbolic link now names another directory)");
  }
  error = options_.force ? (std::rename(temporary_.c_str(), target.c_str()) == 0 ? 0 : errno)
                         : rename_no_replace(temporary_, target);
  if (error != 0) {
    discard();
    if (error == EEXIST) refuse(path_, "exists (use --force to overwrite)");
    refuse(path_, std::string("writing failed: ") + std::strerror(error));
  }
  done_ = true;
  if (options_.temporaries) options_.temporaries->remove(slot_);
  slot_ = -1;
}

void TemporaryOutput::discard() noexcept {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (stream_) return;  // written directly: nothing of ours to remove
  ::unlink(temporary_.c_str());  // before it is forgotten: never a file the registry does not know
  if (options_.temporaries) options_.temporaries->remove(slot_);
  slot_ = -1;
}

}  // namespace tcsolve
