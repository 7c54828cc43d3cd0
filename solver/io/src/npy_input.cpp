// NumPy's .npy format (numpy/lib/format.py, "NPY format"; npy_input.hpp):
//
//   "\x93NUMPY" major minor  header_len  header                                 data
//    6 bytes    1     1      2 bytes (1.0), 4 bytes (2.0, 3.0), little-endian
//
// The header is an ASCII (3.0: UTF-8) Python dict literal padded with spaces and ended by '\n',
// e.g. {'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }. 'descr' is NumPy's dtype
// string: byte order ('<' little, '>' big, '|' not applicable, '=' native), kind and item size.
// 'shape' is a tuple (a 1-tuple keeps its comma; Python 2 wrote longs as 3L). The data follows:
// the elements in C order (last index fastest) or, with 'fortran_order': True, Fortran order.
#include "npy_input.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::io_detail {

void NpyName::fail(const std::string& problem) const {
  throw InvalidInput(file + ": " + array + ": " + problem);
}

namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);

bool little_endian_host() {
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

/// A value of the header's dict literal: the subset of Python literals NPY headers hold.
struct Literal {
  enum Kind { string, boolean, integer, none, tuple, list, dict } kind = none;
  std::string text;  ///< string
  bool truth = false;
  std::uint64_t number = 0;
  bool negative = false;
  std::vector<Literal> items;  ///< tuple, list; dict: key, value, key, value, ...
};

/// A recursive-descent reader of the header's text; errors name what was expected where.
class LiteralParser {
 public:
  LiteralParser(std::string_view text, const NpyName& name) : s_(text), name_(name) {}

  Literal value() {
    skip_space();
    if (at_ >= s_.size()) fail("ends early");
    const char c = s_[at_];
    if (c == '\'' || c == '"') return quoted();
    if (c == '(' || c == '[')
      return sequence(c == '(' ? ')' : ']', c == '(' ? Literal::tuple : Literal::list);
    if (c == '{') return sequence('}', Literal::dict);
    if (word("True")) return boolean(true);
    if (word("False")) return boolean(false);
    if (word("None")) return Literal{};
    if (c == '-' || (c >= '0' && c <= '9')) return integer();
    fail("unexpected '" + std::string(1, c) + "' at byte " + std::to_string(at_));
  }

  /// Only spaces and the closing newline may follow the dict.
  void finish() {
    skip_space();
    if (at_ != s_.size()) fail("text after the dict, at byte " + std::to_string(at_));
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    name_.fail("malformed .npy header (" + what + ")");
  }

  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r'))
      ++at_;
  }

  bool word(std::string_view w) {
    if (s_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }

  static Literal boolean(bool b) {
    Literal v;
    v.kind = Literal::boolean;
    v.truth = b;
    return v;
  }

  Literal quoted() {
    const char quote = s_[at_++];
    Literal v;
    v.kind = Literal::string;
    while (at_ < s_.size() && s_[at_] != quote) {
      if (s_[at_] == '\\' && at_ + 1 < s_.size()) ++at_;
      v.text += s_[at_++];
    }
    if (at_ >= s_.size()) fail("unterminated string");
    ++at_;
    return v;
  }

  Literal integer() {
    Literal v;
    v.kind = Literal::integer;
    if (s_[at_] == '-') {
      v.negative = true;
      ++at_;
    }
    const std::size_t first = at_;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') {
      const std::uint64_t digit = static_cast<std::uint64_t>(s_[at_] - '0');
      if (v.number > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
        fail("an integer out of range");
      v.number = v.number * 10 + digit;
      ++at_;
    }
    if (at_ == first) fail("a '-' without digits");
    if (at_ < s_.size() && (s_[at_] == 'L' || s_[at_] == 'l')) ++at_;  // Python 2's long
    return v;
  }

  Literal sequence(char close, Literal::Kind kind) {
    ++at_;
    Literal v;
    v.kind = kind;
    for (;;) {
      skip_space();
      if (at_ < s_.size() && s_[at_] == close) {
        ++at_;
        return v;
      }
      v.items.push_back(value());
      if (kind == Literal::dict) {
        skip_space();
        if (at_ >= s_.size() || s_[at_] != ':')
          fail("a ':' expected after a key, at byte " + std::to_string(at_));
        ++at_;
        v.items.push_back(value());
      }
      skip_space();
      if (at_ < s_.size() && s_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < s_.size() && s_[at_] == close) continue;
      fail(std::string("a ',' or '") + close + "' expected at byte " + std::to_string(at_));
    }
  }

  std::string_view s_;
  std::size_t at_ = 0;
  const NpyName& name_;
};

/// Reads descr into header (kind, item_bytes), refusing what a linear system cannot hold.
void parse_descr(const std::string& descr, NpyHeader& h, const NpyName& name) {
  const std::string quoted = "dtype '" + descr + "'";
  if (descr.empty()) name.fail("empty dtype ('descr')");
  char order = descr[0];
  std::string rest = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=') {  // no byte-order character
    order = '|';
    rest = descr;
  }
  if (rest.empty()) name.fail(quoted + ": no kind");
  const char kind = rest[0];
  int size = 0;
  const std::string digits = rest.substr(1);
  bool numeric_size = !digits.empty() && digits.size() <= 3;
  for (const char c : digits) numeric_size = numeric_size && c >= '0' && c <= '9';
  if (numeric_size) size = std::stoi(digits);
  switch (kind) {
    case 'O':
      name.fail(quoted +
                " is an object array (pickled Python objects): not read; save a float64 or float32 array");
    case 'c':
      name.fail(quoted + " is complex: the solver takes real systems (float64 or float32)");
    case 'b':
    case '?':
      name.fail(quoted + " is bool: save the matrix as float64 or float32");
    case 'U':
    case 'S':
    case 'a':
      name.fail(quoted + " holds strings: save the matrix as float64 or float32");
    case 'V':
      name.fail(quoted + " is a structured (record) dtype: save a plain float64 or float32 array");
    case 'M':
    case 'm':
      name.fail(quoted + " holds dates or time spans: save the matrix as float64 or float32");
    case 'f':
      if (size == 2) name.fail(quoted + " is float16: not read; save as float32 or float64");
      if (size != 4 && size != 8)
        name.fail(quoted + " (float" + std::to_string(8 * size) + "): expected float64 or float32");
      break;
    case 'i':
    case 'u':
      if (size != 1 && size != 2 && size != 4 && size != 8)
        name.fail(quoted + ": an integer of unknown size");
      break;
    default:
      name.fail(quoted + ": unknown kind '" + std::string(1, kind) + "'; expected float64 or float32");
  }
  if (order == '>' && size > 1)
    name.fail(quoted + " is big-endian: save it little-endian (a.astype('<" + std::string(1, kind) +
              std::to_string(size) + "'), NumPy's default on every common machine)");
  if (!little_endian_host()) name.fail(quoted + ": .npy files are read on little-endian machines only");
  h.kind = kind;
  h.item_bytes = size;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string dtype_name(const NpyHeader& h) {
  const std::string bits = std::to_string(8 * h.item_bytes);
  return h.kind == 'f' ? "float" + bits : h.kind == 'i' ? "int" + bits : "uint" + bits;
}

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// (i, j) or (i): the element's index as NumPy writes it.
std::string index_text(const NpyHeader& h, Eigen::Index i, Eigen::Index j) {
  return h.shape.size() == 2 ? "(" + std::to_string(i) + ", " + std::to_string(j) + ")"
                             : "(" + std::to_string(i) + ")";
}

template <typename T>
void convert(const NpyHeader& h, const char* data, Eigen::MatrixXd& m, const NpyName& name) {
  const Eigen::Index rows = m.rows(), cols = m.cols();
  // Integers up to 2^53 in magnitude are float64s exactly; only 64-bit ones can exceed it.
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) {
      const std::uint64_t k = static_cast<std::uint64_t>(h.fortran_order ? i + j * rows : i * cols + j);
      const T raw = load<T>(data + k * sizeof(T));
      const double v = static_cast<double>(raw);
      if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(v))
          name.fail("contains " +
                    std::string(std::isnan(v) ? "NaN"
                                : v > 0       ? "inf"
                                              : "-inf") +
                    " at " + index_text(h, i, j));
      } else {
        const bool inexact =
            sizeof(T) == 8 &&
            (std::is_signed_v<T> ? (static_cast<std::int64_t>(raw) > (std::int64_t{1} << 53) ||
                                    static_cast<std::int64_t>(raw) < -(std::int64_t{1} << 53))
                                 : static_cast<std::uint64_t>(raw) > (std::uint64_t{1} << 53));
        if (inexact)
          name.fail("integer " + std::to_string(raw) + " at " + index_text(h, i, j) +
                    " is beyond 2^53 in magnitude: not exact in float64");
      }
      m(i, j) = v;
    }
}

}  // namespace

std::uint64_t NpyHeader::elements() const {
  std::uint64_t e = 1;
  for (const std::uint64_t d : shape) e *= d;
  return e;
}

std::string NpyHeader::describe() const { return shape_text(shape) + " " + dtype_name(*this); }

std::uint64_t npy_data_offset(std::string_view start, const NpyName& name) {
  if (start.size() < kMagic.size() || start.substr(0, kMagic.size()) != kMagic)
    name.fail(start.empty() ? "empty, not a .npy array"
                            : "not a .npy array (no \\x93NUMPY magic string at its start)");
  if (start.size() < 10)
    name.fail("truncated: " + std::to_string(start.size()) + " bytes, shorter than a .npy preamble");
  const int major = static_cast<unsigned char>(start[6]), minor = static_cast<unsigned char>(start[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    name.fail(".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
              ": not read (versions 1.0, 2.0 and 3.0 are)");
  std::uint64_t header_bytes = 0, preamble = 10;
  if (major == 1) {
    header_bytes = static_cast<unsigned char>(start[8]) |
                   (static_cast<std::uint64_t>(static_cast<unsigned char>(start[9])) << 8);
  } else {
    if (start.size() < 12)
      name.fail("truncated: " + std::to_string(start.size()) + " bytes, shorter than a .npy preamble");
    for (int b = 3; b >= 0; --b)
      header_bytes = (header_bytes << 8) | static_cast<unsigned char>(start[8 + static_cast<std::size_t>(b)]);
    preamble = 12;
  }
  if (header_bytes > kNpyMaxHeaderBytes)
    name.fail("a .npy header of " + std::to_string(header_bytes) +
              " bytes: longer than any NumPy writes (damaged?)");
  return preamble + header_bytes;
}

NpyHeader parse_npy_header(std::string_view bytes, const NpyName& name) {
  NpyHeader h;
  h.data_offset = npy_data_offset(bytes, name);
  if (bytes.size() < h.data_offset)
    name.fail("truncated: the .npy header needs " + std::to_string(h.data_offset) + " bytes, there are " +
              std::to_string(bytes.size()));
  h.major = static_cast<unsigned char>(bytes[6]);
  h.minor = static_cast<unsigned char>(bytes[7]);
  const std::size_t preamble = h.major == 1 ? 10 : 12;
  LiteralParser parser(bytes.substr(preamble, h.data_offset - preamble), name);
  const Literal dict = parser.value();
  parser.finish();
  if (dict.kind != Literal::dict) name.fail("malformed .npy header (not a dict)");
  const Literal *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (std::size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const Literal& key = dict.items[k];
    if (key.kind != Literal::string) name.fail("malformed .npy header (a key that is not a string)");
    if (key.text == "descr") descr = &dict.items[k + 1];
    if (key.text == "fortran_order") fortran = &dict.items[k + 1];
    if (key.text == "shape") shape = &dict.items[k + 1];
  }
  if (!descr || !fortran || !shape)
    name.fail(std::string("malformed .npy header (no '") +
              (!descr     ? "descr"
               : !fortran ? "fortran_order"
                          : "shape") +
              "' key)");
  if (descr->kind == Literal::list)
    name.fail("a structured (record) dtype: save a plain float64 or float32 array");
  if (descr->kind != Literal::string) name.fail("malformed .npy header ('descr' is not a string)");
  h.descr = descr->text;
  parse_descr(h.descr, h, name);
  if (fortran->kind != Literal::boolean)
    name.fail("malformed .npy header ('fortran_order' is not True or False)");
  h.fortran_order = fortran->truth;
  if (shape->kind != Literal::tuple) name.fail("malformed .npy header ('shape' is not a tuple)");
  for (const Literal& d : shape->items) {
    if (d.kind != Literal::integer || d.negative)
      name.fail("malformed .npy header ('shape' holds a non-integer or negative size)");
    h.shape.push_back(d.number);
  }
  std::uint64_t bytes_total = static_cast<std::uint64_t>(h.item_bytes);
  for (const std::uint64_t d : h.shape) {
    if (d != 0 && bytes_total > std::numeric_limits<std::uint64_t>::max() / d)
      name.fail("shape " + shape_text(h.shape) + ": its size overflows 64 bits");
    bytes_total *= d;
  }
  return h;
}

Eigen::MatrixXd npy_matrix(const NpyHeader& h, std::string_view data, const NpyName& name) {
  if (h.shape.size() != 1 && h.shape.size() != 2)
    name.fail(h.shape.empty() ? "a scalar (shape ()), expected a 1-D or 2-D array"
                              : std::to_string(h.shape.size()) + "-D array " + shape_text(h.shape) +
                                    ", expected 1-D or 2-D");
  if (data.size() < h.data_bytes())
    name.fail("truncated: " + std::to_string(data.size()) + " bytes of data, " + h.describe() + " needs " +
              std::to_string(h.data_bytes()));
  const Eigen::Index rows = static_cast<Eigen::Index>(h.shape[0]);
  const Eigen::Index cols = h.shape.size() == 2 ? static_cast<Eigen::Index>(h.shape[1]) : 1;
  Eigen::MatrixXd m(rows, cols);
  const char* p = data.data();
  switch (h.kind) {
    case 'f':
      if (h.item_bytes == 8)
        convert<double>(h, p, m, name);
      else
        convert<float>(h, p, m, name);
      break;
    case 'i':
      if (h.item_bytes == 1)
        convert<std::int8_t>(h, p, m, name);
      else if (h.item_bytes == 2)
        convert<std::int16_t>(h, p, m, name);
      else if (h.item_bytes == 4)
        convert<std::int32_t>(h, p, m, name);
      else
        convert<std::int64_t>(h, p, m, name);
      break;
    default:
      if (h.item_bytes == 1)
        convert<std::uint8_t>(h, p, m, name);
      else if (h.item_bytes == 2)
        convert<std::uint16_t>(h, p, m, name);
      else if (h.item_bytes == 4)
        convert<std::uint32_t>(h, p, m, name);
      else
        convert<std::uint64_t>(h, p, m, name);
  }
  return m;
}

}  // namespace tcsolve::io_detail
