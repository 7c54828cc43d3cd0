// The C API's view of the variant table (tcsolve.h, "the variant table"): tcsolve::kVariants,
// whose order gives the int values of the variants, and tcsolve::available per backend, as
// `tcsolve variants` prints them.
#include <cstddef>
#include <string>

#include "arguments.hpp"
#include "context.hpp"
#include "tcsolve.h"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace tcsolve::capi {
namespace {

/// The table's row for `variant`, nullptr when it is none.
const VariantInfo* row(int variant) {
  if (variant < 0 || static_cast<std::size_t>(variant) >= kVariants.size()) return nullptr;
  return &kVariants[static_cast<std::size_t>(variant)];
}

}  // namespace
}  // namespace tcsolve::capi

using namespace tcsolve;
using namespace tcsolve::capi;

extern "C" {

int tcsolveVariantCount(void) { return static_cast<int>(kVariants.size()); }

const char* tcsolveVariantDescription(int variant) {
  const VariantInfo* v = row(variant);
  return v ? v->description.data() : nullptr;  // string literals: NUL-terminated
}

const char* tcsolveVariantInputFormat(int variant) {
  const VariantInfo* v = row(variant);
  return v ? v->input_format.data() : nullptr;
}

double tcsolveVariantUnitRoundoff(int variant) {
  const VariantInfo* v = row(variant);
  return v ? v->unit_roundoff : -1.0;
}

tcsolveStatus_t tcsolveVariantAvailable(int variant, tcsolveBackend_t backend, int* available) {
  return guarded(nullptr, "tcsolveVariantAvailable", [&] {
    const Variant v = variant_argument("variant", variant);
    not_null("available", available);
    Backend b = Backend::automatic;
    switch (backend) {
      case TCSOLVE_BACKEND_AUTO: b = Backend::automatic; break;
      case TCSOLVE_BACKEND_CPU: b = Backend::cpu; break;
      case TCSOLVE_BACKEND_CUDA: b = Backend::cuda; break;
      default:
        throw InvalidInput("backend: " + std::to_string(static_cast<int>(backend)) +
                           " is not TCSOLVE_BACKEND_AUTO, _CPU or _CUDA");
    }
    *available = tcsolve::available(v, b) ? 1 : 0;  // cuda: only with a usable device
    return TCSOLVE_STATUS_SUCCESS;
  });
}

}  // extern "C"
