// Internal to tcsolve::solver: the cuda path, called by the one dispatch in solver.cpp (and the
// generator's in generate.cpp). Defined in cuda/solver_cuda.cpp and cuda/generate_cuda.cpp (with
// the kernels of cuda/*.cu); in a build without CUDA, cuda_stub/solver_cuda_stub.cpp defines each
// to throw Unavailable ("built without CUDA").
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cuda {

/// solve() on the device. The caller has checked the system and the options; this checks the
/// device, the variant on cuda and the refinement method.
SolveResult solve(const LinearSystem& sys, const SolveOptions& options);

/// solve_device() (solver.hpp): the caller has checked the options and the view's sizes.
SolveResult solve_device(const DeviceSystemView& system, double* X, int ldx, const SolveOptions& options);

/// factorize() on the device (solver.hpp, Factorization): A copied to the device (held there with
/// the caller's context, or one made for it), equilibrated and factored in FP32 with partial
/// pivoting, the factors kept on the device. options: resolved by the caller (block size; not
/// rbt, not fp64_below: factorization.cpp solves those whole). A is the Factorization's, which
/// outlives the result.
struct KeptFactors;
std::shared_ptr<KeptFactors> factorize_kept(const Eigen::MatrixXd& A, const SolveOptions& options);

/// A x = b with kept factors: the rest of solve()'s partial-pivoting story (refinement,
/// fallback, condition estimate; the FP64 LU made on first need and kept), bitwise solve()'s x.
/// Solves with one KeptFactors are serialized (one stream). No forward error (no x_true).
SolveResult solve_kept(KeptFactors& factors, const Eigen::MatrixXd& b);
/// What the kept LU's first trailing update ran.
Variant resolved_variant(const KeptFactors& factors);

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
