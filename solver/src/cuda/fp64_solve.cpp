// The cuda path's FP64 solve of small systems (fp64_solve.hpp): the cpu path's solve_fp64 with
// A on the device. The LU is cuSOLVER's dgetrf of A_s (DeviceFp64Lu); its solves go through the
// host (dgetrs on a copy of the right-hand sides: n x nrhs doubles each way, small for the
// sizes this path serves); the residuals stay on the device.
#include "fp64_solve.hpp"

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "../condition.hpp"
#include "../host_clock.hpp"
#include "../refinement_rules.hpp"
#include "blocked_lu.hpp"
#include "fp64_lu.hpp"
#include "refinement_cuda.hpp"
#include "kernels.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace tcsolve::cuda {
namespace {

/// The operations of detail::refinement_loop with the FP64 LU: x and d on the device, the
/// residual by DeviceChecker, d = C A_s^-1 R r through the host.
class Fp64Refinement {
 public:
  Fp64Refinement(const DeviceRun& run, const DeviceSystem& s, detail::ScaledNorm norm_a,
                 const detail::EquilibratedInverse& inverse, PhaseClock& clock)
      : run_(run), s_(s), inverse_(inverse), clock_(clock), checker_(run, s, norm_a),
        x_(elements(s.n, s.nrhs)), best_(elements(s.n, s.nrhs)), d_(elements(s.n, s.nrhs)),
        norms_(static_cast<std::size_t>(s.nrhs)), mask_(static_cast<std::size_t>(s.nrhs)) {}

  /// x = A^-1 b.
  void initial_solve(const Eigen::MatrixXd& b) {
    clock_.mark("correction");
    Eigen::MatrixXd x = b;
    inverse_.apply(x);
    copy_to_device(x_.data(), x.data(), x_.size() * sizeof(double), run_.stream);
    clock_.mark(nullptr);
  }

  detail::Assessment assess() {
    clock_.mark("residual");
    const detail::Assessment a = checker_.assess(x_.data());
    clock_.mark(nullptr);
    return a;
  }

  std::vector<double> correct(const std::vector<bool>&) {
    clock_.mark("correction");
    Eigen::MatrixXd r(s_.n, s_.nrhs);
    copy_to_host(r.data(), checker_.r(), d_.size() * sizeof(double), run_.stream);
    inverse_.apply(r);
    copy_to_device(d_.data(), r.data(), d_.size() * sizeof(double), run_.stream);
    kernels::column_max_abs(run_.stream, d_.data(), s_.n, s_.n, s_.nrhs, nullptr, norms_.data(), nullptr);
    clock_.mark(nullptr);
    return norms_.download(run_.stream);
  }

  void apply(const std::vector<bool>& done) {
    std::vector<int> mask(done.size());
    for (std::size_t j = 0; j < done.size(); ++j) mask[j] = done[j] ? 0 : 1;
    mask_.upload(mask, run_.stream);
    kernels::masked_add(run_.stream, x_.data(), d_.data(), s_.n, s_.nrhs, mask_.data());
  }

  void keep_best() { copy_device_to_device(best_.data(), x_.data(), x_.size() * sizeof(double), run_.stream); }
  void switch_to_gmres() {}  // never asked: the loop runs without refine auto's switch

  Eigen::MatrixXd best() const {
    Eigen::MatrixXd x(s_.n, s_.nrhs);
    copy_to_host(x.data(), best_.data(), best_.size() * sizeof(double), run_.stream);
    return x;
  }

 private:
  const DeviceRun& run_;
  const DeviceSystem& s_;
  const detail::EquilibratedInverse& inverse_;
  PhaseClock& clock_;
  DeviceChecker checker_;
  DeviceBuffer<double> x_, best_, d_, norms_;
  DeviceBuffer<int> mask_;
};

}  // namespace

SolveResult solve_fp64(DeviceRun& run, const DeviceSystem& s, double transfer, const HostMatrix& host_a,
                       const HostMatrix& host_b, const LinearSystem& meta, const SolveOptions& options,
                       PhaseClock& clock) {
  SolveResult res;
  res.backend = Backend::cuda;
  res.fp64_lu = true;
  res.resolved_variant = Variant::fp64;
  res.cuda_plan = run.plan;
  run.synchronize();
  const auto t_start = Clock::now();
  const DeviceLu f = equilibrate(run, s, clock);
  clock.mark("fp64_lu");
  DeviceFp64Lu lu(run, host_a, s, f);  // InvalidInput for an exactly singular A
  clock.mark(nullptr);
  run.synchronize();
  const auto t_factored = Clock::now();
  const HostScales scales(run, f);
  const detail::EquilibratedInverse inverse = lu.inverse(scales);
  Fp64Refinement refinement(run, s, safe_norm(f.norm_a, host_a, true), inverse, clock);
  refinement.initial_solve(host_b());
  detail::refinement_loop(options.max_iterations, refinement, res, false, detail::refinement_step_hook(options));
  res.note = "n = " + std::to_string(s.n) + " below fp64_below = " + std::to_string(options.fp64_below) +
             ": FP64 LU (cuSOLVER dgetrf), refined in FP64; " + res.note;
  if (options.estimate_condition) {
    clock.mark("condition");
    res.condition_estimate = detail::estimate_condition(norm_1(run, f.col_sum, host_a), inverse).estimate;
    if (detail::needs_equilibrated_estimate(res.condition_estimate, inverse))
      res.condition_estimate_equilibrated = detail::estimate_condition_equilibrated(host_a(), inverse).estimate;
    clock.mark(nullptr);
  }
  finish_solve(run, [&] { return refinement.best(); }, f.note, transfer, clock, meta, t_start, t_factored, res);
  return res;
}

}  // namespace tcsolve::cuda
