// DeviceGroup (group.hpp): its accessors and description, and the two ways to make one -- GPUs
// of this process (gpus(), NCCL: nccl.cpp) and this process' rank of an MPI job (mpi(): the
// world communicator on the host, or its local GPU with NCCL bootstrapped over MPI).
#include <sstream>
#include <string>
#include <utility>

#if defined(TCSOLVE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "tcsolve/runtime/cuda_check.hpp"
#endif

#include "group_state.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/mpi.hpp"

namespace tcsolve::runtime {

DeviceGroup::DeviceGroup(std::unique_ptr<State> state) : state_(std::move(state)) {}
DeviceGroup::DeviceGroup(DeviceGroup&&) noexcept = default;
DeviceGroup& DeviceGroup::operator=(DeviceGroup&&) noexcept = default;
DeviceGroup::~DeviceGroup() = default;

int DeviceGroup::size() const { return state_->size; }
int DeviceGroup::local_members() const { return static_cast<int>(state_->members.size()); }
int DeviceGroup::first_member() const { return state_->first; }
Memory DeviceGroup::memory() const { return state_->memory; }
DeviceGroup::Member& DeviceGroup::member(int local) { return state_->members.at(static_cast<std::size_t>(local)); }
const DeviceGroup::Member& DeviceGroup::member(int local) const {
  return state_->members.at(static_cast<std::size_t>(local));
}
std::string DeviceGroup::describe() const { return state_->description; }
Communicator* DeviceGroup::host_communicator() const { return state_->host; }

int device_count() { return detail::device_count(); }
bool DeviceGroup::spans_processes() const { return state_->processes; }

void DeviceGroup::abort() noexcept {
  if (state_ && state_->abort) state_->abort();
}

DeviceGroup DeviceGroup::gpus(const std::vector<int>& devices) {
  const int available = detail::device_count();
  if (devices.empty()) throw InvalidInput("a group of GPUs needs at least one device");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] < 0 || devices[i] >= available)
      throw InvalidInput("device " + std::to_string(devices[i]) + " does not exist (" + std::to_string(available) +
                         " CUDA devices here)");
    for (std::size_t j = 0; j < i; ++j)
      if (devices[j] == devices[i])
        throw InvalidInput("device " + std::to_string(devices[i]) + " is listed twice");
  }
  auto state = std::make_unique<State>();
  state->size = static_cast<int>(devices.size());
  state->memory = Memory::device;
  detail::add_nccl_members(*state, devices);
  std::ostringstream d;
  d << "nccl x " << devices.size() << " (devices ";
  for (std::size_t i = 0; i < devices.size(); ++i) d << (i ? "," : "") << devices[i];
  d << ")";
  state->description = d.str();
  return DeviceGroup(std::move(state));
}

DeviceGroup DeviceGroup::mpi(Memory memory) {
  if (!MpiSession::active()) {
    if (!have_mpi()) (void)mpi_world();  // throws the build's Unavailable
    throw Unavailable("DeviceGroup::mpi: MPI is not initialized (no MpiSession)");
  }
  return mpi(mpi_world(), memory);
}

DeviceGroup DeviceGroup::mpi(std::unique_ptr<Communicator> world, Memory memory) {
  if (memory == Memory::host) return mpi(std::move(world));
  if (!world || world->memory() != Memory::host || world->engine() != "mpi")
    throw InvalidInput("DeviceGroup::mpi: not an MPI communicator on host buffers");
  auto state = std::make_unique<State>();
  state->processes = true;
  state->memory = memory;
  state->size = world->size();
  state->first = world->rank();
  // one GPU per rank: the node-local rank picks it; NCCL's id from rank 0 over MPI
  if (!have_nccl()) {  // every rank throws the build's Unavailable, marked as agreed
    try {
      (void)detail::nccl_unique_id();
    } catch (const Unavailable& e) {
      throw Agreed<Unavailable>(e.what());
    }
  }
  const int count = detail::device_count();
  const int local = mpi_local_rank();
  const int failed = count < 1 ? 1 : 0;
  const Agreement a = agree(*world, failed, "rank " + std::to_string(world->rank()) + " sees no CUDA device");
  if (a.code != 0) throw Agreed<Unavailable>("mpirun on cuda: " + a.message);
  detail::NcclId id{};
  if (world->rank() == 0) id = detail::nccl_unique_id();
  world->broadcast(id.data(), id.size(), 0, nullptr);
  detail::add_nccl_rank(*state, id, world->rank(), world->size(), local % count);
  state->host = world.get();
  state->communicators.push_back(std::move(world));
  state->description = "mpi+nccl x " + std::to_string(state->size);
  return DeviceGroup(std::move(state));
}

DeviceGroup DeviceGroup::mpi(std::unique_ptr<Communicator> host) {
  if (!host || host->memory() != Memory::host || host->engine() != "mpi")
    throw InvalidInput("DeviceGroup::mpi: not an MPI communicator on host buffers");
  auto state = std::make_unique<State>();
  state->processes = true;
  state->memory = Memory::host;
  state->size = host->size();
  state->first = host->rank();
  Member m;
  m.rank = host->rank();
  m.communicator = host.get();
  state->host = host.get();
  state->communicators.push_back(std::move(host));
  state->members.push_back(m);
  state->description = "mpi x " + std::to_string(state->size) + " (cpu)";
  return DeviceGroup(std::move(state));
}

DeviceScope::DeviceScope(int device) {
#if defined(TCSOLVE_HAVE_CUDA)
  if (device < 0) return;
  TCSOLVE_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) TCSOLVE_CUDA_CHECK(cudaSetDevice(device));
  switched_ = previous_ != device;
#else
  if (device >= 0) throw Unavailable("device " + std::to_string(device) + ": this tcsolve was built without CUDA");
#endif
}

DeviceScope::~DeviceScope() {
#if defined(TCSOLVE_HAVE_CUDA)
  if (switched_) cudaSetDevice(previous_);  // errors dropped: a destructor
#endif
}

}  // namespace tcsolve::runtime
