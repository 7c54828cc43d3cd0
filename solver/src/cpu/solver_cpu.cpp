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
//   pivoting     rbt (rbt.hpp) and beam (beam.hpp) first when asked, partial pivoting after them
//                when they break down or do not converge.
// Baseline: baselines_cpu.cpp.
#include "../solver_cpu.hpp"

#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../condition.hpp"
#include "../input_checks.hpp"
#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"
#include "../beam_rules.hpp"
#include "beam.hpp"
#include "blocked_lu.hpp"
#include "fp64_lu.hpp"
#include "rbt.hpp"
#include "refinement_cpu.hpp"
#include "solve_steps.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cpu {

using detail::Assessment;
using detail::kGmresCycle;
using detail::ScaledNorm;

namespace {

/// The rest of an attempt with other factors than partial pivoting's (rbt, beam), `res` holding
/// its fields so far: refined against A with `correct` (options' refinement); nullopt, with `why`
/// ("refinement did not converge (...)"), when it does not converge; else the note, the
/// condition estimate through `inverse` (or the FP64 LU of A_s with `scales`' R and C, where the
/// factors do not resolve A^-1) and finish_result.
std::optional<SolveResult> refine_attempt(const LinearSystem& sys, const SolveOptions& options,
                                          Clock::time_point t_start, SolveResult res,
                                          const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>& correct,
                                          const detail::EquilibratedInverse& inverse, const LuFactorization& scales,
                                          const std::string& description, std::string& why) {
  const auto t_factored = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  const Checker checker(sys.A, sys.b);
  refine_with(options, sys, checker, correct, res);
  if (!res.converged) {
    why = "refinement did not converge (" + res.note + ")";
    return std::nullopt;
  }
  res.note = description + "; " + res.note;
  if (detail::decide_condition_estimate(options, res, sys.A.rows(), detail::pivot_span(scales.lu.diagonal()),
                                        [&] { return detail::exact_singularity(sys.A); })) {
    std::optional<Fp64Lu> lu64;
    estimate_condition(sys, inverse, false, [&] {
      lu64 = fp64_equilibrated_lu(sys.A, scales.row_scale, scales.col_scale);
      return fp64_inverse(*lu64, scales);
    }, res);
  }
  detail::finish_result(sys, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
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
  return refine_attempt(sys, options, t_start, std::move(res), [&](const Eigen::MatrixXd& x) { return rbt_apply(f, x); },
                        rbt_inverse(f), f.f, detail::rbt_description(options.rbt_window), why);
}

/// beam: the LU with in-block pivoting and additive modifications, refined against A. Where it
/// modified pivots (M = P^T L U differs from A_s by E of that rank, which a classical step with
/// M alone need not resolve): GMRES-IR, or the requested refinement with the Woodbury
/// correction (SolveOptions::beam_correction; automatic: gmres; woodbury with a singular
/// capacitance fails the attempt). nullopt, with `why` and the modification count, when
/// the LU breaks down or the refinement does not converge (the caller then pivots). Where E
/// matters, the estimate's resolution check (along its vector, against A) sends it to the FP64
/// LU.
std::optional<SolveResult> solve_beam(const LinearSystem& sys, const SolveOptions& options,
                                      Clock::time_point t_start, std::string& why, int& modifications,
                                      double& growth) {
  BeamAttempt t = try_factorize_beam(sys.A, options.variant, options.block_size, options.gemm, lu_hook(options));
  modifications = static_cast<int>(t.modifications.size());
  growth = t.growth;
  if (!t.factors) {
    why = "beam: " + t.breakdown;
    return std::nullopt;
  }
  const LuFactorization& f = *t.factors;
  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = options.block_size;
  res.pivoting = Pivoting::beam;
  res.modifications = modifications;
  res.growth = growth;
  res.resolved_variant = f.resolved_variant;
  SolveOptions refine = options;
  const std::string description = detail::beam_description(t.modifications.size());
  std::string how;
  std::optional<BeamWoodbury> woodbury;
  if (modifications > 0) {
    const BeamCorrection c =
        options.beam_correction == BeamCorrection::woodbury ? BeamCorrection::woodbury : BeamCorrection::gmres;
    if (c == BeamCorrection::woodbury) {
      woodbury.emplace(f, t.modifications);
      const double rcond = woodbury->capacitance_rcond();
      if (!(rcond > std::numeric_limits<double>::epsilon())) {  // singular: A_s is, or the factors cannot resolve it
        char text[64];
        std::snprintf(text, sizeof text, "the Woodbury capacitance is singular (rcond %.1e)", rcond);
        why = description + ": " + text;
        return std::nullopt;
      }
    }
    res.beam_correction = c;
    if (c == BeamCorrection::gmres) {
      how = ", GMRES-IR against A" + how;
    } else {
      how = ", Woodbury correction of rank " + std::to_string(modifications);
    }
  }
  refine.refinement = detail::beam_refinement(options.refinement, t.modifications.size(), options.beam_correction);
  std::optional<SolveResult> r = refine_attempt(
      sys, refine, t_start, std::move(res),
      [&](const Eigen::MatrixXd& x) { return woodbury ? woodbury->apply(x) : lu_apply(f, x); }, fp32_inverse(f), f,
      description + how, why);
  if (!r) why = description + ": " + why;
  return r;
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

  if (detail::decide_condition_estimate(options, res, sys.A.rows(), detail::pivot_span(f.lu.diagonal()),
                                        [&] { return detail::exact_singularity(sys.A); }))
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
  if (detail::decide_condition_estimate(options, res, sys.A.rows(),
                                        detail::pivot_span(lu.matrixLU().diagonal()),
                                        [&] { return detail::exact_singularity(sys.A); })) {
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
  if (options.pivoting == Pivoting::beam) {
    std::string why;
    int modifications = 0;
    double growth = 0;
    if (std::optional<SolveResult> r = solve_beam(sys, options, t_start, why, modifications, growth))
      return std::move(*r);
    SolveResult res = solve_partial(sys, options, t_start);
    res.modifications = modifications;
    res.growth = growth;
    res.note = why + "; partial pivoting used: " + res.note;
    return res;
  }
  return solve_partial(sys, options, t_start);
}

}  // namespace tcsolve::cpu
