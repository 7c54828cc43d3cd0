// One row per variant against the fp32-simt baseline: the availability checks.
#include "tcsolve/bench/variant_rows.hpp"

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::bench {

void require_available(const std::vector<Variant>& variants, bool explicit_variants, Backend backend) {
  const std::string backend_name(to_string(backend));
  for (Variant v : variants)
    if (explicit_variants && !available(v, backend))
      throw Unavailable("variant " + std::string(to_string(v)) + " is not available on the " + backend_name +
                        " backend here");
  if (!available(Variant::fp32_simt, backend))
    throw Unavailable("the baseline fp32-simt is not available on the " + backend_name + " backend here");
}

std::string unavailable_note(Backend backend) {
  return "not available on the " + std::string(to_string(backend)) + " backend here";
}

}  // namespace tcsolve::bench
