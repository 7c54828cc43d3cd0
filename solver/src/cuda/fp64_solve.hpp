// The cuda path's FP64 solve of small systems (SolveOptions::fp64_below; fp64_solve.cpp): R and C
// by the equilibration's kernels, the FP64 LU of A_s (DeviceFp64Lu, cuSOLVER dgetrf), classical
// refinement in FP64 through it (the residual on the device, DeviceChecker; the correction by
// dgetrs between R and C's power-of-two scalings on the device), the condition estimate through
// it, every array from the context's SolveStore. The cpu path's solve_fp64
// (cpu/solver_cpu.cpp) on the device. Internal to tcsolve::solver; host code built with CUDA
// only.
#pragma once

#include "device_run.hpp"
#include "device_system.hpp"
#include "phase_clock.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cuda {

/// The FP64 solve of the system s already on the device (host_a: the host A for the
/// exact-singularity search; the right-hand sides are s.b on the device; meta: x_true for the forward
/// error; transfer: the seconds s took to reach the device). Phases "equilibrate", "fp64_lu",
/// "residual", "correction", "condition" (and with CudaLuPlan::host_times "host_enqueue",
/// "host_wait", "host_rest").
SolveResult solve_fp64(DeviceRun& run, const DeviceSystem& s, double transfer, const HostMatrix& host_a,
                       const LinearSystem& meta, const SolveOptions& options, PhaseClock& clock);

}  // namespace tcsolve::cuda
