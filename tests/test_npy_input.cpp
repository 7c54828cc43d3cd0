// NumPy inputs (tcsolve::io's numpy_system, npy_input, zip_archive): .npy arrays written here
// byte by byte as np.save writes them (header versions 1.0, 2.0 and 3.0; C and Fortran order;
// float64, float32 and int32), .npz archives written here as np.savez (entries stored, in ZIP64
// form) and np.savez_compressed (entries deflated, raw windowBits -15) write them. The values
// read back are bitwise the values written; every refusal names the file, the array and the
// problem; and `tcsolve solve` converges on a .npz and on A.npy with --rhs b.npy. No Python.
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/io/numpy_system.hpp"
#include "tcsolve/runtime/error.hpp"
#include "temp_dir.hpp"

namespace {

using Bytes = std::string;

void put_le(Bytes& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

/// The shape as NumPy's header writes it: "(3, 3)", "(3,)".
std::string shape_literal(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// A .npy file's bytes: preamble, the header dict padded with spaces to a multiple of 64 bytes
/// and ended by '\n' (as numpy.lib.format writes it), then `data`.
Bytes npy(const std::string& descr, bool fortran, const std::vector<std::size_t>& shape, const Bytes& data,
          int major = 1) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape_literal(shape) + ", }";
  const std::size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  Bytes out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  put_le(out, header.size(), major == 1 ? 2 : 4);
  return out + header + data;
}

/// The elements of the row-major values `v` (rows x cols) as T, in C or Fortran order.
template <typename T>
Bytes elements(const std::vector<double>& v, std::size_t rows, std::size_t cols, bool fortran) {
  Bytes out;
  for (std::size_t k = 0; k < rows * cols; ++k) {
    const std::size_t i = fortran ? k % rows : k / cols, j = fortran ? k / rows : k % cols;
    const T t = static_cast<T>(v[i * cols + j]);
    char raw[sizeof(T)];
    std::memcpy(raw, &t, sizeof(T));
    out.append(raw, sizeof(T));
  }
  return out;
}

void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

Bytes read_file_bytes(const std::string& path) { return tcsolve::test::read_file(path); }

/// A raw deflate stream (no zlib or gzip wrapper: windowBits -15), as a ZIP entry holds it.
Bytes deflate_raw(const Bytes& in) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  Bytes out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Entry {
  std::string name;
  Bytes data;
};

/// A ZIP archive's bytes. deflated: method 8, as np.savez_compressed; else stored (method 0).
/// zip64: sizes saturated in the local and central headers and given in ZIP64 extra fields, and a
/// ZIP64 end record and locator: what Python's zipfile writes for np.savez (force_zip64).
/// method_override: every entry claims that method (an unknown compression).
Bytes zip(const std::vector<Entry>& entries, bool deflated, bool zip64 = false, int method_override = -1) {
  Bytes out, directory;
  for (const Entry& e : entries) {
    const Bytes body = deflated ? deflate_raw(e.data) : e.data;
    const std::uint32_t crc = static_cast<std::uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())));
    const int method = method_override >= 0 ? method_override : deflated ? 8 : 0;
    const std::uint64_t offset = out.size();
    Bytes extra;
    if (zip64) {
      put_le(extra, 1, 2);
      put_le(extra, 16, 2);
      put_le(extra, e.data.size(), 8);
      put_le(extra, body.size(), 8);
    }
    // local header
    put_le(out, 0x04034b50, 4);
    put_le(out, zip64 ? 45 : 20, 2);
    put_le(out, 0, 2);
    put_le(out, static_cast<std::uint64_t>(method), 2);
    put_le(out, 0, 4);  // time, date
    put_le(out, crc, 4);
    put_le(out, zip64 ? 0xFFFFFFFF : body.size(), 4);
    put_le(out, zip64 ? 0xFFFFFFFF : e.data.size(), 4);
    put_le(out, e.name.size(), 2);
    put_le(out, extra.size(), 2);
    out += e.name + extra + body;
    // central directory entry
    Bytes central_extra;
    if (zip64) {
      put_le(central_extra, 1, 2);
      put_le(central_extra, 24, 2);
      put_le(central_extra, e.data.size(), 8);
      put_le(central_extra, body.size(), 8);
      put_le(central_extra, offset, 8);
    }
    put_le(directory, 0x02014b50, 4);
    put_le(directory, zip64 ? 45 : 20, 2);
    put_le(directory, zip64 ? 45 : 20, 2);
    put_le(directory, 0, 2);
    put_le(directory, static_cast<std::uint64_t>(method), 2);
    put_le(directory, 0, 4);
    put_le(directory, crc, 4);
    put_le(directory, zip64 ? 0xFFFFFFFF : body.size(), 4);
    put_le(directory, zip64 ? 0xFFFFFFFF : e.data.size(), 4);
    put_le(directory, e.name.size(), 2);
    put_le(directory, central_extra.size(), 2);
    put_le(directory, 0, 2);  // comment
    put_le(directory, 0, 2);  // disk
    put_le(directory, 0, 2);  // internal attributes
    put_le(directory, 0, 4);  // external attributes
    put_le(directory, zip64 ? 0xFFFFFFFF : offset, 4);
    directory += e.name + central_extra;
  }
  const std::uint64_t directory_offset = out.size();
  out += directory;
  if (zip64) {
    const std::uint64_t record_offset = out.size();
    put_le(out, 0x06064b50, 4);
    put_le(out, 44, 8);
    put_le(out, 45, 2);
    put_le(out, 45, 2);
    put_le(out, 0, 4);
    put_le(out, 0, 4);
    put_le(out, entries.size(), 8);
    put_le(out, entries.size(), 8);
    put_le(out, directory.size(), 8);
    put_le(out, directory_offset, 8);
    put_le(out, 0x07064b50, 4);
    put_le(out, 0, 4);
    put_le(out, record_offset, 8);
    put_le(out, 1, 4);
  }
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 2);
  put_le(out, 0, 2);
  put_le(out, zip64 ? 0xFFFF : entries.size(), 2);
  put_le(out, zip64 ? 0xFFFF : entries.size(), 2);
  put_le(out, zip64 ? 0xFFFFFFFF : directory.size(), 4);
  put_le(out, zip64 ? 0xFFFFFFFF : directory_offset, 4);
  put_le(out, 0, 2);
  return out;
}

/// A diagonally dominant, non-symmetric n x n matrix (row-major values) whose entries need all
/// of float64's bits (thirds, sevenths), and the float32-exact variant.
std::vector<double> matrix_values(std::size_t n, bool float32_exact) {
  std::vector<double> v(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double a = (i == j) ? 4.0 * static_cast<double>(n)
                          : (static_cast<double>(i) - 2.0 * static_cast<double>(j)) / 3.0 +
                                1.0 / static_cast<double>(7 + i + j);
      if (float32_exact) a = static_cast<double>(static_cast<float>(a));
      v[i * n + j] = a;
    }
  return v;
}

std::vector<double> vector_values(std::size_t n, std::size_t nrhs) {
  std::vector<double> v(n * nrhs);
  for (std::size_t k = 0; k < v.size(); ++k)
    v[k] = std::ldexp(1.0 + static_cast<double>(k) / 16.0, static_cast<int>(k % 5) - 2);
  return v;
}

/// Bitwise: every element of m (rows x cols) is exactly the row-major value.
bool bitwise_equal(const Eigen::MatrixXd& m, const std::vector<double>& v, std::size_t rows,
                   std::size_t cols) {
  if (static_cast<std::size_t>(m.rows()) != rows || static_cast<std::size_t>(m.cols()) != cols) return false;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const double a = m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)), b = v[i * cols + j];
      if (std::memcmp(&a, &b, sizeof a) != 0) return false;
    }
  return true;
}

/// The message of the InvalidInput `f` throws ("" and a failure when it throws nothing).
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const tcsolve::InvalidInput& e) {
    return e.what();
  }
  FAIL("no InvalidInput thrown");
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE(
    "a .npy A and b read bitwise: C and Fortran order, float64, float32 and int32, headers 1.0, 2.0, 3.0",
    "[io][npy]") {
  tcsolve::test::TempDir dir("npy");
  const std::size_t n = 5;
  const std::vector<double> a64 = matrix_values(n, false), a32 = matrix_values(n, true),
                            b1 = vector_values(n, 1), b2 = vector_values(n, 2);

  SECTION("float64 A in C order (1.0) with a float64 vector b (2.0)") {
    write_file(dir.path("A.npy"), npy("<f8", false, {n, n}, elements<double>(a64, n, n, false), 1));
    write_file(dir.path("b.npy"), npy("<f8", false, {n}, elements<double>(b1, n, 1, false), 2));
    const tcsolve::LinearSystem s = tcsolve::read_numpy_system(dir.path("A.npy"), dir.path("b.npy"));
    CHECK(bitwise_equal(s.A, a64, n, n));
    CHECK(bitwise_equal(s.b, b1, n, 1));
    CHECK(s.b_is_vector);
    CHECK_FALSE(s.x_true.has_value());
    const tcsolve::SystemShape shape = tcsolve::inspect_numpy_system(dir.path("A.npy"), dir.path("b.npy"));
    CHECK(shape.n == 5);
    CHECK(shape.nrhs == 1);
    CHECK(shape.a_bytes_per_element == 8);
  }
  SECTION("float64 A in Fortran order (2.0) with b of two columns in Fortran order (3.0)") {
    write_file(dir.path("A.npy"), npy("<f8", true, {n, n}, elements<double>(a64, n, n, true), 2));
    write_file(dir.path("b.npy"), npy("<f8", true, {n, 2}, elements<double>(b2, n, 2, true), 3));
    const tcsolve::LinearSystem s = tcsolve::read_numpy_system(dir.path("A.npy"), dir.path("b.npy"));
    CHECK(bitwise_equal(s.A, a64, n, n));
    CHECK(bitwise_equal(s.b, b2, n, 2));
    CHECK_FALSE(s.b_is_vector);
    CHECK(tcsolve::inspect_numpy_system(dir.path("A.npy"), dir.path("b.npy")).nrhs == 2);
  }
  SECTION("float32 A in C order and in Fortran order, float32 b: converted exactly") {
    for (const bool fortran : {false, true}) {
      write_file(dir.path("A.npy"), npy("<f4", fortran, {n, n}, elements<float>(a32, n, n, fortran), 1));
      write_file(dir.path("b.npy"), npy("<f4", false, {n, 2}, elements<float>(b2, n, 2, false), 1));
      const tcsolve::LinearSystem s = tcsolve::read_numpy_system(dir.path("A.npy"), dir.path("b.npy"));
      INFO("fortran_order " << fortran);
      CHECK(bitwise_equal(s.A, a32, n, n));
      CHECK(bitwise_equal(s.b, b2, n, 2));  // b2's values are float32-exact (short dyadic numbers)
      CHECK(tcsolve::inspect_numpy_system(dir.path("A.npy")).a_bytes_per_element == 4);
    }
  }
  SECTION("an int32 A, and a lone A: x = ones, b = A x") {
    std::vector<double> ints(n * n);
    for (std::size_t k = 0; k < ints.size();
         ++k)  // the diagonal 100, the rest -1 .. -7 (no zero: no sign to lose)
      ints[k] = (k % (n + 1) == 0) ? 100.0 : -1.0 - static_cast<double>(k % 7);
    write_file(dir.path("A.npy"), npy("<i4", false, {n, n}, elements<std::int32_t>(ints, n, n, false)));
    const tcsolve::LinearSystem s = tcsolve::read_numpy_system(dir.path("A.npy"));
    CHECK(bitwise_equal(s.A, ints, n, n));
    REQUIRE(s.x_true.has_value());
    CHECK(*s.x_true == Eigen::MatrixXd::Ones(n, 1));
    CHECK(s.b == s.A * Eigen::MatrixXd::Ones(n, 1));
    const tcsolve::SystemShape shape = tcsolve::inspect_numpy_system(dir.path("A.npy"));
    CHECK(shape.nrhs == 1);
    CHECK(shape.has_x);
  }
  CHECK(tcsolve::is_numpy_file(dir.path("A.npy")));
  CHECK(tcsolve::is_numpy_file(dir.path("missing.NPZ")));
  CHECK_FALSE(tcsolve::is_numpy_file(dir.path("missing.h5")));
}

TEST_CASE("a .npz read bitwise: entries stored in ZIP64 form (np.savez) and deflated (np.savez_compressed)",
          "[io][npy]") {
  tcsolve::test::TempDir dir("npz");
  const std::size_t n = 6;
  const std::vector<double> a = matrix_values(n, false), b = vector_values(n, 3), x = vector_values(n, 3);
  const std::vector<Entry> entries = {{"A.npy", npy("<f8", false, {n, n}, elements<double>(a, n, n, false))},
                                      {"b.npy", npy("<f8", true, {n, 3}, elements<double>(b, n, 3, true), 2)},
                                      {"x.npy", npy("<f8", false, {n, 3}, elements<double>(x, n, 3, false))}};
  for (const bool deflated : {false, true}) {
    const std::string path = dir.path(deflated ? "compressed.npz" : "stored.npz");
    write_file(path, zip(entries, deflated, !deflated));
    INFO(path);
    const tcsolve::LinearSystem s = tcsolve::read_numpy_system(path);
    CHECK(bitwise_equal(s.A, a, n, n));
    CHECK(bitwise_equal(s.b, b, n, 3));
    REQUIRE(s.x_true.has_value());
    CHECK(bitwise_equal(*s.x_true, x, n, 3));
    CHECK_FALSE(s.b_is_vector);
    const tcsolve::SystemShape shape = tcsolve::inspect_numpy_system(path);
    CHECK(shape.n == 6);
    CHECK(shape.nrhs == 3);
    CHECK(shape.has_x);
    CHECK(tcsolve::is_numpy_file(path));
  }
  // a zip file under another name is still read as an archive (its magic bytes)
  write_file(dir.path("system.bin"), zip(entries, true));
  CHECK(tcsolve::is_numpy_file(dir.path("system.bin")));
  CHECK(bitwise_equal(tcsolve::read_numpy_system(dir.path("system.bin")).A, a, n, n));
}

TEST_CASE("NumPy inputs are refused naming the file, the array and the problem", "[io][npy]") {
  tcsolve::test::TempDir dir("npybad");
  const std::size_t n = 3;
  const std::vector<double> a = matrix_values(n, false), b = vector_values(n, 1);
  const Bytes good_a = npy("<f8", false, {n, n}, elements<double>(a, n, n, false));
  const Bytes good_b = npy("<f8", false, {n}, elements<double>(b, n, 1, false));
  const std::string A = dir.path("A.npy"), B = dir.path("b.npy");
  write_file(A, good_a);
  write_file(B, good_b);

  // the file, then the array, then the problem
  auto check = [](const std::string& what, const std::string& file, const std::string& array,
                  const std::string& problem) {
    INFO(what);
    CHECK(what.find(file + ": " + array) == 0);
    CHECK(contains(what, problem));
  };

  SECTION("big-endian dtype") {
    Bytes data = elements<double>(a, n, n, false);
    for (std::size_t k = 0; k < data.size(); k += 8)
      std::reverse(data.begin() + static_cast<long>(k), data.begin() + static_cast<long>(k + 8));
    write_file(A, npy(">f8", false, {n, n}, data));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "big-endian");
  }
  SECTION("object, complex, bool and structured dtypes") {
    write_file(A, npy("|O", false, {n, n}, Bytes(n * n * 8, '\0')));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "object");
    write_file(B, npy("<c16", false, {n}, Bytes(n * 16, '\0')));
    write_file(A, good_a);
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), B, "b:", "complex");
    write_file(B, npy("|b1", false, {n}, Bytes(n, '\1')));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), B, "b:", "bool");
    Bytes record = npy("<f8", false, {n}, Bytes(n * 8, '\0'));
    const std::string plain = "'descr': '<f8'";
    record.replace(record.find(plain), plain.size(), "'descr': [('a', '<f8')]");
    write_file(B, record);
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), B, "b:", "structured");
  }
  SECTION("wrong shapes: A not 2-D, A not square, b's length not A's order (both files named)") {
    write_file(A, npy("<f8", false, {n * n}, elements<double>(a, n * n, 1, false)));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "1-D (length 9), expected 2-D");
    write_file(A, npy("<f8", false, {n, n, 1}, elements<double>(a, n * n, 1, false)));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "3-D (3 x 3 x 1)");
    write_file(A, npy("<f8", false, {n, n + 1}, elements<double>(vector_values(n, n + 1), n, n + 1, false)));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "not square (3 x 4)");
    write_file(A, good_a);
    write_file(B, npy("<f8", false, {n + 1}, elements<double>(vector_values(n + 1, 1), n + 1, 1, false)));
    const std::string what = refusal([&] { tcsolve::read_numpy_system(A, B); });
    check(what, B, "b:", "length 4, expected 3 (rows of A in A.npy)");
    write_file(B, npy("<f8", false, {n + 1, 2}, elements<double>(vector_values(n + 1, 2), n + 1, 2, false)));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), B, "b:", "4 x 2, expected 3 rows");
  }
  SECTION("truncated files: the header, the data") {
    write_file(A, good_a.substr(0, 40));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "truncated");
    write_file(A, good_a.substr(0, good_a.size() - 8));
    const std::string what = refusal([&] { tcsolve::read_numpy_system(A, B); });
    check(what, A, "A:", "truncated: 64 bytes of data after the header, (3, 3) float64 needs 72");
  }
  SECTION("not NumPy, an unknown version, NaN, a .npz given as b") {
    write_file(A, "plain text, not an array\n");
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "not a .npy array");
    Bytes v4 = good_a;
    v4[6] = '\4';
    write_file(A, v4);
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "version 4.0");
    std::vector<double> with_nan = a;
    with_nan[1 * n + 2] = std::numeric_limits<double>::quiet_NaN();
    write_file(A, npy("<f8", false, {n, n}, elements<double>(with_nan, n, n, false)));
    check(refusal([&] { tcsolve::read_numpy_system(A, B); }), A, "A:", "NaN at (1, 2)");
    write_file(A, good_a);
    write_file(dir.path("b.npz"), zip({{"b.npy", good_b}}, false));
    check(refusal([&] { tcsolve::read_numpy_system(A, dir.path("b.npz")); }), dir.path("b.npz"),
          "b:", ".npz archive");
  }
  SECTION(
      "archives: truncated, an unknown compression, a CRC mismatch, b or A missing, x's shape, a second b") {
    const std::string Z = dir.path("sys.npz");
    const Bytes archive = zip({{"A.npy", good_a}, {"b.npy", good_b}}, true);
    write_file(Z, archive.substr(0, archive.size() / 2));
    check(refusal([&] { tcsolve::read_numpy_system(Z); }), Z, "truncated", "end-of-central-directory");
    write_file(Z, zip({{"A.npy", good_a}, {"b.npy", good_b}}, false, false, 12));
    check(refusal([&] { tcsolve::read_numpy_system(Z); }), Z, "A.npy:", "method 12 (bzip2)");
    Bytes damaged = zip({{"A.npy", good_a}, {"b.npy", good_b}}, false);
    damaged[30 + 5 + good_a.size() - 1] ^= 0x01;  // the last byte of A's data
    write_file(Z, damaged);
    check(refusal([&] { tcsolve::read_numpy_system(Z); }), Z, "A.npy:", "CRC-32 mismatch");
    write_file(Z, zip({{"A.npy", good_a}}, true));
    check(refusal([&] { tcsolve::read_numpy_system(Z); }), Z, "b:", "array missing (the archive holds: A)");
    write_file(Z, zip({{"b.npy", good_b}}, true));
    check(refusal([&] { tcsolve::read_numpy_system(Z); }), Z, "A:", "array missing");
    write_file(Z, zip({{"A.npy", good_a}, {"b.npy", good_b}, {"x.npy", good_a}}, true));
    check(refusal([&] { tcsolve::read_numpy_system(Z); }), Z, "x:", "shape (3 x 3), expected (3) as b");
    write_file(Z, zip({{"A.npy", good_a}, {"b.npy", npy(">f8", false, {n}, Bytes(n * 8, '\0'))}}, true));
    check(refusal([&] { tcsolve::read_numpy_system(Z); }), Z, "b:", "big-endian");
    write_file(Z, zip({{"A.npy", good_a}, {"b.npy", good_b}}, true));
    check(refusal([&] { tcsolve::read_numpy_system(Z, B); }), B, "b:", "the archive");
    write_file(Z, "not a zip archive at all");
    check(refusal([&] { tcsolve::read_numpy_system(Z); }), Z, "not a ZIP archive", "");
  }
}

TEST_CASE("tcsolve solve converges on a .npz and on A.npy with --rhs b.npy; --rhs is refused elsewhere",
          "[io][npy][cli]") {
  tcsolve::test::TempDir dir("npycli");
  const std::size_t n = 12;
  const std::vector<double> a = matrix_values(n, false), b = vector_values(n, 1);
  const std::string A = dir.path("A.npy"), B = dir.path("b.npy"), Z = dir.path("sys.npz");
  write_file(A, npy("<f8", true, {n, n}, elements<double>(a, n, n, true)));
  write_file(B, npy("<f4", false, {n}, elements<float>(b, n, 1, false)));
  write_file(Z, zip({{"A.npy", npy("<f8", false, {n, n}, elements<double>(a, n, n, false))},
                     {"b.npy", npy("<f8", false, {n}, elements<double>(b, n, 1, false))}},
                    true));

  for (const std::string& args : {"solve --input '" + Z + "'", "solve --input '" + A + "' --rhs '" + B + "'",
                                  "solve --input '" + A + "'"}) {
    const tcsolve::test::CommandResult r = tcsolve::test::run_tcsolve(args + " --backend cpu --json");
    INFO(r);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "\"converged\": true"));
    CHECK(contains(r.out, "\"n\": 12"));
  }
  const tcsolve::test::CommandResult c = tcsolve::test::run_tcsolve(
      "compare --input '" + A + "' --rhs '" + B + "' --variants fp32-simt --backend cpu --json");
  INFO(c);
  CHECK(c.exit_code == 0);

  // --rhs with an archive (its own b), and a bad b: exit 2, the files named
  const tcsolve::test::CommandResult r1 =
      tcsolve::test::run_tcsolve("solve --input '" + Z + "' --rhs '" + B + "' --backend cpu");
  INFO(r1);
  CHECK(r1.exit_code == 2);
  CHECK(contains(r1.err, B + ": b:"));
  write_file(B, npy("<f8", false, {n + 1}, elements<double>(vector_values(n + 1, 1), n + 1, 1, false)));
  const tcsolve::test::CommandResult r2 =
      tcsolve::test::run_tcsolve("solve --input '" + A + "' --rhs '" + B + "' --backend cpu");
  INFO(r2);
  CHECK(r2.exit_code == 2);
  CHECK(contains(r2.err, B + ": b: length 13, expected 12 (rows of A in A.npy)"));
}
