// GMRES for the cpu GMRES-IR (refinement_cpu.hpp).
#include "refinement_cpu.hpp"

#include <algorithm>
#include <cmath>

namespace tcsolve::cpu {

Eigen::VectorXd gmres(const Eigen::MatrixXd& A, const Preconditioner& m_inv, const Eigen::VectorXd& r, int cycle,
                      int& iterations, const std::atomic<bool>* interrupt) {
  return gmres_with([&A](const Eigen::VectorXd& v) -> Eigen::VectorXd { return A * v; }, m_inv, r, cycle,
                    iterations, interrupt);
}

Eigen::VectorXd gmres_with(const Operator& times_a, const Preconditioner& m_inv, const Eigen::VectorXd& r, int cycle,
                           int& iterations, const std::atomic<bool>* interrupt) {
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
    detail::check_interrupt(interrupt);
    Eigen::VectorXd w = m_inv(times_a(V.col(k)));
    Eigen::VectorXd h = Eigen::VectorXd::Zero(k + 1);
    for (int pass = 0; pass < 2; ++pass)
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

}  // namespace tcsolve::cpu
