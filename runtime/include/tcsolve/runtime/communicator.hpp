// The collectives a distributed algorithm needs, over an existing engine: MPI for host buffers
// (processes launched by mpirun, the cpu backend), NCCL for device buffers (GPUs, in one process
// or one per rank). Nothing here moves a byte itself: every call is one MPI or NCCL collective.
//
// A communicator is one member's view: rank() of size() members. Every member calls the same
// collectives in the same order (MPI's and NCCL's rule); a member that stops calling hangs the
// others, so errors that one member can meet alone go through agree() first (below).
//
// Buffer collectives work in place on `count` values in memory(): host arrays (MPI; complete on
// return) or device arrays of the member's device (NCCL; enqueued on `stream`, the member's
// context stream, and ordered with the kernels there). Scalar collectives take and return host
// values and complete on return on both engines (NCCL stages them through a device word).
// split() makes sub-communicators (the process rows and columns of a grid) on MPI; NCCL refuses
// it for now.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace tcsolve::runtime {

/// Where a buffer lives.
enum class Memory { host, device };

/// The element types the buffer collectives reduce.
enum class Element { f64, f32, i32, i64, u64 };

struct Agreement;

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Where the buffers of the buffer collectives live (host: MPI; device: NCCL).
  virtual Memory memory() const = 0;
  /// The engine underneath: "mpi" or "nccl".
  virtual std::string engine() const = 0;

  /// data[0, count) = the element-wise sum over all members' data[0, count).
  virtual void allreduce_sum(void* data, std::size_t count, Element type, CUstream_st* stream) = 0;
  /// data[0, count) = the element-wise maximum over all members.
  virtual void allreduce_max(void* data, std::size_t count, Element type, CUstream_st* stream) = 0;
  /// Every member's data[0, bytes) = root's.
  virtual void broadcast(void* data, std::size_t bytes, int root, CUstream_st* stream) = 0;
  /// recv[r bytes, (r + 1) bytes) = member r's send[0, bytes), on every member (recv holds
  /// size() bytes; send may not overlap it).
  virtual void allgather(const void* send, void* recv, std::size_t bytes, CUstream_st* stream) = 0;

  // Typed forms of the buffer collectives.
  void allreduce_sum(double* d, std::size_t n, CUstream_st* s) { allreduce_sum(d, n, Element::f64, s); }
  void allreduce_sum(int* d, std::size_t n, CUstream_st* s) { allreduce_sum(d, n, Element::i32, s); }
  void allreduce_sum(std::int64_t* d, std::size_t n, CUstream_st* s) { allreduce_sum(d, n, Element::i64, s); }
  void allreduce_sum(unsigned long long* d, std::size_t n, CUstream_st* s) {
    allreduce_sum(d, n, Element::u64, s);
  }

  /// Host bytes from root to every member, complete on return (device engines stage them
  /// through device memory on `stream`).
  virtual void broadcast_host(void* data, std::size_t bytes, int root, CUstream_st* stream) = 0;

  /// The members that pass the same `color` (>= 0) as a communicator of their own, ranked by
  /// `key` (ties by rank() here): MPI_Comm_split. Every member calls it (a collective). MPI only;
  /// NCCL throws Unavailable (not yet).
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  /// Host scalars, complete on return: the sum and the maximum over all members.
  double sum(double value, CUstream_st* stream = nullptr);
  std::int64_t sum(std::int64_t value, CUstream_st* stream = nullptr);
  double max(double value, CUstream_st* stream = nullptr);

 protected:
  /// A host value through a collective: host engines reduce it in place; device engines copy it
  /// to a device word of theirs, reduce, copy back and wait for `stream`.
  virtual void scalar(void* value, Element type, bool maximum, CUstream_st* stream) = 0;

  friend Agreement agree(Communicator&, int, const std::string&, CUstream_st*);
};

/// What agree() returns: the first failure over all members (lowest rank), or none.
struct Agreement {
  int code = 0;         ///< 0: every member succeeded; else the failing member's code
  int rank = -1;        ///< the lowest failing rank (-1: none)
  std::string message;  ///< its message, on every member
};

/// Every member reports its outcome (code 0: success; else an exit code and a message); every
/// member gets the lowest failing rank's code and message. So a failure that one member meets
/// alone (a bad row in its part of a file) ends all of them the same way, with one message, and
/// none is left waiting in a later collective.
Agreement agree(Communicator& comm, int code, const std::string& message, CUstream_st* stream = nullptr);

/// Marks an error that every member of a group throws together (after agree()): no member is
/// left waiting for the thrower, so nothing needs aborting. Catch the error by its type
/// (InvalidInput, ...) and ask dynamic_cast<const AgreedFailure*> whether it was agreed.
struct AgreedFailure {
  virtual ~AgreedFailure() = default;
};
template <class E>
class Agreed final : public E, public AgreedFailure {
 public:
  using E::E;
};

/// The exit code an error stands for (docs/architecture.md): 2 InvalidInput, 4 Unavailable,
/// 7 Interrupted (the C API's), 1 any other.
int error_code(const std::exception& e);
/// Throws a.code's error type with a.message, marked Agreed.
[[noreturn]] void throw_agreement(const Agreement& a);

/// Runs `step` on every member (comm == nullptr: alone, errors pass through); when it throws on
/// any member, every member throws the lowest failing rank's error, marked Agreed. For steps a
/// member can fail alone (its rows of a file, its device memory) before a collective.
template <class F>
void agreed(Communicator* comm, F&& step, CUstream_st* stream = nullptr) {
  if (comm == nullptr) {
    step();
    return;
  }
  int code = 0;
  std::string message;
  try {
    step();
  } catch (const std::exception& e) {
    code = error_code(e);
    message = e.what();
  }
  const Agreement a = agree(*comm, code, message, stream);
  if (a.code != 0) throw_agreement(a);
}

}  // namespace tcsolve::runtime
