// The cpu baseline of `compare` (solve_fp64_baseline, solver.hpp): Eigen's FP64 PartialPivLU,
// its x assessed by the solver's own residual check (Checker, dsgesv's criterion).
#include <Eigen/Dense>

#include "../host_clock.hpp"
#include "../input_checks.hpp"
#include "../refinement_rules.hpp"
#include "fp64_lu.hpp"
#include "refinement_cpu.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve {

using cpu::Checker;
using cpu::first_bad_pivot;
using detail::Assessment;
using detail::check_system;
using detail::forward_error;
using detail::zero_pivot_message;

SolveResult solve_fp64_baseline(const LinearSystem& sys) {
  const auto t_start = Clock::now();
  check_system(sys);
  SolveResult res;
  res.backend = Backend::cpu;
  res.resolved_variant = Variant::fp64;
  const Eigen::PartialPivLU<Eigen::MatrixXd> lu(sys.A);
  const auto t_factored = Clock::now();
  const int bad = first_bad_pivot(lu);
  if (bad >= 0) throw InvalidInput(zero_pivot_message(bad));
  const Checker checker(sys.A, sys.b);
  res.x = lu.solve(sys.b);
  Eigen::MatrixXd r;
  const Assessment a = checker.assess(res.x, r);
  res.backward_error = a.backward_error;
  res.converged = a.all_done;
  res.history.push_back(res.backward_error);
  res.forward_error = forward_error(sys, res.x);
  res.note = res.converged ? "Eigen FP64 PartialPivLU; dsgesv criterion holds"
                           : "Eigen FP64 PartialPivLU; dsgesv criterion does not hold";
  const auto t_end = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

}  // namespace tcsolve
