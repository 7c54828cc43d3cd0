// The inside of a DeviceGroup (group.hpp), shared by group.cpp (the engine-independent parts and
// the MPI host group) and nccl.cpp (the GPU members and their NCCL communicators).
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/group.hpp"

namespace tcsolve::runtime {

struct DeviceGroup::State {
  int size = 1;
  int first = 0;
  Memory memory = Memory::host;
  bool processes = false;
  std::string description;
  std::vector<Member> members;
  Communicator* host = nullptr;  ///< DeviceGroup::host_communicator()
  /// Owned, destroyed in this order: communicators, contexts, then streams (releases).
  std::vector<std::unique_ptr<Communicator>> communicators;
  std::vector<std::unique_ptr<cuda::Context>> contexts;
  std::vector<std::function<void()>> releases;  ///< destroy the streams the group made
  std::function<void()> abort;                  ///< DeviceGroup::abort

  ~State() {
    communicators.clear();
    contexts.clear();
    for (auto& release : releases) release();
  }
};

namespace detail {

/// NCCL's unique id (NCCL_UNIQUE_ID_BYTES), as bytes for an MPI broadcast.
using NcclId = std::array<char, 128>;

/// ncclGetUniqueId (rank 0 of a job makes it, the others receive it).
NcclId nccl_unique_id();
/// Adds to `state` the GPU members of one process: each on its device with a context on a new
/// non-blocking stream and an NCCL communicator. gpus(): devices, ranks 0..n-1 (ncclCommInitAll);
/// mpi(): one device, `rank` of `size` from `id` (ncclCommInitRank).
void add_nccl_members(DeviceGroup::State& state, const std::vector<int>& devices);
void add_nccl_rank(DeviceGroup::State& state, const NcclId& id, int rank, int size, int device);
/// The number of CUDA devices (0 without any or without CUDA in the build).
int device_count();

}  // namespace detail
}  // namespace tcsolve::runtime
