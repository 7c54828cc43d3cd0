// `tcsolve compare` as the P ranks of an mpirun job (docs/architecture.md, "Command line", "Solver":
// baselines; issue 33): on cpu ranks, each rank reads only its 2D block-cyclic piece of A once
// (io read_system_piece; b and x whole), on a P x Q grid (--grid; default 1 x P); then every
// selected variant's distributed solve (tcsolve/solver/distributed.hpp) runs on those pieces, and
// the baseline method "scalapack-pdgesv" -- ScaLAPACK's FP64 pdgesv on a copy of the same pieces
// (scalapack_baseline.hpp), timed from an MPI_Barrier before the call to one after it -- when the
// build has ScaLAPACK (else a note says why it is absent). pdgesv's errors are measured as the
// solver measures its own (the backward error and dsgesv's criterion, forward_error against the
// file's x): its x gathered on every rank (tcsolve::gather), r = b - A x in FP64 by a distributed
// product (each rank its piece of A times x, summed over the ranks), ||A||_inf from the pieces.
// cmd_compare.cpp parses, writes --csv / --plot and prints (rank 0); this file makes the rows.
// Every step one rank can fail alone is agreed (ranks.hpp).
#pragma once

#include <string>
#include <vector>

#include "progress.hpp"
#include "ranks.hpp"
#include "solve_report.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/block_cyclic.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::app {

/// What `compare` parsed, for the ranks.
struct CompareRanksArgs {
  std::string input;
  std::string grid;  ///< "PxQ", or empty (1 x P)
  Layout layout = Layout::row_major;
  SolveOptions options;  ///< the backend as given (auto: cpu here; cuda refused)
};

/// What plan_compare_ranks checked: the grid and the system's shapes.
struct CompareRanksPlan {
  Grid grid;
  SystemShape shape;
};

/// The checks before anything is read, agreed on every rank of `job` (job.size > 1): the grid
/// (--grid against the ranks), the backend (auto becomes cpu in args.options; cuda: Unavailable,
/// cpu ranks only for now), an HDF5 input (a Matrix Market file refused with import's hint), the
/// system's shapes.
CompareRanksPlan plan_compare_ranks(const JobRanks& job, CompareRanksArgs& args);

/// The rows of the table, on every rank (rank 0's times are the ones reported).
struct CompareRanksRows {
  std::vector<SolveReport> rows;   ///< each variant's, in order, then scalapack-pdgesv's; x dropped
  std::vector<std::string> notes;  ///< why a baseline is absent ("scalapack-pdgesv: not run: ...")
  std::string grid;                ///< "PxQ"
  std::string group;               ///< the DeviceGroup's description ("mpi x 4 (cpu)")
};

/// Reads this rank's piece and solves with each of `variants` (available on cpu), then with
/// ScaLAPACK's pdgesv. Every rank of `job` calls it; the errors are agreed (an exactly singular A
/// named with the file, as solve does). `progress` is rank 0's (the others': never).
CompareRanksRows compare_on_ranks(const JobRanks& job, const CompareRanksArgs& args,
                                  const CompareRanksPlan& plan, const std::vector<Variant>& variants,
                                  Progress& progress);

}  // namespace tcsolve::app
