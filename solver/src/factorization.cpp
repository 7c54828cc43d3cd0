// Factor once, solve many (solver.hpp: factorize, solve(const Factorization&, b, trans)): the cpu
// story of a solve (cpu/solver_cpu.cpp) cut in two at the end of the LU. factorize() runs the
// checks, the equilibration and the FP32 LU (or the FP64 LU of fp64_below) and keeps them with
// the FP64 A; each solve then runs the rest of that story on its b, against A or A^T:
//
//   refinement   classical, GMRES-IR or auto with lu_apply (A) or lu_apply_transpose (A^T) as
//                the correction, against op(A) in FP64 (cpu/refinement_cpu.hpp);
//   fallback     the FP64 LU of A_s (made on first need, kept for later solves), applied as
//                A_s^-1 or A_s^-T;
//   condition    cond_1(op(A)) from the FP32 factors, or from the FP64 LU (condition.hpp);
//   finish       detail::finish_result.
//
// A^T = C^-1 A_s^T R^-1: the transposed system is the equilibrated one with R and C exchanged
// and A_s^-1, A_s^-T exchanged (transposed()), so every rule of the story holds for it as is.
// With Transpose::no the operations are cpu::solve's, in its order: bitwise its x (tested).
// The refinement and the condition estimate are cpu/solve_steps.hpp's, given {op(A), b}.
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "butterfly.hpp"
#include "condition.hpp"
#include "cpu/blocked_lu.hpp"
#include "cpu/fp64_lu.hpp"
#include "cpu/rbt.hpp"
#include "cpu/refinement_cpu.hpp"
#include "cpu/solve_steps.hpp"
#include "host_clock.hpp"
#include "input_checks.hpp"
#include "prescale.hpp"
#include "refinement_rules.hpp"
#include "scaled_norm.hpp"
#include "solver_cuda.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve {

/// What factorize() keeps (solver.hpp, Factorization).
struct Factorization::State {
  SolveOptions options;   ///< block size and pivoting resolved, gemm.interrupt set
  Eigen::MatrixXd A;      ///< the FP64 A, for the residuals
  double max_abs_a = 0;   ///< check_system's max |a_ij| (prescale_for)
  bool prescale = false;  ///< A lies below 2^-511: each solve is solve(LinearSystem{A, b}) whole
  bool fp64 = false;      ///< uses_fp64_lu: lu64 holds the LU, f the scalings R and C only
  LuFactorization f;      ///< the FP32 factors of P A_s = L U, R and C (rbt: made on first need)
  int zero_pivot = -1;    ///< the FP32 LU's exact zero pivot (then lu64 decides), or -1
  std::optional<cpu::RbtFactorization> rbt;  ///< pivoting rbt: the transformed LU, when it held
  std::string rbt_why;  ///< pivoting rbt that broke down in factorize: why (f is partial's)
  double seconds = 0;
  /// cuda: the factors on the device (partial pivoting's FP32 LU; solver_cuda.hpp), or null
  /// where each solve runs solve(LinearSystem{op(A), b}) whole (rbt, fp64_below, a prescaled A)
  std::shared_ptr<cuda::KeptFactors> gpu;
  bool cuda = false;  ///< the backend resolved to cuda
  bool whole = false;  ///< pivoting beam: each solve is solve(LinearSystem{op(A), b}) whole
  mutable std::mutex mutex;
  mutable std::optional<cpu::Fp64Lu> lu64;  ///< the FP64 LU of A_s, made on first need
  mutable bool partial_made = false;        ///< rbt: f and zero_pivot made on first need

  /// R and C (rbt's factors hold them too).
  const LuFactorization& scales() const { return rbt ? rbt->f : f; }
  /// The FP64 LU of A_s (throws InvalidInput when A is exactly singular, as solve() does).
  const cpu::Fp64Lu& fp64_lu() const {
    std::lock_guard<std::mutex> lock(mutex);
    if (!lu64) lu64 = cpu::fp64_equilibrated_lu(A, scales().row_scale, scales().col_scale);
    return *lu64;
  }
  /// rbt whose refinement did not converge: partial pivoting's LU, made on first need (solve()
  /// makes it then) and kept.
  void make_partial() const {
    std::lock_guard<std::mutex> lock(mutex);
    if (partial_made) return;
    cpu::FactorAttempt t = cpu::try_factorize(A, options.variant, options.block_size, options.gemm);
    auto& self = const_cast<State&>(*this);
    self.f = std::move(t.f);
    self.zero_pivot = t.zero_pivot;
    partial_made = true;
  }
};

Factorization::Factorization(std::unique_ptr<State> state) : state_(std::move(state)) {}
Factorization::Factorization(Factorization&&) noexcept = default;
Factorization& Factorization::operator=(Factorization&&) noexcept = default;
Factorization::~Factorization() = default;

const Factorization::State& Factorization::state() const {
  if (!state_) throw InvalidInput("Factorization: moved from (it holds no factors)");
  return *state_;
}
int Factorization::n() const { return static_cast<int>(state().A.rows()); }
const SolveOptions& Factorization::options() const { return state().options; }
Variant Factorization::resolved_variant() const {
  return state().fp64 ? Variant::fp64 : state().scales().resolved_variant;
}
bool Factorization::fp64_lu() const { return state().fp64; }
double Factorization::seconds() const { return state().seconds; }

namespace {

using cpu::Checker;
using cpu::estimate_condition;
using cpu::lu_hook;
using cpu::refine_with;
using detail::Assessment;
using detail::EquilibratedInverse;
using detail::ScaledNorm;


/// x = A^-T r by the FP32 factors, lu_apply's steps transposed: A^-T = R A_s^-T C with A_s^-T =
/// P^T L^-T U^-T; per column t = C r scaled by a power of two to ||t||_inf in [1/2, 1), the
/// triangular solves in FP32, the permutation, R and the scale undone in FP64.
Eigen::MatrixXd lu_apply_transpose(const LuFactorization& f, const Eigen::MatrixXd& r) {
  const Eigen::Index n = f.lu.rows();
  Eigen::MatrixXf y(n, r.cols());
  std::vector<int> exponents(static_cast<std::size_t>(r.cols()), 0);
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    const Eigen::VectorXd t = f.col_scale.cwiseProduct(r.col(j));
    const double s = t.cwiseAbs().maxCoeff();
    int e = 0;
    if (std::isfinite(s) && s > 0) std::frexp(s, &e);
    exponents[static_cast<std::size_t>(j)] = e;
    for (Eigen::Index i = 0; i < n; ++i) y(i, j) = static_cast<float>(std::ldexp(t[i], -e));
  }
  f.lu.triangularView<Eigen::Upper>().transpose().solveInPlace(y);
  f.lu.triangularView<Eigen::UnitLower>().transpose().solveInPlace(y);
  Eigen::MatrixXd x(n, r.cols());
  for (Eigen::Index i = 0; i < n; ++i) x.row(f.perm[static_cast<std::size_t>(i)]) = y.row(i).cast<double>();
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    x.col(j) = f.row_scale.cwiseProduct(x.col(j)) * std::ldexp(1.0, exponents[static_cast<std::size_t>(j)]);
  return x;
}

/// The inverse of A^T from that of A = R^-1 A_s C^-1: A^T = C^-1 A_s^T R^-1, so R and C exchange
/// and so do the solves with A_s and A_s^T.
EquilibratedInverse transposed(const EquilibratedInverse& inverse, const LuFactorization& f) {
  auto s = std::make_shared<EquilibratedInverse>(inverse.equilibrated());
  return EquilibratedInverse(
      f.col_scale, f.row_scale, [s](Eigen::MatrixXd& w) { s->apply_transpose(w); },
      [s](Eigen::MatrixXd& w) { s->apply(w); });
}

/// cpu/solver_cpu.cpp's solve_partial after the LU, on sys = {op(A), b}.
void solve_partial(const Factorization::State& st, const LinearSystem& sys, bool trans, SolveResult& res) {
  const SolveOptions& options = st.options;
  const LuFactorization& f = st.f;
  const Checker checker(sys.A, sys.b);
  bool fp64_made = false;  // this solve used the FP64 LU (solve_partial's lu64.has_value())
  auto fp64 = [&]() -> EquilibratedInverse {
    fp64_made = true;
    const EquilibratedInverse inverse = cpu::fp64_inverse(st.fp64_lu(), f);
    return trans ? transposed(inverse, f) : inverse;
  };
  if (st.zero_pivot >= 0) {
    const EquilibratedInverse inverse = fp64();
    const std::string why = "the FP32 LU hit a zero pivot in column " + std::to_string(st.zero_pivot + 1) +
                            " (singular to FP32 precision)";
    if (options.fallback) {
      res.x = cpu::solve_with(inverse, sys.b);
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
    refine_with(
        options, sys, checker,
        [&](const Eigen::MatrixXd& r) { return trans ? lu_apply_transpose(f, r) : lu_apply(f, r); }, res);
    if (!res.converged && options.fallback) {
      Eigen::MatrixXd x = cpu::solve_with(fp64(), sys.b), r;
      detail::take_fallback(checker.assess(x, r), res, [&] { res.x = std::move(x); });
    }
  }
  if (detail::decide_condition_estimate(options, res, sys.A.rows(), detail::pivot_span(f.lu.diagonal()),
                                        [&] { return detail::exact_singularity(sys.A); })) {
    const EquilibratedInverse fp32 = trans ? transposed(cpu::fp32_inverse(f), f) : cpu::fp32_inverse(f);
    estimate_condition(sys, fp32, fp64_made, fp64, res);
  }
}

/// cpu/solver_cpu.cpp's solve_rbt after the LU, on sys = {op(A), b}: false, with `why`, when
/// the refinement does not converge (the caller then pivots). A^T: the correction through the
/// transposed inverse of the rbt factors (rbt_inverse: A_s^-T = U A_r^-T V^T).
bool solve_rbt(const Factorization::State& st, const LinearSystem& sys, bool trans, SolveResult& res,
               std::string& why) {
  const SolveOptions& options = st.options;
  const cpu::RbtFactorization& f = *st.rbt;
  res.pivoting = Pivoting::rbt;
  res.resolved_variant = f.f.resolved_variant;
  const Checker checker(sys.A, sys.b);
  const EquilibratedInverse inverse = trans ? transposed(cpu::rbt_inverse(f), f.f) : cpu::rbt_inverse(f);
  refine_with(
      options, sys, checker,
      [&](const Eigen::MatrixXd& r) {
        if (!trans) return cpu::rbt_apply(f, r);
        Eigen::MatrixXd x = r;
        inverse.apply(x);
        return x;
      },
      res);
  if (!res.converged) {
    why = "refinement did not converge (" + res.note + ")";
    return false;
  }
  res.note = detail::rbt_description(options.rbt_window) + "; " + res.note;
  if (detail::decide_condition_estimate(options, res, sys.A.rows(), detail::pivot_span(f.f.lu.diagonal()),
                                        [&] { return detail::exact_singularity(sys.A); }))
    estimate_condition(
        sys, inverse, false,
        [&] {
          const EquilibratedInverse lu = cpu::fp64_inverse(st.fp64_lu(), f.f);
          return trans ? transposed(lu, f.f) : lu;
        },
        res);
  return true;
}

/// cpu/solver_cpu.cpp's solve_fp64 after the LU, on sys = {op(A), b}.
void solve_fp64(const Factorization::State& st, const LinearSystem& sys, bool trans, SolveResult& res) {
  const SolveOptions& options = st.options;
  res.fp64_lu = true;
  res.resolved_variant = Variant::fp64;
  const EquilibratedInverse lu = cpu::fp64_inverse(st.fp64_lu(), st.f);
  const EquilibratedInverse inverse = trans ? transposed(lu, st.f) : lu;
  const Checker checker(sys.A, sys.b);
  SolveOptions classical = options;
  classical.refinement = Refinement::classical;
  refine_with(
      classical, sys, checker, [&](const Eigen::MatrixXd& r) { return cpu::solve_with(inverse, r); }, res);
  res.note = "n = " + std::to_string(sys.A.rows()) +
             " below fp64_below = " + std::to_string(options.fp64_below) + ": FP64 LU, refined in FP64; " +
             res.note;
  if (detail::decide_condition_estimate(options, res, sys.A.rows(),
                                        detail::pivot_span(st.fp64_lu().matrixLU().diagonal()),
                                        [&] { return detail::exact_singularity(sys.A); })) {
    res.condition_estimate = detail::estimate_condition(detail::norm_1(sys.A), inverse).estimate;
    if (detail::needs_equilibrated_estimate(res.condition_estimate, inverse))
      res.condition_estimate_equilibrated = detail::estimate_condition_equilibrated(sys.A, inverse).estimate;
  }
}

}  // namespace

Factorization factorize(const Eigen::MatrixXd& A, const SolveOptions& requested) {
  const auto t_start = Clock::now();
  auto st = std::make_unique<Factorization::State>();
  LinearSystem sys;  // check_system's checks of A (b: one zero column, always valid)
  sys.A = A;
  sys.b = Eigen::MatrixXd::Zero(A.rows(), 1);
  st->max_abs_a = detail::check_system(sys);
  detail::check_solve_options(requested);
  SolveOptions& options = st->options;
  options = requested;
  if (!options.gemm.interrupt) options.gemm.interrupt = options.interrupt;
  if (resolve_backend(options.backend) == Backend::cuda) {
    // The device keeps A and partial pivoting's FP32 LU; the rarer paths (rbt, beam) solve whole each time.
    options.backend = Backend::cuda;
    st->cuda = true;
    options.pivoting = resolve_pivoting(options.pivoting, Backend::cuda, static_cast<int>(A.rows()));
    options.block_size = resolve_block_size(options, Backend::cuda, A.rows());
    st->A = std::move(sys.A);
    st->prescale = st->max_abs_a < detail::kPrescaleBelow;
    st->fp64 = uses_fp64_lu(options, Backend::cuda, A.rows());
    if (!st->prescale && !st->fp64 && options.pivoting != Pivoting::rbt && options.pivoting != Pivoting::beam) {
      st->gpu = cuda::factorize_kept(st->A, options);
      st->f.resolved_variant = cuda::resolved_variant(*st->gpu);
    }
    st->seconds = seconds(t_start, Clock::now());
    return Factorization(std::move(st));
  }
  options.backend = Backend::cpu;
  options.pivoting = resolve_pivoting(options.pivoting, Backend::cpu, static_cast<int>(A.rows()));
  options.block_size = resolve_block_size(options, Backend::cpu, A.rows());
  if (!available(options.variant, Backend::cpu))
    throw Unavailable("variant " + std::string(to_string(options.variant)) +
                      " has no implementation on the cpu backend");
  st->A = std::move(sys.A);
  st->prescale = st->max_abs_a < detail::kPrescaleBelow;  // prescale_for's test of A
  st->fp64 = uses_fp64_lu(options, Backend::cpu, A.rows());
  if (st->prescale) {
    // solve() factors the scaled copy: each solve runs it whole (solver.hpp says so)
  } else if (options.pivoting == Pivoting::beam && !st->fp64) {
    st->whole = true;  // beam's factors are A_s + E's: each solve runs solve() whole for now
  } else if (st->fp64) {
    cpu::equilibrate(st->A, st->f.row_scale, st->f.col_scale);
    st->f.resolved_variant = Variant::fp64;
    st->fp64_lu();
  } else {
    if (options.pivoting == Pivoting::rbt) {
      cpu::RbtAttempt r = cpu::try_factorize_rbt(st->A, options.variant, options.block_size, options.gemm,
                                                 options.rbt_seed, options.rbt_window, lu_hook(options));
      if (r.factors) {
        st->rbt = std::move(r.factors);
        st->seconds = seconds(t_start, Clock::now());
        return Factorization(std::move(st));
      }
      st->rbt_why = r.breakdown;
    }
    cpu::FactorAttempt t =
        cpu::try_factorize(st->A, options.variant, options.block_size, options.gemm, lu_hook(options));
    st->f = std::move(t.f);
    st->zero_pivot = t.zero_pivot;
    if (t.zero_pivot >= 0) st->fp64_lu();  // exactly singular: InvalidInput now, as solve() would
  }
  st->seconds = seconds(t_start, Clock::now());
  return Factorization(std::move(st));
}

SolveResult solve(const Factorization& factors, const Eigen::MatrixXd& b, Transpose trans) {
  const auto t_start = Clock::now();
  const Factorization::State& st = factors.state();
  const bool t = trans == Transpose::yes;
  if (st.gpu != nullptr && !t && !st.prescale) {
    // The device holds A: only b is checked and copied here (O(n) host work per solve).
    const Eigen::Index n = st.A.rows();
    if (b.rows() != n || b.cols() < 1)
      throw InvalidInput("b must have n = " + std::to_string(n) + " rows and at least one column, got " +
                         std::to_string(b.rows()) + " x " + std::to_string(b.cols()));
    if (!b.allFinite()) throw InvalidInput("A or b has NaN or infinite entries");
    LinearSystem rhs;  // prescale_for reads b only
    rhs.b = b;
    if (!detail::prescale_for(rhs, st.max_abs_a).any()) {
      SolveResult res = cuda::solve_kept(*st.gpu, b);  // finish_result applied there
      res.time_s.refinement = res.time_s.total = seconds(t_start, Clock::now());
      return res;
    }
  }
  LinearSystem sys;
  sys.A = t ? Eigen::MatrixXd(st.A.transpose()) : st.A;
  sys.b = b;
  sys.b_is_vector = b.cols() == 1;
  detail::check_system(sys);
  if (st.prescale || detail::prescale_for(sys, st.max_abs_a).any()) return solve(sys, st.options);
  if (st.whole) {
    SolveResult r = solve(sys, st.options);
    r.note += "; solved whole (pivoting beam keeps no factors yet)";
    return r;
  }
  if (st.cuda) {
    // rbt, fp64_below, or A^T (the device refinement runs against A only): solve() whole
    SolveResult r = solve(sys, st.options);
    r.note += t ? "; A^T solved whole on cuda (the kept factors serve A x = b only): a new LU"
                : "; solved whole on cuda (factors are kept for partial pivoting's FP32 LU only)";
    return r;
  }
  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = st.options.block_size;
  res.resolved_variant = st.f.resolved_variant;
  res.factorization_reused = true;
  if (st.fp64) {
    solve_fp64(st, sys, t, res);
  } else if (st.rbt) {
    std::string why;
    if (!solve_rbt(st, sys, t, res, why)) {
      // as solve(): partial pivoting's LU (made once, kept), its story from the start
      st.make_partial();
      res = SolveResult{};
      res.backend = Backend::cpu;
      res.block_size = st.options.block_size;
      res.resolved_variant = st.f.resolved_variant;
      res.factorization_reused = true;
      solve_partial(st, sys, t, res);
      res.note = "rbt: " + why + "; partial pivoting used: " + res.note;
    }
  } else {
    solve_partial(st, sys, t, res);
    if (!st.rbt_why.empty()) res.note = "rbt: " + st.rbt_why + "; partial pivoting used: " + res.note;
  }
  detail::finish_result(sys, res);
  res.time_s.refinement = res.time_s.total = seconds(t_start, Clock::now());
  return res;
}

}  // namespace tcsolve
