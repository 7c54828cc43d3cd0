// ZIP archives read for NumPy's .npz files (np.savez: entries stored; np.savez_compressed:
// entries deflated): the central directory (ZIP64 records and extra fields included, as NumPy's
// zipfile writes them), each entry's local header, and its bytes, inflated by zlib and checked
// against the CRC-32 of the directory. No writing, no encryption, one disk. Internal to
// tcsolve::io.
#pragma once

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tcsolve::io_detail {

/// Whether the file starts with a ZIP local file header's signature ("PK\3\4") or is an empty
/// archive ("PK\5\6"). Never throws.
bool is_zip_file(const std::string& path);

/// One entry as the central directory describes it (ZIP64 fields already applied).
struct ZipEntry {
  std::string name;
  std::uint16_t method = 0;  ///< 0 stored, 8 deflate; others are refused when read
  std::uint16_t flags = 0;
  std::uint32_t crc32 = 0;
  std::uint64_t compressed_size = 0, size = 0;  ///< size: uncompressed
  std::uint64_t local_header_offset = 0;
};

/// An archive opened and its central directory read. Every error is an InvalidInput
/// "<file>: <problem>" or "<file>: <entry>: <problem>".
class ZipArchive {
 public:
  /// Opens `path` and reads its end record and central directory. Throws InvalidInput when the
  /// file is missing, unreadable, not a ZIP archive, truncated (no end record, a directory
  /// beyond the file's end) or spread over several disks.
  explicit ZipArchive(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  /// The entry named `name` exactly; nullptr when there is none.
  const ZipEntry* find(std::string_view name) const;

  /// The entry's first min(limit, size) bytes, decompressed. When the whole entry is read its
  /// CRC-32 is checked. Throws InvalidInput naming the file and the entry for an unknown
  /// compression method, encryption, a local header that does not match, data beyond the end of
  /// the file (truncated), corrupt deflate data, a size or CRC-32 that differs from the
  /// directory's.
  std::string read(const ZipEntry& entry, std::uint64_t limit = std::numeric_limits<std::uint64_t>::max());

 private:
  [[noreturn]] void fail(const std::string& problem) const;
  [[noreturn]] void fail(const ZipEntry& entry, const std::string& problem) const;
  /// `count` bytes at `offset`, or a failure naming `what` when the file ends before them.
  std::string bytes_at(std::uint64_t offset, std::uint64_t count, const std::string& what);
  void read_directory();

  std::string path_;
  std::ifstream in_;
  std::uint64_t file_size_ = 0;
  std::vector<ZipEntry> entries_;
};

}  // namespace tcsolve::io_detail
