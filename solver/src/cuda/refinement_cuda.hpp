// The refinement on the device (DeviceRefinement): the device side of detail::refinement_loop
// (refinement_rules.hpp, shared with the cpu path), classical or GMRES-IR.
//
//   residual    r = b - A x in FP64 and the column norms of r and x (DeviceChecker,
//               device_system.hpp).
//   correction  d = C U^-1 L^-1 P R r: r scaled per column by a power of two to ||R r|| in
//               [1/2, 1) and rounded to FP32 (refine_kernels.cu), two triangular solves on the
//               row-major LU (triangular.cu, or cublasStrsm), unscaled to FP64; x += d in FP64.
//               rbt: d = C V U^-1 L^-1 P U^T R r, the butterflies in FP64 (butterfly.cu)
//               around the same scaling and solves of order p.
//   gmres       (--refine gmres) d from one GMRES cycle per column on M^-1 A d = M^-1 r, M the
//               FP32 LU as in the correction: the Krylov basis, the FP64 products A v
//               (cublasDgemv) and the Gram-Schmidt (CGS2, cublasDgemv) on the device; the
//               (k+1) x k Hessenberg least-squares problem on the host (detail::GmresLeastSquares,
//               the cpu's code). Same cycle, tolerance, stopping rules, result fields and note as
//               the cpu GMRES-IR.
// Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../host_clock.hpp"

#include "blocked_lu.hpp"
#include "device_system.hpp"
#include "phase_clock.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "woodbury_cuda.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cuda {

/// The device side of detail::refinement_loop (refinement_rules.hpp): classical refinement (d =
/// LU^-1 r) or GMRES-IR (d from one GMRES cycle per column, gmres() below); refine auto starts
/// classical and switch_to_gmres() changes the method once.
/// The end of a solve (the partial-pivoting, rbt and FP64 paths): the device idle, the times
/// (from t_start, the factorization ending at t_factored), x = best() to the host (its copy in
/// the phase "transfer", after the system's `transfer` seconds), the clock's phases, the LU's
/// note (when not empty), the result's checks (detail::finish_result).
void finish_solve(DeviceRun& run, const std::function<Eigen::MatrixXd()>& best, const std::string& lu_note,
                  double transfer, PhaseClock& clock, const LinearSystem& meta, Clock::time_point t_start,
                  Clock::time_point t_factored, SolveResult& res);

class DeviceRefinement {
 public:
  DeviceRefinement(const DeviceRun& run, const DeviceSystem& s, const DeviceLu& f, detail::ScaledNorm norm_a,
                   Refinement method, PhaseClock& clock);

  /// x = LU^-1 b: the initial solve (both methods).
  void initial_solve();

  detail::Assessment assess();

  std::vector<double> correct(const std::vector<bool>& done);

  void apply(const std::vector<bool>& done);

  void keep_best() { copy_device_to_device(best_.data(), x_.data(), x_.size() * sizeof(double), run_.stream); }

  /// refine auto: x = the kept best iterate, and GMRES-IR makes the corrections from now on (its
  /// buffers allocated here, once).
  void switch_to_gmres();

  /// The iterate buffer, for a solution computed elsewhere (the FP64 fallback) or zeroed.
  double* x() { return x_.data(); }

  /// The kept iterate, copied to the host.
  Eigen::MatrixXd best() const;

  /// GMRES inner iterations summed over the outer steps and the columns.
  long inner_iterations() const { return inner_iterations_; }

  /// beam's Woodbury correction (woodbury_cuda.hpp): from now on every solve with the factors
  /// (the initial solve, the corrections, GMRES's preconditioner) solves with A_s itself, M =
  /// A_s + E corrected through f's modifications. Returns the capacitance's reciprocal condition
  /// estimate (the caller refuses a singular one). Call before initial_solve().
  double use_woodbury();

 private:
  /// out = C U^-1 L^-1 P R rhs for `cols` columns (leading dimension n), each through FP32 with
  /// a power-of-two scaling (the cpu path's lu_apply); rbt: out = C V U^-1 L^-1 P U^T R rhs (the
  /// cpu path's rbt_apply); with use_woodbury(), then the Woodbury correction (the cpu's
  /// BeamWoodbury::apply).
  void lu_apply(const double* rhs, double* out, int cols);

  /// ||v||_2 of a device vector of n doubles (cublasDnrm2 in host pointer mode: waits for it).
  double norm2(const double* v);

  /// The cpu path's gmres() (cpu/refinement_cpu.cpp) for one column on the device: d = the GMRES
  /// solution of M^-1 A d = M^-1 r, x0 = 0, M = the FP32 LU, one cycle of at most min(n,
  /// kGmresCycle) iterations. Per Arnoldi step k: t = A v_k (cublasDgemv, FP64), w = M^-1 t
  /// (lu_apply: FP32 triangular solves of the scaled FP32 rhs, FP64 result) written straight into
  /// v_{k+1}; classical Gram-Schmidt run twice (CGS2: h1 = V^T w, w -= V h1, h2 = V^T w, w -= V h2
  /// with V = v_0..v_k, four cublasDgemv; as accurate as the cpu's MGS twice, without one device
  /// round trip per basis vector); h = h1 + h2 and ||w||_2 read back (2 (k+1) + 1 doubles),
  /// v_{k+1} = w / ||w||; the rotations and the stopping test on the host
  /// (detail::GmresLeastSquares, shared with the cpu). At the end d = V(:, 0..k-1) y. Returns
  /// the inner iterations done. r and d are device columns of n doubles (r is not changed).
  int gmres(const double* r, double* d);

  /// The Krylov basis and GMRES's other device arrays.
  void allocate_gmres();

  const DeviceRun& run_;
  const DeviceSystem& s_;
  const DeviceLu& f_;
  Refinement method_;
  PhaseClock& clock_;
  DeviceChecker checker_;
  DeviceBuffer<double> x_, best_, d_;
  DeviceBuffer<float> y_;  ///< the FP32 right-hand sides of the solves (order x nrhs)
  /// The triangular solves: triangular.cu's sync-free row-block solves, or cuBLAS's strsm with
  /// CudaLuPlan::Trsv::cublas (to compare).
  bool cublas_solves_ = run_.plan.trsv == CudaLuPlan::Trsv::cublas;
  DeviceBuffer<int> solve_scratch_;
  DeviceBuffer<double> transformed_;  ///< rbt: U^T R r in FP64 (p x nrhs)
  DeviceBuffer<double> scratch_;
  DeviceBuffer<int> exponent_, mask_;
  // GMRES-IR only: the Krylov basis (n x (cycle + 1)), A v_k, the two Gram-Schmidt passes'
  // coefficients (2 (cycle + 1)), the least-squares solution y (cycle).
  int cycle_ = 0;
  DeviceBuffer<double> basis_, product_, coefficients_, solution_;
  long inner_iterations_ = 0;
  std::unique_ptr<DeviceWoodbury> woodbury_;  ///< use_woodbury(): lu_apply's correction
};

}  // namespace tcsolve::cuda
