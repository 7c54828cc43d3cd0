// The steps of the cpu solve that the one-call solve (solver_cpu.cpp) and factor once / solve
// many (../factorization.cpp) share: the LU's hook, the refinement through a given A^-1 (classical,
// GMRES-IR, auto), and the condition estimate from the FP32 factors or the FP64 LU. Each works on
// the system it is given, so the transposed solves pass {A^T, b}. Internal to tcsolve::solver.
#pragma once

#include <Eigen/Dense>
#include <functional>

#include "../condition.hpp"
#include "blocked_lu.hpp"
#include "refinement_cpu.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cpu {

/// The LU's hook (BlockHook): SolveOptions::interrupt, then progress("lu", done).
BlockHook lu_hook(const SolveOptions& options);

/// The correction of the refinement methods through `m_inv` (x = A^-1 r by the factors):
/// classical d = m_inv(r), GMRES-IR per column with m_inv as the preconditioner, auto both;
/// the note counts GMRES's inner iterations.
void refine_with(const SolveOptions& options, const LinearSystem& sys, const Checker& checker,
                 const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>& m_inv, SolveResult& res);

/// cond_1(A) (SolveOptions::estimate_condition) through the FP32 factors' inverse `fp32`, or
/// through the FP64 LU `fp64` where those do not resolve A^-1 or when `fp64_made` (it exists
/// already: the fallback ran). The note says when the FP64 LU gave it. Then, where
/// needs_equilibrated_estimate, cond_1(A_s) the same way.
void estimate_condition(const LinearSystem& sys, const detail::EquilibratedInverse& fp32, bool fp64_made,
                        const std::function<detail::EquilibratedInverse()>& fp64, SolveResult& res);

}  // namespace tcsolve::cpu
