// The distributed LU with partial pivoting on a P x Q grid (distributed.hpp): the panel in its
// process column (a pivot reduction per column, the pivot row broadcast in it), the interchanges
// applied across the process rows, the panel broadcast along the process rows, U12 solved in the
// diagonal block's process row and broadcast along the process columns, the trailing update on
// every rank. One code for both element types: FP32 (the solver's LU, trailing updates through
// tcsolve::gemm(Where(), variant)) and FP64 (the fallback's LU, trailing updates an FP64 Eigen
// product).
#include <Eigen/Dense>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../input_checks.hpp"
#include "grid_comms.hpp"
#include "lu_steps.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/where.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve {
namespace distributed {
namespace {

template <class T>
using MapT = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>, 0, Eigen::OuterStride<>>;

/// A pivot candidate: |a| and its global row (a rank without candidate rows offers -1).
template <class T>
struct Candidate {
  T magnitude;
  int row;
};

/// The local piece of A in T (lld = max(1, local rows)).
template <class T>
struct LocalMatrix {
  int rows = 0, cols = 0, ld = 1;
  std::vector<T> a;
  T& at(int i, int j) { return a[static_cast<std::size_t>(j) * ld + i]; }
  T* ptr(int i, int j) { return a.data() + static_cast<std::ptrdiff_t>(j) * ld + i; }
};

/// A22 -= L21 U12 (rows x cols, inner w): the variant's GEMM in FP32; returns its resolved
/// variant.
Variant trailing_update(Variant variant, const GemmOptions& gemm_options, int rows, int cols, int w, const float* l21,
                        int ldl, const float* u12, float* a22, int lda) {
  return tcsolve::gemm(runtime::Where(), variant, Op::n, Op::n, rows, cols, w, -1.0f, l21, ldl, u12, w, 1.0f, a22,
                       lda, gemm_options)
      .resolved;
}
/// The same in FP64 (the fallback's LU: no variant, an Eigen product).
Variant trailing_update(Variant, const GemmOptions&, int rows, int cols, int w, const double* l21, int ldl,
                        const double* u12, double* a22, int lda) {
  using ConstMap = Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>>;
  MapT<double>(a22, rows, cols, Eigen::OuterStride<>(lda)).noalias() -=
      ConstMap(l21, rows, w, Eigen::OuterStride<>(ldl)) * ConstMap(u12, w, cols, Eigen::OuterStride<>(w));
  return Variant::fp64;
}

/// Factors the panel of columns [j0, j0 + w) held by this rank's process column (pcol == the
/// panel's); ipiv[j0 ..] receives the pivots. Returns the column of an exact zero pivot, or -1.
template <class T>
int factor_panel(GridComms& g, const CyclicMap& rows, LocalMatrix<T>& a, int j0, int w, int lc0,
                 std::vector<int>& ipiv) {
  std::vector<T> pivot_row(static_cast<std::size_t>(w)), row_k(static_cast<std::size_t>(w));
  std::vector<Candidate<T>> all(static_cast<std::size_t>(g.grid.rows));
  for (int k = j0; k < j0 + w; ++k) {
    const int kk = k - j0, lc = lc0 + kk;
    // The first largest |a(i, k)|, i >= k, among this rank's rows (ascending global order).
    Candidate<T> mine{T(-1), INT_MAX};
    for (int il = rows.first_at_or_after(k, g.prow); il < a.rows; ++il) {
      const T v = std::abs(a.at(il, lc));
      if (v > mine.magnitude) mine = {v, rows.global(il, g.prow)};
    }
    // The reduction over the process column: the largest, ties to the lowest global row.
    g.col->allgather(&mine, all.data(), sizeof(Candidate<T>), nullptr);
    Candidate<T> best{T(-1), INT_MAX};
    for (const Candidate<T>& c : all)
      if (c.magnitude > best.magnitude || (c.magnitude == best.magnitude && c.row < best.row)) best = c;
    if (!(best.magnitude > T(0))) return k;  // an exact zero pivot (or NaN)
    const int p = best.row;
    ipiv[static_cast<std::size_t>(k)] = p;
    // Rows k and p exchange their panel columns; every rank of the column gets the pivot row.
    const int own_k = rows.owner(k), own_p = rows.owner(p);
    if (g.prow == own_p)
      for (int c = 0; c < w; ++c) pivot_row[static_cast<std::size_t>(c)] = a.at(rows.local(p), lc0 + c);
    g.col->broadcast(pivot_row.data(), pivot_row.size() * sizeof(T), own_p, nullptr);
    if (p != k) {
      if (g.prow == own_k)
        for (int c = 0; c < w; ++c) row_k[static_cast<std::size_t>(c)] = a.at(rows.local(k), lc0 + c);
      if (own_k != own_p) g.col->broadcast(row_k.data(), row_k.size() * sizeof(T), own_k, nullptr);
      if (g.prow == own_p)
        for (int c = 0; c < w; ++c) a.at(rows.local(p), lc0 + c) = row_k[static_cast<std::size_t>(c)];
      if (g.prow == own_k)
        for (int c = 0; c < w; ++c) a.at(rows.local(k), lc0 + c) = pivot_row[static_cast<std::size_t>(c)];
    }
    // Eliminate: l = a(i, k) / pivot below row k, then the rank-1 update of the panel's other
    // columns (each entry a - l u, as the single-process panel).
    const T pivot = pivot_row[static_cast<std::size_t>(kk)];
    const int below = rows.first_at_or_after(k + 1, g.prow);
    for (int il = below; il < a.rows; ++il) a.at(il, lc) /= pivot;
    for (int c = kk + 1; c < w; ++c) {
      const T u = pivot_row[static_cast<std::size_t>(c)];
      for (int il = below; il < a.rows; ++il) a.at(il, lc0 + c) -= a.at(il, lc) * u;
    }
  }
  return -1;
}

/// Applies the panel's interchanges ipiv[j0 .. j0 + w) to this rank's columns outside the panel
/// (skip_from .. skip_from + skip: the panel's local columns, or none), across the process rows
/// of this process column: every row that moves is taken from its old place first (broadcast in
/// the process column when the two places are on different process rows), then written.
template <class T>
void swap_rows(GridComms& g, const CyclicMap& rows, LocalMatrix<T>& a, int j0, int w, const std::vector<int>& ipiv,
               int skip_from, int skip) {
  // Where each row of the panel's interchanges ends: content[g] = the old row now at g.
  std::vector<std::pair<int, int>> content;  // (global row, old row), small: <= 2w entries
  auto find = [&](int row) -> int& {
    for (auto& e : content)
      if (e.first == row) return e.second;
    content.emplace_back(row, row);
    return content.back().second;
  };
  for (int k = j0; k < j0 + w; ++k) {
    const int p = ipiv[static_cast<std::size_t>(k)];
    if (p == k) continue;
    const int old_k = find(k);
    int& at_p = find(p);
    const int old_p = at_p;
    at_p = old_k;
    find(k) = old_p;
  }
  std::vector<std::pair<int, std::vector<T>>> moves;  // (destination row, the old row's values)
  for (const auto& [row, old] : content) {
    if (row == old) continue;
    const int own_src = rows.owner(old), own_dst = rows.owner(row);
    std::vector<T> values(static_cast<std::size_t>(a.cols));
    if (g.prow == own_src)
      for (int j = 0; j < a.cols; ++j) values[static_cast<std::size_t>(j)] = a.at(rows.local(old), j);
    if (own_src != own_dst) g.col->broadcast(values.data(), values.size() * sizeof(T), own_src, nullptr);
    if (g.prow == own_dst) moves.emplace_back(row, std::move(values));
  }
  for (const auto& [row, values] : moves)
    for (int j = 0; j < a.cols; ++j)
      if (j < skip_from || j >= skip_from + skip) a.at(rows.local(row), j) = values[static_cast<std::size_t>(j)];
}

}  // namespace

template <class T>
DistributedFactors<T> factorize(GridComms& g, const Descriptor& desc, const double* A, Variant variant,
                                const GemmOptions& gemm_options, int& zero_pivot) {
  const int n = desc.n, nb = desc.nb;
  const CyclicMap rows = desc.rows(g.grid), cols = desc.cols(g.grid);
  LocalMatrix<T> a;
  a.rows = rows.count(g.prow);
  a.cols = cols.count(g.pcol);
  a.ld = std::max(1, a.rows);
  a.a.assign(static_cast<std::size_t>(a.ld) * static_cast<std::size_t>(std::max(a.cols, 0)), T(0));
  for (int j = 0; j < a.cols; ++j)
    for (int i = 0; i < a.rows; ++i) a.at(i, j) = static_cast<T>(A[static_cast<std::ptrdiff_t>(j) * desc.lld + i]);

  DistributedFactors<T> f;
  f.grid = g.grid;
  f.desc = desc;
  f.desc.lld = a.ld;
  f.ipiv.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) f.ipiv[static_cast<std::size_t>(i)] = i;
  int resolved = -1;  // the first local trailing update's variant
  zero_pivot = -1;

  std::vector<T> panel, u12;
  std::vector<int> info;
  for (int j0 = 0; j0 < n; j0 += nb) {
    const int w = std::min(nb, n - j0);
    const int pc = cols.owner(j0), pr = rows.owner(j0);
    const int lc0 = cols.local(j0);  // on process column pc
    // The panel in its process column; its pivots and status (the zero-pivot column or -1) and
    // its local rows then go along the process rows.
    info.assign(static_cast<std::size_t>(w) + 1, -1);
    if (g.pcol == pc) {
      info[static_cast<std::size_t>(w)] = factor_panel(g, rows, a, j0, w, lc0, f.ipiv);
      for (int k = 0; k < w; ++k) info[static_cast<std::size_t>(k)] = f.ipiv[static_cast<std::size_t>(j0 + k)];
    }
    g.row->broadcast(info.data(), info.size() * sizeof(int), pc, nullptr);
    if (info[static_cast<std::size_t>(w)] >= 0) {  // every rank alike: the same broadcast status
      zero_pivot = info[static_cast<std::size_t>(w)];
      break;
    }
    for (int k = 0; k < w; ++k) f.ipiv[static_cast<std::size_t>(j0 + k)] = info[static_cast<std::size_t>(k)];
    panel.assign(static_cast<std::size_t>(a.ld) * w, T(0));
    if (g.pcol == pc) std::copy(a.ptr(0, lc0), a.ptr(0, lc0) + panel.size(), panel.begin());
    g.row->broadcast(panel.data(), panel.size() * sizeof(T), pc, nullptr);

    // The interchanges on the rest of every row (L of earlier panels, the columns to the right).
    swap_rows(g, rows, a, j0, w, f.ipiv, g.pcol == pc ? lc0 : 0, g.pcol == pc ? w : 0);

    // U12 = L11^-1 A12 in the diagonal block's process row, broadcast along the process columns.
    const int tc0 = cols.first_at_or_after(j0 + w, g.pcol), trailing_cols = a.cols - tc0;
    const int tr0 = rows.first_at_or_after(j0 + w, g.prow), trailing_rows = a.rows - tr0;
    if (j0 + w >= n) break;
    u12.assign(static_cast<std::size_t>(w) * std::max(trailing_cols, 0), T(0));
    if (g.prow == pr && trailing_cols > 0) {
      const int lr0 = rows.local(j0);
      MapT<T> l11(panel.data() + lr0, w, w, Eigen::OuterStride<>(a.ld));
      MapT<T> a12(a.ptr(lr0, tc0), w, trailing_cols, Eigen::OuterStride<>(a.ld));
      l11.template triangularView<Eigen::UnitLower>().solveInPlace(a12);
      for (int j = 0; j < trailing_cols; ++j)
        for (int i = 0; i < w; ++i) u12[static_cast<std::size_t>(j) * w + i] = a12(i, j);
    }
    g.col->broadcast(u12.data(), u12.size() * sizeof(T), pr, nullptr);

    // A22 -= L21 U12 on this rank's trailing rows and columns: the only place the variant enters.
    if (trailing_rows > 0 && trailing_cols > 0) {
      const Variant v = trailing_update(variant, gemm_options, trailing_rows, trailing_cols, w, panel.data() + tr0,
                                        a.ld, u12.data(), a.ptr(tr0, tc0), a.ld);
      if (resolved < 0) resolved = static_cast<int>(v);
    }
  }
  // One resolved variant on every rank (the largest over the ranks that ran an update).
  std::int64_t r = resolved;
  r = static_cast<std::int64_t>(g.world.max(static_cast<double>(r)));
  f.resolved_variant = r >= 0 ? static_cast<Variant>(r) : variant;
  f.lu = std::move(a.a);
  return f;
}

template DistributedFactors<float> factorize(GridComms&, const Descriptor&, const double*, Variant,
                                             const GemmOptions&, int&);
template DistributedFactors<double> factorize(GridComms&, const Descriptor&, const double*, Variant,
                                              const GemmOptions&, int&);

void check_system_piece(runtime::Communicator& world, const Grid& grid, const Descriptor& desc_a,
                        const double* A) {
  runtime::agreed(&world, [&] {
    check_grid(grid, world.size());
    const int prow = grid.row_of(world.rank()), pcol = grid.col_of(world.rank());
    validate(desc_a, grid, prow, "desca");
    if (desc_a.m != desc_a.n)
      throw InvalidInput("desca: M = " + std::to_string(desc_a.m) + " and N = " + std::to_string(desc_a.n) +
                         " differ: A must be square");
    if (desc_a.n < 1) throw InvalidInput("desca: N = 0: an empty system");
    if (desc_a.mb != desc_a.nb)
      throw InvalidInput("desca: MB = " + std::to_string(desc_a.mb) + " and NB = " + std::to_string(desc_a.nb) +
                         " differ: the LU needs square blocks");
    if (A == nullptr && desc_a.local_rows(grid, prow) * desc_a.local_cols(grid, pcol) > 0)
      throw InvalidInput("desca: A is null");
    const CyclicMap rows = desc_a.rows(grid), cols = desc_a.cols(grid);
    for (int j = 0; j < cols.count(pcol); ++j)
      for (int i = 0; i < rows.count(prow); ++i)
        if (!std::isfinite(A[static_cast<std::ptrdiff_t>(j) * desc_a.lld + i]))
          throw InvalidInput("A(" + std::to_string(rows.global(i, prow) + 1) + ", " +
                             std::to_string(cols.global(j, pcol) + 1) + ") is not finite");
  });
}

}  // namespace distributed

template <class T>
std::vector<int> DistributedFactors<T>::perm() const {
  std::vector<int> p(ipiv.size());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int>(i);
  for (std::size_t k = 0; k < ipiv.size(); ++k) std::swap(p[k], p[static_cast<std::size_t>(ipiv[k])]);
  return p;
}
template struct DistributedFactors<float>;
template struct DistributedFactors<double>;

DistributedLu distributed_lu_factorize(runtime::Communicator& comm, const Grid& grid, const Descriptor& desc_a,
                                       const double* A, Variant variant, const GemmOptions& gemm) {
  distributed::check_system_piece(comm, grid, desc_a, A);
  distributed::GridComms g(comm, grid);
  int zero_pivot = -1;
  DistributedLu f = distributed::factorize<float>(g, desc_a, A, variant, gemm, zero_pivot);
  if (zero_pivot >= 0)  // every rank alike: the same broadcast status
    throw runtime::Agreed<InvalidInput>(detail::zero_pivot_message(zero_pivot));
  return f;
}

}  // namespace tcsolve
