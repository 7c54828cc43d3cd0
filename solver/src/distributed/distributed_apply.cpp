// The distributed solve's operators on replicated vectors (refine_ops.hpp): sums over ranks in
// rank order, A x and the norms of the distributed A, and the solves with the distributed
// factors, (L U)^-1 P and P^T (L U)^-T, in FP32 or FP64.
//
// The solves go block by block. (L U)^-1: the partial sums of a block's rows (this rank's
// products with the blocks solved before) are summed over its process row, the diagonal block's
// owner solves it and broadcasts the block to every rank, and the ranks of its process column
// add their products with it. The transpose, U^-T then L^-T, runs the same with rows and columns
// exchanged: the partial sums of a block's columns are summed over its process column, and the
// ranks of its process row add their products with it. Only the owner's solve is kept (the
// broadcast), so every rank holds the same bits whatever order a reduction took.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "refine_ops.hpp"
#include "tcsolve/runtime/communicator.hpp"

namespace tcsolve::distributed {

namespace {

using MapXd = Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>>;
template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using MapT = Eigen::Map<const Matrix<T>, 0, Eigen::OuterStride<>>;

template <class T>
constexpr runtime::Element element() {
  return sizeof(T) == sizeof(float) ? runtime::Element::f32 : runtime::Element::f64;
}

/// max over rows (or columns) of sum_j |a_ij|, scaled as detail::norm_inf / norm_1 do.
detail::ScaledNorm max_line_sum(GridComms& g, const PieceA& A, bool rows) {
  double largest = 0;
  for (int j = 0; j < A.cols; ++j)
    for (int i = 0; i < A.rows; ++i)
      largest = std::max(largest, std::abs(A.a[static_cast<std::ptrdiff_t>(j) * A.ld + i]));
  largest = g.world.max(largest);  // exact: the same on every rank
  int e = 0;
  if (largest > 0) std::frexp(largest, &e);
  const bool scale = e > 900 || e < -900;
  const int n = A.row_map.n;
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(n, 1);
  for (int j = 0; j < A.cols; ++j)
    for (int i = 0; i < A.rows; ++i) {
      const double v = A.a[static_cast<std::ptrdiff_t>(j) * A.ld + i];
      const int at = rows ? A.row_map.global(i, A.prow) : A.col_map.global(j, A.pcol);
      sums(at, 0) += std::abs(scale ? std::ldexp(v, -e) : v);
    }
  detail::ScaledNorm out = detail::scaled_norm(sum_in_rank_order(g.world, sums).maxCoeff());
  if (scale && !out.zero()) out.e += e;
  return out;
}

/// One triangular pass over the blocks. transpose = false: y := L^-1 y (lower, ascending) or
/// U^-1 y (upper, descending); true: y := U^-T y (ascending) or L^-T y (descending).
template <class T>
void triangular_pass(GridComms& g, const DistributedFactors<T>& f, Matrix<T>& y, bool transpose, bool lower) {
  const int n = f.desc.n, nb = f.desc.nb, k = static_cast<int>(y.cols());
  const CyclicMap rows = f.desc.rows(g.grid), cols = f.desc.cols(g.grid);
  const int mloc = rows.count(g.prow), nloc = cols.count(g.pcol), ld = f.desc.lld;
  auto block_of = [&](int i0, int i1, int j0, int j1) {  // local [i0, i1) x [j0, j1) of the factors
    return MapT<T>(f.lu.data() + static_cast<std::ptrdiff_t>(j0) * ld + i0, i1 - i0, j1 - j0,
                   Eigen::OuterStride<>(ld));
  };
  // lower: L (forward) or U^T (forward, lower as well); else U (backward) or L^T (backward).
  const bool forward = transpose ? !lower : lower;
  const int blocks = (n + nb - 1) / nb;
  // The partial sums: per local row (no transpose) or per local column (transpose).
  Matrix<T> partial = Matrix<T>::Zero(transpose ? nloc : mloc, k), t;
  for (int step = 0; step < blocks; ++step) {
    const int jb = forward ? step : blocks - 1 - step;
    const int j0 = jb * nb, w = std::min(nb, n - j0);
    const int pr = rows.owner(j0), pc = cols.owner(j0);
    // This block's sum over the ranks that hold its rows (columns, transposed).
    const bool holds = transpose ? g.pcol == pc : g.prow == pr;
    t = Matrix<T>::Zero(w, k);
    if (holds) {
      t = partial.middleRows(transpose ? cols.local(j0) : rows.local(j0), w);
      runtime::Communicator& along = transpose ? *g.col : *g.row;
      along.allreduce_sum(t.data(), static_cast<std::size_t>(t.size()), element<T>(), nullptr);
    }
    Matrix<T> yj = y.middleRows(j0, w) - t;
    if (g.prow == pr && g.pcol == pc) {
      const int lr0 = rows.local(j0), lc0 = cols.local(j0);
      const MapT<T> diag = block_of(lr0, lr0 + w, lc0, lc0 + w);
      if (!transpose && lower) diag.template triangularView<Eigen::UnitLower>().solveInPlace(yj);
      if (!transpose && !lower) diag.template triangularView<Eigen::Upper>().solveInPlace(yj);
      if (transpose && !lower) diag.template triangularView<Eigen::Upper>().transpose().solveInPlace(yj);
      if (transpose && lower) diag.template triangularView<Eigen::UnitLower>().transpose().solveInPlace(yj);
    }
    g.world.broadcast(yj.data(), static_cast<std::size_t>(yj.size()) * sizeof(T), g.grid.rank_of(pr, pc),
                      nullptr);
    y.middleRows(j0, w) = yj;
    if (!transpose && g.pcol == pc) {
      const int lc0 = cols.local(j0);
      // L: this rank's rows below the block; U: its rows above it.
      const int i0 = lower ? rows.first_at_or_after(j0 + w, g.prow) : 0;
      const int i1 = lower ? mloc : rows.first_at_or_after(j0, g.prow);
      if (i1 > i0) partial.middleRows(i0, i1 - i0).noalias() += block_of(i0, i1, lc0, lc0 + w) * yj;
    }
    if (transpose && g.prow == pr) {
      const int lr0 = rows.local(j0);
      // U^T: this rank's columns right of the block (U's rows of the block); L^T: left of it.
      const int c0 = lower ? 0 : cols.first_at_or_after(j0 + w, g.pcol);
      const int c1 = lower ? cols.first_at_or_after(j0, g.pcol) : nloc;
      if (c1 > c0)
        partial.middleRows(c0, c1 - c0).noalias() += block_of(lr0, lr0 + w, c0, c1).transpose() * yj;
    }
  }
}

}  // namespace

Eigen::MatrixXd sum_in_rank_order(runtime::Communicator& comm, const Eigen::MatrixXd& v) {
  const std::size_t count = static_cast<std::size_t>(v.size());
  std::vector<double> all(count * static_cast<std::size_t>(comm.size()));
  comm.allgather(v.data(), all.data(), count * sizeof(double), nullptr);
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(v.rows(), v.cols());
  for (int r = 0; r < comm.size(); ++r)
    sum += Eigen::Map<const Eigen::MatrixXd>(all.data() + static_cast<std::size_t>(r) * count, v.rows(),
                                             v.cols());
  return sum;
}

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

detail::ScaledNorm norm_inf(GridComms& g, const PieceA& A) { return max_line_sum(g, A, true); }
detail::ScaledNorm norm_1(GridComms& g, const PieceA& A) { return max_line_sum(g, A, false); }

template <class T>
void solve_factors(GridComms& g, const DistributedFactors<T>& f, Eigen::MatrixXd& w) {
  const int n = f.desc.n;
  const std::vector<int> perm = f.perm();
  Matrix<T> y(n, w.cols());
  for (int i = 0; i < n; ++i) y.row(i) = w.row(perm[static_cast<std::size_t>(i)]).template cast<T>();
  triangular_pass(g, f, y, false, true);
  triangular_pass(g, f, y, false, false);
  w = y.template cast<double>();
}

template <class T>
void solve_factors_transpose(GridComms& g, const DistributedFactors<T>& f, Eigen::MatrixXd& w) {
  const int n = f.desc.n;
  const std::vector<int> perm = f.perm();
  Matrix<T> y = w.cast<T>();
  triangular_pass(g, f, y, true, false);  // U^-T
  triangular_pass(g, f, y, true, true);   // L^-T
  for (int i = 0; i < n; ++i) w.row(perm[static_cast<std::size_t>(i)]) = y.row(i).template cast<double>();
}

Eigen::MatrixXd apply_lu(GridComms& g, const DistributedLu& f, const Scales& s, const Eigen::MatrixXd& r) {
  return apply_lu_with([&](Eigen::MatrixXd& w) { solve_factors(g, f, w); }, s, r);
}

Eigen::MatrixXd apply_lu_with(const std::function<void(Eigen::MatrixXd&)>& solve, const Scales& s,
                              const Eigen::MatrixXd& r) {
  const Eigen::Index n = r.rows();
  Eigen::MatrixXd w(n, r.cols());
  std::vector<int> exponents(static_cast<std::size_t>(r.cols()), 0);
  for (Eigen::Index j = 0; j < r.cols(); ++j) {  // as cpu lu_apply: R r, scaled to [1/2, 1)
    const Eigen::VectorXd t = s.row.cwiseProduct(r.col(j));
    const double m = t.cwiseAbs().maxCoeff();
    int e = 0;
    if (std::isfinite(m) && m > 0) std::frexp(m, &e);
    exponents[static_cast<std::size_t>(j)] = e;
    for (Eigen::Index i = 0; i < n; ++i) w(i, j) = std::ldexp(t[i], -e);
  }
  solve(w);
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    w.col(j) = s.col.cwiseProduct(w.col(j)) * std::ldexp(1.0, exponents[static_cast<std::size_t>(j)]);
  return w;
}

template <class T>
detail::EquilibratedInverse inverse(GridComms& g, const DistributedFactors<T>& f, const Scales& s) {
  return detail::EquilibratedInverse(
      s.row, s.col, [&g, &f](Eigen::MatrixXd& w) { solve_factors(g, f, w); },
      [&g, &f](Eigen::MatrixXd& w) { solve_factors_transpose(g, f, w); });
}

template void solve_factors(GridComms&, const DistributedFactors<float>&, Eigen::MatrixXd&);
template void solve_factors(GridComms&, const DistributedFactors<double>&, Eigen::MatrixXd&);
template void solve_factors_transpose(GridComms&, const DistributedFactors<float>&, Eigen::MatrixXd&);
template void solve_factors_transpose(GridComms&, const DistributedFactors<double>&, Eigen::MatrixXd&);
template detail::EquilibratedInverse inverse(GridComms&, const DistributedFactors<float>&, const Scales&);
template detail::EquilibratedInverse inverse(GridComms&, const DistributedFactors<double>&, const Scales&);

}  // namespace tcsolve::distributed
