// ZIP archives read for .npz files (zip_archive.hpp), after PKWARE's APPNOTE.TXT (6.3):
//
//   [local header 1][data 1] ... [local header k][data k][central directory][ZIP64 end record]
//   [ZIP64 end locator][end of central directory record (+ comment)]
//
// The end record is searched backwards from the file's end (it is followed by a comment of at
// most 65535 bytes). Where one of its fields is saturated (0xFFFF, 0xFFFFFFFF) the ZIP64 end
// record holds the real value; where a directory entry's sizes or offset are saturated, its
// ZIP64 extra field (id 0x0001) holds them, in the order size, compressed size, offset. NumPy's
// np.savez writes every entry with force_zip64, so its local headers carry saturated sizes: the
// sizes are taken from the central directory, and a local header is read only for the length of
// its name and extra field. Integers are little-endian. Deflated data (method 8) is a raw
// deflate stream: zlib's inflate with windowBits -MAX_WBITS.
#include "zip_archive.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::io_detail {
namespace {

constexpr std::uint32_t kLocalHeaderSignature = 0x04034b50, kCentralSignature = 0x02014b50,
                        kEndSignature = 0x06054b50, kZip64EndSignature = 0x06064b50,
                        kZip64LocatorSignature = 0x07064b50;
constexpr std::size_t kEndRecordBytes = 22, kZip64LocatorBytes = 20, kZip64EndBytes = 56, kCentralBytes = 46,
                      kLocalHeaderBytes = 30, kMaxComment = 65535;
/// Bytes read from the file or handed to zlib at a time (zlib counts in 32-bit uInt).
constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;

std::uint64_t le(std::string_view s, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)]);
  return v;
}
std::uint16_t u16(std::string_view s, std::size_t at) { return static_cast<std::uint16_t>(le(s, at, 2)); }
std::uint32_t u32(std::string_view s, std::size_t at) { return static_cast<std::uint32_t>(le(s, at, 4)); }
std::uint64_t u64(std::string_view s, std::size_t at) { return le(s, at, 8); }

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string method_name(std::uint16_t method) {
  switch (method) {
    case 1:
      return "shrink";
    case 6:
      return "implode";
    case 9:
      return "deflate64";
    case 12:
      return "bzip2";
    case 14:
      return "lzma";
    case 93:
      return "zstd";
    case 95:
      return "xz";
    case 99:
      return "AES encryption";
    default:
      return "unknown";
  }
}

/// zlib's CRC-32 of `data`, in pieces that fit its 32-bit length.
std::uint32_t crc_of(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t at = 0; at < data.size(); at += kChunk) {
    const std::size_t n = std::min<std::size_t>(kChunk, data.size() - at);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + at), static_cast<uInt>(n));
  }
  return static_cast<std::uint32_t>(crc);
}

/// A raw inflate stream, ended on every way out.
class Inflater {
 public:
  Inflater() {
    stream_.zalloc = Z_NULL;
    stream_.zfree = Z_NULL;
    stream_.opaque = Z_NULL;
    stream_.next_in = Z_NULL;
    stream_.avail_in = 0;
    ok_ = inflateInit2(&stream_, -MAX_WBITS) == Z_OK;
  }
  ~Inflater() {
    if (ok_) inflateEnd(&stream_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  bool ok() const { return ok_; }
  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
  bool ok_ = false;
};

}  // namespace

bool is_zip_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  if (!in.read(magic, 4)) return false;
  const std::string_view m(magic, 4);
  return m == std::string_view("PK\3\4", 4) || m == std::string_view("PK\5\6", 4);
}

ZipArchive::ZipArchive(const std::string& path) : path_(path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) fail("no such file");
  if (std::filesystem::is_directory(st)) fail("is a directory");
  in_.open(path, std::ios::binary);
  if (!in_) fail("cannot be read (permission denied?)");
  file_size_ = std::filesystem::file_size(path, ec);
  if (ec) fail("cannot read its size");
  read_directory();
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  for (const ZipEntry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

void ZipArchive::fail(const std::string& problem) const { throw InvalidInput(path_ + ": " + problem); }

void ZipArchive::fail(const ZipEntry& entry, const std::string& problem) const {
  throw InvalidInput(path_ + ": " + entry.name + ": " + problem);
}

std::string ZipArchive::bytes_at(std::uint64_t offset, std::uint64_t count, const std::string& what) {
  if (offset > file_size_ || count > file_size_ - offset)
    fail("truncated: " + what + " (bytes " + std::to_string(offset) + " to " +
         std::to_string(offset + count) + ") lies beyond the file's end (" + std::to_string(file_size_) +
         " bytes)");
  std::string s(static_cast<std::size_t>(count), '\0');
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
  if (count > 0 && !in_.read(s.data(), static_cast<std::streamsize>(count)))
    fail("read error at byte " + std::to_string(offset));
  return s;
}

void ZipArchive::read_directory() {
  const bool starts_as_zip = is_zip_file(path_);
  if (file_size_ < kEndRecordBytes)
    fail(file_size_ == 0 ? "empty file (0 bytes), not a ZIP archive (.npz)"
                         : "too short (" + std::to_string(file_size_) + " bytes) for a ZIP archive (.npz)" +
                               (starts_as_zip ? ": truncated" : ""));
  // The end record: the last "PK\5\6" whose comment reaches exactly the file's end.
  const std::uint64_t tail_bytes = std::min<std::uint64_t>(file_size_, kEndRecordBytes + kMaxComment);
  const std::uint64_t tail_start = file_size_ - tail_bytes;
  const std::string tail = bytes_at(tail_start, tail_bytes, "the end record");
  std::size_t end_at = std::string::npos;
  for (std::size_t p = tail.size() - kEndRecordBytes + 1; p-- > 0;) {
    if (u32(tail, p) != kEndSignature) continue;
    if (p + kEndRecordBytes + u16(tail, p + 20) != tail.size()) continue;
    end_at = p;
    break;
  }
  if (end_at == std::string::npos)
    fail(starts_as_zip ? "truncated: no ZIP end-of-central-directory record (the archive was cut short)"
                       : "not a ZIP archive (a .npz is one, as np.savez and np.savez_compressed write it)");
  const std::string_view end(tail.data() + end_at, kEndRecordBytes);
  std::uint64_t disk = u16(end, 4), directory_disk = u16(end, 6), entries_here = u16(end, 8),
                entries_total = u16(end, 10), directory_size = u32(end, 12), directory_offset = u32(end, 16);
  if (entries_here == 0xFFFF || entries_total == 0xFFFF || directory_size == 0xFFFFFFFF ||
      directory_offset == 0xFFFFFFFF) {
    const std::uint64_t end_position = tail_start + end_at;
    if (end_position < kZip64LocatorBytes) fail("damaged: a ZIP64 archive without its end locator");
    const std::string locator =
        bytes_at(end_position - kZip64LocatorBytes, kZip64LocatorBytes, "the ZIP64 end locator");
    if (u32(locator, 0) != kZip64LocatorSignature) fail("damaged: a ZIP64 archive without its end locator");
    if (u32(locator, 16) > 1)
      fail("spread over " + std::to_string(u32(locator, 16)) + " disks (not supported)");
    const std::string record = bytes_at(u64(locator, 8), kZip64EndBytes, "the ZIP64 end record");
    if (u32(record, 0) != kZip64EndSignature) fail("damaged: no ZIP64 end record where its locator points");
    disk = u32(record, 16);
    directory_disk = u32(record, 20);
    entries_here = u64(record, 24);
    entries_total = u64(record, 32);
    directory_size = u64(record, 40);
    directory_offset = u64(record, 48);
  }
  if (disk != 0 || directory_disk != 0 || entries_here != entries_total)
    fail("spread over several disks (not supported)");
  if (entries_total > directory_size / kCentralBytes + 1)
    fail("damaged: " + std::to_string(entries_total) + " entries declared in a central directory of " +
         std::to_string(directory_size) + " bytes");
  const std::string directory = bytes_at(directory_offset, directory_size, "the central directory");
  std::size_t at = 0;
  for (std::uint64_t k = 0; k < entries_total; ++k) {
    if (at + kCentralBytes > directory.size() || u32(directory, at) != kCentralSignature)
      fail("damaged central directory (entry " + std::to_string(k + 1) + " of " +
           std::to_string(entries_total) + ")");
    ZipEntry e;
    e.flags = u16(directory, at + 8);
    e.method = u16(directory, at + 10);
    e.crc32 = u32(directory, at + 16);
    e.compressed_size = u32(directory, at + 20);
    e.size = u32(directory, at + 24);
    const std::size_t name_bytes = u16(directory, at + 28), extra_bytes = u16(directory, at + 30),
                      comment_bytes = u16(directory, at + 32);
    const std::uint16_t start_disk = u16(directory, at + 34);
    e.local_header_offset = u32(directory, at + 42);
    if (at + kCentralBytes + name_bytes + extra_bytes + comment_bytes > directory.size())
      fail("damaged central directory (entry " + std::to_string(k + 1) + " runs past its end)");
    e.name = directory.substr(at + kCentralBytes, name_bytes);
    // ZIP64 extra field: the saturated fields, in this order, 8 bytes each.
    const std::string_view extra(directory.data() + at + kCentralBytes + name_bytes, extra_bytes);
    for (std::size_t x = 0; x + 4 <= extra.size();) {
      const std::uint16_t id = u16(extra, x), length = u16(extra, x + 2);
      if (x + 4 + length > extra.size()) break;
      if (id == 0x0001) {
        std::size_t f = x + 4;
        const std::size_t f_end = f + length;
        auto take = [&](std::uint64_t& field) {
          if (f + 8 > f_end) fail(e, "damaged ZIP64 extra field");
          field = u64(extra, f);
          f += 8;
        };
        if (e.size == 0xFFFFFFFF) take(e.size);
        if (e.compressed_size == 0xFFFFFFFF) take(e.compressed_size);
        if (e.local_header_offset == 0xFFFFFFFF) take(e.local_header_offset);
      }
      x += 4 + length;
    }
    if (start_disk != 0 && start_disk != 0xFFFF)
      fail(e, "on another disk (multi-disk archives are not supported)");
    entries_.push_back(std::move(e));
    at += kCentralBytes + name_bytes + extra_bytes + comment_bytes;
  }
}

std::string ZipArchive::read(const ZipEntry& entry, std::uint64_t limit) {
  if (entry.flags & 1) fail(entry, "encrypted (not supported)");
  if (entry.method != 0 && entry.method != 8)
    fail(entry, "compressed by method " + std::to_string(entry.method) + " (" + method_name(entry.method) +
                    "); supported: stored (0, np.savez) and deflate (8, np.savez_compressed)");
  const std::string local =
      bytes_at(entry.local_header_offset, kLocalHeaderBytes, entry.name + "'s local header");
  if (u32(local, 0) != kLocalHeaderSignature)
    fail(entry, "damaged: no local header at byte " + std::to_string(entry.local_header_offset));
  const std::uint64_t name_bytes = u16(local, 26), extra_bytes = u16(local, 28);
  if (bytes_at(entry.local_header_offset + kLocalHeaderBytes, name_bytes, entry.name + "'s local header") !=
      entry.name)
    fail(entry, "damaged: its local header names another entry");
  const std::uint64_t data_start = entry.local_header_offset + kLocalHeaderBytes + name_bytes + extra_bytes;
  if (data_start > file_size_ || entry.compressed_size > file_size_ - data_start)
    fail(entry, "truncated: its data (" + std::to_string(entry.compressed_size) + " bytes from byte " +
                    std::to_string(data_start) + ") runs past the file's end (" + std::to_string(file_size_) +
                    " bytes)");
  const std::uint64_t wanted = std::min(limit, entry.size);
  const bool whole = wanted == entry.size;
  std::string out;
  if (entry.method == 0) {
    if (entry.compressed_size != entry.size)
      fail(entry, "stored (not compressed) but its sizes differ: " + std::to_string(entry.compressed_size) +
                      " and " + std::to_string(entry.size) + " bytes");
    out = bytes_at(data_start, wanted, entry.name + "'s data");
  } else {
    Inflater inflater;
    if (!inflater.ok()) fail(entry, "zlib could not start inflating");
    z_stream& z = inflater.stream();
    out.assign(static_cast<std::size_t>(wanted), '\0');
    std::string chunk;
    std::uint64_t read_so_far = 0, produced = 0;
    bool ended = false;
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(data_start));
    while (produced < wanted || (whole && !ended)) {
      if (z.avail_in == 0 && read_so_far < entry.compressed_size) {
        const std::uint64_t n = std::min(kChunk, entry.compressed_size - read_so_far);
        chunk.resize(static_cast<std::size_t>(n));
        if (!in_.read(chunk.data(), static_cast<std::streamsize>(n)))
          fail(entry, "read error at byte " + std::to_string(data_start + read_so_far));
        read_so_far += n;
        z.next_in = reinterpret_cast<Bytef*>(chunk.data());
        z.avail_in = static_cast<uInt>(n);
      }
      char overflow = 0;  // room for one byte past the directory's size: a longer stream is named
      const bool into_overflow = produced == wanted;
      z.next_out = into_overflow ? reinterpret_cast<Bytef*>(&overflow)
                                 : reinterpret_cast<Bytef*>(out.data() + produced);
      z.avail_out = into_overflow ? 1 : static_cast<uInt>(std::min(kChunk, wanted - produced));
      const uInt before = z.avail_out;
      const int ret = inflate(&z, Z_NO_FLUSH);
      const uInt made = before - z.avail_out;
      if (into_overflow && made > 0)
        fail(entry,
             "inflates to more than the " + std::to_string(entry.size) + " bytes its directory entry says");
      produced += made;
      if (ret == Z_STREAM_END) {
        ended = true;
        break;
      }
      if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_MEM_ERROR || ret == Z_STREAM_ERROR)
        fail(entry, "corrupt deflate data (zlib: " +
                        (z.msg ? std::string(z.msg) : "error " + std::to_string(ret)) + ")");
      if (ret == Z_BUF_ERROR && z.avail_in == 0 && read_so_far == entry.compressed_size)
        fail(entry, produced < entry.size
                        ? "truncated: its deflate stream stops after " + std::to_string(produced) + " of " +
                              std::to_string(entry.size) + " bytes"
                        : std::string("truncated: its deflate stream has no end"));
    }
    if (ended && produced < wanted)
      fail(entry, "inflates to " + std::to_string(produced) + " bytes, its directory entry says " +
                      std::to_string(entry.size));
  }
  if (whole) {
    const std::uint32_t crc = crc_of(out);
    if (crc != entry.crc32)
      fail(entry, "CRC-32 mismatch (the directory says " + hex32(entry.crc32) + ", the data gives " +
                      hex32(crc) + "): a damaged archive");
  }
  return out;
}

}  // namespace tcsolve::io_detail
