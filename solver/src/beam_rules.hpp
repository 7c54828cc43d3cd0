// beam's words and breakdown rule, shared by the cpu reference (cpu/beam.cpp) and the one-GPU
// path (cuda/blocked_lu.cpp): the note's description and why an attempt stops (a non-finite
// pivot, growth of the factors beyond kBeamGrowth). Internal to tcsolve::solver.
#pragma once

#include <cstddef>
#include <string>

#include "tcsolve/solver/solver.hpp"

namespace tcsolve::detail {

/// "beam (in-block pivoting, k modified pivots)": the note's words.
std::string beam_description(std::size_t modifications);

/// Why beam's factors cannot be used, or empty: a non-finite pivot candidate (nonfinite_column
/// >= 0, 0-based), else growth = max|L U| / max|A_s| not within kBeamGrowth (a NaN or inf
/// included).
std::string beam_breakdown(int nonfinite_column, double growth, std::size_t modifications);

/// The refinement beam runs with its factors (both backends): where it modified pivots and the
/// correction is not woodbury, GMRES-IR (the factors are those of A_s + E); without
/// modifications the requested one, except that classical becomes auto (classical, then GMRES-IR
/// from the best iterate once a step gains less than 10x): beam's factors grow more than partial
/// pivoting's (max|L U| / max|A_s| 3e4 against 3e2 at n = 16384, U(-1,1)), and classical
/// refinement diverged with them at n = 32768 (H200, session 31).
Refinement beam_refinement(Refinement requested, std::size_t modifications, BeamCorrection correction);

}  // namespace tcsolve::detail
