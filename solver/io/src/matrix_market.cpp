// Matrix Market files (NIST's exchange format, "The Matrix Market Exchange Formats: Initial
// Design", Boisvert, Pozo, Remington, 1996) read as dense square matrices, and turned into
// systems with a known solution (`tcsolve import`).
//
//   %%MatrixMarket matrix <coordinate|array> <real|integer> <general|symmetric|skew-symmetric>
//   % comments, blank lines
//   rows columns [entries]          (entries only for coordinate)
//   i j value                       (coordinate: 1-based indices, one entry per line)
//   value                           (array: column by column; symmetric: lower triangle only)
//
// Errors name the file and the 1-based line: "<file>:<line>: <problem>".
#include "tcsolve/io/matrix_market.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "tcsolve/gemm/error.hpp"
#include "tcsolve/solver/sampling.hpp"

namespace tcsolve {
namespace {

/// Lines of one file, numbered from 1, with the file name for messages.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(st)) throw InvalidInput(path + ": no such file");
    if (std::filesystem::is_directory(st)) throw InvalidInput(path + ": is a directory");
    if (!in_) throw InvalidInput(path + ": cannot be read (permission denied?)");
  }

  /// The next line (without its '\n' or "\r\n"); false at the end of the file.
  bool next(std::string& line) {
    if (!std::getline(in_, line)) {
      if (in_.bad()) throw InvalidInput(path_ + ": read error after line " + std::to_string(number_));
      return false;
    }
    ++number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  /// The next line that is neither blank nor a % comment; false at the end of the file.
  bool next_data(std::string& line) {
    while (next(line)) {
      const auto first = line.find_first_not_of(" \t");
      if (first != std::string::npos && line[first] != '%') return true;
    }
    return false;
  }

  int number() const { return number_; }

  /// "<file>:<line>: <problem>" for the current line.
  [[noreturn]] void fail(const std::string& problem) const {
    throw InvalidInput(path_ + ":" + std::to_string(number_) + ": " + problem);
  }

 private:
  std::string path_;
  std::ifstream in_;
  int number_ = 0;
};

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// The token without a leading '+' (which from_chars does not take) when a digit or '.' follows.
std::string_view strip_plus(std::string_view t) {
  return t.size() > 1 && t[0] == '+' && t[1] != '-' && t[1] != '+' ? t.substr(1) : t;
}

/// A whole token as an integer; false when malformed or out of range.
bool parse_integer(std::string_view token, long long& value) {
  token = strip_plus(token);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  return ec == std::errc() && end == token.data() + token.size();
}

/// A whole token as a double (decimal or scientific notation); false when malformed.
bool parse_real(std::string_view token, double& value) {
  token = strip_plus(token);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  return ec == std::errc() && end == token.data() + token.size();
}

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

RhsKind parse_rhs_kind(std::string_view name) {
  if (name == "ones") return RhsKind::ones;
  if (name == "random") return RhsKind::random;
  throw InvalidInput("unknown right-hand side kind '" + std::string(name) + "' (ones or random)");
}

std::string_view to_string(RhsKind kind) { return kind == RhsKind::ones ? "ones" : "random"; }

bool is_matrix_market_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(14, '\0');
  if (!in.read(head.data(), static_cast<std::streamsize>(head.size()))) return false;
  return lowercase(head) == "%%matrixmarket";
}

MatrixMarketMatrix read_matrix_market(const std::string& path) {
  LineReader in(path);
  MatrixMarketMatrix m;
  std::string line;

  // Banner: the keywords are case-insensitive.
  if (!in.next(line)) throw InvalidInput(path + ": empty file, expected a %%MatrixMarket banner");
  const std::vector<std::string_view> banner = split(line);
  if (banner.empty() || lowercase(banner[0]) != "%%matrixmarket")
    in.fail("not a Matrix Market file (the first line must start with %%MatrixMarket)");
  if (banner.size() != 5)
    in.fail(
        "malformed banner, expected '%%MatrixMarket matrix coordinate|array real|integer "
        "general|symmetric|skew-symmetric'");
  const std::string object = lowercase(banner[1]);
  m.format = lowercase(banner[2]);
  m.field = lowercase(banner[3]);
  m.symmetry = lowercase(banner[4]);
  if (object != "matrix") in.fail("object " + in_quotes(object) + " is not supported (only matrix)");
  if (m.format != "coordinate" && m.format != "array")
    in.fail("unknown format " + in_quotes(m.format) + " (coordinate or array)");
  if (m.field == "pattern")
    in.fail("pattern matrices (no values) are not supported: a system needs real values");
  if (m.field == "complex") in.fail("complex matrices are not supported (real or integer only)");
  if (m.field != "real" && m.field != "integer")
    in.fail("unknown field " + in_quotes(m.field) + " (real or integer)");
  if (m.symmetry == "hermitian") in.fail("hermitian matrices are not supported (complex)");
  if (m.symmetry != "general" && m.symmetry != "symmetric" && m.symmetry != "skew-symmetric")
    in.fail("unknown symmetry " + in_quotes(m.symmetry) + " (general, symmetric or skew-symmetric)");
  const bool coordinate = m.format == "coordinate";
  const bool integer = m.field == "integer";
  const bool symmetric = m.symmetry == "symmetric", skew = m.symmetry == "skew-symmetric";

  // Size line.
  if (!in.next_data(line)) in.fail("end of file before the size line");
  const int size_line = in.number();
  const std::vector<std::string_view> size = split(line);
  const char* size_form = coordinate ? "'rows columns entries'" : "'rows columns'";
  long long rows = 0, cols = 0, declared = 0;
  if (size.size() != (coordinate ? 3u : 2u) || !parse_integer(size[0], rows) ||
      !parse_integer(size[1], cols) || (coordinate && !parse_integer(size[2], declared)))
    in.fail("malformed size line " + in_quotes(line) + ", expected " + size_form);
  if (rows < 1 || cols < 1)
    in.fail("matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ", expected at least 1 x 1");
  if (rows != cols)
    in.fail("matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ", not square");
  if (rows > kMaxMatrixMarketOrder)
    in.fail("n = " + std::to_string(rows) + " is too large to hold dense (at most " +
            std::to_string(kMaxMatrixMarketOrder) + ")");
  const long long n = rows;
  // Array files store every entry of their triangle: n^2, n(n+1)/2 or n(n-1)/2.
  if (!coordinate) declared = symmetric ? n * (n + 1) / 2 : skew ? n * (n - 1) / 2 : n * n;
  if (declared < 0 || declared > n * n)
    in.fail("entry count " + std::to_string(declared) + " out of range 0.." + std::to_string(n * n));
  m.stored_entries = declared;

  // Entries.
  m.A = Eigen::MatrixXd::Zero(n, n);
  long long count = 0;
  long long ai = 0, aj = 0;  // array: position of the next value (0-based row, column)
  if (!coordinate && skew) ai = 1;
  while (in.next_data(line)) {
    if (count == declared)
      in.fail("more entries than the " + std::to_string(declared) + " declared on line " +
              std::to_string(size_line));
    const std::vector<std::string_view> t = split(line);
    long long i = 0, j = 0;
    double v = 0;
    std::string_view value_token;
    if (coordinate) {
      if (t.size() != 3)
        in.fail("expected 'row column value', got " + std::to_string(t.size()) + " field" +
                (t.size() == 1 ? "" : "s"));
      if (!parse_integer(t[0], i)) in.fail("malformed row index " + in_quotes(t[0]));
      if (!parse_integer(t[1], j)) in.fail("malformed column index " + in_quotes(t[1]));
      if (i < 1 || i > n) in.fail("row index " + std::to_string(i) + " out of range 1.." + std::to_string(n));
      if (j < 1 || j > n)
        in.fail("column index " + std::to_string(j) + " out of range 1.." + std::to_string(n));
      --i, --j;
      value_token = t[2];
    } else {
      if (t.size() != 1)
        in.fail("expected one value per line (array format), got " + std::to_string(t.size()) + " fields");
      i = ai, j = aj;
      value_token = t[0];
      // Column by column; symmetric: rows j..n-1 of column j, skew-symmetric: rows j+1..n-1.
      if (++ai == n) {
        ++aj;
        ai = symmetric ? aj : skew ? aj + 1 : 0;
      }
    }
    if (integer) {
      long long iv = 0;
      if (!parse_integer(value_token, iv)) in.fail("malformed integer value " + in_quotes(value_token));
      v = static_cast<double>(iv);
    } else {
      if (!parse_real(value_token, v)) in.fail("malformed real value " + in_quotes(value_token));
      if (!std::isfinite(v)) in.fail("value " + in_quotes(value_token) + " is not finite");
    }
    if (skew && i == j)
      in.fail("diagonal entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
              ") in a skew-symmetric matrix (its diagonal is zero)");
    // Duplicates of a coordinate entry are summed (as scipy.io.mmread does).
    m.A(i, j) += v;
    if (i != j && symmetric) m.A(j, i) += v;
    if (i != j && skew) m.A(j, i) -= v;
    ++count;
  }
  if (count < declared)
    in.fail("end of file after " + std::to_string(count) + " of the " + std::to_string(declared) +
            " entries declared on line " + std::to_string(size_line));
  return m;
}

LinearSystem import_matrix_market(const std::string& path, RhsKind rhs, std::uint64_t seed) {
  MatrixMarketMatrix m = read_matrix_market(path);
  const Eigen::Index n = m.A.rows();
  Eigen::MatrixXd x(n, 1);
  if (rhs == RhsKind::ones) {
    x.setOnes();
  } else {
    std::mt19937_64 rng(seed);
    for (Eigen::Index i = 0; i < n; ++i) x(i, 0) = detail::uniform_pm1(rng);
  }
  LinearSystem sys;
  sys.A = std::move(m.A);
  sys.b.noalias() = sys.A * x;
  sys.x_true = std::move(x);
  sys.b_is_vector = true;
  sys.description = "Matrix Market " + std::filesystem::path(path).filename().string() + " (" + m.format +
                    " " + m.field + " " + m.symmetry + ", n " + std::to_string(n) + ", " +
                    std::to_string(m.stored_entries) + " stored entries); x = " +
                    (rhs == RhsKind::ones ? std::string("ones") : "U(-1,1) seed " + std::to_string(seed)) +
                    ", b = A x (tcsolve import)";
  return sys;
}

}  // namespace tcsolve
