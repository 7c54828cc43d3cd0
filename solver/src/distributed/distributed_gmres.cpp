// GMRES for the distributed GMRES-IR (refine_ops.hpp): the cpu's cycle (cpu::gmres_with, one
// implementation) with the distributed product A v and the distributed FP32 factors as the
// preconditioner. The Krylov basis and every dot product are replicated: each rank computes them from the same bits
// in the same order, so every rank builds the same Hessenberg matrix and stops at the same inner
// iteration; only A v (a sum over ranks in rank order) and M^-1 (the owners' solves, broadcast)
// communicate.
#include <Eigen/Dense>

#include "../cpu/refinement_cpu.hpp"
#include "refine_ops.hpp"

namespace tcsolve::distributed {

Eigen::VectorXd gmres(GridComms& g, const PieceA& A, const Preconditioner& m_inv, const Eigen::VectorXd& r,
                      int cycle, int& iterations) {
  return cpu::gmres_with([&](const Eigen::VectorXd& v) -> Eigen::VectorXd { return product(g, A, v); }, m_inv, r,
                         cycle, iterations);
}

Eigen::VectorXd gmres(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& times_a,
                      const Preconditioner& m_inv, const Eigen::VectorXd& r, int cycle, int& iterations) {
  return cpu::gmres_with(times_a, m_inv, r, cycle, iterations);
}

}  // namespace tcsolve::distributed
