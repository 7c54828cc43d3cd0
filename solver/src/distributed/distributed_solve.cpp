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
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../host_clock.hpp"
#include "../input_checks.hpp"
#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"
#include "device_piece.hpp"
#include "lu_steps.hpp"
#include "redistribute.hpp"
#include "refine_ops.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/members.hpp"
#include "tcsolve/solver/distributed.hpp"
#include "tcsolve/solver/generate.hpp"

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

/// A x for x whole on every rank (the distributed product, on the host or the devices).
using Product = std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>;

/// r = b - A x in FP64 (the distributed product) and its assessment, as the cpu's Checker.
struct Checker {
  Product times_a;
  const Eigen::MatrixXd& b;
  detail::ScaledNorm norm_a;
  int n;
  detail::Assessment assess(const Eigen::MatrixXd& x, Eigen::MatrixXd& r) const {
    r = b - times_a(x);
    return detail::assess_columns(column_norms(r), column_norms(x), column_norms(b), norm_a, n);
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
void refine_with(const SolveOptions& options, runtime::Communicator& world, const Checker& checker,
                 const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>& m_inv, SolveResult& res) {
  const Correction classical = [&](const Eigen::MatrixXd& r, const std::vector<bool>&) { return m_inv(r); };
  long inner_total = 0;
  const Correction gmres_ir = [&](const Eigen::MatrixXd& r, const std::vector<bool>& done) {
    return detail::gmres_corrections(
        r, done,
        [&](const Eigen::VectorXd& rj, int& inner) {
          return gmres([&](const Eigen::VectorXd& v) -> Eigen::VectorXd { return checker.times_a(v); },
                       [&](const Eigen::VectorXd& v) -> Eigen::VectorXd { return m_inv(v); }, rj,
                       detail::kGmresCycle, inner);
        },
        inner_total);
  };
  const bool gmres_first = options.refinement == Refinement::gmres;
  const bool auto_switch = options.refinement == Refinement::auto_;
  Ops ops{checker, res, gmres_first ? gmres_ir : classical, auto_switch ? gmres_ir : Correction{}, m_inv(checker.b),
          {}, {}};
  detail::refinement_loop(options.max_iterations, ops, res, auto_switch, agreed_step_hook(world, options));
  if (gmres_first || res.gmres_from >= 0) res.note += "; GMRES inner iterations: " + std::to_string(inner_total);
}

/// x = A^-1 b through an inverse (the fallback's solve).
Eigen::MatrixXd solve_with(const detail::EquilibratedInverse& inverse, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd x = b;
  inverse.apply(x);
  return x;
}

/// SolveOptions::fp64_below (variant auto on a small system): the FP64 LU's inverse, refined
/// classically in FP64 (cpu/solver_cpu.cpp, solve_fp64), the note saying so.
void refine_fp64_below(const SolveOptions& options, runtime::Communicator& world, const Checker& checker,
                       const detail::EquilibratedInverse& inverse64, int n, SolveResult& res) {
  SolveOptions classical = options;
  classical.refinement = Refinement::classical;
  refine_with(classical, world, checker, [&](const Eigen::MatrixXd& r) { return solve_with(inverse64, r); }, res);
  res.note = "n = " + std::to_string(n) + " below fp64_below = " + std::to_string(options.fp64_below) +
             ": FP64 LU, refined in FP64; " + res.note;
}

/// The note's words for an exact zero pivot of the FP32 LU.
std::string fp32_zero_pivot(int column) {
  return "the FP32 LU hit a zero pivot in column " + std::to_string(column + 1) + " (singular to FP32 precision)";
}

/// detail::finish_result for a system of order n (it reads the system's n() and x_true only: a
/// shell of n rows without A's entries).
void finish(int n, const std::optional<Eigen::MatrixXd>& x_true, SolveResult& res) {
  LinearSystem shell;
  shell.A.resize(n, 0);
  shell.x_true = x_true;
  detail::finish_result(shell, res);
}

/// detail::decide_condition_estimate for a distributed solve: U's diagonal span (asked for by
/// the automatic rule only, on every rank alike: a collective) and the search, whose exact singularity every rank
/// meets alike (so the error is marked agreed).
bool decide_estimate(const SolveOptions& options, SolveResult& res, int n, const std::function<double()>& span,
                     std::optional<DistributedSingularitySearch>& search) {
  detail::SingularitySearch searched;
  if (search) searched = [&search]() -> std::optional<std::string> { return search->result(); };
  try {
    return detail::decide_condition_estimate(options, res, n, span, searched);
  } catch (const InvalidInput& e) {
    if (dynamic_cast<const runtime::AgreedFailure*>(&e) != nullptr) throw;
    throw runtime::Agreed<InvalidInput>(e.what());
  }
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
    if (options.pivoting == Pivoting::rbt || options.pivoting == Pivoting::beam)
      throw Unavailable("the distributed solver has partial pivoting only for now");
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

  // The search for equal rows or columns, its hashing beside the LU (condition estimate's rule)
  std::optional<DistributedSingularitySearch> search;
  if (options.condition_estimate != ConditionEstimate::never)
    search.emplace(n, local_lines(A), [&world](std::vector<double>& v) { world.allreduce_sum(v.data(), v.size(), nullptr); });

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
  const Checker checker{[&](const Eigen::MatrixXd& x) { return product(g, A, x); }, b, norm_inf(g, A), n};
  if (fp64_path) {
    refine_fp64_below(options, world, checker, inverse(g, *lu64, s), n, res);
  } else if (zero_pivot >= 0) {
    // Exactly singular, or singular only to FP32 precision: the FP64 LU decides.
    const DistributedLu64& lu = fp64();
    const std::string why = fp32_zero_pivot(zero_pivot);
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
    refine_with(options, world, checker, [&](const Eigen::MatrixXd& r) { return apply_lu(g, f, s, r); }, res);
    if (!res.converged && options.fallback) {
      Eigen::MatrixXd x = solve_with(inverse(g, fp64(), s), b), r;
      detail::take_fallback(checker.assess(x, r), res, [&] { res.x = std::move(x); });
    }
  }

  const auto span = [&] { return lu64 ? pivot_span(g, *lu64) : pivot_span(g, f); };
  if (decide_estimate(options, res, n, span, search)) {
    if (fp64_path)
      estimate_condition(g, A, s, inverse(g, *lu64, s), true, [&] { return inverse(g, *lu64, s); }, res);
    else
      estimate_condition(g, A, s, inverse(g, f, s), lu64.has_value(), [&] { return inverse(g, fp64(), s); }, res);
  }
  res.note += "; distributed on a " + std::to_string(g.grid.rows) + "x" + std::to_string(g.grid.cols) + " grid";
  finish(n, x_true, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  return res;
}

/// One GPU member's solve (device_piece.hpp): the story of solve_pieces with the piece's
/// operations (the FP64 LU among them); b whole. `grid` has one process row: its callers move
/// or regrid a P x Q grid's pieces first (solve, solve_local_members). Not on GPU members: rbt.
SolveResult solve_member(runtime::DeviceGroup::Member& me, const Grid& grid, const Descriptor& da, const double* A,
                         PieceSource source, std::uint64_t seed, const Eigen::MatrixXd* b_given,
                         const SolveOptions& options, const std::optional<Eigen::MatrixXd>& x_true) {
  runtime::DeviceScope scope(me.device);
  runtime::Communicator& world = *me.communicator;
  const auto t_start = Clock::now();
  runtime::agreed(&world, [&] {
    detail::check_solve_options(options);
    check_grid(grid, world.size());
    if (grid.rows != 1)
      throw InvalidInput("solve_member: a " + std::to_string(grid.rows) + "x" + std::to_string(grid.cols) +
                         " grid: GPU members factor on 1 x Q grids (callers move P x Q pieces there first)");
    if (options.pivoting == Pivoting::rbt)
      throw Unavailable("the distributed solver on GPUs has partial pivoting and beam only for now");
    validate(da, grid, 0, "desca");
    if (da.m != da.n) throw InvalidInput("desca: A must be square");
    if (da.mb != da.nb) throw InvalidInput("desca: MB and NB differ: the LU needs square blocks");
    if (b_given != nullptr && (b_given->rows() != da.n || b_given->cols() < 1))
      throw InvalidInput("B must have n rows and a column");
    if (b_given != nullptr && !b_given->allFinite()) throw InvalidInput("B has a non-finite entry");
    check_device_piece(grid, da, grid.col_of(world.rank()), options.cuda_plan.member_share > 0);
  });
  const int n = da.n;
  double upload_s = 0;
  std::unique_ptr<DevicePiece> piece =
      make_device_piece(*me.context, world, grid, da, A, source, seed, options, upload_s);
  std::optional<DistributedSingularitySearch> search;
  if (options.condition_estimate != ConditionEstimate::never)
    search.emplace(
        n, piece->sampled_lines(detail::sample_positions(n)),
        [&piece](bool rows, const std::vector<int>& lines, std::vector<double>& out) { piece->local_lines(rows, lines, out); },
        [&piece](std::vector<double>& v) { piece->sum_over_members(v); });
  const Eigen::MatrixXd generated_b = b_given == nullptr ? piece->generated_rhs() : Eigen::MatrixXd();
  const Eigen::MatrixXd& b = b_given != nullptr ? *b_given : generated_b;
  SolveResult res;
  res.backend = Backend::cuda;
  res.block_size = da.nb;
  res.pivoting = Pivoting::partial;
  const bool fp64_path = uses_fp64_lu(options, Backend::cuda, n);
  int zero_pivot = -1;
  // beam: the LU with each block's pivots searched in its diagonal block (no modifications on
  // GPU members yet); an exact zero pivot there, or a GMRES-IR that does not converge below,
  // runs the partial-pivoting story from a fresh LU, the note saying why.
  bool beam_held = false;
  std::string beam_why;
  if (!fp64_path) {
    if (options.pivoting == Pivoting::beam) {
      const int z = piece->factorize(options.variant, true);
      beam_held = z < 0;
      if (!beam_held)
        beam_why = "beam: an exactly zero pivot in column " + std::to_string(z + 1) +
                   " within its diagonal block (GPU members modify none yet)";
    }
    if (!beam_held) zero_pivot = piece->factorize(options.variant);
    res.resolved_variant = piece->resolved();
    res.cuda_plan = piece->plan();
  }
  // The FP64 LU of A_s, made at most once (DevicePiece keeps it): for the fallback, the
  // condition estimate, or fp64_below. `release_fp32`: the FP32 factors are not needed after.
  bool lu64_made = false;
  auto fp64 = [&](bool release_fp32) {
    const int zero = piece->factorize64(release_fp32);
    lu64_made = true;
    if (zero >= 0) throw runtime::Agreed<InvalidInput>(detail::zero_pivot_message(zero));
  };
  if (fp64_path) {
    fp64(true);
    res.fp64_lu = true;
    res.resolved_variant = Variant::fp64;
  }
  const auto t_factored = Clock::now();
  // the copy of A to the devices (or its generation there) is not part of the times, as a file's reading
  res.time_s.factorization = seconds(t_start, t_factored) - upload_s;
  const Scales& s = piece->scales();
  const Product times_a = [&](const Eigen::MatrixXd& x) { return piece->product(x); };
  const Checker checker{times_a, b, piece->norm_inf(), n};
  const auto solve32 = [&](Eigen::MatrixXd& w) { piece->solve(w, false); };
  const detail::EquilibratedInverse inverse32(s.row, s.col, solve32,
                                              [&](Eigen::MatrixXd& w) { piece->solve(w, true); });
  const detail::EquilibratedInverse inverse64(s.row, s.col, [&](Eigen::MatrixXd& w) { piece->solve64(w, false); },
                                              [&](Eigen::MatrixXd& w) { piece->solve64(w, true); });
  // The FP64 LU for the fallback, or why there is none (a GPU too full: Agreed<Unavailable>).
  auto fallback_lu = [&](std::string& why_not) {
    try {
      fp64(true);
      return true;
    } catch (const Unavailable& e) {
      why_not = e.what();
      return false;
    }
  };
  // The partial-pivoting story after its LU: the FP64 LU decides an FP32 zero pivot; else the
  // refinement, and the FP64 fallback when it fails.
  auto partial_story = [&](int zero_pivot, SolveResult& res) {
    if (zero_pivot >= 0) {
      // Exactly singular, or singular only to FP32 precision: the FP64 LU decides.
      const std::string why = fp32_zero_pivot(zero_pivot);
      std::string why_not;
      if (options.fallback && fallback_lu(why_not)) {
        res.x = solve_with(inverse64, b);
        res.fallback_used = true;
        res.note = why + "; FP64 LU fallback used";
      } else {
        res.x = Eigen::MatrixXd::Zero(n, b.cols());
        res.note = why + (options.fallback ? "; no FP64 fallback (" + why_not + ")" : "; no fallback") + ": x = 0";
      }
      Eigen::MatrixXd r;
      const detail::Assessment a = checker.assess(res.x, r);
      res.backward_error = a.backward_error;
      res.converged = res.fallback_used && a.all_done;
      res.history.push_back(res.backward_error);
      return;
    }
    refine_with(options, world, checker, [&](const Eigen::MatrixXd& r) { return apply_lu_with(solve32, s, r); },
                res);
    std::string why_not;
    if (!res.converged && options.fallback) {
      if (fallback_lu(why_not)) {
        Eigen::MatrixXd x = solve_with(inverse64, b), r;
        detail::take_fallback(checker.assess(x, r), res, [&] { res.x = std::move(x); });
      } else {
        res.note += "; no FP64 fallback: " + why_not;
      }
    }
  };
  if (fp64_path) {
    refine_fp64_below(options, world, checker, inverse64, n, res);
  } else if (beam_held) {
    SolveOptions gmres = options;
    gmres.refinement = Refinement::gmres;
    refine_with(gmres, world, checker, [&](const Eigen::MatrixXd& r) { return apply_lu_with(solve32, s, r); }, res);
    if (res.converged) {
      res.pivoting = Pivoting::beam;
      res.note = "beam (in-block pivoting, 0 modified pivots), GMRES-IR against A; " + res.note;
    } else {
      beam_why = "beam (in-block pivoting): refinement did not converge (" + res.note + ")";
      const int z = piece->factorize(options.variant);
      SolveResult fresh;
      fresh.backend = res.backend;
      fresh.block_size = res.block_size;
      fresh.resolved_variant = piece->resolved();
      fresh.cuda_plan = piece->plan();
      res = std::move(fresh);
      partial_story(z, res);
    }
  } else {
    partial_story(zero_pivot, res);
  }
  if (!beam_why.empty()) res.note = beam_why + "; partial pivoting used: " + res.note;
  double condition_s = 0;  // the estimate's time (its solves and products are in "solves" and "residual" too)
  if (decide_estimate(options, res, n, [&] { return piece->pivot_span(lu64_made); }, search)) {
    const auto t_condition = Clock::now();
    try {
      estimate_condition(
          piece->norm_1(), [&](Eigen::MatrixXd& y) { y = piece->product(y); }, [&] { return piece->norm_1_s(); },
          lu64_made ? inverse64 : inverse32, lu64_made,
          [&]() -> detail::EquilibratedInverse {
            fp64(false);
            return inverse64;
          },
          res);
    } catch (const Unavailable& e) {
      res.note += std::string("; no condition estimate: the FP32 factors do not resolve A^-1 and ") + e.what();
    }
    condition_s = seconds(t_condition, Clock::now());
  }
  if (!piece->note().empty()) res.note += "; " + piece->note();
  res.note += "; distributed on a 1x" + std::to_string(grid.cols) + " grid of GPUs";
  finish(n, x_true, res);
  const auto t_end = Clock::now();
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end) - upload_s;
  res.time_s.phases = piece->phases();
  if (condition_s > 0) res.time_s.phases.emplace_back("condition", condition_s);
  res.time_s.phases.emplace_back(source == PieceSource::generated ? "generate" : "transfer", upload_s);
  return res;
}

bool on_devices(const runtime::DeviceGroup& group) { return group.memory() == runtime::Memory::device; }

}  // namespace
}  // namespace distributed

SolveResult solve(const DistributedSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group) {
  if (!distributed::on_devices(group)) return distributed::solve_pieces(sys, options, group, std::nullopt);
  // GPU members: one per process (mpi(Memory::device)); B gathered over the processes.
  runtime::Communicator* host = group.host_communicator();
  if (group.local_members() != 1 || host == nullptr)
    throw InvalidInput("solve(DistributedSystem): one member per process (an mpi() group); a gpus() group takes "
                       "the whole system: solve_on_ranks");
  const std::vector<double> b_all = gather(*host, sys.B, sys.desc_b, sys.grid);
  const Eigen::MatrixXd b = Eigen::Map<const Eigen::MatrixXd>(b_all.data(), sys.desc_a.n, sys.desc_b.n);
  SolveOptions o = options;
  o.block_size = sys.desc_a.nb;
  if (sys.grid.rows > 1) {
    // GPU members factor whole columns: the P x Q pieces move to the 1 x PQ grid of the same
    // ranks over the host communicator (redistribute.hpp), A in device memory through the host.
    const int prow = sys.grid.row_of(host->rank()), pcol = sys.grid.col_of(host->rank());
    runtime::agreed(host, [&] {  // before the piece is read
      check_grid(sys.grid, host->size());
      validate(sys.desc_a, sys.grid, prow, "desca");
    });
    const std::size_t count = static_cast<std::size_t>(sys.desc_a.lld) *
                              static_cast<std::size_t>(std::max(0, sys.desc_a.local_cols(sys.grid, pcol)));
    std::vector<double> staged;
    const double* piece = sys.A;
    if (sys.a_on_device && count > 0) {
      staged.resize(count);
      cuda::copy_to_host(staged.data(), sys.A, count * sizeof(double));
      piece = staged.data();
    }
    distributed::check_system_piece(*host, sys.grid, sys.desc_a, piece);  // square blocks, finite entries
    const distributed::ColumnPieces moved = distributed::to_column_grid(*host, sys.grid, sys.desc_a, piece);
    staged = std::vector<double>();
    SolveResult r = distributed::solve_member(group.member(0), moved.grid, moved.desc, moved.a.data(),
                                              distributed::PieceSource::host_piece, 0, &b, o, std::nullopt);
    r.note += "; the " + std::to_string(sys.grid.rows) + "x" + std::to_string(sys.grid.cols) +
              " grid's pieces moved to 1x" + std::to_string(moved.grid.cols) +
              " (GPU members factor whole columns) (" + group.describe() + ")";
    return r;
  }
  SolveResult r = distributed::solve_member(group.member(0), sys.grid, sys.desc_a, sys.A,
                                  sys.a_on_device ? distributed::PieceSource::device_piece
                                                  : distributed::PieceSource::host_piece,
                                  0,
                                  &b, o, std::nullopt);
  r.note += " (" + group.describe() + ")";
  return r;
}

namespace distributed {
namespace {
/// Every local member of a group of GPU members solves the system of order n (its columns
/// from `source`: the whole A on the host, or generated from `seed`) on a thread of its own
/// (runtime::run_members); the members' results are the same.
SolveResult solve_local_members(int n, const double* A, PieceSource source, std::uint64_t seed,
                                const Eigen::MatrixXd* b, const std::optional<Eigen::MatrixXd>& x_true,
                                const SolveOptions& options, runtime::DeviceGroup& group, const Grid* grid) {
  // GPU members factor whole columns: a P x Q grid (P > 1) runs as 1 x PQ, said in the note
  // (the system is whole here, so nothing moves).
  const Grid asked = grid != nullptr ? *grid : Grid{1, group.size()};
  runtime::agreed(group.host_communicator(), [&] { check_grid(asked, group.size()); });
  const Grid g{1, asked.size()};
  const int nb = options.block_size != 0 ? options.block_size : default_block_size(Backend::cuda, n);
  if (nb < 1) throw InvalidInput("block size " + std::to_string(nb) + " < 1");
  SolveOptions o = options;
  o.block_size = nb;
  std::vector<SolveResult> results(static_cast<std::size_t>(group.local_members()));
  runtime::run_members(group, [&](int m) {
    runtime::DeviceGroup::Member& me = group.member(m);
    const Descriptor d = Descriptor::make(n, n, nb, nb, g, 0);
    SolveOptions mine = o;
    if (m != 0) mine.progress = nullptr;
    results[static_cast<std::size_t>(m)] = solve_member(me, g, d, A, source, seed, b, mine, x_true);
  });
  SolveResult r = std::move(results[0]);
  if (asked.rows > 1)
    r.note += "; the " + std::to_string(asked.rows) + "x" + std::to_string(asked.cols) + " grid ran as 1x" +
              std::to_string(g.cols) + " (GPU members factor whole columns)";
  r.note += " (" + group.describe() + ")";
  return r;
}

/// solve_on_ranks on GPU members: each takes its columns of the whole system.
SolveResult solve_on_devices(const LinearSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group,
                             const Grid* grid) {
  detail::check_system(sys);
  return solve_local_members(static_cast<int>(sys.A.rows()), sys.A.data(), PieceSource::host_whole, 0, &sys.b,
                             sys.x_true, options, group, grid);
}
}  // namespace
}  // namespace distributed

SolveResult solve_on_ranks(const LinearSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group,
                           const Grid* grid) {
  using namespace distributed;
  if (on_devices(group)) return solve_on_devices(sys, options, group, grid);
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

SolveResult solve_generated(int n, std::uint64_t seed, const SolveOptions& options, runtime::DeviceGroup& group,
                            const Grid* grid) {
  using namespace distributed;
  if (!on_devices(group))
    throw Unavailable("solve_generated: the system is made on GPU members; the group is " + group.describe());
  if (n < 1) throw InvalidInput("generated system: n must be at least 1, got " + std::to_string(n));
  return solve_local_members(n, nullptr, PieceSource::generated, seed, nullptr, random_x_true(n, 1, seed), options,
                             group, grid);
}

}  // namespace tcsolve
