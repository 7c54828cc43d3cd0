// The cuda path of the solver in a build without CUDA: every entry point throws Unavailable.
#include <string>

#include "../solver_cuda.hpp"
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

LuFactorization lu_factorize(const Eigen::MatrixXd&, Variant, int, const GemmOptions&, const CudaLuPlan&, Context*) {
  not_built("the cuda LU factorization");
}

SolveResult solve_baseline(const LinearSystem&, std::string_view method, Context*) {
  not_built("baseline " + std::string(method));
}

Eigen::MatrixXd randsvd_matrix(const Eigen::VectorXd&, std::uint64_t) {
  not_built("the cuda randsvd generator");
}

}  // namespace tcsolve::cuda
