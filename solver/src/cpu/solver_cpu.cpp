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

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../condition.hpp"
#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"
#include "blocked_lu.hpp"
#include "fp64_lu.hpp"
#include "refinement_cpu.hpp"
#include "tcsolve/gemm/error.hpp"

namespace tcsolve::cpu {

using detail::Assessment;
using detail::kGmresCycle;
using detail::ScaledNorm;

SolveResult solve(const LinearSystem& sys, const SolveOptions& options, Clock::time_point t_start) {
  if (!available(options.variant, Backend::cpu))
    throw Unavailable("variant " + std::string(to_string(options.variant)) +
                      " has no implementation on the cpu backend");

  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = options.block_size;
  const Checker checker(sys.A, sys.b);

  FactorAttempt t = try_factorize(sys.A, options.variant, options.block_size, options.gemm);
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
    const Eigen::MatrixXd x0 = lu_apply(f, sys.b);
    const Correction classical = [&](const Eigen::MatrixXd& r, const std::vector<bool>&) { return lu_apply(f, r); };
    long inner_total = 0;
    const Correction gmres_ir = [&](const Eigen::MatrixXd& r, const std::vector<bool>& done) {
      Eigen::MatrixXd d = Eigen::MatrixXd::Zero(r.rows(), r.cols());
      for (Eigen::Index j = 0; j < r.cols(); ++j) {
        if (done[static_cast<std::size_t>(j)]) continue;
        int inner = 0;
        d.col(j) = gmres(sys.A, f, r.col(j), kGmresCycle, inner);
        inner_total += inner;
      }
      return d;
    };
    switch (options.refinement) {
      case Refinement::classical: refine(options, checker, x0, res, classical); break;
      case Refinement::gmres: refine(options, checker, x0, res, gmres_ir); break;
      case Refinement::auto_: refine(options, checker, x0, res, classical, gmres_ir); break;
    }
    if (options.refinement == Refinement::gmres || res.gmres_from >= 0)
      res.note += "; GMRES inner iterations: " + std::to_string(inner_total);
    if (!res.converged && options.fallback) {
      Eigen::MatrixXd x = solve_with(fp64_inverse(fp64(), f), sys.b), r;
      detail::take_fallback(checker.assess(x, r), res, [&] { res.x = std::move(x); });
    }
  }

  if (options.estimate_condition) {
    const ScaledNorm norm1 = detail::norm_1(sys.A);
    if (!lu64) {
      const detail::ConditionEstimate c =
          detail::estimate_condition(norm1, fp32_inverse(f), [&](Eigen::MatrixXd& y) { y = sys.A * y; });
      if (c.resolved)
        res.condition_estimate = c.estimate;
      else
        res.note += "; condition estimate from an FP64 LU (the FP32 factors do not resolve A^-1)";
    }
    if (!res.condition_estimate) res.condition_estimate = detail::estimate_condition(norm1, fp64_inverse(fp64(), f)).estimate;
  }
  detail::finish_result(sys, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

}  // namespace tcsolve::cpu
