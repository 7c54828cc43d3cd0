// beam's Woodbury correction on the device (SolveOptions::beam_correction woodbury; the cpu's
// BeamWoodbury in cpu/beam.hpp is the reference, the same formula in the same frames):
// A_s^-1 = M^-1 + M^-1 U_E (I - V_E^T M^-1 U_E)^-1 V_E^T M^-1 for the factored M = A_s + E,
// E = U_E V_E^T one entry per modified pivot. In x's frame (the refinement's lu_apply, x = C M^-1
// R r): Z = lu_apply(R^-1 U_E) once (r solves, n x r on the device), the capacitance K = I -
// (Z's rows at the modified columns) / C there (r x r, its LU on the host in FP64); each
// correction then x += Z K^-1 w, w = x's entries at those columns / C (a gather, r x cols to the
// host and back, one DGEMM). Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

#include "blocked_lu.hpp"
#include "device_run.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace tcsolve::cuda {

class DeviceWoodbury {
 public:
  /// Most modifications the device correction takes (Z: n x r doubles on the device).
  static constexpr int kMaxRank = 1024;
  /// f.modifications (at most kMaxRank, else InvalidInput), its perm_host, R and C (read back
  /// here); `lu_apply(rhs, out)` one device column of n through the factors (x's frame).
  DeviceWoodbury(const DeviceRun& run, const DeviceLu& f,
                 const std::function<void(const double* rhs, double* out)>& lu_apply);
  /// The capacitance's reciprocal condition estimate (Eigen's PartialPivLU::rcond; 1 for r = 0).
  double capacitance_rcond() const { return rcond_; }
  int rank() const { return static_cast<int>(columns_.size()); }
  /// x += Z K^-1 (V_E^T C^-1 x) for `cols` device columns of n (leading dimension n): x =
  /// M^-1-solutions become A_s^-1 ones.
  void correct(double* x, int cols);

 private:
  const DeviceRun& run_;
  int n_;
  std::vector<int> columns_;       ///< the modified columns
  Eigen::VectorXd col_scale_at_;   ///< C at them
  DeviceBuffer<int> d_columns_;
  DeviceBuffer<double> z_;         ///< n x r
  DeviceBuffer<double> w_;         ///< r x cols scratch (gathered, then K^-1 w)
  Eigen::PartialPivLU<Eigen::MatrixXd> capacitance_;
  double rcond_ = 1;
};

}  // namespace tcsolve::cuda
