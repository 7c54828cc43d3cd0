// MPI (mpi.hpp) in a build with MPI: the session, the world communicator on host buffers
// (MpiCommunicator: one MPI collective per call; split() makes sub-communicators that it owns
// and frees), the node-local rank.
#include <mpi.h>

#include <atomic>
#include <string>

#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/mpi.hpp"

namespace tcsolve::runtime {
namespace {

std::atomic<bool> session_alive{false};

void check(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error(std::string("MPI: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

MPI_Datatype datatype(Element type) {
  switch (type) {
    case Element::f64: return MPI_DOUBLE;
    case Element::f32: return MPI_FLOAT;
    case Element::i32: return MPI_INT;
    case Element::i64: return MPI_INT64_T;
    case Element::u64: return MPI_UINT64_T;
  }
  return MPI_BYTE;
}

void require_session(const char* what) {
  if (!session_alive) throw Unavailable(std::string(what) + ": MPI is not initialized (no MpiSession)");
}

/// Counts above INT_MAX go in pieces (MPI counts are int).
template <class F>
void in_pieces(std::size_t count, std::size_t element, F&& f) {
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  for (std::size_t done = 0; done < count; done += kPiece)
    f(done * element, static_cast<int>(std::min(kPiece, count - done)));
}

class MpiCommunicator final : public Communicator {
 public:
  /// owned: a communicator of split() or mpi_communicator(), freed with this object unless MPI
  /// is finalized by then (MPI_COMM_WORLD is not).
  explicit MpiCommunicator(MPI_Comm comm, bool owned = false) : comm_(comm), owned_(owned) {
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  ~MpiCommunicator() override {
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (owned_ && !finalized) MPI_Comm_free(&comm_);
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  std::unique_ptr<Communicator> split(int color, int key) override {
    if (color < 0) throw InvalidInput("Communicator::split: color " + std::to_string(color) + " < 0");
    MPI_Comm part;
    check(MPI_Comm_split(comm_, color, key, &part), "MPI_Comm_split");
    return std::make_unique<MpiCommunicator>(part, true);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Memory memory() const override { return Memory::host; }
  std::string engine() const override { return "mpi"; }

  void allreduce_sum(void* data, std::size_t count, Element type, CUstream_st*) override {
    reduce(data, count, type, MPI_SUM);
  }
  void allreduce_max(void* data, std::size_t count, Element type, CUstream_st*) override {
    reduce(data, count, type, MPI_MAX);
  }
  void broadcast(void* data, std::size_t bytes, int root, CUstream_st*) override {
    in_pieces(bytes, 1, [&](std::size_t at, int n) {
      check(MPI_Bcast(static_cast<char*>(data) + at, n, MPI_BYTE, root, comm_), "MPI_Bcast");
    });
  }
  void allgather(const void* send, void* recv, std::size_t bytes, CUstream_st*) override {
    if (bytes > static_cast<std::size_t>(INT32_MAX)) throw InvalidInput("MPI_Allgather: more than 2^31 bytes a rank");
    check(MPI_Allgather(send, static_cast<int>(bytes), MPI_BYTE, recv, static_cast<int>(bytes), MPI_BYTE, comm_),
          "MPI_Allgather");
  }

 protected:
  void scalar(void* value, Element type, bool maximum, CUstream_st*) override {
    reduce(value, 1, type, maximum ? MPI_MAX : MPI_SUM);
  }
 public:
  void broadcast_host(void* data, std::size_t bytes, int root, CUstream_st* stream) override {
    broadcast(data, bytes, root, stream);
  }

 private:
  void reduce(void* data, std::size_t count, Element type, MPI_Op op) {
    int size = 0;
    MPI_Type_size(datatype(type), &size);
    in_pieces(count, static_cast<std::size_t>(size), [&](std::size_t at, int n) {
      check(MPI_Allreduce(MPI_IN_PLACE, static_cast<char*>(data) + at, n, datatype(type), op, comm_),
            "MPI_Allreduce");
    });
  }

  MPI_Comm comm_;
  bool owned_ = false;
  int rank_ = 0, size_ = 1;
};

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  if (session_alive.exchange(true)) throw InvalidInput("MpiSession: MPI is initialized already");
  int provided = 0;
  const int status = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  if (status != MPI_SUCCESS) {
    session_alive = false;
    check(status, "MPI_Init_thread");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  MPI_Finalize();
  session_alive = false;
}

bool MpiSession::active() { return session_alive; }

void MpiSession::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; in case it does
}

std::unique_ptr<Communicator> mpi_world() {
  require_session("mpi_world");
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD);
}

std::unique_ptr<Communicator> mpi_communicator(const void* comm) {
  if (comm == nullptr) throw InvalidInput("mpi_communicator: comm is NULL");
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    throw InvalidInput(std::string("MPI is ") + (finalized ? "finalized" : "not initialized") +
                       " (the caller initializes MPI, with MPI_Init or MPI_Init_thread, before the library uses it)");
  MPI_Comm dup;
  check(MPI_Comm_dup(*static_cast<const MPI_Comm*>(comm), &dup), "MPI_Comm_dup");
  return std::make_unique<MpiCommunicator>(dup, true);
}

int mpi_local_rank() {
  int initialized = 0;  // an MpiSession's, or the caller's own MPI_Init (the C API's handles)
  MPI_Initialized(&initialized);
  if (!initialized) require_session("mpi_local_rank");
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

bool have_mpi() { return true; }

}  // namespace tcsolve::runtime
