// A DeviceGroup: the members a distributed algorithm runs on, each a place to compute (the host,
// or a cuda::Context bound to one GPU) with its Communicator. Two ways to make one:
//
//   - gpus({0, 1}): one process drives several GPUs. One member per device, each with a context
//     on a non-blocking stream of its own and an NCCL communicator (ncclCommInitAll). The
//     algorithm runs each member on a thread of its own (a member's calls are made by one thread
//     at a time, as a Context requires).
//   - mpi(memory): this process is one rank of an MPI job (MpiSession, mpi.hpp). One local member
//     of size() = the job's ranks: on the host with an MPI communicator (the cpu backend), or on
//     the GPU local_rank mod the node's GPU count with an NCCL communicator bootstrapped over MPI
//     (the unique id broadcast from rank 0).
//
// Members are numbered 0 .. size() - 1 over the whole group; a process holds members
// first_member() .. first_member() + local_members() - 1. The group owns its contexts, streams
// and communicators and frees them in its destructor (after the streams' work).
//
// Without NCCL in the build gpus() and mpi(device) throw Unavailable; without MPI mpi() does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tcsolve/runtime/communicator.hpp"

namespace tcsolve::cuda {
class Context;
}

namespace tcsolve::runtime {

class DeviceGroup {
 public:
  struct Member {
    int rank = 0;                        ///< 0 .. size() - 1 over the group
    int device = -1;                     ///< its GPU (-1: the host)
    cuda::Context* context = nullptr;    ///< its context (nullptr: the host)
    Communicator* communicator = nullptr;
  };

  /// One process, the given GPUs (distinct, each < the device count): NCCL over them.
  static DeviceGroup gpus(const std::vector<int>& devices);
  /// This process as one rank of the running MPI job: Memory::host (MPI) or Memory::device (its
  /// local GPU, NCCL). Needs an MpiSession alive.
  static DeviceGroup mpi(Memory memory);
  /// The ranks of `host` (an MPI communicator on host buffers, e.g. mpi_communicator()'s) as
  /// host members, one per process: mpi(Memory::host) over a communicator of the caller's
  /// choosing; needs no MpiSession.
  static DeviceGroup mpi(std::unique_ptr<Communicator> host);
  /// The same with `memory`: Memory::device makes each rank of `host` a GPU member (the GPU
  /// local_rank mod the node's GPU count, NCCL bootstrapped over `host`), as mpi(Memory::device)
  /// does over MPI_COMM_WORLD: the C API's distributed cuda handles (tcsolve_mpi.h).
  static DeviceGroup mpi(std::unique_ptr<Communicator> host, Memory memory);

  DeviceGroup(DeviceGroup&&) noexcept;
  DeviceGroup& operator=(DeviceGroup&&) noexcept;
  ~DeviceGroup();

  int size() const;             ///< members over all processes
  int local_members() const;    ///< members in this process
  int first_member() const;     ///< the group rank of this process' first member
  Memory memory() const;        ///< host or device members
  Member& member(int local);    ///< 0 <= local < local_members()
  const Member& member(int local) const;
  /// "nccl x 2 (devices 0,1)", "mpi x 3 (cpu)", "mpi+nccl x 2": for results and JSON.
  std::string describe() const;
  /// The communicator over the group's processes on host buffers (MPI_COMM_WORLD, or the one
  /// given to mpi(host)) for mpi() groups, whose members may also be GPUs; nullptr for gpus() (one process).
  Communicator* host_communicator() const;
  /// Whether the members are processes (mpi()) rather than threads of this one (gpus()).
  bool spans_processes() const;

  /// Ends every member's pending collectives after a member failed (ncclCommAbort), so that no
  /// thread stays blocked; the group cannot be used afterwards. Does nothing on MPI members
  /// (agree() keeps ranks in step; an unexpected failure ends the job through MPI_Abort).
  void abort() noexcept;

  struct State;

 private:
  explicit DeviceGroup(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// Makes `device` the calling thread's current CUDA device for its scope, then the previous one
/// again (device < 0: nothing). For the thread that runs a group member's work.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

/// The device list of `--gpus`: "N" (the first N), "all", or "0,1,3"; checked against
/// `available` devices (InvalidInput naming the problem).
std::vector<int> parse_device_list(const std::string& text, int available);

/// The CUDA devices this process sees (0 without any, or without CUDA in the build).
int device_count();

/// Whether this build has MPI / NCCL.
bool have_mpi();
bool have_nccl();

}  // namespace tcsolve::runtime
