// A tiny streaming JSON writer for the --json output of the subcommands (no third-party
// library): objects, arrays, escaped strings, integers, doubles with 17 significant digits
// (%.17g, enough to round-trip); infinities (overflowed numbers) as the strings "inf" and
// "-inf", NaN (this program's "not measured") as null.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tcsolve::app {

/// `text` as a JSON string literal, quotes included: ", \ and control characters escaped;
/// other bytes (UTF-8) pass through.
std::string json_quote(std::string_view text);

/// Writes one JSON document to `out`, indented by `indent` spaces per level (0: one line).
/// Misuse (a value where a key is due, unbalanced end_*) throws std::logic_error.
///
///   JsonWriter w(std::cout);
///   w.begin_object().field("command", "variants").key("variants").begin_array();
///   ...
///   w.end_array().end_object().finish();
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out, int indent = 2) : out_(out), indent_(indent) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  /// Key of the next member of the current object.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  /// %.17g; infinities as the strings "inf", "-inf"; NaN (not measured) as null.
  JsonWriter& value(double d);
  JsonWriter& value(bool b);
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  JsonWriter& value(T v) {
    if constexpr (std::is_signed_v<T>)
      return raw(std::to_string(static_cast<long long>(v)));
    else
      return raw(std::to_string(static_cast<unsigned long long>(v)));
  }
  JsonWriter& null() { return raw("null"); }

  /// key(name) then value(v).
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  /// key(name) then value(v), or null when !present.
  template <typename T>
  JsonWriter& field_or_null(std::string_view name, bool present, const T& v) {
    key(name);
    return present ? value(v) : null();
  }

  /// Ends the document with a newline; throws std::logic_error when a container is open.
  void finish();

 private:
  struct Level {
    bool is_object;
    bool empty;
  };
  JsonWriter& raw(std::string_view token);  ///< one scalar value
  void before_value();
  void newline();

  std::ostream& out_;
  int indent_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  bool done_ = false;  ///< the top-level value is complete
};

}  // namespace tcsolve::app
