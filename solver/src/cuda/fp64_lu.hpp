// FP64 LUs on the device by cuSOLVER dgetrf: DeviceFp64Lu, the LU of the equilibrated A_s = R A C
// for the fallback and the condition estimate, its pivots read back (info and the diagonal: a zero
// or non-finite pivot is an exactly singular A), dgetrs per right-hand side through condition.hpp's
// EquilibratedInverse (R b and C y in exponent arithmetic on the host); fp64_lu_solve(), the plain
// dgetrf + dgetrs of the unscaled A (the cusolver-dgetrf baseline). Internal to tcsolve::solver;
// host code built with CUDA only.
#pragma once

#include <Eigen/Dense>

#include "../condition.hpp"
#include "blocked_lu.hpp"
#include "device_system.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve::cuda {

/// What fp64_lu_solve() did: dgetrf's info (0, or the 1-based column of an exactly zero pivot;
/// x is then what dgetrs makes of it) and, when timed, the seconds of dgetrf and of dgetrs.
struct Fp64Solve {
  int info = 0;
  double factorization_s = 0, solve_s = 0;
};

/// x = A^-1 b by cuSOLVER FP64 dgetrf + dgetrs on a copy of the device A (the copies of A and b
/// are made before the timed part).
Fp64Solve fp64_lu_solve(const DeviceRun& run, const DeviceSystem& s, double* x, bool timed = false);

/// The FP64 LU of the equilibrated A_s = R A C on the device (cuSOLVER dgetrf), for the fallback
/// and the condition estimate. The constructor throws InvalidInput for an exactly singular A:
/// rows or columns equal up to sign and a power of two (detail::exact_singularity, on the
/// host's A, before the LU), then dgetrf's info or a non-finite diagonal entry of U.
class DeviceFp64Lu {
 public:
  /// A: the host A for the search for equal rows and columns before the LU (downloaded there
  /// for a system given on the device).
  DeviceFp64Lu(const DeviceRun& run, const HostMatrix& A, const DeviceSystem& s, const DeviceLu& f);

  /// W := A_s^-1 W (transpose: A_s^-T W) by dgetrs, through the device.
  void solve(Eigen::MatrixXd& w, bool transpose);

  detail::EquilibratedInverse inverse(const HostScales& scales) {
    return detail::EquilibratedInverse(
        scales.row, scales.col, [this](Eigen::MatrixXd& w) { solve(w, false); },
        [this](Eigen::MatrixXd& w) { solve(w, true); });
  }

 private:
  const DeviceRun& run_;
  int n_;
  DeviceBuffer<double> lu_;
  DeviceBuffer<int> ipiv_, info_;
  DeviceBuffer<double> rhs_;  ///< the right-hand sides of solve(), grown to the widest call
};

}  // namespace tcsolve::cuda
