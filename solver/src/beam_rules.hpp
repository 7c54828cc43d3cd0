// beam's words and breakdown rule, shared by the cpu reference (cpu/beam.cpp) and the one-GPU
// path (cuda/blocked_lu.cpp): the note's description and why an attempt stops (a non-finite
// pivot, growth of the factors beyond kBeamGrowth). Internal to tcsolve::solver.
#pragma once

#include <cstddef>
#include <string>

namespace tcsolve::detail {

/// "beam (in-block pivoting, k modified pivots)": the note's words.
std::string beam_description(std::size_t modifications);

/// Why beam's factors cannot be used, or empty: a non-finite pivot candidate (nonfinite_column
/// >= 0, 0-based), else growth = max|L U| / max|A_s| not within kBeamGrowth (a NaN or inf
/// included).
std::string beam_breakdown(int nonfinite_column, double growth, std::size_t modifications);

}  // namespace tcsolve::detail
