// The distributed solve (distributed.hpp, step 1): the LU of distributed_lu.cpp, then classical
// refinement in FP64 against the untouched distributed A. The vectors (b, x, r, d) are held
// whole on every rank and are bitwise the same there: the triangular solves' diagonal blocks are
// solved by their owner and broadcast, and every sum over ranks is taken in rank order from an
// allgather, so that every rank takes the same decisions in the shared refinement loop
// (refinement_rules.hpp).
#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "../input_checks.hpp"
#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"
#include "lu_steps.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve {
namespace distributed {
namespace {

using MapXf = Eigen::Map<const Eigen::MatrixXf, 0, Eigen::OuterStride<>>;
using MapXd = Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>>;

/// The sum over the ranks of `comm` of every rank's v, in rank order (the same bits on every
/// rank, unlike an allreduce whose order may differ between ranks).
Eigen::MatrixXd sum_in_rank_order(runtime::Communicator& comm, const Eigen::MatrixXd& v) {
  const std::size_t count = static_cast<std::size_t>(v.size());
  std::vector<double> all(count * static_cast<std::size_t>(comm.size()));
  comm.allgather(v.data(), all.data(), count * sizeof(double), nullptr);
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(v.rows(), v.cols());
  for (int r = 0; r < comm.size(); ++r)
    sum += Eigen::Map<const Eigen::MatrixXd>(all.data() + static_cast<std::size_t>(r) * count, v.rows(), v.cols());
  return sum;
}

/// The distributed FP64 A: this rank's piece and the layout.
struct PieceA {
  const double* a;
  int ld, rows, cols;  // local
  CyclicMap row_map, col_map;
  int prow, pcol;
};

/// A x for x whole (n x nrhs) on every rank; the result whole on every rank.
Eigen::MatrixXd product(GridComms& g, const PieceA& A, const Eigen::MatrixXd& x) {
  const int n = A.row_map.n;
  Eigen::MatrixXd x_local(A.cols, x.cols());
  for (int j = 0; j < A.cols; ++j) x_local.row(j) = x.row(A.col_map.global(j, A.pcol));
  Eigen::MatrixXd partial = Eigen::MatrixXd::Zero(n, x.cols());
  if (A.rows > 0 && A.cols > 0) {
    const Eigen::MatrixXd p = MapXd(A.a, A.rows, A.cols, Eigen::OuterStride<>(A.ld)) * x_local;
    for (int i = 0; i < A.rows; ++i) partial.row(A.row_map.global(i, A.prow)) = p.row(i);
  }
  return sum_in_rank_order(g.world, partial);
}

/// ||A||_inf, the same on every rank.
double norm_inf(GridComms& g, const PieceA& A) {
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(A.row_map.n, 1);
  for (int i = 0; i < A.rows; ++i) {
    double s = 0;
    for (int j = 0; j < A.cols; ++j) s += std::abs(A.a[static_cast<std::ptrdiff_t>(j) * A.ld + i]);
    sums(A.row_map.global(i, A.prow), 0) = s;
  }
  return sum_in_rank_order(g.world, sums).maxCoeff();
}

/// d = (L U)^-1 P r with the distributed FP32 factors, r and d whole on every rank (lu_apply's
/// scaling: each column of r to ||.||_inf in [1/2, 1) by a power of two before its FP32
/// rounding). Block by block: the partial sums of a block's rows (this rank's products with the
/// blocks solved before) are summed over its process row, the diagonal block's owner solves it
/// and broadcasts the block, and the ranks of its process column add their products with it.
Eigen::MatrixXd apply_lu(GridComms& g, const DistributedLu& f, const Eigen::MatrixXd& r) {
  const int n = f.desc.n, nb = f.desc.nb, nrhs = static_cast<int>(r.cols());
  const CyclicMap rows = f.desc.rows(g.grid), cols = f.desc.cols(g.grid);
  const int mloc = rows.count(g.prow), ld = f.desc.lld;
  const std::vector<int> perm = f.perm();
  Eigen::MatrixXf y(n, nrhs);
  std::vector<int> exponents(static_cast<std::size_t>(nrhs), 0);
  for (int j = 0; j < nrhs; ++j) {
    const double s = r.col(j).cwiseAbs().maxCoeff();
    int e = 0;
    if (std::isfinite(s) && s > 0) std::frexp(s, &e);
    exponents[static_cast<std::size_t>(j)] = e;
    for (int i = 0; i < n; ++i) y(i, j) = static_cast<float>(std::ldexp(r(perm[static_cast<std::size_t>(i)], j), -e));
  }
  auto block_of = [&](int i0, int i1, int j0, int j1) {  // local [i0, i1) x [j0, j1) of the factors
    return MapXf(f.lu.data() + static_cast<std::ptrdiff_t>(j0) * ld + i0, i1 - i0, j1 - j0, Eigen::OuterStride<>(ld));
  };
  const int blocks = (n + nb - 1) / nb;
  Eigen::MatrixXf partial(mloc, nrhs), t;
  for (int pass = 0; pass < 2; ++pass) {  // 0: L (unit lower, blocks ascending); 1: U (descending)
    partial.setZero();
    for (int step = 0; step < blocks; ++step) {
      const int jb = pass == 0 ? step : blocks - 1 - step;
      const int j0 = jb * nb, w = std::min(nb, n - j0);
      const int pr = rows.owner(j0), pc = cols.owner(j0);
      t = Eigen::MatrixXf::Zero(w, nrhs);
      if (g.prow == pr) {
        t = partial.middleRows(rows.local(j0), w);
        g.row->allreduce_sum(t.data(), static_cast<std::size_t>(t.size()), runtime::Element::f32, nullptr);
      }
      Eigen::MatrixXf yj = y.middleRows(j0, w) - t;
      if (g.prow == pr && g.pcol == pc) {
        const int lr0 = rows.local(j0), lc0 = cols.local(j0);
        const MapXf diag = block_of(lr0, lr0 + w, lc0, lc0 + w);
        if (pass == 0)
          diag.triangularView<Eigen::UnitLower>().solveInPlace(yj);
        else
          diag.triangularView<Eigen::Upper>().solveInPlace(yj);
      }
      g.world.broadcast(yj.data(), static_cast<std::size_t>(yj.size()) * sizeof(float), g.grid.rank_of(pr, pc), nullptr);
      y.middleRows(j0, w) = yj;
      if (g.pcol == pc) {
        const int lc0 = cols.local(j0);
        // L: this rank's rows below the block; U: its rows above it.
        const int i0 = pass == 0 ? rows.first_at_or_after(j0 + w, g.prow) : 0;
        const int i1 = pass == 0 ? mloc : rows.first_at_or_after(j0, g.prow);
        if (i1 > i0) partial.middleRows(i0, i1 - i0).noalias() += block_of(i0, i1, lc0, lc0 + w) * yj;
      }
    }
  }
  Eigen::MatrixXd d = y.cast<double>();
  for (int j = 0; j < nrhs; ++j) d.col(j) *= std::ldexp(1.0, exponents[static_cast<std::size_t>(j)]);
  return d;
}

/// The refinement loop's operations (refinement_loop in refinement_rules.hpp), on every rank.
struct Ops {
  GridComms& g;
  const DistributedLu& f;
  const PieceA& A;
  const Eigen::MatrixXd& b;
  double norm_a;
  SolveResult& res;
  Eigen::MatrixXd x, r, d;

  static std::vector<double> norms(const Eigen::MatrixXd& m) {
    std::vector<double> v(static_cast<std::size_t>(m.cols()));
    for (Eigen::Index j = 0; j < m.cols(); ++j) v[static_cast<std::size_t>(j)] = m.col(j).cwiseAbs().maxCoeff();
    return v;
  }
  detail::Assessment assess() {
    r = b - product(g, A, x);
    return detail::assess_columns(norms(r), norms(x), norms(b), detail::scaled_norm(norm_a), A.row_map.n);
  }
  std::vector<double> correct(const std::vector<bool>&) {
    d = apply_lu(g, f, r);
    return norms(d);
  }
  void apply(const std::vector<bool>& done) {
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      if (!done[static_cast<std::size_t>(j)]) x.col(j) += d.col(j);
  }
  void keep_best() { res.x = x; }
  void switch_to_gmres() {}  // not reached: no auto switch
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

runtime::Communicator& rank_communicator(runtime::DeviceGroup& group, const char* what) {
  runtime::Communicator* comm = group.host_communicator();
  if (!group.spans_processes() || group.memory() != runtime::Memory::host || comm == nullptr)
    throw Unavailable(std::string(what) + ": the distributed solver runs on mpi() groups of host members (cpu ranks) "
                      "only for now; the group is " + group.describe());
  return *comm;
}

}  // namespace
}  // namespace distributed

SolveResult solve(const DistributedSystem& sys, const SolveOptions& options, runtime::DeviceGroup& group) {
  using namespace distributed;
  const auto t_start = std::chrono::steady_clock::now();
  runtime::Communicator& world = rank_communicator(group, "solve");
  // Every check agreed: one rank's bad descriptor or entry ends every rank the same way.
  check_system_piece(world, sys.grid, sys.desc_a, sys.A);
  runtime::agreed(&world, [&] {
    detail::check_solve_options(options);
    if (options.refinement != Refinement::classical)
      throw Unavailable("the distributed solver refines classically only for now (refine " +
                        std::string(to_string(options.refinement)) + " is not there yet)");
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
  const PieceA A{sys.A, da.lld, da.local_rows(g.grid, g.prow), da.local_cols(g.grid, g.pcol), da.rows(g.grid),
                 da.cols(g.grid), g.prow, g.pcol};

  SolveResult res;
  res.backend = Backend::cpu;
  res.block_size = da.nb;
  res.pivoting = Pivoting::partial;
  const DistributedLu f = factorize(g, da, sys.A, options.variant, options.gemm);
  res.resolved_variant = f.resolved_variant;
  res.time_s.factorization = seconds_since(t_start);

  const auto t_refine = std::chrono::steady_clock::now();
  const std::vector<double> b_all = gather(world, sys.B, sys.desc_b, g.grid);
  const Eigen::MatrixXd b = Eigen::Map<const Eigen::MatrixXd>(b_all.data(), da.n, sys.desc_b.n);
  Ops ops{g, f, A, b, norm_inf(g, A), res, {}, {}, {}};
  ops.x = apply_lu(g, f, b);
  detail::refinement_loop(options.max_iterations, ops, res, false);
  res.note += "; distributed on a " + std::to_string(g.grid.rows) + "x" + std::to_string(g.grid.cols) +
              " grid (not yet: equilibration, FP64 fallback, condition estimate)";
  if (!std::isfinite(res.x.cwiseAbs().maxCoeff())) {
    res.converged = false;
    res.backward_error = std::numeric_limits<double>::infinity();
  }
  res.time_s.refinement = seconds_since(t_refine);
  res.time_s.total = seconds_since(t_start);
  return res;
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
  SolveResult res = solve(d, o, group);
  res.forward_error = detail::forward_error(sys, res.x);
  return res;
}

}  // namespace tcsolve
