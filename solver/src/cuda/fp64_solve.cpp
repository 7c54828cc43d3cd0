// The cuda path's FP64 solve of small systems (fp64_solve.hpp): the cpu path's solve_fp64 with
// A on the device. The LU is cuSOLVER's dgetrf of A_s (DeviceFp64Lu, the search for equal rows
// only after a zero pivot); every solve is dgetrs on the device between the equilibration's
// power-of-two scalings (DeviceFp64Lu::apply); the residuals stay on the device. What reaches
// the host per step: the norms of r, x and d (a few doubles per right-hand side). The condition
// estimate (SolveOptions::condition_estimate) goes through the host.
#include "fp64_solve.hpp"

#include <Eigen/Dense>
#include <optional>
#include <string>
#include <vector>

#include "../condition.hpp"
#include "../host_clock.hpp"
#include "../refinement_rules.hpp"
#include "blocked_lu.hpp"
#include "fp64_lu.hpp"
#include "kernels.hpp"
#include "refinement_cuda.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace tcsolve::cuda {
namespace {

/// The operations of detail::refinement_loop with the FP64 LU: x, r and d on the device, the
/// residual by DeviceChecker, d = A^-1 r by DeviceFp64Lu::apply.
class Fp64Refinement {
 public:
  Fp64Refinement(const DeviceRun& run, const DeviceSystem& s, const DeviceLu& f, DeviceFp64Lu& lu,
                 detail::ScaledNorm norm_a, PhaseClock& clock)
      : run_(run),
        s_(s),
        f_(f),
        lu_(lu),
        clock_(clock),
        checker_(run, s, norm_a),
        count_(elements(s.n, s.nrhs)),
        store_(3 * count_ + static_cast<std::size_t>(2 * s.nrhs)) {}  // one allocation: x, best, d, norms, mask

  /// x = A^-1 b.
  void initial_solve() {
    clock_.mark("correction");
    lu_.apply(f_, s_.b.data(), x(), s_.nrhs);
    clock_.mark(nullptr);
  }

  detail::Assessment assess() {
    clock_.mark("residual");
    const detail::Assessment a = checker_.assess(x());
    clock_.mark(nullptr);
    return a;
  }

  std::vector<double> correct(const std::vector<bool>&) {
    clock_.mark("correction");
    lu_.apply(f_, checker_.r(), d(), s_.nrhs);
    kernels::column_max_abs(run_.stream, d(), s_.n, s_.n, s_.nrhs, nullptr, norms(), nullptr);
    clock_.mark(nullptr);
    std::vector<double> out(static_cast<std::size_t>(s_.nrhs));
    copy_to_host(out.data(), norms(), out.size() * sizeof(double), run_.stream);
    return out;
  }

  void apply(const std::vector<bool>& done) {
    std::vector<int> mask(done.size());
    for (std::size_t j = 0; j < done.size(); ++j) mask[j] = done[j] ? 0 : 1;
    int* device_mask = reinterpret_cast<int*>(norms() + s_.nrhs);
    copy_to_device(device_mask, mask.data(), mask.size() * sizeof(int), run_.stream);
    kernels::masked_add(run_.stream, x(), d(), s_.n, s_.nrhs, device_mask);
  }

  void keep_best() { copy_device_to_device(best_x(), x(), count_ * sizeof(double), run_.stream); }
  void switch_to_gmres() {}  // never asked: the loop runs without refine auto's switch

  Eigen::MatrixXd best() const {
    Eigen::MatrixXd x(s_.n, s_.nrhs);
    copy_to_host(x.data(), store_.data() + count_, count_ * sizeof(double), run_.stream);
    return x;
  }

 private:
  const DeviceRun& run_;
  const DeviceSystem& s_;
  const DeviceLu& f_;
  DeviceFp64Lu& lu_;
  PhaseClock& clock_;
  DeviceChecker checker_;
  std::size_t count_;            ///< n nrhs
  DeviceBuffer<double> store_;   ///< x, the best x, d (count_ each), the norms, the mask (ints)
  double* x() { return store_.data(); }
  double* best_x() { return store_.data() + count_; }
  double* d() { return store_.data() + 2 * count_; }
  double* norms() { return store_.data() + 3 * count_; }
};

}  // namespace

SolveResult solve_fp64(DeviceRun& run, const DeviceSystem& s, double transfer, const HostMatrix& host_a,
                       const LinearSystem& meta, const SolveOptions& options, PhaseClock& clock) {
  SolveResult res;
  res.backend = Backend::cuda;
  res.fp64_lu = true;
  res.resolved_variant = Variant::fp64;
  res.cuda_plan = run.plan;
  run.synchronize();
  const auto t_start = Clock::now();
  const DeviceLu f = equilibrate(run, s, clock);
  clock.mark("fp64_lu");
  // The upload's thread searches A for equal rows beside the LU (asked below); without it, the
  // search needs the host A (a download of a device A), before the LU as the fallback's
  const bool host = s.singular.valid();
  DeviceFp64Lu lu(run, host_a, s, f, host ? DeviceFp64Lu::Search::on_failure : DeviceFp64Lu::Search::first);
  clock.mark(nullptr);
  const auto t_factored = Clock::now();
  Fp64Refinement refinement(run, s, f, lu, safe_norm(f.norm_a, host_a, true), clock);
  refinement.initial_solve();
  detail::refinement_loop(options.max_iterations, refinement, res, false, detail::refinement_step_hook(options));
  const int below = options.fp64_below == kFp64BelowDefault ? fp64_below_default(Backend::cuda) : options.fp64_below;
  res.note = "n = " + std::to_string(s.n) + " below fp64_below = " + std::to_string(below) +
             ": FP64 LU (cuSOLVER dgetrf), refined in FP64; " + res.note;
  const detail::SingularitySearch searched = [] {
    return std::optional<std::string>();
  };  // done before the LU
  if (detail::decide_condition_estimate(options, res, s.n, [&] { return lu.pivot_span(); },
                                        host ? singularity_search(s) : searched)) {
    clock.mark("condition");
    const HostScales scales(run, f);
    const detail::EquilibratedInverse inverse = lu.inverse(scales);
    res.condition_estimate = detail::estimate_condition(norm_1(run, f.col_sum, host_a), inverse).estimate;
    if (detail::needs_equilibrated_estimate(res.condition_estimate, inverse))
      res.condition_estimate_equilibrated = detail::estimate_condition_equilibrated(host_a(), inverse).estimate;
    clock.mark(nullptr);
  }
  finish_solve(run, [&] { return refinement.best(); }, f.note, transfer, clock, meta, t_start, t_factored, res);
  return res;
}

}  // namespace tcsolve::cuda
