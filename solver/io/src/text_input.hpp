// Text input that may be gzip-compressed (Matrix Market's .mtx.gz): a std::istream over the
// file's bytes, decompressed as they are read (zlib's gzread, which also passes an uncompressed
// file through unchanged), so a large file is never held whole. Internal to tcsolve::io.
#pragma once

#include <istream>
#include <memory>
#include <string>

namespace tcsolve::io_detail {

/// Whether the file starts with gzip's magic bytes (1f 8b).
bool is_gzip_file(const std::string& path);

/// The file's text, decompressed when it is gzip; nullptr when it cannot be opened. A corrupt or
/// truncated gzip stream sets the stream's badbit, and gzip_error() says why.
std::unique_ptr<std::istream> open_text(const std::string& path);

/// zlib's description of the last error of a stream from open_text ("" when none or not gzip).
std::string gzip_error(const std::istream& in);

}  // namespace tcsolve::io_detail
