// Summary statistics of repeated timings.
#include "tcsolve/bench/statistics.hpp"

#include <algorithm>
#include <cstddef>

namespace tcsolve::bench {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace tcsolve::bench
