// The cuda path of the solver in a build without CUDA: every entry point throws Unavailable.
#include <string>

#include "../distributed/device_piece.hpp"
#include "../solver_cuda.hpp"
#include "tcsolve/solver/distributed.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {
namespace {
[[noreturn]] void not_built(const std::string& what) {
  throw Unavailable(what +
                    ": tcsolve was built without CUDA (configure with nvcc present, TCSOLVE_CUDA=AUTO|ON)");
}
}  // namespace

SolveResult solve(const LinearSystem&, const SolveOptions&) { not_built("the cuda solver"); }

SolveResult solve_device(const DeviceSystemView&, double*, int, const SolveOptions&) {
  not_built("the cuda solver");
}

struct KeptFactors {};

std::shared_ptr<KeptFactors> factorize_kept(const Eigen::MatrixXd&, const SolveOptions&) {
  not_built("factorize on cuda");
}

SolveResult solve_kept(KeptFactors&, const Eigen::MatrixXd&) { not_built("factorize on cuda"); }

Variant resolved_variant(const KeptFactors&) { not_built("factorize on cuda"); }

LuFactorization lu_factorize(const Eigen::MatrixXd&, Variant, int, const GemmOptions&, const CudaLuPlan&, Context*) {
  not_built("the cuda LU factorization");
}

SolveResult solve_baseline(const LinearSystem&, std::string_view method, Context*) {
  not_built("baseline " + std::string(method));
}

SolveResult solve_baseline_device(const DeviceSystemView&, std::string_view method, Context*) {
  not_built("baseline " + std::string(method));
}

Eigen::MatrixXd randsvd_matrix(const Eigen::VectorXd&, std::uint64_t) {
  not_built("the cuda randsvd generator");
}

}  // namespace tcsolve::cuda

namespace tcsolve::distributed {

void check_device_piece(const Grid&, const Descriptor&, int, bool) {
  throw Unavailable("the distributed solver on GPUs: tcsolve was built without CUDA");
}

std::unique_ptr<DevicePiece> make_device_piece(cuda::Context&, runtime::Communicator&, const Grid&, const Descriptor&,
                                               const double*, PieceSource, std::uint64_t, const SolveOptions&,
                                               double&) {
  throw Unavailable("the distributed solver on GPUs: tcsolve was built without CUDA");
}

}  // namespace tcsolve::distributed

namespace tcsolve {
void generate_random_device(int, std::uint64_t, double*, int, double*, cuda::Context&) {
  throw Unavailable("generate_random_device: tcsolve was built without CUDA");
}
}  // namespace tcsolve

namespace tcsolve {
SolveResult solve_generated_cusolvermg(int, std::uint64_t, const std::vector<int>&, int) {
  throw Unavailable("baseline cusolvermg: tcsolve was built without CUDA");
}
}  // namespace tcsolve
