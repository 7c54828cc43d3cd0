// The distributed solve (distributed.hpp): the story, each step in its own file as on the
// single-process cpu path (cpu/solver_cpu.cpp), with the same shared rules:
//
//   equilibration  R, C from the distributed A and this rank's piece of A_s = R A C
//                  (distributed_equilibrate.cpp): the same bits as the single process'.
//   LU             the distributed FP32 LU of A_s (distributed_lu.cpp).
//   refinement     detail::refinement_loop against the original A (refinement_rules.hpp), the
//                  correction by apply_lu (classical) or GMRES-IR (distributed_gmres.cpp), refine
//                  auto switching as the single process does; the residual r = b - A x in FP64
//                  by the distributed product (distributed_apply.cpp).
//   fallback       the distributed FP64 LU of A_s (distributed_lu.cpp in double); x is the
//                  better of its solution and the best iterate (detail::take_fallback).
//   condition      Hager's estimator with the distributed factors (distributed_condition.cpp).
//   finish         detail::finish_result: a non-finite x, the forward error, the warnings.
//
// The vectors (b, x, r, d, GMRES's basis) are held whole on every rank and are bitwise the same
// there: the triangular solves' diagonal blocks are solved by their owner and broadcast, and
// every sum over ranks is taken in rank order from an allgather, so that every rank takes the
// same decisions in the shared loop and rules.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../host_clock.hpp"
#include "../input_checks.hpp"
#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"
#include "lu_steps.hpp"
#include "refine_ops.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve {
namespace distributed {
namespace {

/// d from r (the columns not done are the ones that matter).
using Correction = std::function<Eigen::MatrixXd(const Eigen::MatrixXd& r, const std::vector<bool>& done)>;

std::vector<double> column_norms(const Eigen::MatrixXd& m) {
  std::vector<double> v(static_cast<std::size_t>(m.cols()));
  for (Eigen::Index j = 0; j < m.cols(); ++j) v[static_cast<std::size_t>(j)] = m.col(j).cwiseAbs().maxCoeff();
  return v;
}

/// r = b - A x in FP64 (the distributed product) and its assessment, as the cpu's Checker.
struct Checker {
  GridComms& g;
  const PieceA& A;
  const Eigen::MatrixXd& b;
  detail::ScaledNorm norm_a;
  detail::Assessment assess(const Eigen::MatrixXd& x, Eigen::MatrixXd& r) const {
    r = b - product(g, A, x);
    return detail::assess_columns(column_norms(r), column_norms(x), column_norms(b), norm_a, A.row_map.n);
  }
};

/// The refinement loop's operations (refinement_loop in refinement_rules.hpp) on every rank, as
/// the cpu's CpuRefinement: `correct` makes d from r; `then` (refine auto: GMRES-IR) replaces it
/// at switch_to_gmres().
struct Ops {
  const Checker& checker;
  SolveResult& res;
  Correction correct_, then_;
  Eigen::MatrixXd x, r, d;

  detail::Assessment assess() { return checker.assess(x, r); }
  std::vector<double> correct(const std::vector<bool>& done) {
    d = correct_(r, done);
    return column_norms(d);
  }
  void apply(const std::vector<bool>& done) {
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      if (!done[static_cast<std::size_t>(j)]) x.col(j) += d.col(j);
  }
  void keep_best() { res.x = x; }
  void switch_to_gmres() {
    x = res.x;
    correct_ = then_;
  }
};

/// The refinement loop's step hook on every rank (refinement_step_hook's, agreed): the caller's
/// interrupt flag read on every rank and agreed, so that one rank's flag stops every rank with
/// the same Interrupted (marked Agreed), then SolveOptions::progress("refinement", ...).
std::function<void(int)> agreed_step_hook(runtime::Communicator& world, const SolveOptions& options) {
  return [&world, &options](int iterations) {
    runtime::agreed(&world, [&] { detail::check_interrupt(options.interrupt); });
    if (options.progress && options.max_iterations > 0)
      options.progress("refinement", std::min(1.0, static_cast<double>(iterations) / options.max_iterations));
  };
}

/// The refinement methods through `m_inv` (x = A^-1 r by the factors), as the cpu's refine_with:
/// classical d = m_inv(r), GMRES-IR per column with m_inv as the preconditioner, auto both.
void refine_with(const SolveOptions& options, GridComms& g, const PieceA& A, const Checker& checker,
                 const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>& m_inv, SolveResult& res) {
  const Correction classical = [&](const Eigen::MatrixXd& r, const std::vector<bool>&) { return m_inv(r); };
  long inner_total = 0;
  const Correction gmres_ir = [&](const Eigen::MatrixXd& r, const std::vector<bool>& done) {
    Eigen::MatrixXd d = Eigen::MatrixXd::Zero(r.rows(), r.cols());
    for (Eigen::Index j = 0; j < r.cols(); ++j) {
      if (done[static_cast<std::size_t>(j)]) continue;
      int inner = 0;
      d.col(j) = gmres(g, A, [&](const Eigen::VectorXd& v) -> Eigen::VectorXd { return m_inv(v); }, r.col(j),
                       detail::kGmresCycle, inner);
      inner_total += inner;
    }
    return d;
  };
  const bool gmres_first = options.refinement == Refinement::gmres;
  const bool auto_switch = options.refinement == Refinement::auto_;
  Ops ops{checker, res, gmres_first ? gmres_ir : classical, auto_switch ? gmres_ir : Correction{}, m_inv(checker.b),
          {}, {}};
  detail::refinement_loop(options.max_iterations, ops, res, auto_switch, agreed_step_hook(g.world, options));
  if (gmres_first || res.gmres_from >= 0) res.note += "; GMRES inner iterations: " + std::to_string(inner_total);
}

/// x = A^-1 b through an inverse (the fallback's solve).
Eigen::MatrixXd solve_with(const detail::EquilibratedInverse& inverse, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd x = b;
  inverse.apply(x);
  return x;
}

runtime::Communicator& rank_communicator(runtime::DeviceGroup& group, const char* what) {
  runtime::Communicator* comm = group.host_communicator();
  if (!group.spans_processes() || group.memory() != runtime::Memory::host || comm == nullptr)
    throw Unavailable(std::string(what) + ": the distributed solver runs on mpi() groups of host members (cpu ranks) "
                      "only for now; the group is " + group.describe());
  return *comm;
}

/// solve(DistributedSystem, ...) with, for solve_on_ranks, the whole system (x_true gives the
/// forward error and its warning).
SolveResult solve_pieces(const DistributedSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group,
                         const std::optional<Eigen::MatrixXd>& x_true) {
  const auto t_start = Clock::now();
  runtime::Communicator& world = rank_communicator(group, "solve");
  // Every check agreed: one rank's bad descriptor or entry ends every rank the same way.
  check_system_piece(world, sys.grid, sys.desc_a, sys.A);
  runtime::agreed(&world, [&] {
    detail::check_solve_options(options);
    if (options.pivoting == Pivoting::rbt) throw Unavailable("the distributed solver has partial pivoting only for now");
    if (options.block_size != 0 && options.block_size != sys.desc_a.nb)
      throw InvalidInput("block size " + std::to_string(options.block_size) + " differs from the descriptor's NB = " +
                         std::to_string(sys.desc_a.nb) + " (the distributed LU's block size; pass 0)");
    const Grid& grid = sys.grid;
    const int prow = grid.row_of(world.rank()), pcol = grid.col_of(world.rank());
    validate(sys.desc_b, grid, prow, "descb");
    if (sys.desc_b.m != sys.desc_a.n)
      throw InvalidInput("descb: M = " + std::to_string(sys.desc_b.m) + " differs from A's order " +
                         std::to_string(sys.desc_a.n));
    if (sys.desc_b.n < 1) throw InvalidInput("descb: N = 0: no right-hand side");
    if (sys.desc_b.mb != sys.desc_a.mb)
      throw InvalidInput("descb: MB = " + std::to_string(sys.desc_b.mb) + " differs from desca's MB = " +
                         std::to_string(sys.desc_a.mb) + " (B's rows must be laid out as A's)");
    const int bm = sys.desc_b.local_rows(grid, prow), bn = sys.desc_b.local_cols(grid, pcol);
    if (sys.B == nullptr && bm * bn > 0) throw InvalidInput("descb: B is null");
    for (int j = 0; j < bn; ++j)
      for (int i = 0; i < bm; ++i)
        if (!std::isfinite(sys.B[static_cast<std::ptrdiff_t>(j) * sys.desc_b.lld + i]))
          throw InvalidInput("B has a non-finite entry");
  });
  GridComms g(world, sys.grid);
  const Descriptor& da = sys.desc_a;
  const int n = da.n;
  const PieceA A{sys.A, da.lld, da.local_rows(g.grid, g.prow), da.local_cols(g.grid, g.pcol), da.rows(g.grid),
                 da.cols(g.grid), g.prow, g.pcol};

  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = da.nb;
  res.pivoting = Pivoting::partial;
  // Equilibration (always, as the single process), then the LU of A_s.
  const Scales s = equilibrate(g, A);
  const std::vector<double> as = equilibrated_piece(A, s);
  const bool fp64_path = uses_fp64_lu(options, Backend::cpu, n);
  int zero_pivot = -1;
  DistributedLu f;
  if (!fp64_path) {
    f = factorize<float>(g, da, as.data(), options.variant, options.gemm, zero_pivot);
    res.resolved_variant = f.resolved_variant;
  }
  // The FP64 LU of A_s, made at most once: for the fallback, the condition estimate, or
  // fp64_below.
  std::optional<DistributedLu64> lu64;
  auto fp64 = [&]() -> const DistributedLu64& {
    if (!lu64) {
      int zero = -1;
      lu64 = factorize<double>(g, da, as.data(), Variant::fp64, GemmOptions{}, zero);
      if (zero >= 0) throw runtime::Agreed<InvalidInput>(detail::zero_pivot_message(zero));
    }
    return *lu64;
  };
  if (fp64_path) {
    fp64();
    res.fp64_lu = true;
    res.resolved_variant = Variant::fp64;
  }
  const auto t_factored = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);

  const std::vector<double> b_all = gather(world, sys.B, sys.desc_b, g.grid);
  const Eigen::MatrixXd b = Eigen::Map<const Eigen::MatrixXd>(b_all.data(), n, sys.desc_b.n);
  const Checker checker{g, A, b, norm_inf(g, A)};
  if (fp64_path) {
    // SolveOptions::fp64_below (variant auto on a small system): the FP64 LU, refined
    // classically in FP64 (cpu/solver_cpu.cpp, solve_fp64).
    const detail::EquilibratedInverse inverse64 = inverse(g, *lu64, s);
    SolveOptions classical = options;
    classical.refinement = Refinement::classical;
    refine_with(classical, g, A, checker, [&](const Eigen::MatrixXd& r) { return solve_with(inverse64, r); }, res);
    res.note = "n = " + std::to_string(n) + " below fp64_below = " + std::to_string(options.fp64_below) +
               ": FP64 LU, refined in FP64; " + res.note;
  } else if (zero_pivot >= 0) {
    // Exactly singular, or singular only to FP32 precision: the FP64 LU decides.
    const DistributedLu64& lu = fp64();
    const std::string why = "the FP32 LU hit a zero pivot in column " + std::to_string(zero_pivot + 1) +
                            " (singular to FP32 precision)";
    if (options.fallback) {
      res.x = solve_with(inverse(g, lu, s), b);
      res.fallback_used = true;
      res.note = why + "; FP64 LU fallback used";
    } else {
      res.x = Eigen::MatrixXd::Zero(n, b.cols());
      res.note = why + "; no fallback: x = 0";
    }
    Eigen::MatrixXd r;
    const detail::Assessment a = checker.assess(res.x, r);
    res.backward_error = a.backward_error;
    res.converged = options.fallback && a.all_done;
    res.history.push_back(res.backward_error);
  } else {
    refine_with(options, g, A, checker, [&](const Eigen::MatrixXd& r) { return apply_lu(g, f, s, r); }, res);
    if (!res.converged && options.fallback) {
      Eigen::MatrixXd x = solve_with(inverse(g, fp64(), s), b), r;
      detail::take_fallback(checker.assess(x, r), res, [&] { res.x = std::move(x); });
    }
  }

  if (options.estimate_condition) {
    if (fp64_path)
      estimate_condition(g, A, s, inverse(g, *lu64, s), true, [&] { return inverse(g, *lu64, s); }, res);
    else
      estimate_condition(g, A, s, inverse(g, f, s), lu64.has_value(), [&] { return inverse(g, fp64(), s); }, res);
  }
  res.note += "; distributed on a " + std::to_string(g.grid.rows) + "x" + std::to_string(g.grid.cols) + " grid";
  // finish_result reads the system's n() and x_true only: a shell of n rows without A's entries.
  LinearSystem shell;
  shell.A.resize(n, 0);
  shell.x_true = x_true;
  detail::finish_result(shell, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

}  // namespace
}  // namespace distributed

SolveResult solve(const DistributedSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group) {
  return distributed::solve_pieces(sys, options, group, std::nullopt);
}

SolveResult solve_on_ranks(const LinearSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group,
                           const Grid* grid) {
  using namespace distributed;
  runtime::Communicator& world = rank_communicator(group, "solve");
  const Grid g = grid != nullptr ? *grid : Grid{1, world.size()};
  runtime::agreed(&world, [&] {
    detail::check_system(sys);
    check_grid(g, world.size());
    if (options.block_size < 0) throw InvalidInput("block size " + std::to_string(options.block_size) + " < 0");
  });
  const int n = static_cast<int>(sys.A.rows()), nrhs = static_cast<int>(sys.b.cols());
  const int nb = options.block_size != 0 ? options.block_size : kDefaultBlockSizeCpu;
  const int prow = g.row_of(world.rank()), pcol = g.col_of(world.rank());
  DistributedSystem d;
  d.grid = g;
  d.desc_a = Descriptor::make(n, n, nb, nb, g, prow);
  d.desc_b = Descriptor::make(n, nrhs, nb, nb, g, prow);
  std::vector<double> a(static_cast<std::size_t>(d.desc_a.lld) * std::max(1, d.desc_a.local_cols(g, pcol)));
  std::vector<double> b(static_cast<std::size_t>(d.desc_b.lld) * std::max(1, d.desc_b.local_cols(g, pcol)));
  scatter(sys.A.data(), n, d.desc_a, g, prow, pcol, a.data());
  scatter(sys.b.data(), n, d.desc_b, g, prow, pcol, b.data());
  d.A = a.data();
  d.B = b.data();
  SolveOptions o = options;
  o.block_size = nb;
  return solve_pieces(d, o, group, sys.x_true);
}

}  // namespace tcsolve
