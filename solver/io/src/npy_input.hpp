// NumPy's .npy format read into FP64 matrices: the preamble and header of versions 1.0, 2.0 and
// 3.0 (the Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}), the
// dtypes a system can hold (little-endian float64, float32 and integers, converted to double),
// and C or Fortran order. Byte-level only: where the bytes come from (a file, an entry of a
// .npz archive) is the caller's. Internal to tcsolve::io.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tcsolve::io_detail {

/// An array's name for messages: every error is InvalidInput "<file>: <array>: <problem>".
struct NpyName {
  std::string file, array;
  [[noreturn]] void fail(const std::string& problem) const;
};

/// Bytes of the preamble before the header's length field is known: the magic string
/// "\x93NUMPY", the version (2 bytes) and a 4-byte length (a 2-byte one in version 1.0).
constexpr std::size_t kNpyPreambleBytes = 12;
/// Longest header accepted (NumPy writes a few hundred bytes; its own reader stops at 10000 by
/// default): a longer one is refused rather than read.
constexpr std::uint64_t kNpyMaxHeaderBytes = std::uint64_t{1} << 20;

/// What a .npy header declares.
struct NpyHeader {
  int major = 1, minor = 0;
  std::string descr;  ///< as written, e.g. "<f8"
  char kind = 'f';    ///< 'f' float, 'i' signed integer, 'u' unsigned integer
  int item_bytes = 8;
  bool fortran_order = false;  ///< true: column-major (element (i, j) at i + j rows)
  std::vector<std::uint64_t> shape;
  std::uint64_t data_offset = 0;  ///< bytes of preamble and header: where the data starts
  std::uint64_t elements() const;
  std::uint64_t data_bytes() const { return elements() * static_cast<std::uint64_t>(item_bytes); }
  /// "(3, 3) float64", "(5,) int32": what a NumPy user recognises.
  std::string describe() const;
};

/// The data offset the preamble declares (preamble + header). `start` holds the first bytes of
/// the array: kNpyPreambleBytes of them, or all there are when the array is shorter. Fails when
/// they are not NPY's magic string, the version is not 1.0, 2.0 or 3.0, the file is too short,
/// or the header is longer than kNpyMaxHeaderBytes.
std::uint64_t npy_data_offset(std::string_view start, const NpyName& name);

/// Parses the header. `bytes` holds at least npy_data_offset(bytes) bytes. Fails naming the
/// problem for a malformed header, a big-endian or non-native byte order, a dtype other than a
/// little-endian float64/float32/integer ('O' object arrays, complex, bool, strings and
/// structured dtypes are named as such), or a shape whose byte count overflows.
NpyHeader parse_npy_header(std::string_view bytes, const NpyName& name);

/// The array as an FP64 matrix: shape (r,) -> r x 1, (r, c) -> r x c with M(i, j) = the array's
/// [i][j] (C order: at i c + j; Fortran order: at i + j r). `data` holds the bytes after the
/// header, at least header.data_bytes() of them (the caller checks for truncation). Fails for
/// any other number of dimensions, NaN or inf (named by its index, as NumPy indexes the array),
/// and an integer beyond 2^53 in magnitude (not exact in float64).
Eigen::MatrixXd npy_matrix(const NpyHeader& header, std::string_view data, const NpyName& name);

}  // namespace tcsolve::io_detail
