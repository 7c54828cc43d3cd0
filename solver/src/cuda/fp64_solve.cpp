// The cuda path's FP64 solve of small systems (fp64_solve.hpp): the cpu path's solve_fp64 with
// A on the device. The LU is cuSOLVER's dgetrf of A_s (DeviceFp64Lu, the search for equal rows
// only after a zero pivot); every solve is DeviceFp64Lu::apply on the device (the equilibration's
// power-of-two scalings around the triangular solves: one kernel, or dgetrs, by
// CudaLuPlan::fp64_solves); the residuals stay on the device. The equilibration and the residual
// are one launch each below a few hundred rows (CudaLuPlan::equilibration and residuals: one
// thread-block cluster), the ways that ran reported in the result's cuda_plan.
//
// Its fixed costs are what small systems pay beyond dgetrf + dgetrs, so every array comes from
// the context's SolveStore (no cudaMalloc or cudaFree after the first solve of a size), and
// nothing waits between the equilibration and the first assessment: the equilibration, the LU,
// the first solve and its residual are enqueued together, and one read-back brings U's diagonal,
// dgetrf's info, ||A||_inf and the norms of r and x (the pivots are checked then, before the
// assessment). Later steps read back a few doubles each. The factorization's seconds are the
// device's (events around the equilibration and the LU), the host not having waited for it. The
// condition estimate (SolveOptions::condition_estimate) goes through the host.
#include "fp64_solve.hpp"

#include <Eigen/Dense>
#include <algorithm>
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
#include "solve_store.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace tcsolve::cuda {
namespace {

/// The small solve's arrays in the context's store (Carver's order). `report`: what the first
/// assessment reads back at once: U's diagonal and info (n + 1), ||A||_inf (1), the norms of r
/// and x (2 nrhs); the correction's norms (nrhs) follow it.
struct SmallLayout {
  double *row_scale, *col_scale, *col_sum, *workspace, *x, *best, *d, *r, *report, *residual_scratch;
  int* mask;
  void* lu;
  std::size_t report_count;
  SmallLayout(Carver& c, int n, int k, std::size_t lu_bytes) {
    const std::size_t m = static_cast<std::size_t>(n), count = elements(n, k), cols = static_cast<std::size_t>(k);
    row_scale = c.take<double>(m);
    col_scale = c.take<double>(m);
    col_sum = c.take<double>(m);
    workspace = c.take<double>(kernels::equilibrate_workspace_doubles(n));
    x = c.take<double>(count);
    best = c.take<double>(count);
    d = c.take<double>(count);
    r = c.take<double>(count);
    report_count = m + 2 + 3 * cols;
    report = c.take<double>(report_count);
    residual_scratch = c.take<double>(DeviceChecker::residual_scratch_doubles(n, k));
    mask = c.take<int>(cols);
    lu = c.take<char>(lu_bytes);
  }
  double* diagonal() const { return report; }                   ///< n + 1: U's diagonal, info
  double* norm_a(int n) const { return report + n + 1; }        ///< ||A||_inf
  double* norms(int n) const { return report + n + 2; }         ///< r's, then x's (2 nrhs)
  double* d_norms(int n, int k) const { return report + n + 2 + 2 * k; }  ///< the correction's (nrhs)
};

/// The operations of detail::refinement_loop with the FP64 LU: x, r and d on the device, the
/// residual by DeviceChecker, d = A^-1 r by DeviceFp64Lu::apply. The first assessment also
/// checks the LU's pivots and learns ||A||_inf (one read-back, SmallLayout::report).
class Fp64Refinement {
 public:
  Fp64Refinement(const DeviceRun& run, const DeviceSystem& s, const SmallLayout& at, double* host_report,
                 DeviceFp64Lu& lu, const HostMatrix& host_a, PhaseClock& clock)
      : run_(run), s_(s), at_(at), host_(host_report), lu_(lu), host_a_(host_a), clock_(clock),
        checker_(run, s, at.r, at.norms(s.n), at.residual_scratch), count_(elements(s.n, s.nrhs)) {}

  /// x = A^-1 b.
  void initial_solve() {
    clock_.mark("correction");
    lu_.apply(s_.b.data(), at_.x, s_.nrhs);
    clock_.mark(nullptr);
  }

  detail::Assessment assess() {
    clock_.mark("residual");
    checker_.enqueue(at_.x);
    clock_.mark(nullptr);
    const int n = s_.n, k = s_.nrhs;
    if (!first_done_) {  // the pivots, ||A||_inf and the norms at once
      enqueued_ = Clock::now();
      const std::size_t count = static_cast<std::size_t>(n) + 2 + 2 * static_cast<std::size_t>(k);
      copy_to_host(host_, at_.report, count * sizeof(double), run_.stream);
      read_ = Clock::now();
      first_done_ = true;
      lu_.check_pivots(host_);
      checker_.set_norm_a(safe_norm(host_[n + 1], host_a_, true));
    } else {
      copy_to_host(host_ + n + 2, at_.norms(n), 2 * static_cast<std::size_t>(k) * sizeof(double), run_.stream);
    }
    return checker_.assessment(host_ + n + 2);
  }

  std::vector<double> correct(const std::vector<bool>&) {
    const int n = s_.n, k = s_.nrhs;
    clock_.mark("correction");
    lu_.apply(checker_.r(), at_.d, k);
    kernels::column_max_abs(run_.stream, at_.d, n, n, k, nullptr, at_.d_norms(n, k), nullptr);
    clock_.mark(nullptr);
    double* norms = host_ + n + 2 + 2 * k;
    copy_to_host(norms, at_.d_norms(n, k), static_cast<std::size_t>(k) * sizeof(double), run_.stream);
    return std::vector<double>(norms, norms + k);
  }

  void apply(const std::vector<bool>& done) {
    if (best_is_x_) {  // keep_best()'s copy, owed before x changes
      copy_device_to_device(at_.best, at_.x, count_ * sizeof(double), run_.stream);
      best_is_x_ = false;
    }
    std::vector<int> mask(done.size());
    for (std::size_t j = 0; j < done.size(); ++j) mask[j] = done[j] ? 0 : 1;
    copy_to_device(at_.mask, mask.data(), mask.size() * sizeof(int), run_.stream);
    kernels::masked_add(run_.stream, at_.x, at_.d, s_.n, s_.nrhs, at_.mask);
  }

  /// When the first assessment's read-back was asked for and when it arrived (host_times).
  Clock::time_point enqueued() const { return enqueued_; }
  Clock::time_point read() const { return read_; }

  /// The best iterate is x as it is now: copied only if x changes after (apply()), so that a
  /// solve that converges at once ends without a copy.
  void keep_best() { best_is_x_ = true; }
  void switch_to_gmres() {}  // never asked: the loop runs without refine auto's switch

  Eigen::MatrixXd best() const {
    Eigen::MatrixXd x(s_.n, s_.nrhs);
    copy_to_host(x.data(), best_is_x_ ? at_.x : at_.best, count_ * sizeof(double), run_.stream);
    return x;
  }

 private:
  const DeviceRun& run_;
  const DeviceSystem& s_;
  const SmallLayout& at_;
  double* host_;  ///< pinned: SmallLayout::report's host copy
  DeviceFp64Lu& lu_;
  const HostMatrix& host_a_;
  PhaseClock& clock_;
  DeviceChecker checker_;
  std::size_t count_;  ///< n nrhs
  bool first_done_ = false;
  bool best_is_x_ = false;  ///< keep_best() since x last changed
  Clock::time_point enqueued_, read_;
};

/// The phase marks of one solve with at most two corrections (the clock makes more past them).
constexpr std::size_t kMarks = 16;

static_assert(kernels::kFp64ClusterBelow == kEquilibrationClusterBelow &&
                  kernels::kFp64OneLaunchBelow == kEquilibrationOneLaunchBelow,
              "CudaLuPlan::equilibration's thresholds are the launcher's");

/// CudaLuPlan::Equilibration and the launcher's kernels::Fp64Equilibration name the same ways in
/// the same order (converted by static_cast).
constexpr bool same_ways() {
  using K = kernels::Fp64Equilibration;
  using E = CudaLuPlan::Equilibration;
  return static_cast<int>(K::automatic) == static_cast<int>(E::automatic) &&
         static_cast<int>(K::cluster) == static_cast<int>(E::cluster) &&
         static_cast<int>(K::cooperative) == static_cast<int>(E::cooperative) &&
         static_cast<int>(K::kernels) == static_cast<int>(E::kernels);
}
static_assert(same_ways(), "the plan's equilibration ways are the launcher's");

}  // namespace

SolveResult solve_fp64(DeviceRun& run, const DeviceSystem& s, double transfer, const HostMatrix& host_a,
                       const LinearSystem& meta, const SolveOptions& options, PhaseClock& clock) {
  SolveResult res;
  res.backend = Backend::cuda;
  res.fp64_lu = true;
  res.resolved_variant = Variant::fp64;
  const int n = s.n, k = s.nrhs;
  run.plan.fp64_solves = fp64_solves_for(run.plan, n);  // (reported)
  run.plan.residuals = residuals_for(run.plan, n, k);
  res.cuda_plan = run.plan;
  SolveStoreLease store(run.ctx);
  const int lwork = DeviceFp64Lu::workspace_size(run, s);
  const std::size_t lu_bytes = DeviceFp64Lu::store_bytes(s, lwork);
  Carver count;
  (void)SmallLayout(count, n, k, lu_bytes);
  Carver carve(store->device(count.bytes()));
  const SmallLayout at(carve, n, k, lu_bytes);
  double* host = static_cast<double*>(store->host(at.report_count * sizeof(double)));
  // the LU's device seconds: the clock's "equilibrate" and "fp64_lu" phases, or (phases off) two
  // events of their own (each event recorded before the first launch cost the host 3 us there)
  std::optional<EventTimer> lu_time;
  if (!clock.enabled()) lu_time.emplace(run.stream);
  clock.reserve(kMarks);  // the marks' events made here (cudaEventCreate costs the host microseconds)
  run.synchronize();
  const auto t_start = Clock::now();
  if (lu_time) lu_time->start();
  clock.mark("equilibrate");  // equilibrate()'s arithmetic, and A_s for dgetrf, in one launch
  const auto t_marked = Clock::now();
  const kernels::Fp64Equilibration equilibrated =
      kernels::equilibrate_fp64(run.stream, s.a.data(), n, at.row_scale, at.col_scale, at.col_sum, at.norm_a(n),
                                DeviceFp64Lu::factors_of(at.lu), DeviceFp64Lu::info_of(at.lu), at.workspace,
                                static_cast<kernels::Fp64Equilibration>(equilibration_for(run.plan, n)));
  res.cuda_plan->equilibration = static_cast<CudaLuPlan::Equilibration>(equilibrated);  // the way that ran
  const auto t_launched = Clock::now();
  clock.mark("fp64_lu");
  // The upload's thread searches A for equal rows beside the LU (asked below); without it, the
  // search needs the host A (a download of a device A), before the LU as the fallback's
  const bool host_search = s.singular.valid();
  DeviceFp64Lu lu(run, host_a, s, DeviceScales{at.row_scale, at.col_scale},
                  host_search ? DeviceFp64Lu::Search::on_failure : DeviceFp64Lu::Search::first,
                  DeviceFp64Lu::Placement{at.lu, at.diagonal(), true, true, lwork});
  clock.mark(nullptr);
  if (lu_time) lu_time->stop();
  Fp64Refinement refinement(run, s, at, host, lu, host_a, clock);
  refinement.initial_solve();
  detail::refinement_loop(options.max_iterations, refinement, res, false, detail::refinement_step_hook(options));
  const auto t_loop = Clock::now();
  const int below = options.fp64_below == kFp64BelowDefault ? fp64_below_default(Backend::cuda) : options.fp64_below;
  res.note = "n = " + std::to_string(n) + " below fp64_below = " + std::to_string(below) +
             ": FP64 LU (cuSOLVER dgetrf), refined in FP64; " + res.note;
  const detail::SingularitySearch searched = [] {
    return std::optional<std::string>();
  };  // done before the LU
  double search_s = 0;  // host_times: the wait for the upload's search
  const detail::SingularitySearch upload_search = singularity_search(s);
  const detail::SingularitySearch timed_search = [&] {
    const auto t = Clock::now();
    std::optional<std::string> why = upload_search();
    search_s = seconds(t, Clock::now());
    return why;
  };
  if (detail::decide_condition_estimate(options, res, n, [&] { return lu.pivot_span(); },
                                        host_search ? timed_search : searched)) {
    clock.mark("condition");
    const HostScales scales(run, n, at.row_scale, at.col_scale);
    const detail::EquilibratedInverse inverse = lu.inverse(scales);
    res.condition_estimate = detail::estimate_condition(norm_1(run, at.col_sum, n, host_a), inverse).estimate;
    if (detail::needs_equilibrated_estimate(res.condition_estimate, inverse))
      res.condition_estimate_equilibrated = detail::estimate_condition_equilibrated(host_a(), inverse).estimate;
    clock.mark(nullptr);
  }
  // host_times: the host's part: the first events, the first kernel's launch, enqueueing up to the
  // first read-back, waiting for it, the refinement loop's rest, the wait for the upload's search,
  // the rest
  if (run.plan.host_times) {
    const auto t_end = Clock::now();
    clock.add("host_first_marks", seconds(t_start, t_marked));
    clock.add("host_first_launch", seconds(t_marked, t_launched));
    clock.add("host_enqueue", seconds(t_launched, refinement.enqueued()));
    clock.add("host_wait", seconds(refinement.enqueued(), refinement.read()));
    clock.add("host_loop", seconds(refinement.read(), t_loop));
    clock.add("host_search", search_s);
    clock.add("host_rest", seconds(t_loop, t_end) - search_s);
  }
  finish_solve(run, [&] { return refinement.best(); }, "", transfer, clock, meta, t_start, t_start, res);
  // the LU's device seconds (events read after the timed part: the first assessment waited for
  // them), and the refinement's the rest of the total
  double lu_s = 0;
  if (lu_time) {
    lu_s = 1e-3 * lu_time->elapsed_ms();
  } else {
    for (const auto& [name, phase_s] : res.time_s.phases)
      if (name == "equilibrate" || name == "fp64_lu") lu_s += phase_s;
  }
  res.time_s.factorization = std::min(res.time_s.total, lu_s);
  res.time_s.refinement = res.time_s.total - res.time_s.factorization;
  return res;
}

}  // namespace tcsolve::cuda
