// MPI (mpi.hpp) in a build without MPI: no session can start; every call says so.
#include <cstdlib>

#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/mpi.hpp"

namespace tcsolve::runtime {
namespace {
[[noreturn]] void missing(const char* what) {
  throw Unavailable(std::string(what) +
                    ": this tcsolve was built without MPI (configure with an MPI installed, "
                    "e.g. Debian's libopenmpi-dev, and -DTCSOLVE_MPI=ON)");
}
}  // namespace

MpiSession::MpiSession(int*, char***) { missing("runs under mpirun"); }
MpiSession::~MpiSession() = default;
bool MpiSession::active() { return false; }
void MpiSession::abort(int code) { std::exit(code); }
std::unique_ptr<Communicator> mpi_world() { missing("mpi_world"); }
std::unique_ptr<Communicator> mpi_communicator(const void*) { missing("mpi_communicator"); }
int mpi_local_rank() { missing("mpi_local_rank"); }
bool have_mpi() { return false; }

}  // namespace tcsolve::runtime
