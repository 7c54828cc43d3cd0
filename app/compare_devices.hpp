// `tcsolve compare --synthetic N [--gpus G]` in one process (compare_devices.cpp): the random-mode
// system of a seed made on the GPUs (no file, no host copy of A), solved by each selected variant
// -- on one GPU by the one-GPU solver (solve_device), with --gpus by the distributed solver on a
// 1 x G grid (solve_generated) -- by cusolver-dsgesv (cuSOLVER's one-GPU refinement solver, on
// the first GPU: its iterations) and by the baseline cusolvermg-dgetrf, cuSOLVER's multi-GPU
// FP64 getrf + getrs on the same GPUs (1 x G column block-cyclic, tile 256), every row after one
// untimed run of its own (variants: one correction, no fallback). cmd_compare.cpp prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare_ranks.hpp"
#include "progress.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::app {

/// The rows (x dropped), the grid "1xG", the group and the notes.
CompareRanksRows compare_synthetic(const std::vector<Variant>& variants, const SolveOptions& options, int n,
                                   std::uint64_t seed, const std::string& gpus, Progress& progress);

}  // namespace tcsolve::app
