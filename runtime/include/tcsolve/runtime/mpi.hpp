// MPI for the processes of a job launched by mpirun: the session (MPI_Init_thread ..
// MPI_Finalize) and the world communicator (host buffers). mpi.h stays out of this header, so
// code that includes it builds without MPI; a build without MPI throws Unavailable from every
// function here except MpiSession::active().
#pragma once

#include <memory>

#include "tcsolve/runtime/communicator.hpp"

namespace tcsolve::runtime {

/// Initializes MPI for its lifetime (MPI_THREAD_FUNNELED: the process' MPI calls come from the
/// thread that made the session) and finalizes it at the end. At most one per process.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Whether a session is alive in this process.
  static bool active();

  /// Ends every rank of the job with `code` (MPI_Abort): for a failure that agree() could not
  /// reach, so that no rank is left waiting. Does not return.
  [[noreturn]] static void abort(int code);

 private:
  int rank_ = 0, size_ = 1;
};

/// The world communicator on host buffers (MPI_COMM_WORLD); needs an MpiSession.
std::unique_ptr<Communicator> mpi_world();

/// A communicator on host buffers over the ranks of the caller's MPI communicator `comm` (a
/// pointer to an MPI_Comm, so that mpi.h stays out of this header): its duplicate
/// (MPI_Comm_dup, a collective over comm), so the library's messages never meet the caller's.
/// MPI must be initialized (MPI_Initialized; else InvalidInput), by an MpiSession or by the
/// caller (the C API's tcsolve_mpi.h), and is never finalized here; the duplicate is freed with the object unless
/// MPI is finalized by then.
std::unique_ptr<Communicator> mpi_communicator(const void* comm);

/// This process' rank among the ranks of its node (MPI_Comm_split_type shared), for picking a GPU.
int mpi_local_rank();

}  // namespace tcsolve::runtime
