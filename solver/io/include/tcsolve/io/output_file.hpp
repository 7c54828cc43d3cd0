// The one rule for every file tcsolve writes (docs/architecture.md, "HDF5 files"): solution and system
// files, K-means results, CSV tables and plots.
//   - never an input of the same command: the same file by device and inode (stat(2), so hard
//     links and symbolic links to an input count), or, when one of them does not exist, the same
//     absolute normal path;
//   - an existing file only with force, and only a regular file: a directory, FIFO, socket,
//     device, dangling symbolic link or link loop is refused even with force. A symbolic link to
//     a regular file is written through: the file it names is replaced, the link kept;
//   - the names of the standard streams (/dev/stdout, /dev/stderr, /dev/fd/1|2,
//     /proc/self/fd/1|2) are written directly to the descriptor, in order, without force:
//     a pipe or terminal cannot be replaced by a rename, and a file the shell opened for the
//     stream must stay the one it writes to; nothing is created there or removed;
//   - written to a temporary "<name>.tcsolve-tmp-<pid>-<k>" beside the file (created with
//     O_EXCL, mode 0666 less the umask; <name> cut short when the whole would exceed the
//     directory's longest file name, NAME_MAX), synced, then published: with force rename(2) over it;
//     without force renameat2(RENAME_NOREPLACE), or link(2) + unlink(2) where the file system
//     lacks it, so that of two runs writing the same new file exactly one wins and the other is
//     refused "<path>: exists (use --force to overwrite)";
//   - every live temporary recorded in a TempFileRegistry the caller owns, which a signal
//     handler can empty (TempFileRegistry::unlink_all is async-signal-safe);
//   - temporaries of killed runs (their process gone) are found and returned, never printed:
//     the library does not print.
// Every refusal and failure is one InvalidInput "<path>: <problem>".
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tcsolve {

/// The marker in every temporary's name: "<name>.tcsolve-tmp-<pid>-<k>".
inline constexpr std::string_view kTemporaryMarker = ".tcsolve-tmp-";

/// The temporary files being written, for removal from a signal handler: a fixed array of
/// slots, each a path and an atomic state, so that recording and forgetting a path never
/// allocates or locks and unlink_all() needs nothing but atomic loads and unlink(2). One
/// instance belongs to the program (the app keeps one static instance) and reaches the writers
/// through OutputOptions::temporaries.
class TempFileRegistry {
 public:
  static constexpr int kSlots = 32;              ///< temporaries alive at once
  static constexpr std::size_t kMaxPath = 4096;  ///< bytes of a path, its terminating NUL included

  TempFileRegistry() = default;
  TempFileRegistry(const TempFileRegistry&) = delete;
  TempFileRegistry& operator=(const TempFileRegistry&) = delete;

  /// Records `path`; returns its slot, or -1 when every slot is taken or the path is too long
  /// (the file is then written without the protection). Thread-safe.
  int add(const std::string& path) noexcept;
  /// Forgets the path of `slot` (a value add returned; -1 is ignored). Thread-safe.
  void remove(int slot) noexcept;
  /// Unlinks every recorded path and leaves the records in place. Async-signal-safe.
  void unlink_all() const noexcept;
  /// Paths recorded now (tests).
  int size() const noexcept;

 private:
  enum State : int { kFree = 0, kFilling = 1, kLive = 2 };
  struct Slot {
    std::atomic<int> state{kFree};
    char path[kMaxPath] = {};
  };
  static_assert(std::atomic<int>::is_always_lock_free, "the registry must be lock-free for signal handlers");
  Slot slots_[kSlots];
};

/// How an output may be written.
struct OutputOptions {
  bool force = false;               ///< replace an existing regular file
  std::vector<std::string> inputs;  ///< the command's input files (empty names ignored): never written
  TempFileRegistry* temporaries = nullptr;  ///< where live temporaries are recorded; null: nowhere
};

/// A temporary file left by a tcsolve run that is gone (kill(pid, 0) fails with ESRCH).
struct StaleTemporary {
  std::string path;  ///< as found: the output's directory joined with the name
  long pid = 0;      ///< the process that created it
};

/// Whether `a` and `b` name the same file: equal st_dev and st_ino after following symbolic
/// links when both exist, else equal absolute, lexically normal paths (with the symbolic links
/// of their existing parts resolved).
bool same_file(const std::string& a, const std::string& b);

/// Checks `path` by the rule before anything is written. Throws InvalidInput "<path>: <problem>"
/// ("output file name is empty" alone for an empty name), in this order: "is the input file
/// <input>; write the output to another file" (even with force); "is a dangling symbolic link
/// to '<target>'; ..."; "is a directory"; "is a FIFO (a socket, a character device, ...), not a
/// regular file; refusing to replace it"; "exists (use --force to overwrite)" without force;
/// "'<ancestor>' is not a directory" (a regular file named as a folder of the path);
/// "directory '<dir>' does not exist"; "cannot write in directory '<dir>' (permission denied)".
/// A standard stream's name (/dev/stdout, ...) passes when that descriptor is open for writing
/// ("the standard output is closed" otherwise). Returns the temporaries of killed runs in the
/// directory it would be written in (none for a standard stream).
std::vector<StaleTemporary> check_output(const std::string& path, const OutputOptions& options);

/// Temporaries "<name>.tcsolve-tmp-<pid>-<k>" (any name) in the directory `path` would be
/// written in, whose process is gone; sorted by path. Never throws (an unreadable directory
/// gives none).
std::vector<StaleTemporary> find_stale_temporaries(const std::string& path);

/// One output being written: its temporary beside the file, recorded in the registry, open for
/// writing; published by publish(), removed (and forgotten) by the destructor otherwise.
class TemporaryOutput {
 public:
  /// check_output(path, options), then creates the temporary "<name>.tcsolve-tmp-<pid>-<k>"
  /// (k the first free number; <name> shortened to fit NAME_MAX) beside the file that will be
  /// replaced, recorded before it is created. A standard stream's name: no temporary, fd() a
  /// duplicate of the stream's descriptor, temporary() the name itself, publish() closes it.
  /// Throws InvalidInput.
  TemporaryOutput(const std::string& path, OutputOptions options);
  TemporaryOutput(const TemporaryOutput&) = delete;
  TemporaryOutput& operator=(const TemporaryOutput&) = delete;
  ~TemporaryOutput();

  const std::string& path() const { return path_; }            ///< the output as named
  const std::string& temporary() const { return temporary_; }  ///< the temporary's path
  /// The temporary's descriptor (O_WRONLY, close-on-exec), -1 once published or discarded.
  int fd() const { return fd_; }
  /// What check_output returned.
  const std::vector<StaleTemporary>& stale_temporaries() const { return stale_; }

  /// Appends `size` bytes at the descriptor's offset. Throws InvalidInput "<path>: writing
  /// failed: <reason>" (the temporary is then removed).
  void write(const void* data, std::size_t size);
  /// Syncs and closes the temporary, checks the rule again, and puts the temporary in the
  /// file's place (force: rename over it; else atomically only if the name is still free).
  /// Throws InvalidInput (the temporary removed): "exists (use --force to overwrite)" when
  /// another process created the file meanwhile, or the failure.
  void publish();
  /// Removes the temporary now (idempotent; publish() afterwards throws).
  void discard() noexcept;

 private:
  std::string path_, target_, temporary_;  // target_: path_, or the regular file its link names
  OutputOptions options_;
  std::vector<StaleTemporary> stale_;
  int fd_ = -1;
  int slot_ = -1;
  bool done_ = false;    // published or discarded
  bool stream_ = false;  // a standard stream's name: written directly
};

}  // namespace tcsolve
