// urand and exp_rand (Ootomo Eq. 25) generators and their text form.
#include "tcsolve/gemm/random.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tcsolve/gemm/config.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve {
namespace {

double parse_number(std::string_view text, std::string_view whole) {
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    throw InvalidInput("malformed distribution '" + std::string(whole) + "': '" + s + "' is not a number");
  return v;
}

int parse_int(std::string_view text, std::string_view whole) {
  const double v = parse_number(text, whole);
  if (v != std::floor(v) || std::fabs(v) > 1000)
    throw InvalidInput("malformed distribution '" + std::string(whole) + "': '" + std::string(text) +
                       "' is not an integer exponent");
  return static_cast<int>(v);
}

}  // namespace

Distribution parse_distribution(std::string_view text) {
  const std::string_view usage = " (expected urand, urand:A:B or exp_rand:A:B)";
  const std::size_t c1 = text.find(':');
  const std::string_view kind = text.substr(0, c1);
  Distribution d;
  if (kind == "urand") {
    d.kind = Distribution::Kind::urand;
    if (c1 == std::string_view::npos) return d;
  } else if (kind == "exp_rand") {
    d.kind = Distribution::Kind::exp_rand;
    if (c1 == std::string_view::npos)
      throw InvalidInput("malformed distribution '" + std::string(text) + "': exp_rand needs :A:B" + std::string(usage));
  } else {
    throw InvalidInput("unknown distribution '" + std::string(text) + "'" + std::string(usage));
  }
  const std::string_view rest = text.substr(c1 + 1);
  const std::size_t c2 = rest.find(':');
  if (c2 == std::string_view::npos || rest.find(':', c2 + 1) != std::string_view::npos)
    throw InvalidInput("malformed distribution '" + std::string(text) + "': need exactly two bounds" + std::string(usage));
  if (d.kind == Distribution::Kind::urand) {
    d.lo = parse_number(rest.substr(0, c2), text);
    d.hi = parse_number(rest.substr(c2 + 1), text);
    if (!(d.lo < d.hi))
      throw InvalidInput("malformed distribution '" + std::string(text) + "': need A < B");
  } else {
    d.emin = parse_int(rest.substr(0, c2), text);
    d.emax = parse_int(rest.substr(c2 + 1), text);
    if (d.emin > d.emax)
      throw InvalidInput("malformed distribution '" + std::string(text) + "': need A <= B");
    if (d.emin < -126 || d.emax > 127)
      throw InvalidInput("malformed distribution '" + std::string(text) +
                         "': exponents must lie in FP32's normal range -126..127");
  }
  return d;
}

std::string to_string(const Distribution& d) {
  if (d.kind == Distribution::Kind::exp_rand)
    return "exp_rand:" + std::to_string(d.emin) + ":" + std::to_string(d.emax);
  if (d.lo == -1.0 && d.hi == 1.0) return "urand";
  char buf[96];
  std::snprintf(buf, sizeof buf, "urand:%g:%g", d.lo, d.hi);
  return buf;
}

float draw(const Distribution& d, Rng& rng) {
  if (d.kind == Distribution::Kind::urand) {
    // 53 random bits -> U[0,1), then the affine map in double and one rounding to FP32.
    const double u = static_cast<double>(rng() >> 11) * 0x1p-53;
    return static_cast<float>(d.lo + (d.hi - d.lo) * u);
  }
  const std::uint64_t r = rng();
  const std::uint32_t mantissa = static_cast<std::uint32_t>(r & 0x7fffffu);  // uniform in [0, 2^23)
  const bool negative = (r >> 23) & 1u;
  const int span = d.emax - d.emin + 1;
  const int e = d.emin + static_cast<int>((r >> 32) % static_cast<std::uint64_t>(span));
  const std::uint32_t bits = (negative ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(e + 127) << 23) | mantissa;
  return bits_float(bits);
}

void fill(const Distribution& d, Rng& rng, float* data, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) data[i] = draw(d, rng);
}

}  // namespace tcsolve
