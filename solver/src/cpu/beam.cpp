// The cpu beam pivoting (beam.hpp): the LU with in-block pivoting and additive modifications.
#include "beam.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "../beam_rules.hpp"
#include "../input_checks.hpp"

namespace tcsolve::cpu {

BeamAttempt try_factorize_beam(const Eigen::MatrixXd& A, Variant variant, int block_size, const GemmOptions& gemm,
                               const BlockHook& after_block) {
  detail::check_lu_input(A, block_size);
  const int n = static_cast<int>(A.rows());
  BeamAttempt t;
  LuFactorization f;
  equilibrate(A, f.row_scale, f.col_scale);
  // Powers of two: the scaling is exact in FP64; the FP32 conversion is the only rounding.
  f.lu = (f.row_scale.asDiagonal() * A * f.col_scale.asDiagonal()).cast<float>();
  const double a_max = static_cast<double>(f.lu.cwiseAbs().maxCoeff());
  f.perm.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) f.perm[static_cast<std::size_t>(i)] = i;
  f.resolved_variant = variant;
  t.threshold = static_cast<double>(static_cast<float>(kBeamThreshold * a_max));
  const int stopped = factorize_beam_lu(f.lu, f.perm, variant, block_size, gemm, f.resolved_variant,
                                        static_cast<float>(t.threshold), t.modifications, after_block);
  const double growth = stopped >= 0 ? 0.0
                       : f.lu.allFinite() ? static_cast<double>(f.lu.cwiseAbs().maxCoeff()) / a_max
                                          : std::numeric_limits<double>::quiet_NaN();
  t.growth = growth;
  t.breakdown = detail::beam_breakdown(stopped, growth, t.modifications.size());
  if (!t.breakdown.empty()) return t;
  t.factors = std::move(f);
  return t;
}

BeamWoodbury::BeamWoodbury(const LuFactorization& f, const std::vector<BeamModification>& modifications) : f_(f) {
  const Eigen::Index n = f.lu.rows(), r = static_cast<Eigen::Index>(modifications.size());
  Eigen::MatrixXd u = Eigen::MatrixXd::Zero(n, r);  // R^-1 U_E
  for (Eigen::Index k = 0; k < r; ++k) {
    const BeamModification& m = modifications[static_cast<std::size_t>(k)];
    const int row = f.perm[static_cast<std::size_t>(m.column)];
    u(row, k) = m.delta / f.row_scale[row];
    columns_.push_back(m.column);
  }
  z_ = r > 0 ? lu_apply(f, u) : Eigen::MatrixXd(n, 0);
  Eigen::MatrixXd k = Eigen::MatrixXd::Identity(r, r);
  for (Eigen::Index i = 0; i < r; ++i) {
    const int c = columns_[static_cast<std::size_t>(i)];
    k.row(i) -= z_.row(c) / f.col_scale[c];
  }
  capacitance_.compute(k);
  rcond_ = r > 0 ? capacitance_.rcond() : 1.0;
}

Eigen::MatrixXd BeamWoodbury::apply(const Eigen::MatrixXd& r) const {
  Eigen::MatrixXd x = lu_apply(f_, r);
  if (columns_.empty()) return x;
  Eigen::MatrixXd w(static_cast<Eigen::Index>(columns_.size()), r.cols());  // V_E^T C^-1 x0
  for (std::size_t i = 0; i < columns_.size(); ++i)
    w.row(static_cast<Eigen::Index>(i)) = x.row(columns_[i]) / f_.col_scale[columns_[i]];
  x += z_ * capacitance_.solve(w);
  return x;
}

}  // namespace tcsolve::cpu
