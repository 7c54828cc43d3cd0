// beam's words and breakdown rule (beam_rules.hpp).
#include "beam_rules.hpp"

#include <cstdio>

namespace tcsolve::detail {

std::string beam_description(std::size_t modifications) {
  return "beam (in-block pivoting, " + std::to_string(modifications) + " modified pivot" +
         (modifications == 1 ? "" : "s") + ")";
}

std::string beam_breakdown(int nonfinite_column, double growth, std::size_t modifications) {
  if (nonfinite_column >= 0)
    return "a non-finite pivot in column " + std::to_string(nonfinite_column + 1) + " of beam's LU";
  if (growth <= kBeamGrowth) return {};
  char text[32];
  std::snprintf(text, sizeof text, "%.1e", growth);
  return std::string("growth ") + text + " of beam's factors (" + std::to_string(modifications) + " modified pivots)";
}

Refinement beam_refinement(Refinement requested, std::size_t modifications, BeamCorrection correction) {
  if (modifications > 0) return correction == BeamCorrection::woodbury ? requested : Refinement::gmres;
  return requested == Refinement::classical ? Refinement::auto_ : requested;
}

}  // namespace tcsolve::detail
