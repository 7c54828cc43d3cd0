// Summary statistics of repeated timings.
#pragma once

#include <vector>

namespace tcsolve::bench {

/// The median of `v` (the mean of the two middle values for an even count); `v` must not be
/// empty.
double median(std::vector<double> v);

}  // namespace tcsolve::bench
