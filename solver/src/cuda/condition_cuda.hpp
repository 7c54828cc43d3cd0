// The condition estimate's solves on the device (DeviceConditionOps): ||A||_1 comes from the
// column sums of the equilibration's column pass (device_system.hpp, norm_1), Hager's estimator
// (condition.hpp) runs on host vectors with the solves on the device: A_s^-1 by triangular.cu's
// lu_solve, A_s^-T by two cublasStrsm on the row-major LU (OP_N with the fills of lu_apply's
// cublas branch: T's lower part is U^T, its strict upper part L^T), one vector up and one down per
// product (the one read-back a step needs); the resolution check's A x by cublasDgemv. Where the
// FP32 factors do not resolve A^-1, solver_cuda.cpp takes the estimate from the FP64 LU
// (fp64_lu.hpp: dgetrs, OP_N and OP_T). Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "../condition.hpp"
#include "blocked_lu.hpp"
#include "device_system.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace tcsolve::cuda {

/// The condition estimate's solves with the device FP32 LU (P A_s = L U, row-major, i.e. T =
/// (LU)^T column-major), one host vector at a time: A_s^-1 w = U^-1 L^-1 P w by triangular.cu's
/// lu_solve (the refinement's solve); A_s^-T w = P^T L^-T U^-T w by two cublasStrsm with OP_N on
/// T (U^T is T's lower triangle with the diagonal, L^T its strict upper one with a unit
/// diagonal). w is rounded to FP32 on the host (||w||_inf in [1/2, 1): EquilibratedInverse).
/// A x in FP64 for the resolution check by cublasDgemv. rbt: A_s^-1 w = V A_r^-1 U^T w and
/// A_s^-T w = U A_r^-T V^T w with P A_r = L U, the butterflies applied on the host (the cpu's
/// rbt_inverse).
class DeviceConditionOps {
 public:
  DeviceConditionOps(const DeviceRun& run, const DeviceSystem& s, const DeviceLu& f);

  detail::EquilibratedInverse inverse(const HostScales& scales) {
    return detail::EquilibratedInverse(
        scales.row, scales.col, [this](Eigen::MatrixXd& w) { solve(w); },
        [this](Eigen::MatrixXd& w) { solve_transpose(w); });
  }

  /// y := A y in FP64 on the device (one column).
  void times_a(Eigen::MatrixXd& y);

 private:
  /// Most columns per solve (estimate_norm1's first call has two).
  static constexpr int kMaxColumns = 2;

  int columns(const Eigen::MatrixXd& w) const;
  void solve(Eigen::MatrixXd& w);
  void solve_transpose(Eigen::MatrixXd& w);

  const DeviceRun& run_;
  const DeviceSystem& s_;
  const DeviceLu& f_;
  DeviceBuffer<float> y_;
  std::vector<float> host_;
  DeviceBuffer<int> scratch_;
  DeviceBuffer<double> u_, au_;
};

}  // namespace tcsolve::cuda
