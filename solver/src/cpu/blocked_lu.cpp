// The cpu blocked LU (blocked_lu.hpp, and lu_factorize / lu_apply of solver.hpp): exact
// power-of-two equilibration A_s = R A C, then a blocked right-looking LU with partial pivoting
// of A_s in FP32 (Eigen): per block of nb columns the panel by an unblocked LU, U12 = L11^-1 A12,
// and the trailing update A22 -= L21 U12 through tcsolve::gemm(cpu, variant), the only place the
// variant enters. The solves with the factors: lu_apply (the refinement's correction) and
// fp32_inverse (the condition estimate).
#include "blocked_lu.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "../butterfly.hpp"
#include "../equilibration.hpp"
#include "../input_checks.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve {
namespace cpu {

void equilibrate(const Eigen::MatrixXd& A, Eigen::VectorXd& row_scale, Eigen::VectorXd& col_scale) {
  const Eigen::Index n = A.rows();
  row_scale.resize(n);
  col_scale.resize(n);
  const Eigen::VectorXd row_max = A.cwiseAbs().rowwise().maxCoeff();
  for (Eigen::Index i = 0; i < n; ++i)
    row_scale[i] = detail::pow2(detail::equilibration_exponent(row_max[i]));
  for (Eigen::Index j = 0; j < n; ++j) {
    const double col_max = (row_scale.cwiseProduct(A.col(j).cwiseAbs())).maxCoeff();
    col_scale[j] = detail::pow2(detail::equilibration_exponent(col_max));
  }
}

namespace {

/// Blocked right-looking LU of `a` (n x n, column-major FP32) in place, with partial pivoting
/// (window < 0; `perm` starts as the identity and follows the row swaps), with rbt's windowed
/// pivoting (window > 0: column k's pivot is the first largest of the rows [k, min(n, k0 +
/// window)), k0 = the first column of k's leaf: factorize_rbt_lu), or without (window 0, perm
/// unchanged). Returns the zero-based column of the first pivot that stops it -- exactly zero
/// with partial pivoting; else not above `tiny` in magnitude (or not finite) -- or -1.
/// `resolved` receives the variant the first trailing update ran (unchanged when there is none).
/// `after_block` is called after each block (BlockHook).
int factorize_in_place(Eigen::MatrixXf& a, std::vector<int>& perm, Variant variant, int nb,
                       const GemmOptions& gemm_options, Variant& resolved, int window, float tiny,
                       const BlockHook& after_block, std::vector<BeamModification>* beam = nullptr) {
  const int n = static_cast<int>(a.rows());
  bool first_update = true;
  for (int j0 = 0; j0 < n; j0 += nb) {
    const int w = std::min(nb, n - j0);  // panel width
    // beam: the block's threshold, kBeamThreshold times the largest |entry| of its panel (rows
    // j0..n-1, one reduction per block, not per column), or `tiny` for a zero panel
    float beam_tiny = tiny;
    if (beam != nullptr) {
      const float panel_max = a.block(j0, j0, n - j0, w).cwiseAbs().maxCoeff();
      if (panel_max > 0) beam_tiny = static_cast<float>(kBeamThreshold * static_cast<double>(panel_max));
    }
    // Panel: unblocked partial-pivot LU of columns j0..j0+w-1 (rows j0..n-1); each swap
    // exchanges whole rows, so the L of earlier panels and the columns to the right follow.
    for (int k = j0; k < j0 + w; ++k) {
      if (beam != nullptr) {
        // beam: the pivot is the first largest of the block's rows [k, j0 + w) only; one not
        // above `tiny` becomes tiny with its sign (0: +tiny), the change recorded.
        Eigen::Index p = 0;
        const float pivot_abs = a.col(k).segment(k, j0 + w - k).cwiseAbs().maxCoeff(&p);
        if (!a.col(k).segment(k, j0 + w - k).allFinite()) return k;
        p += k;
        if (p != k) {
          a.row(k).swap(a.row(p));
          std::swap(perm[k], perm[p]);
        }
        if (!(pivot_abs > beam_tiny)) {
          const float old = a(k, k), v = old < 0 ? -beam_tiny : beam_tiny;
          a(k, k) = v;
          beam->push_back({k, static_cast<double>(v) - static_cast<double>(old)});
        }
      } else if (window != 0) {
        const int leaf0 = j0 + (k - j0) / detail::kRbtLeafWidth * detail::kRbtLeafWidth;
        const int end = window < 0 ? n : std::min(n, leaf0 + window);
        Eigen::Index p = 0;
        const float pivot_abs = a.col(k).segment(k, end - k).cwiseAbs().maxCoeff(&p);
        if (window < 0 ? !(pivot_abs != 0.0f) : !(pivot_abs > tiny)) return k;  // (also NaN)
        p += k;
        if (p != k) {
          a.row(k).swap(a.row(p));
          std::swap(perm[k], perm[p]);
        }
      } else if (!(std::abs(a(k, k)) > tiny)) {  // also NaN
        return k;
      }
      const int below = n - k - 1, right = j0 + w - k - 1;
      if (below == 0) continue;
      a.col(k).tail(below) /= a(k, k);
      if (right > 0)
        a.block(k + 1, k + 1, below, right).noalias() -=
            a.col(k).tail(below) * a.row(k).segment(k + 1, right);
    }
    const int rest = n - j0 - w;
    if (rest == 0) {
      if (after_block) after_block(1.0);
      break;
    }
    // U12 = L11^-1 A12.
    auto a12 = a.block(j0, j0 + w, w, rest);
    a.block(j0, j0, w, w).triangularView<Eigen::UnitLower>().solveInPlace(a12);
    // A22 -= L21 U12: the only place the variant enters.
    const GemmInfo info =
        tcsolve::gemm(Backend::cpu, variant, Op::n, Op::n, rest, rest, w, -1.0f, &a(j0 + w, j0), n,
                      &a(j0, j0 + w), n, 1.0f, &a(j0 + w, j0 + w), n, gemm_options);
    if (first_update) resolved = info.resolved;
    first_update = false;
    if (after_block) {
      const double left = static_cast<double>(rest) / n;
      after_block(1 - left * left * left);
    }
  }
  return -1;
}

}  // namespace

FactorAttempt try_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                            const GemmOptions& gemm_options, const BlockHook& after_block) {
  detail::check_lu_input(A, block_size);
  const int n = static_cast<int>(A.rows());
  FactorAttempt t;
  LuFactorization& f = t.f;
  equilibrate(A, f.row_scale, f.col_scale);
  // Powers of two: the scaling is exact in FP64; the FP32 conversion is the only rounding.
  f.lu = (f.row_scale.asDiagonal() * A * f.col_scale.asDiagonal()).cast<float>();
  f.perm.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) f.perm[static_cast<std::size_t>(i)] = i;
  f.resolved_variant = variant;  // the requested one when no trailing update runs (n <= nb)
  t.zero_pivot =
      factorize_in_place(f.lu, f.perm, variant, block_size, gemm_options, f.resolved_variant, -1, 0, after_block);
  return t;
}

int factorize_beam_lu(Eigen::MatrixXf& a, std::vector<int>& perm, Variant variant, int nb,
                      const GemmOptions& gemm_options, Variant& resolved, float threshold,
                      std::vector<BeamModification>& modifications, const BlockHook& after_block) {
  return factorize_in_place(a, perm, variant, nb, gemm_options, resolved, 0, threshold, after_block, &modifications);
}

int factorize_rbt_lu(Eigen::MatrixXf& a, std::vector<int>& perm, int window, Variant variant, int nb,
                     const GemmOptions& gemm_options, Variant& resolved, float tiny, const BlockHook& after_block) {
  return factorize_in_place(a, perm, variant, nb, gemm_options, resolved, std::max(window, 0), tiny, after_block);
}

detail::EquilibratedInverse fp32_inverse(const LuFactorization& f) {
  return detail::EquilibratedInverse(
      f.row_scale, f.col_scale,
      [&f](Eigen::MatrixXd& w) {
        Eigen::MatrixXf y(w.rows(), w.cols());
        for (Eigen::Index i = 0; i < w.rows(); ++i)
          y.row(i) = w.row(f.perm[static_cast<std::size_t>(i)]).cast<float>();
        f.lu.triangularView<Eigen::UnitLower>().solveInPlace(y);
        f.lu.triangularView<Eigen::Upper>().solveInPlace(y);
        w = y.cast<double>();
      },
      [&f](Eigen::MatrixXd& w) {
        Eigen::MatrixXf y = w.cast<float>();
        f.lu.triangularView<Eigen::Upper>().transpose().solveInPlace(y);
        f.lu.triangularView<Eigen::UnitLower>().transpose().solveInPlace(y);
        for (Eigen::Index i = 0; i < w.rows(); ++i)
          w.row(f.perm[static_cast<std::size_t>(i)]) = y.row(i).cast<double>();
      });
}

}  // namespace cpu

LuFactorization lu_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm) {
  cpu::FactorAttempt t = cpu::try_factorize(A, variant, block_size, gemm);
  if (t.zero_pivot >= 0) throw InvalidInput(detail::zero_pivot_message(t.zero_pivot));
  return std::move(t.f);
}

Eigen::MatrixXd lu_apply(const LuFactorization& f, const Eigen::MatrixXd& r) {
  const Eigen::Index n = f.lu.rows();
  if (r.rows() != n)
    throw InvalidInput("lu_apply: r has " + std::to_string(r.rows()) + " rows, the factorization " +
                       std::to_string(n));
  // Per column: t = R r scaled by a power of two to ||t||_inf in [1/2, 1) so that the FP32
  // conversion neither overflows nor flushes a small residual to zero; permuted by P.
  Eigen::MatrixXf y(n, r.cols());
  std::vector<int> exponents(static_cast<std::size_t>(r.cols()), 0);
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    const Eigen::VectorXd t = f.row_scale.cwiseProduct(r.col(j));
    const double s = t.cwiseAbs().maxCoeff();
    int e = 0;
    if (std::isfinite(s) && s > 0) std::frexp(s, &e);
    exponents[static_cast<std::size_t>(j)] = e;
    for (Eigen::Index i = 0; i < n; ++i)
      y(i, j) = static_cast<float>(std::ldexp(t[f.perm[static_cast<std::size_t>(i)]], -e));
  }
  f.lu.triangularView<Eigen::UnitLower>().solveInPlace(y);
  f.lu.triangularView<Eigen::Upper>().solveInPlace(y);
  Eigen::MatrixXd x = y.cast<double>();
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    x.col(j) = f.col_scale.cwiseProduct(x.col(j)) * std::ldexp(1.0, exponents[static_cast<std::size_t>(j)]);
  return x;
}

}  // namespace tcsolve
