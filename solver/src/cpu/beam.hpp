// The cpu beam pivoting (SolveOptions::pivoting = beam; solver.hpp states the method): the
// equilibration and the FP32 LU with in-block pivoting and additive modifications, its breakdown
// tests, and what the modifications are. solver_cpu.cpp refines against the original A with it
// and falls back to partial pivoting when it breaks down or its refinement fails. Internal to
// tcsolve::solver.
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <string>
#include <vector>

#include "blocked_lu.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cpu {

struct BeamAttempt {
  /// The factors P (A_s + E) = L U (R, C and perm as try_factorize's), when the LU held.
  std::optional<LuFactorization> factors;
  std::vector<BeamModification> modifications;  ///< E: one entry per modified pivot
  double threshold = 0;  ///< the threshold of a zero panel's pivots, kBeamThreshold max|A_s|
  double growth = 0;     ///< max|L U| / max|A_s| (0: not measured, the LU stopped first)
  std::string breakdown;  ///< why there are no factors ("a non-finite pivot in column 17", "growth 3e7")
};

/// Equilibration and the blocked FP32 LU of A_s with beam's pivoting (factorize_beam_lu), trailing
/// updates through tcsolve::gemm(cpu, variant); after_block as try_factorize's. Breaks down on a
/// non-finite pivot or a growth max|L U| / max|A_s| beyond kBeamGrowth.
BeamAttempt try_factorize_beam(const Eigen::MatrixXd& A, Variant variant, int block_size, const GemmOptions& gemm,
                               const BlockHook& after_block = {});


/// BeamCorrection::woodbury: x = A^-1 r through the factors of M = A_s + E (lu_apply, in A's
/// frame: C M^-1 R) and the Woodbury formula for A_s = M - U_E V_E^T, where modification k
/// (column c, delta) is E's entry (perm[c], c): U_E's column k is delta e_perm[c], V_E's e_c.
/// Set up once: Z = C M^-1 U_E = lu_apply(f, R^-1 U_E) (r solves) and the capacitance
/// K = I - V_E^T C^-1 Z (r x r, FP64 LU); then apply(r) = x0 + Z K^-1 (V_E^T C^-1 x0), x0 =
/// lu_apply(f, r): one LU solve and a rank-r update.
class BeamWoodbury {
 public:
  BeamWoodbury(const LuFactorization& f, const std::vector<BeamModification>& modifications);
  Eigen::MatrixXd apply(const Eigen::MatrixXd& r) const;
  /// The capacitance's reciprocal condition estimate (Eigen's rcond; 0 or NaN: singular, so
  /// A_s is, or the factors cannot resolve it).
  double capacitance_rcond() const { return rcond_; }

 private:
  const LuFactorization& f_;
  std::vector<int> columns_;  ///< c of each modification
  Eigen::MatrixXd z_;         ///< n x r
  Eigen::PartialPivLU<Eigen::MatrixXd> capacitance_;
  double rcond_ = 0;
};

}  // namespace tcsolve::cpu
