// The power-of-two equilibration of the distributed A (refine_ops.hpp): R and C as the
// single-process solve computes them (cpu/blocked_lu.cpp, equilibrate: rows first, then the
// columns of the row-scaled matrix, each scale the power of two of detail::equilibration_exponent),
// the maxima taken over the ranks (a maximum is exact in any order: the same bits as the single
// process, hence the same A_s = R A C and the same FP32 LU); this rank's piece of A_s; ||A_s||_1.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "../equilibration.hpp"
#include "lu_steps.hpp"
#include "refine_ops.hpp"
#include "tcsolve/runtime/communicator.hpp"

namespace tcsolve::distributed {

namespace {

double entry(const PieceA& A, int i, int j) { return A.a[static_cast<std::ptrdiff_t>(j) * A.ld + i]; }

/// The element-wise maximum over the ranks of v (n entries; exact).
void max_over_ranks(GridComms& g, Eigen::VectorXd& v) {
  g.world.allreduce_max(v.data(), static_cast<std::size_t>(v.size()), runtime::Element::f64, nullptr);
}

}  // namespace

Scales equilibrate(GridComms& g, const PieceA& A) {
  const int n = A.row_map.n;
  Scales s;
  Eigen::VectorXd row_max = Eigen::VectorXd::Zero(n);
  for (int j = 0; j < A.cols; ++j)
    for (int i = 0; i < A.rows; ++i) {
      double& m = row_max[A.row_map.global(i, A.prow)];
      m = std::max(m, std::abs(entry(A, i, j)));
    }
  max_over_ranks(g, row_max);
  s.row.resize(n);
  for (int i = 0; i < n; ++i) s.row[i] = detail::pow2(detail::equilibration_exponent(row_max[i]));
  Eigen::VectorXd col_max = Eigen::VectorXd::Zero(n);
  for (int j = 0; j < A.cols; ++j) {
    double& m = col_max[A.col_map.global(j, A.pcol)];
    for (int i = 0; i < A.rows; ++i)
      m = std::max(m, s.row[A.row_map.global(i, A.prow)] * std::abs(entry(A, i, j)));
  }
  max_over_ranks(g, col_max);
  s.col.resize(n);
  for (int j = 0; j < n; ++j) s.col[j] = detail::pow2(detail::equilibration_exponent(col_max[j]));
  return s;
}

std::vector<double> equilibrated_piece(const PieceA& A, const Scales& s) {
  std::vector<double> as(static_cast<std::size_t>(A.ld) * static_cast<std::size_t>(std::max(A.cols, 1)), 0.0);
  for (int j = 0; j < A.cols; ++j) {
    const double c = s.col[A.col_map.global(j, A.pcol)];
    for (int i = 0; i < A.rows; ++i)  // (r a) c as the single process' R A C: exact either way
      as[static_cast<std::size_t>(j) * A.ld + i] = s.row[A.row_map.global(i, A.prow)] * entry(A, i, j) * c;
  }
  return as;
}

detail::ScaledNorm equilibrated_norm_1(GridComms& g, const PieceA& A, const Scales& s) {
  // As EquilibratedInverse::equilibrated_norm1: |a_s(i, j)| <= 1 after the equilibration, no
  // overflow; the column sums over the ranks in rank order.
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(A.col_map.n, 1);
  for (int j = 0; j < A.cols; ++j) {
    const int gj = A.col_map.global(j, A.pcol);
    for (int i = 0; i < A.rows; ++i)
      sums(gj, 0) += std::abs(s.row[A.row_map.global(i, A.prow)] * entry(A, i, j) * s.col[gj]);
  }
  return detail::scaled_norm(sum_in_rank_order(g.world, sums).maxCoeff());
}

}  // namespace tcsolve::distributed

namespace tcsolve {

DistributedScaling distributed_equilibrate(runtime::Communicator& comm, const Grid& grid,
                                           const Descriptor& desc_a, const double* A) {
  distributed::check_system_piece(comm, grid, desc_a, A);
  distributed::GridComms g(comm, grid);
  const distributed::PieceA piece{A,
                                  desc_a.lld,
                                  desc_a.local_rows(grid, g.prow),
                                  desc_a.local_cols(grid, g.pcol),
                                  desc_a.rows(grid),
                                  desc_a.cols(grid),
                                  g.prow,
                                  g.pcol};
  distributed::Scales s = distributed::equilibrate(g, piece);
  return DistributedScaling{std::move(s.row), std::move(s.col)};
}

}  // namespace tcsolve
