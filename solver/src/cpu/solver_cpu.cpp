// The cpu path of the solver (the reference; solver.cpp states the algorithm, refinement_rules.hpp
// the rules): the story of a solve, each step in its own file, as on the cuda path (cuda/):
//
//   LU           exact power-of-two equilibration and the blocked FP32 LU whose trailing updates
//                run through tcsolve::gemm(cpu, variant) (blocked_lu.hpp).
//   refinement   detail::refinement_loop, shared with the cuda path (refinement_rules.hpp), with
//                the correction by lu_apply or GMRES-IR (refinement_cpu.hpp).
//   fallback     the FP64 LU of the equilibrated A_s (fp64_lu.hpp); x is the better of its
//                solution and the best iterate (detail::take_fallback).
//   condition    Hager's estimator (condition.hpp) with the FP32 factors (fp32_inverse), or from
//                the FP64 LU.
// Baseline: baselines_cpu.cpp.
#include "../solver_cpu.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../condition.hpp"
#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"
#include "blocked_lu.hpp"
#include "fp64_lu.hpp"
#include "rbt.hpp"
#include "refinement_cpu.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cpu {

using detail::Assessment;
using detail::kGmresCycle;
using detail::ScaledNorm;

namespace {

/// The LU's hook (BlockHook): SolveOptions::interrupt, then progress("lu", done).
BlockHook lu_hook(const SolveOptions& options) {
  return [&options](double done) {
    detail::check_interrupt(options.interrupt);
    if (options.progress) options.progress("lu", done);
  };
}

/// The correction of the refinement methods through `m_inv` (x = A^-1 r by the factors):
/// classical d = m_inv(r), GMRES-IR per column with m_inv as the preconditioner, auto both;
/// inner_total counts GMRES's inner iterations.
void refine_with(const SolveOptions& options, const LinearSystem& sys, const Checker& checker,
                 const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>& m_inv, SolveResult& res) {
  const Correction classical = [&](const Eigen::MatrixXd& r, const std::vector<bool>&) { return m_inv(r); };
  long inner_total = 0;
  const Correction gmres_ir = [&](const Eigen::MatrixXd& r, const std::vector<bool>& done) {
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(r.rows(), r.cols());
    for (Eigen::Index j = 0; j < r.cols(); ++j) {
      if (done[static_cast<std::size_t>(j)]) continue;
      int inner = 0;
      d.col(j) = gmres(sys.A, [&](const Eigen::VectorXd& v) -> Eigen::VectorXd { return m_inv(v); }, r.col(j),
                       kGmresCycle, inner, options.interrupt);
      inner_total += inner;
    }
    return d;
  };
  const Eigen::MatrixXd x0 = m_inv(sys.b);
  switch (options.refinement) {
    case Refinement::classical: refine(options, checker, x0, res, classical); break;
    case Refinement::gmres: refine(options, checker, x0, res, gmres_ir); break;
    case Refinement::auto_: refine(options, checker, x0, res, classical, gmres_ir); break;
  }
  if (options.refinement == Refinement::gmres || res.gmres_from >= 0)
    res.note += "; GMRES inner iterations: " + std::to_string(inner_total);
}

/// cond_1(A) (SolveOptions::estimate_condition) through the FP32 factors' inverse `fp32`, or
/// through the FP64 LU `fp64` where those do not resolve A^-1 or when `fp64_made` (it exists
/// already: the fallback ran). The note says when the FP64 LU gave it. Then, where
/// needs_equilibrated_estimate, cond_1(A_s) the same way.
void estimate_condition(const LinearSystem& sys, const detail::EquilibratedInverse& fp32, bool fp64_made,
                        const std::function<detail::EquilibratedInverse()>& fp64, SolveResult& res) {
  const ScaledNorm norm1 = detail::norm_1(sys.A);
  const detail::VectorMap times_a = [&](Eigen::MatrixXd& y) { y = sys.A * y; };
  if (!fp64_made) {
    const detail::ConditionEstimate c = detail::estimate_condition(norm1, fp32, times_a);
    if (c.resolved)
      res.condition_estimate = c.estimate;
    else
      res.note += "; condition estimate from an FP64 LU (the FP32 factors do not resolve A^-1)";
  }
  if (!res.condition_estimate) res.condition_estimate = detail::estimate_condition(norm1, fp64()).estimate;
  if (!detail::needs_equilibrated_estimate(res.condition_estimate, fp32)) return;
  if (!fp64_made) {
    const detail::ConditionEstimate c = detail::estimate_condition_equilibrated(sys.A, fp32, times_a);
    if (c.resolved) res.condition_estimate_equilibrated = c.estimate;
  }
  if (!res.condition_estimate_equilibrated)
    res.condition_estimate_equilibrated = detail::estimate_condition_equilibrated(sys.A, fp64()).estimate;
}

/// rbt: the transformed LU without pivoting, refined against A. nullopt, with `why`, when the
/// LU breaks down or the refinement does not converge (the caller then pivots).
std::optional<SolveResult> solve_rbt(const LinearSystem& sys, const SolveOptions& options,
                                     Clock::time_point t_start, std::string& why) {
  RbtAttempt t = try_factorize_rbt(sys.A, options.variant, options.block_size, options.gemm, options.rbt_seed,
                                   options.rbt_window, lu_hook(options));
  if (!t.factors) {
    why = t.breakdown;
    return std::nullopt;
  }
  const RbtFactorization& f = *t.factors;
  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = options.block_size;
  res.pivoting = Pivoting::rbt;
  res.resolved_variant = f.f.resolved_variant;
  const auto t_factored = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  const Checker checker(sys.A, sys.b);
  refine_with(options, sys, checker, [&](const Eigen::MatrixXd& r) { return rbt_apply(f, r); }, res);
  if (!res.converged) {
    why = "refinement did not converge (" + res.note + ")";
    return std::nullopt;
  }
  res.note = detail::rbt_description(options.rbt_window) + "; " + res.note;
  if (options.estimate_condition) {
    std::optional<Fp64Lu> lu64;
    estimate_condition(sys, rbt_inverse(f), false, [&] {
      lu64 = fp64_equilibrated_lu(sys.A, f.f.row_scale, f.f.col_scale);
      return fp64_inverse(*lu64, f.f);
    }, res);
  }
  detail::finish_result(sys, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

SolveResult solve_partial(const LinearSystem& sys, const SolveOptions& options, Clock::time_point t_start) {
  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = options.block_size;
  const Checker checker(sys.A, sys.b);

  FactorAttempt t = try_factorize(sys.A, options.variant, options.block_size, options.gemm, lu_hook(options));
  const auto t_factored = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  res.resolved_variant = t.f.resolved_variant;
  const LuFactorization& f = t.f;

  // The FP64 LU of A_s, made at most once: for the fallback, or for the condition estimate.
  std::optional<Fp64Lu> lu64;
  auto fp64 = [&]() -> const Fp64Lu& {
    if (!lu64) lu64 = fp64_equilibrated_lu(sys.A, f.row_scale, f.col_scale);
    return *lu64;
  };

  if (t.zero_pivot >= 0) {
    // Exactly singular, or singular only to FP32 precision: the FP64 LU decides.
    const Fp64Lu& lu = fp64();
    const std::string why = "the FP32 LU hit a zero pivot in column " + std::to_string(t.zero_pivot + 1) +
                            " (singular to FP32 precision)";
    if (options.fallback) {
      res.x = solve_with(fp64_inverse(lu, f), sys.b);
      res.fallback_used = true;
      res.note = why + "; FP64 LU fallback used";
    } else {
      res.x = Eigen::MatrixXd::Zero(sys.A.rows(), sys.b.cols());
      res.note = why + "; no fallback: x = 0";
    }
    Eigen::MatrixXd r;
    const Assessment a = checker.assess(res.x, r);
    res.backward_error = a.backward_error;
    res.converged = options.fallback && a.all_done;
    res.history.push_back(res.backward_error);
  } else {
    refine_with(options, sys, checker, [&](const Eigen::MatrixXd& r) { return lu_apply(f, r); }, res);
    if (!res.converged && options.fallback) {
      Eigen::MatrixXd x = solve_with(fp64_inverse(fp64(), f), sys.b), r;
      detail::take_fallback(checker.assess(x, r), res, [&] { res.x = std::move(x); });
    }
  }

  if (options.estimate_condition)
    estimate_condition(sys, fp32_inverse(f), lu64.has_value(), [&] { return fp64_inverse(fp64(), f); }, res);
  detail::finish_result(sys, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

/// SolveOptions::fp64_below: the FP64 LU of A_s = R A C (the same equilibration), classical
/// refinement with it to dsgesv's criterion (one or two steps: the LU is backward stable in
/// FP64), the condition estimate through it.
SolveResult solve_fp64(const LinearSystem& sys, const SolveOptions& options, Clock::time_point t_start) {
  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = options.block_size;
  res.fp64_lu = true;
  res.resolved_variant = Variant::fp64;
  LuFactorization scales;  // R and C only
  equilibrate(sys.A, scales.row_scale, scales.col_scale);
  const Fp64Lu lu = fp64_equilibrated_lu(sys.A, scales.row_scale, scales.col_scale);
  const auto t_factored = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  const detail::EquilibratedInverse inverse = fp64_inverse(lu, scales);
  const Checker checker(sys.A, sys.b);
  SolveOptions classical = options;
  classical.refinement = Refinement::classical;
  refine_with(classical, sys, checker, [&](const Eigen::MatrixXd& r) { return solve_with(inverse, r); }, res);
  res.note = "n = " + std::to_string(sys.A.rows()) + " below fp64_below = " + std::to_string(options.fp64_below) +
             ": FP64 LU, refined in FP64; " + res.note;
  if (options.estimate_condition) {
    res.condition_estimate = detail::estimate_condition(detail::norm_1(sys.A), inverse).estimate;
    if (detail::needs_equilibrated_estimate(res.condition_estimate, inverse))
      res.condition_estimate_equilibrated = detail::estimate_condition_equilibrated(sys.A, inverse).estimate;
  }
  detail::finish_result(sys, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

}  // namespace

SolveResult solve(const LinearSystem& sys, const SolveOptions& options, Clock::time_point t_start) {
  if (!available(options.variant, Backend::cpu))
    throw Unavailable("variant " + std::string(to_string(options.variant)) +
                      " has no implementation on the cpu backend");
  if (uses_fp64_lu(options, Backend::cpu, sys.A.rows())) return solve_fp64(sys, options, t_start);
  if (options.pivoting == Pivoting::rbt) {
    std::string why;
    if (std::optional<SolveResult> r = solve_rbt(sys, options, t_start, why)) return std::move(*r);
    SolveResult res = solve_partial(sys, options, t_start);
    res.note = "rbt: " + why + "; partial pivoting used: " + res.note;
    return res;
  }
  return solve_partial(sys, options, t_start);
}

}  // namespace tcsolve::cpu
