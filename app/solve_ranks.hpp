// `tcsolve solve` as the P ranks of an mpirun job (docs/architecture.md, "Several GPUs and nodes";
// issue 33): the distributed solver on cpu ranks over MPI (tcsolve/solver/distributed.hpp).
// Each rank reads only its 2D block-cyclic piece of A from the HDF5 file (io read_system_piece;
// b and x whole), on a P x Q grid (--grid; default 1 x P), after checking its memory; the ranks
// factor and refine together; rank 0 prints the result (text or JSON, with the grid and the
// ranks) and writes --output. Every step one rank can fail alone is agreed, so an error ends
// every rank with one message and the documented exit code.
#pragma once

#include <cstdint>
#include <string>

#include "ranks.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::app {

/// What `solve` parsed, for the ranks.
struct SolveRanksArgs {
  std::string input, variant_name, output, grid;  ///< grid: "PxQ", or empty (1 x P)
  Layout layout = Layout::row_major;
  SolveOptions options;         ///< the variant set; the backend as given (auto: cpu here)
  OutputOptions output_rule;
  bool json = false;
  long long synthetic = 0;  ///< --synthetic N on cuda ranks (input empty)
  std::uint64_t seed = 1;
  bool warmup = false;      ///< cuda ranks: solve once untimed first
};

/// The distributed solve of args.input as this rank of `job` (job.size > 1, job.world set).
/// Returns the exit code (0 converged, 3 not converged); throws the agreed errors.
int run_solve_ranks(const JobRanks& job, SolveRanksArgs args);

}  // namespace tcsolve::app
