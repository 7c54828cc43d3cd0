// GMRES for the distributed GMRES-IR (refine_ops.hpp): the cpu's cycle (cpu/refinement_cpu.cpp)
// with the distributed product A v and the distributed FP32 factors as the preconditioner. The
// Krylov basis and every dot product are replicated: each rank computes them from the same bits
// in the same order, so every rank builds the same Hessenberg matrix and stops at the same inner
// iteration; only A v (a sum over ranks in rank order) and M^-1 (the owners' solves, broadcast)
// communicate.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "../refinement_rules.hpp"
#include "refine_ops.hpp"

namespace tcsolve::distributed {

Eigen::VectorXd gmres(GridComms& g, const PieceA& A, const Preconditioner& m_inv, const Eigen::VectorXd& r,
                      int cycle, int& iterations) {
  const Eigen::Index n = r.size();
  iterations = 0;
  const Eigen::VectorXd z = m_inv(r);
  const double beta = z.norm();
  if (!(beta > 0) || !std::isfinite(beta)) return z;  // r == 0 gives 0; non-finite propagates
  const int m = static_cast<int>(std::min<Eigen::Index>(cycle, n));
  Eigen::MatrixXd V(n, m + 1);
  V.col(0) = z / beta;
  detail::GmresLeastSquares ls(m, beta);
  while (ls.size() < m) {
    const int k = ls.size();
    Eigen::VectorXd w = m_inv(product(g, A, V.col(k)));
    Eigen::VectorXd h = Eigen::VectorXd::Zero(k + 1);
    for (int pass = 0; pass < 2; ++pass)  // modified Gram-Schmidt, twice
      for (int i = 0; i <= k; ++i) {
        const double c = V.col(i).dot(w);
        h[i] += c;
        w -= c * V.col(i);
      }
    const double h_next = w.norm();
    if (h_next > 0) V.col(k + 1) = w / h_next;
    if (ls.add_column(h.data(), h_next)) break;
  }
  iterations = ls.size();
  return V.leftCols(iterations) * ls.solve();
}

}  // namespace tcsolve::distributed
