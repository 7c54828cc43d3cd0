// The blocked LU on the device (blocked_lu.cpp says how it runs): DeviceLu, the FP32 factors of
// the equilibrated A_s = R A C with R, C, the permutation and the zero pivot; factorize(), the
// equilibration and the LU; HostScales, host copies of R and C. Internal to tcsolve::solver; host
// code built with CUDA only.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "device_system.hpp"
#include "phase_clock.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cuda {

struct DeviceLu {
  int n = 0;
  DeviceBuffer<float> lu;  ///< L (unit lower) and U packed, n x n, ROW-MAJOR (row i at lu + i n)
  DeviceBuffer<double> row_scale, col_scale;
  DeviceBuffer<double> col_sum;  ///< sum_i |a_ij| of the FP64 A (from the equilibration's reads): ||A||_1
  DeviceBuffer<int> perm;  ///< original row at position i (device copy of perm_host)
  std::vector<int> perm_host;
  double norm_a = 0;    ///< ||A||_inf of the FP64 A
  int zero_pivot = -1;  ///< 0-based column of the first exactly zero FP32 pivot, or -1
  Variant resolved = Variant::fp32_simt;
  CudaKernels kernels = CudaKernels::automatic;  ///< the first trailing update's GemmInfo::kernels
  std::string note;  ///< the first trailing update's GemmInfo note; the leaf path
};

/// Equilibration and the blocked LU of the device A (n x n FP64). Ends with the pivots read
/// back (the device is idle afterwards).
DeviceLu factorize(DeviceRun& run, const DeviceSystem& s, Variant variant, int block_size, PhaseClock& clock);

/// Host copies of the equilibration's scales (the EquilibratedInverse works on the host).
struct HostScales {
  Eigen::VectorXd row, col;
  HostScales(const DeviceRun& run, const DeviceLu& f) : row(f.n), col(f.n) {
    copy_to_host(row.data(), f.row_scale.data(), static_cast<std::size_t>(f.n) * sizeof(double), run.stream);
    copy_to_host(col.data(), f.col_scale.data(), static_cast<std::size_t>(f.n) * sizeof(double), run.stream);
  }
};

}  // namespace tcsolve::cuda
