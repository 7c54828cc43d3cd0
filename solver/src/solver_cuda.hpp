// Internal to tcsolve::solver: the cuda path, called by the one dispatch in solver.cpp (and the
// generator's in generate.cpp). Defined in cuda/solver_cuda.cpp and cuda/generate_cuda.cpp (with
// the kernels of cuda/*.cu); in a build without CUDA, cuda_stub/solver_cuda_stub.cpp defines each
// to throw Unavailable ("built without CUDA").
#pragma once

#include <cstdint>
#include <string_view>

#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cuda {

/// solve() on the device. The caller has checked the system and the options; this checks the
/// device, the variant on cuda and the refinement method.
SolveResult solve(const LinearSystem& sys, const SolveOptions& options);

/// solve_device() (solver.hpp): the caller has checked the options and the view's sizes.
SolveResult solve_device(const DeviceSystemView& system, double* X, int ldx, const SolveOptions& options);

/// lu_factorize() on the device, the factors copied back. A is checked by the caller.
LuFactorization lu_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm, const CudaLuPlan& plan, Context* ctx);

/// solve_baseline() for the cusolver-* methods. The caller has checked the system.
SolveResult solve_baseline(const LinearSystem& sys, std::string_view method, Context* ctx);

/// solve_baseline() of a system on the device (DeviceSystemView, checked as solve_device's);
/// forward_error is left unset (the caller knows x_true, if anyone does).
SolveResult solve_baseline_device(const DeviceSystemView& view, std::string_view method, Context* ctx);

/// randsvd's A = U diag(sigma) V^T (generate.hpp) formed on the device (cuda/generate_cuda.cpp):
/// U, V Haar orthogonal from the QR of Philox Gaussian matrices (streams 0 and 1 of `seed`),
/// n = sigma.size() >= 1. Throws Unavailable without a usable device.
Eigen::MatrixXd randsvd_matrix(const Eigen::VectorXd& sigma, std::uint64_t seed);

}  // namespace tcsolve::cuda
