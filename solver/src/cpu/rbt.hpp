// The cpu rbt pivoting (SolveOptions::pivoting = rbt; butterfly.hpp states the transform): the
// factorization P A_r = P U^T A_s V = L U with windowed pivoting, or none (A_s = R A C
// equilibrated, padded to a multiple of 4), its breakdown tests, and the correction through it,
// A^-1 r = C V U_r^-1 L^-1 P U^T R r. solver_cpu.cpp refines against the original A with it and falls back to partial
// pivoting when it breaks down or its refinement fails. Internal to tcsolve::solver.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <optional>
#include <string>

#include "../butterfly.hpp"
#include "../condition.hpp"
#include "blocked_lu.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cpu {

struct RbtFactorization {
  /// lu: the p x p FP32 factors of P A_r (perm: P, the identity without pivoting); row_scale,
  /// col_scale: R, C (n).
  LuFactorization f;
  detail::RandomButterfly u, v;
};

struct RbtAttempt {
  std::optional<RbtFactorization> factors;
  std::string breakdown;  ///< why there are no factors ("a tiny pivot in column 17", "growth 3e7")
};

/// Equilibration, the transform (butterflies from `seed`: u from seed, v from seed + 1) and the
/// blocked FP32 LU with windowed pivoting (`window` rows; 0: none: factorize_rbt_lu), trailing
/// updates through tcsolve::gemm(cpu, variant); after_block as try_factorize's.
RbtAttempt try_factorize_rbt(const Eigen::MatrixXd& A, Variant variant, int block_size, const GemmOptions& gemm,
                             std::uint64_t seed, int window, const BlockHook& after_block = {});

/// A_s^-1 = V A_r^-1 U^T and A_s^-T = U A_r^-T V^T through the FP32 factors of A_r (the
/// condition estimate; w rounded to FP32 after the butterfly, as rbt_apply does).
detail::EquilibratedInverse rbt_inverse(const RbtFactorization& f);

/// x = A^-1 r through the rbt factors, FP32 triangular solves of the scaled rhs (as lu_apply),
/// result in FP64.
Eigen::MatrixXd rbt_apply(const RbtFactorization& f, const Eigen::MatrixXd& r);

}  // namespace tcsolve::cpu
