// Internal to tcsolve::solver: what the cpu path (cpu/) and the cuda path (cuda/) share, in one
// include: the overflow-safe norms (scaled_norm.hpp), the input checks and exact singularity
// (input_checks.hpp), and the refinement's rules (refinement_rules.hpp). Host code only.
#pragma once

#include "input_checks.hpp"
#include "refinement_rules.hpp"
#include "scaled_norm.hpp"
