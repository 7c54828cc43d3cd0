// What the condition estimate's automatic rule (refinement_rules.hpp,
// decide_condition_estimate) needs from a distributed solve (refine_ops.hpp says what each
// function does): U's diagonal span over the ranks, and the search for rows or columns of the
// distributed A equal up to sign and a power of two (input_checks.hpp's sampled search, its
// hashing on a host thread beside the LU, its verification a collective).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <utility>

#include "refine_ops.hpp"

namespace tcsolve::distributed {

template <class T>
double pivot_span(GridComms& g, const DistributedFactors<T>& f) {
  const CyclicMap rows = f.desc.rows(g.grid), cols = f.desc.cols(g.grid);
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (int i = 0; i < f.desc.n; ++i) {
    if (rows.owner(i) != g.prow || cols.owner(i) != g.pcol) continue;
    const double v = std::abs(static_cast<double>(
        f.lu[static_cast<std::size_t>(cols.local(i)) * static_cast<std::size_t>(f.desc.lld) +
             static_cast<std::size_t>(rows.local(i))]));
    low = std::min(low, v);
    high = std::max(high, v);
  }
  high = g.world.max(high);
  low = -g.world.max(-low);
  return high / low;
}
template double pivot_span(GridComms&, const DistributedFactors<float>&);
template double pivot_span(GridComms&, const DistributedFactors<double>&);

LocalLines local_lines(const PieceA& A) {
  return [A](bool rows, const std::vector<int>& lines, std::vector<double>& out) {
    const int n = A.row_map.n;
    const std::size_t m = static_cast<std::size_t>(n);
    out.assign(lines.size() * m, 0.0);
    for (std::size_t k = 0; k < lines.size(); ++k) {
      const int line = lines[k];
      const CyclicMap& own = rows ? A.row_map : A.col_map;    // the line's own index
      const CyclicMap& along = rows ? A.col_map : A.row_map;  // positions along it
      if (own.owner(line) != (rows ? A.prow : A.pcol)) continue;
      const int l = own.local(line);
      const int count = rows ? A.cols : A.rows;
      const int proc = rows ? A.pcol : A.prow;
      for (int p = 0; p < count; ++p) {
        const std::size_t at = rows ? static_cast<std::size_t>(p) * static_cast<std::size_t>(A.ld) + static_cast<std::size_t>(l)
                                    : static_cast<std::size_t>(l) * static_cast<std::size_t>(A.ld) + static_cast<std::size_t>(p);
        out[k * m + static_cast<std::size_t>(along.global(p, proc))] = A.a[at];
      }
    }
  };
}

DistributedSingularitySearch::DistributedSingularitySearch(int n, LocalLines local, RankSum sum)
    : n_(n), local_(std::move(local)), sum_(std::move(sum)) {
  // row_samples[k n + i] = A(i, p_k): the sampled columns; column_samples: the sampled rows
  const std::vector<int> positions = detail::sample_positions(n);
  auto samples = std::make_shared<std::pair<std::vector<double>, std::vector<double>>>();
  local_(false, positions, samples->first);
  local_(true, positions, samples->second);
  sum_(samples->first);
  sum_(samples->second);
  candidates_ = std::async(std::launch::async, [n, samples] {
    return detail::sampled_candidates(n, samples->first, samples->second);
  });
}

DistributedSingularitySearch::DistributedSingularitySearch(int n, Samples samples, LocalLines local, RankSum sum)
    : n_(n), local_(std::move(local)), sum_(std::move(sum)) {
  candidates_ = std::async(std::launch::async, [n, samples = std::move(samples)] {
    const auto [rows, columns] = samples();
    return detail::sampled_candidates(n, rows, columns);
  });
}

DistributedSingularitySearch::~DistributedSingularitySearch() {
  if (candidates_.valid()) candidates_.wait();
}

std::optional<std::string> DistributedSingularitySearch::result() {
  if (!answer_) {
    const detail::SampledCandidates c = candidates_.get();
    answer_ = detail::verify_candidates(c, [this](bool rows, int line, std::vector<double>& out) {
      local_(rows, {line}, out);
      sum_(out);
    });
  }
  return *answer_;
}

}  // namespace tcsolve::distributed
