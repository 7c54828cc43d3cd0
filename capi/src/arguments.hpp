// The C API's argument checks in BLAS's manner, shared by its entry points (tcsolve_capi.cpp,
// last_solve.cpp, kmeans.cpp, variant_table.cpp): each throws InvalidInput (or Unavailable)
// naming the argument, before anything is touched; guarded() (context.hpp) turns that into a
// status and the handle's message. Also the handle check (check_handle) and how messages write
// numbers (text, number).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "context.hpp"
#include "tcsolve.h"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::capi {

inline std::string text(std::int64_t v) { return std::to_string(v); }

/// A double in messages: three significant digits, e-notation for small and large magnitudes
/// ("8.2e-08", "0.5", "inf"), never std::to_string's fixed six decimals ("0.000000").
inline std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", v);
  return buffer;
}

/// The variant whose int value (tcsolve::Variant's, tcsolveVariantFromName) is `value`.
inline Variant variant_argument(const char* name, int value) {
  if (value < 0 || static_cast<std::size_t>(value) >= kVariants.size())
    throw InvalidInput(std::string(name) + ": " + std::to_string(value) + " is not a tcsolve variant (0 to " +
                       std::to_string(kVariants.size() - 1) + ", see tcsolveVariantFromName)");
  return static_cast<Variant>(value);
}

inline void nonnegative(const char* name, std::int64_t v) {
  if (v < 0) throw InvalidInput(std::string(name) + ": " + text(v) + " < 0");
}

/// ld >= max(1, rows), BLAS's rule for a leading dimension.
inline void leading_dimension(const char* name, std::int64_t ld, std::int64_t rows, const char* what) {
  const std::int64_t least = std::max<std::int64_t>(1, rows);
  if (ld < least)
    throw InvalidInput(std::string(name) + ": " + text(ld) + " < max(1, " + what + ") = " + text(least));
}

inline void not_null(const char* name, const void* p) {
  if (!p) throw InvalidInput(std::string(name) + ": NULL pointer");
}

/// The libraries index with int: larger sizes are valid BLAS arguments they cannot take.
inline int as_int(const char* name, std::int64_t v) {
  if (v > std::numeric_limits<int>::max())
    throw Unavailable(std::string(name) + ": " + text(v) + " exceeds the library's 32-bit sizes (2^31 - 1)");
  return static_cast<int>(v);
}

/// A NULL handle: INVALID_VALUE, the message kept for tcsolveGetLastErrorMessage(NULL).
inline tcsolveStatus_t null_handle(const char* function) {
  return fail(nullptr, TCSOLVE_STATUS_INVALID_VALUE, function, "handle: NULL (create one with tcsolveCreate)");
}

/// The check every entry point makes before it reads *h: SUCCESS for a live handle; for a NULL
/// one or one that is not live (handle_live: destroyed, or never created) INVALID_VALUE, the
/// message kept for tcsolveGetLastErrorMessage(NULL).
inline tcsolveStatus_t check_handle(const tcsolveContext* h, const char* function) {
  if (!h) return null_handle(function);
  if (!handle_live(h)) return fail(nullptr, TCSOLVE_STATUS_INVALID_VALUE, function, kNotLive);
  return TCSOLVE_STATUS_SUCCESS;
}

}  // namespace tcsolve::capi
