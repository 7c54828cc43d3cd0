// Text input that may be gzip-compressed (text_input.hpp): a streambuf over zlib's gzFile.
#include "text_input.hpp"

#include <zlib.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <streambuf>

namespace tcsolve::io_detail {
namespace {

/// Reads through gzread, which decompresses gzip members and passes other bytes unchanged.
class GzipBuffer : public std::streambuf {
 public:
  explicit GzipBuffer(gzFile file) : file_(file) {}
  ~GzipBuffer() override {
    if (file_ != nullptr) gzclose(file_);
  }
  GzipBuffer(const GzipBuffer&) = delete;
  GzipBuffer& operator=(const GzipBuffer&) = delete;

  /// zlib's message for the last error ("" when none).
  std::string error() const { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int got = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    if (got < 0) {
      int code = Z_OK;
      const char* message = gzerror(file_, &code);
      error_ = message != nullptr ? message : "read error";
      throw std::ios_base::failure(error_);  // the istream turns it into badbit
    }
    if (got == 0) {
      int code = Z_OK;
      gzerror(file_, &code);
      if (code != Z_OK && code != Z_STREAM_END) {
        const char* message = gzerror(file_, &code);
        error_ = message != nullptr ? message : "truncated";
        throw std::ios_base::failure(error_);
      }
      return traits_type::eof();
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile file_;
  std::array<char, 1 << 16> buffer_{};
  std::string error_;
};

/// An istream that owns its GzipBuffer.
class GzipStream : public std::istream {
 public:
  explicit GzipStream(gzFile file) : std::istream(nullptr), buffer_(file) { rdbuf(&buffer_); }
  std::string error() const { return buffer_.error(); }

 private:
  GzipBuffer buffer_;
};

}  // namespace

bool is_gzip_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  return in.read(reinterpret_cast<char*>(magic), 2) && magic[0] == 0x1f && magic[1] == 0x8b;
}

std::unique_ptr<std::istream> open_text(const std::string& path) {
  if (!is_gzip_file(path)) {
    auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
    if (!*in) return nullptr;
    return in;
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return nullptr;
  gzbuffer(file, 1 << 17);
  return std::make_unique<GzipStream>(file);
}

std::string gzip_error(const std::istream& in) {
  if (const auto* gz = dynamic_cast<const GzipStream*>(&in)) return gz->error();
  return {};
}

}  // namespace tcsolve::io_detail
