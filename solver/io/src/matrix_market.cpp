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
// Errors name the file and the 1-based line: "<file>:<line>: <problem>"; so do the warnings
// returned with the matrix (repeated entries, both triangles of a symmetric file, values that
// underflow to 0, an all-zero A or a zero row or column).
#include "tcsolve/io/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/sampling.hpp"
#include "text_input.hpp"

namespace tcsolve {
namespace {

/// Lines of one file, numbered from 1, with the file name for messages.
class LineReader {
 public:
  /// A gzip file (.mtx.gz) is decompressed as it is read (text_input.hpp).
  explicit LineReader(const std::string& path) : path_(path) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(st)) throw InvalidInput(path + ": no such file");
    if (std::filesystem::is_directory(st)) throw InvalidInput(path + ": is a directory");
    in_ = io_detail::open_text(path);
    if (!in_) throw InvalidInput(path + ": cannot be read (permission denied?)");
  }

  /// The next line (without its '\n' or "\r\n"); false at the end of the file.
  bool next(std::string& line) {
    if (!std::getline(*in_, line)) {
      if (in_->bad()) {
        const std::string gzip = io_detail::gzip_error(*in_);
        throw InvalidInput(path_ + ": read error after line " + std::to_string(number_) +
                           (gzip.empty() ? "" : " (gzip: " + gzip + ")"));
      }
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
  std::unique_ptr<std::istream> in_;
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

/// What parsing one token gave.
enum class Parsed { ok, malformed, out_of_range };

/// A whole token as an integer: out_of_range beyond 64-bit integers (a 20-digit number).
Parsed parse_integer(std::string_view token, long long& value) {
  token = strip_plus(token);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (end != token.data() + token.size()) return Parsed::malformed;
  if (ec == std::errc::result_out_of_range) return Parsed::out_of_range;
  return ec == std::errc() ? Parsed::ok : Parsed::malformed;
}

/// Whether a well-formed decimal token that from_chars found out of range is large (|x| >= 1,
/// so beyond float64's largest finite value: an overflow) rather than tiny (an underflow to 0):
/// the decimal exponent of its first non-zero digit, from the digits and the exponent part.
bool is_overflow(std::string_view token) {
  const std::size_t start = std::min(token.find_first_not_of("+-"), token.size());
  const std::size_t e = std::min(token.find_first_of("eE", start), token.size());
  const std::string_view mantissa = token.substr(start, e - start);
  const std::size_t point = std::min(mantissa.find('.'), mantissa.size());
  const std::size_t first = mantissa.find_first_of("123456789");
  if (first == std::string_view::npos) return false;  // zero: never out of range
  const long long lead =
      first < point ? static_cast<long long>(point - first) - 1 : -static_cast<long long>(first - point);
  long long exponent = 0;
  std::string_view digits = e < token.size() ? token.substr(e + 1) : std::string_view();
  const bool negative = !digits.empty() && digits[0] == '-';
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
  for (char c : digits) exponent = std::min<long long>(exponent * 10 + (c - '0'), 1000000000);  // saturated
  return lead + (negative ? -exponent : exponent) >= 0;
}

/// A whole token as a double (decimal or scientific notation): out_of_range when its magnitude
/// is beyond float64's largest finite value; a value below half the smallest subnormal is
/// ok with `value` = +-0 and `underflow` set.
Parsed parse_real(std::string_view token, double& value, bool& underflow) {
  underflow = false;
  token = strip_plus(token);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (end != token.data() + token.size()) return Parsed::malformed;
  if (ec == std::errc::result_out_of_range) {
    if (is_overflow(token)) return Parsed::out_of_range;
    underflow = true;
    value = !token.empty() && token[0] == '-' ? -0.0 : 0.0;
    return Parsed::ok;
  }
  return ec == std::errc() ? Parsed::ok : Parsed::malformed;
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
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  const std::unique_ptr<std::istream> in = io_detail::open_text(path);  // .mtx.gz: its text
  std::string head(14, '\0');
  try {
    if (!in || !in->read(head.data(), static_cast<std::streamsize>(head.size()))) return false;
  } catch (const std::exception&) {
    return false;
  }
  return lowercase(head) == "%%matrixmarket";
}

bool has_matrix_market_extension(const std::string& path) {
  const std::string name = lowercase(std::filesystem::path(path).filename().string());
  for (const std::string_view tail : {std::string_view(".mtx"), std::string_view(".mtx.gz")})
    if (name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0)
      return true;
  return false;
}

std::int64_t matrix_market_order(const std::string& path) {
  const std::unique_ptr<std::istream> in = io_detail::open_text(path);
  if (!in) return 0;
  std::string line;
  try {
    while (std::getline(*in, line)) {
      if (line.empty() || line[0] == '%') continue;
      const std::vector<std::string_view> size = split(line);
      long long rows = 0;
      if (size.size() >= 2 && parse_integer(size[0], rows) == Parsed::ok && rows > 0) return rows;
      return 0;
    }
  } catch (const std::exception&) {
  }
  return 0;
}

MatrixMarketMatrix read_matrix_market(const std::string& path) {
  LineReader in(path);
  MatrixMarketMatrix m;
  std::string line;
  const auto at = [&](long long number) { return path + ":" + std::to_string(number) + ": "; };
  const auto entry = [](long long i, long long j) {  // 1-based
    return "(" + std::to_string(i) + ", " + std::to_string(j) + ")";
  };

  // Banner: the keywords are case-insensitive.
  if (!in.next(line)) throw InvalidInput(path + ": empty file (0 bytes), expected a %%MatrixMarket banner");
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
  if (size.size() != (coordinate ? 3u : 2u))
    in.fail("malformed size line " + in_quotes(line) + ", expected " + size_form);
  long long rows = 0, cols = 0, declared = 0;
  long long* size_values[] = {&rows, &cols, &declared};
  const char* size_names[] = {"number of rows", "number of columns", "entry count"};
  for (std::size_t k = 0; k < size.size(); ++k) {
    const Parsed parsed = parse_integer(size[k], *size_values[k]);
    if (parsed == Parsed::out_of_range)
      in.fail(std::string(size_names[k]) + " " + in_quotes(size[k]) +
              " out of range (beyond 64-bit integers)");
    if (parsed != Parsed::ok) in.fail("malformed size line " + in_quotes(line) + ", expected " + size_form);
  }
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
  // Coordinate entries as listed, to find repeats once all are read: the position (of the lower
  // triangle for symmetric and skew-symmetric files, whose (i, j) and (j, i) are one entry).
  struct Listed {
    long long key;  // 0-based i n + j of the position
    int line;
    bool upper;  // listed as (i, j) with i < j in a symmetric or skew-symmetric file
  };
  std::vector<Listed> listed;
  long long upper_count = 0, underflow_count = 0;
  int first_upper_line = 0, first_underflow_line = 0;
  std::string first_upper, first_underflow;
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
      const Parsed pi = parse_integer(t[0], i), pj = parse_integer(t[1], j);
      if (pi == Parsed::out_of_range)
        in.fail("row index " + in_quotes(t[0]) + " out of range 1.." + std::to_string(n));
      if (pi != Parsed::ok) in.fail("malformed row index " + in_quotes(t[0]));
      if (pj == Parsed::out_of_range)
        in.fail("column index " + in_quotes(t[1]) + " out of range 1.." + std::to_string(n));
      if (pj != Parsed::ok) in.fail("malformed column index " + in_quotes(t[1]));
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
      const Parsed parsed = parse_integer(value_token, iv);
      if (parsed == Parsed::out_of_range)
        in.fail("integer value " + in_quotes(value_token) + " out of range (beyond 64-bit integers)");
      if (parsed != Parsed::ok) in.fail("malformed integer value " + in_quotes(value_token));
      v = static_cast<double>(iv);
    } else {
      bool underflow = false;
      const Parsed parsed = parse_real(value_token, v, underflow);
      if (parsed == Parsed::out_of_range)
        in.fail("real value " + in_quotes(value_token) +
                " out of range (beyond float64's largest finite value, 1.8e308)");
      if (parsed != Parsed::ok) in.fail("malformed real value " + in_quotes(value_token));
      if (!std::isfinite(v)) in.fail("value " + in_quotes(value_token) + " is not finite");
      if (underflow && underflow_count++ == 0)
        first_underflow_line = in.number(), first_underflow = std::string(value_token);
    }
    if (skew && i == j)
      in.fail("diagonal entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
              ") in a skew-symmetric matrix (its diagonal is zero)");
    if (coordinate) {
      const bool upper = (symmetric || skew) && i < j;
      if (upper && upper_count++ == 0) first_upper_line = in.number(), first_upper = entry(i + 1, j + 1);
      listed.push_back({upper ? j * n + i : i * n + j, in.number(), upper});
    }
    // Duplicates of a coordinate entry are summed (as scipy.io.mmread does); an entry (i, j) of
    // a symmetric or skew-symmetric file sets (j, i) too, from either triangle.
    m.A(i, j) += v;
    if (i != j && symmetric) m.A(j, i) += v;
    if (i != j && skew) m.A(j, i) -= v;
    ++count;
  }
  if (count < declared)
    in.fail("end of file after " + std::to_string(count) + " of the " + std::to_string(declared) +
            " entries declared on line " + std::to_string(size_line));

  // What is read but suspicious: warnings, in the order of the file.
  const auto more = [](long long others, const char* what) {
    return others > 0 ? " (and " + std::to_string(others) + " more " + what + ")" : std::string();
  };
  if (underflow_count > 0)
    m.warnings.push_back(at(first_underflow_line) + "real value " + in_quotes(first_underflow) +
                         " is below the smallest float64 subnormal (4.9e-324) and reads as 0" +
                         more(underflow_count - 1, "such values"));
  if (upper_count > 0)
    m.warnings.push_back(at(first_upper_line) + "entry " + first_upper + " is in the upper triangle, but a " +
                         m.symmetry + " file lists the lower one; mirrored all the same" +
                         more(upper_count - 1, "upper-triangle entries"));
  if (!listed.empty()) {
    std::stable_sort(listed.begin(), listed.end(),
                     [](const Listed& a, const Listed& b) { return a.key < b.key; });
    long long repeats = 0, mirrored = 0;
    const Listed* first_repeat[2] = {nullptr, nullptr};  // the earlier and the later listing
    const Listed* first_mirror[2] = {nullptr, nullptr};
    for (std::size_t k = 1; k < listed.size(); ++k) {
      const Listed &a = listed[k - 1], &b = listed[k];
      if (a.key != b.key) continue;
      const bool mirror = a.upper != b.upper;
      long long& number = mirror ? mirrored : repeats;
      const Listed** first = mirror ? first_mirror : first_repeat;
      ++number;
      if (first[0] == nullptr || b.line < first[1]->line) first[0] = &a, first[1] = &b;
    }
    const auto listing = [&](const Listed& l) {
      const long long i = l.key / n + 1, j = l.key % n + 1;
      return (l.upper ? entry(j, i) : entry(i, j)) + " on line " + std::to_string(l.line);
    };
    if (repeats > 0)
      m.warnings.push_back(at(first_repeat[1]->line) + "entry " + listing(*first_repeat[1]) +
                           " repeats the entry " + listing(*first_repeat[0]) +
                           "; repeated entries are summed" + more(repeats - 1, "repeats"));
    if (mirrored > 0)
      m.warnings.push_back(at(first_mirror[1]->line) + "entry " + listing(*first_mirror[1]) + " and entry " +
                           listing(*first_mirror[0]) + " are one entry of a " + m.symmetry +
                           " matrix, given twice; they are summed" + more(mirrored - 1, "such pairs"));
  }
  if (coordinate && declared == 0) {
    m.warnings.push_back(at(size_line) + "declares 0 entries: A is all zero (singular)");
  } else if ((m.A.array() == 0).all()) {
    m.warnings.push_back(path + ": every entry is zero: A is all zero (singular)");
  } else {
    const Eigen::Array<bool, Eigen::Dynamic, 1> zero_rows = (m.A.array() == 0).rowwise().all();
    const Eigen::Array<bool, 1, Eigen::Dynamic> zero_cols = (m.A.array() == 0).colwise().all();
    const auto report = [&](const char* what, auto zero) {
      const long long zeros = zero.count();
      if (zeros == 0) return;
      Eigen::Index first = 0;
      while (!zero(first)) ++first;
      m.warnings.push_back(path + ": " + what + " " + std::to_string(first + 1) + " of A is zero" +
                           more(zeros - 1, what[0] == 'r' ? "rows" : "columns") + ": A is singular");
    };
    report("row", zero_rows);
    report("column", zero_cols);
  }
  return m;
}

LinearSystem import_matrix_market(const std::string& path, RhsKind rhs, std::uint64_t seed,
                                  std::vector<std::string>* warnings) {
  MatrixMarketMatrix m = read_matrix_market(path);
  if (warnings != nullptr) warnings->insert(warnings->end(), m.warnings.begin(), m.warnings.end());
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
