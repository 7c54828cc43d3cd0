#include "json.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tcsolve::app {

std::string json_quote(std::string_view text) {
  std::string s;
  s.reserve(text.size() + 2);
  s += '"';
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': s += "\\\""; break;
      case '\\': s += "\\\\"; break;
      case '\b': s += "\\b"; break;
      case '\f': s += "\\f"; break;
      case '\n': s += "\\n"; break;
      case '\r': s += "\\r"; break;
      case '\t': s += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          s += buf;
        } else {
          s += ch;
        }
    }
  }
  s += '"';
  return s;
}

void JsonWriter::newline() {
  if (indent_ <= 0) return;
  out_ << '\n' << std::string(stack_.size() * static_cast<std::size_t>(indent_), ' ');
}

void JsonWriter::before_value() {
  if (done_) throw std::logic_error("JsonWriter: a second top-level value");
  if (stack_.empty()) return;
  Level& top = stack_.back();
  if (top.is_object) {
    if (!after_key_) throw std::logic_error("JsonWriter: value without a key inside an object");
    after_key_ = false;
    return;
  }
  if (!top.empty) out_ << ',';
  top.empty = false;
  newline();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (stack_.empty() || !stack_.back().is_object || after_key_)
    throw std::logic_error("JsonWriter: key outside an object or after another key");
  Level& top = stack_.back();
  if (!top.empty) out_ << ',';
  top.empty = false;
  newline();
  out_ << json_quote(name) << (indent_ > 0 ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  stack_.push_back({true, true});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ << '[';
  stack_.push_back({false, true});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (stack_.empty() || !stack_.back().is_object || after_key_)
    throw std::logic_error("JsonWriter: end_object without a matching begin_object");
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  out_ << '}';
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  if (stack_.empty() || stack_.back().is_object)
    throw std::logic_error("JsonWriter: end_array without a matching begin_array");
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  out_ << ']';
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view token) {
  before_value();
  out_ << token;
  if (stack_.empty()) done_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) { return raw(json_quote(s)); }

JsonWriter& JsonWriter::value(double d) {
  // JSON has no inf or NaN. NaN is this program's "not measured" (a variant not run, a value
  // not known): null. An infinity is a number that overflowed: the string "inf" or "-inf", told
  // apart from null.
  if (std::isnan(d)) return null();
  if (std::isinf(d)) return raw(d > 0 ? "\"inf\"" : "\"-inf\"");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return raw(buf);
}

JsonWriter& JsonWriter::value(bool b) { return raw(b ? "true" : "false"); }

void JsonWriter::finish() {
  if (!stack_.empty() || after_key_) throw std::logic_error("JsonWriter: unclosed container");
  out_ << '\n';
  out_.flush();
}

}  // namespace tcsolve::app
