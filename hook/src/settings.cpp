// The drop-in's configuration (settings.hpp): parsing of the TCSOLVE_HOOK_* variables.
#include "settings.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace tcsolve::hook {
namespace {

bool parse_number(const char* text, double& out) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !std::isfinite(v) || v < 0) return false;
  out = v;
  return true;
}

}  // namespace

Config parse_config(const std::function<const char*(const char*)>& lookup) {
  Config c;
  auto bad = [&](const char* name, const char* value, const char* expected) {
    c.problems.push_back(std::string(name) + "='" + value + "' is not " + expected + "; the default is kept");
  };
  if (const char* v = lookup("TCSOLVE_HOOK_VARIANT")) {
    const std::string_view s(v);
    if (s == "auto")
      c.policy.variant = HookVariant::auto_;
    else if (s == "ec-fp16")
      c.policy.variant = HookVariant::ec_fp16;
    else if (s == "ec-tf32")
      c.policy.variant = HookVariant::ec_tf32;
    else if (s == "off")
      c.policy.variant = HookVariant::off;
    else
      bad("TCSOLVE_HOOK_VARIANT", v, "auto, ec-fp16, ec-tf32 or off");
  }
  if (const char* v = lookup("TCSOLVE_HOOK_TF32")) {
    const std::string_view s(v);
    if (s == "respect")
      c.policy.tf32_replace = false;
    else if (s == "replace")
      c.policy.tf32_replace = true;
    else
      bad("TCSOLVE_HOOK_TF32", v, "respect or replace");
  }
  auto number = [&](const char* name, double& out) {
    if (const char* v = lookup(name)) {
      double x = 0;
      if (parse_number(v, x))
        out = x;
      else
        bad(name, v, "a number >= 0");
    }
  };
  number("TCSOLVE_HOOK_MIN_FLOPS", c.policy.min_flops);
  number("TCSOLVE_HOOK_MIN_SPEEDUP", c.policy.min_speedup);
  auto whole = [&](const char* name, std::int64_t& out) {
    if (const char* v = lookup(name)) {
      double x = 0;
      if (parse_number(v, x) && x == std::floor(x) && x < 9.0e18)
        out = static_cast<std::int64_t>(x);
      else
        bad(name, v, "a whole number >= 0");
    }
  };
  whole("TCSOLVE_HOOK_MIN_DIM", c.policy.min_dim);
  whole("TCSOLVE_HOOK_MIN_TILES", c.policy.min_tiles);
  if (const char* v = lookup("TCSOLVE_HOOK_LOG")) c.log_path = v;
  if (const char* v = lookup("TCSOLVE_HOOK_REPORT")) {
    const std::string_view s(v);
    if (s == "1")
      c.report = true;
    else if (s != "0" && !s.empty())
      bad("TCSOLVE_HOOK_REPORT", v, "1 or 0");
  }
  if (const char* v = lookup("TCSOLVE_HOOK_GRAPHS")) {
    const std::string_view s(v);
    if (s == "1")
      c.graphs = true;
    else if (s == "0")
      c.graphs = false;
    else
      bad("TCSOLVE_HOOK_GRAPHS", v, "1 or 0");
  }
  return c;
}

}  // namespace tcsolve::hook
