// MPI launchers (docs/architecture.md: only app/ reads their environment): how many ranks `mpirun
// -np P tcsolve ...` (or another launcher) started, and which one this process is, known before
// MPI is initialized. main.cpp reads it once: a launch of P > 1 ranks starts an MPI session for a
// subcommand that runs as ranks (kmeans; ranks.hpp) and is refused up front for the others (exit
// 4, the message from rank 0 only), rather than letting P copies run the whole command and race
// on its output file.
#pragma once

#include <string>

namespace tcsolve::app {

struct LaunchRanks {
  int size = 1;          ///< ranks the launcher started (1: not launched as several)
  int rank = 0;          ///< this process's rank
  std::string variable;  ///< the environment variable that gave size ("" when none)
};

/// From OpenMPI's OMPI_COMM_WORLD_SIZE / _RANK, else PMIx's PMIX_SIZE / PMIX_RANK, else the
/// PMI of MPICH and Intel MPI (PMI_SIZE / PMI_RANK). A value that is not a positive number (or
/// a rank outside [0, size)) is ignored.
LaunchRanks launcher_ranks();

}  // namespace tcsolve::app
