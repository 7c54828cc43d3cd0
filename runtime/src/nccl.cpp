// NCCL (group.hpp) in a build with CUDA and NCCL: the communicator of a GPU member
// (NcclCommunicator: one NCCL collective per call, enqueued on the member's stream; the members
// of one process meet before each, rendezvous.hpp says why) and the
// making of GPU members, in one process (ncclCommInitAll) or one per MPI rank (ncclCommInitRank
// from a unique id the caller broadcast).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "group_state.hpp"
#include "tcsolve/runtime/rendezvous.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device_guard.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::runtime {
namespace {

void check(ncclResult_t status, const char* call) {
  if (status == ncclSuccess) return;
  throw Error(std::string("NCCL: ") + call + " failed: " + ncclGetErrorString(status));
}

ncclDataType_t datatype(Element type) {
  switch (type) {
    case Element::f64: return ncclFloat64;
    case Element::f32: return ncclFloat32;
    case Element::i32: return ncclInt32;
    case Element::i64: return ncclInt64;
    case Element::u64: return ncclUint64;
  }
  return ncclUint8;
}

std::size_t element_bytes(Element type) { return type == Element::f32 || type == Element::i32 ? 4 : 8; }

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, int device, std::shared_ptr<detail::Rendezvous> meet = nullptr)
      : comm_(comm), device_(device), meet_(std::move(meet)) {
    check(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank");
    check(ncclCommCount(comm_, &size_), "ncclCommCount");
    tcsolve::detail::DeviceGuard guard(device_);
    TCSOLVE_CUDA_CHECK(cudaMalloc(&word_, 256));
  }
  ~NcclCommunicator() override {
    tcsolve::detail::DeviceGuard guard(device_);
    if (comm_ != nullptr) ncclCommDestroy(comm_);  // errors dropped: a destructor (none after abort())
    cudaFree(word_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Memory memory() const override { return Memory::device; }
  std::string engine() const override { return "nccl"; }
  std::unique_ptr<Communicator> split(int, int) override {
    throw Unavailable("Communicator::split: not available on NCCL communicators yet (MPI only)");
  }

  void allreduce_sum(void* data, std::size_t count, Element type, CUstream_st* stream) override {
    tcsolve::detail::DeviceGuard guard(device_);
    meet();
    check(ncclAllReduce(data, data, count, datatype(type), ncclSum, comm_, stream), "ncclAllReduce");
  }
  void allreduce_max(void* data, std::size_t count, Element type, CUstream_st* stream) override {
    tcsolve::detail::DeviceGuard guard(device_);
    meet();
    check(ncclAllReduce(data, data, count, datatype(type), ncclMax, comm_, stream), "ncclAllReduce");
  }
  void broadcast(void* data, std::size_t bytes, int root, CUstream_st* stream) override {
    tcsolve::detail::DeviceGuard guard(device_);
    meet();
    check(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, stream), "ncclBroadcast");
  }
  void allgather(const void* send, void* recv, std::size_t bytes, CUstream_st* stream) override {
    tcsolve::detail::DeviceGuard guard(device_);
    meet();
    check(ncclAllGather(send, recv, bytes, ncclUint8, comm_, stream), "ncclAllGather");
  }

  /// Ends the pending collectives of this communicator (other threads' calls return an error).
  void abort() noexcept {
    if (meet_) meet_->abort();
    if (comm_ != nullptr) ncclCommAbort(comm_);
    comm_ = nullptr;
  }

 protected:
  void scalar(void* value, Element type, bool maximum, CUstream_st* stream) override {
    tcsolve::detail::DeviceGuard guard(device_);
    const std::size_t bytes = element_bytes(type);
    TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(word_, value, bytes, cudaMemcpyHostToDevice, stream));
    meet();
    check(ncclAllReduce(word_, word_, 1, datatype(type), maximum ? ncclMax : ncclSum, comm_, stream), "ncclAllReduce");
    TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(value, word_, bytes, cudaMemcpyDeviceToHost, stream));
    TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
 public:
  void broadcast_host(void* data, std::size_t bytes, int root, CUstream_st* stream) override {
    tcsolve::detail::DeviceGuard guard(device_);
    void* staged = nullptr;
    TCSOLVE_CUDA_CHECK(cudaMalloc(&staged, bytes));
    try {
      TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(staged, data, bytes, cudaMemcpyHostToDevice, stream));
      meet();
      check(ncclBroadcast(staged, staged, bytes, ncclUint8, root, comm_, stream), "ncclBroadcast");
      TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(data, staged, bytes, cudaMemcpyDeviceToHost, stream));
      TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream));
    } catch (...) {
      cudaFree(staged);
      throw;
    }
    TCSOLVE_CUDA_CHECK(cudaFree(staged));
  }

 private:
  void meet() {
    if (meet_) meet_->arrive_and_wait();
  }
  ncclComm_t comm_;
  int device_;
  std::shared_ptr<detail::Rendezvous> meet_;  ///< the process' members (null: one member per process)
  int rank_ = 0, size_ = 1;
  void* word_ = nullptr;  ///< the staging word of scalar()
};

/// A member on `device` with a context on a new non-blocking stream (owned by the state).
void add_member(DeviceGroup::State& state, int rank, int device, ncclComm_t comm,
                std::shared_ptr<detail::Rendezvous> meet = nullptr) {
  tcsolve::detail::DeviceGuard guard(device);
  cudaStream_t stream = nullptr;
  TCSOLVE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  state.releases.push_back([stream, device] {
    tcsolve::detail::DeviceGuard g(device);
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  });
  state.contexts.push_back(std::make_unique<cuda::Context>(stream));  // bound to `device` (current)
  state.communicators.push_back(std::make_unique<NcclCommunicator>(comm, device, std::move(meet)));
  DeviceGroup::Member m;
  m.rank = rank;
  m.device = device;
  m.context = state.contexts.back().get();
  m.communicator = state.communicators.back().get();
  state.members.push_back(m);
}

void set_abort(DeviceGroup::State& state) {
  state.abort = [&state] {
    for (auto& c : state.communicators) static_cast<NcclCommunicator&>(*c).abort();
  };
}

}  // namespace

namespace detail {

NcclId nccl_unique_id() {
  ncclUniqueId id;
  check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  static_assert(sizeof id == sizeof(NcclId), "NCCL_UNIQUE_ID_BYTES is 128");
  NcclId bytes;
  std::memcpy(bytes.data(), &id, sizeof id);
  return bytes;
}

void add_nccl_members(DeviceGroup::State& state, const std::vector<int>& devices) {
  std::vector<ncclComm_t> comms(devices.size());
  check(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()), "ncclCommInitAll");
  auto meet = devices.size() > 1 ? std::make_shared<detail::Rendezvous>(static_cast<int>(devices.size())) : nullptr;
  for (std::size_t i = 0; i < devices.size(); ++i) add_member(state, static_cast<int>(i), devices[i], comms[i], meet);
  set_abort(state);
}

void add_nccl_rank(DeviceGroup::State& state, const NcclId& id, int rank, int size, int device) {
  tcsolve::detail::DeviceGuard guard(device);
  ncclUniqueId nid;
  std::memcpy(&nid, id.data(), sizeof nid);
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, size, nid, rank), "ncclCommInitRank");
  add_member(state, rank, device, comm);
  set_abort(state);
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace detail

bool have_nccl() { return true; }

}  // namespace tcsolve::runtime
