// Runs of several processes under an MPI launcher (docs/architecture.md, "Command line": under
// `mpirun -np P` the commands that support it run as P ranks; only rank 0 prints and writes; an
// error on any rank ends all ranks with one message and the documented exit code):
//
//   - main() starts the MPI session (runtime::MpiSession) for a subcommand that supports ranks
//     when the launcher started several (launcher.hpp); the other subcommands are refused.
//   - The command asks job_ranks() which rank it is, and runs every step that one rank can fail
//     alone (its rows of a file, its memory, the output file) through runtime::agreed() on the
//     world communicator; the libraries agree on their own steps. So every rank throws the same
//     error, marked runtime::AgreedFailure.
//   - main() prints an agreed error once (rank 0; rank_failure) and every rank exits with
//     its code. An error that was not agreed (one rank failed where no agreement was made) is
//     printed by that rank, naming it, and ends the job (MpiSession::abort), so that no rank
//     waits forever in a collective.
#pragma once

#include <exception>
#include <memory>

#include "tcsolve/runtime/communicator.hpp"

namespace tcsolve::app {

/// This process in its job.
struct JobRanks {
  int rank = 0, size = 1;
  /// The world communicator (host buffers, MPI_COMM_WORLD); null alone (no MPI session).
  std::unique_ptr<runtime::Communicator> world;
  /// Whether this process prints and writes: rank 0.
  bool speaks() const { return rank == 0; }
};

/// From the MPI session main() started; rank 0 of 1 without a world when there is none.
JobRanks job_ranks();

/// What main() does with an error a subcommand threw (e: null for one that is not a
/// std::exception) in a job of several ranks:
///   print      say it (the usual error line and JSON): this process is alone, or rank 0 and the
///              error was agreed;
///   silent     exit with its code without a word: another rank (0) says it;
///   abort_job  it was not agreed (this rank met it alone; the others may wait in a collective):
///              say it naming this rank, then end the job (runtime::MpiSession::abort).
enum class RankFailure { print, silent, abort_job };
RankFailure rank_failure(const std::exception* e);

}  // namespace tcsolve::app
