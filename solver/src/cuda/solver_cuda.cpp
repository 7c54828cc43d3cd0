// The cuda path of the solver (solver.hpp; solver.cpp states the algorithm, refinement_rules.hpp
// the rules): the same algorithm as the cpu path (cpu/solver_cpu.cpp) with A, the factors and the
// vectors on the device. This file tells the story of a solve; each step lives in its own file:
//
//   transfer     A (FP64) and b are copied to the device once; x comes back at the end
//                (device_system.hpp).
//   LU           equilibration and the blocked right-looking LU of the ROW-MAJOR FP32 A_s, with
//                look-ahead (blocked_lu.hpp/.cpp, lookahead.hpp, lookahead_schedule.hpp).
//   refinement   detail::refinement_loop, shared with the cpu path (refinement_rules.hpp), with
//                the residual, the corrections and GMRES-IR on the device (refinement_cuda.hpp).
//   fallback     the FP64 LU of the equilibrated A_s (fp64_lu.hpp); x is the better of its
//                solution and the best iterate (detail::take_fallback).
//   small n      SolveOptions::fp64_below: the FP64 LU and refinement alone (fp64_solve.hpp).
//   condition    Hager's estimator (condition.hpp) with the solves on the device
//                (condition_cuda.hpp), or from the FP64 LU. Phase "condition".
// Times: factorization and refinement by the host clock around device-synchronized phases
// (A already on the device); the finer phases (SolveTimes.phases) by CUDA events (phase_clock.hpp).
// Baselines: baselines_cuda.cpp.
//
// Everything runs in the caller's context (SolveOptions::cuda_context, or one made for the solve)
// and is ordered on its stream, except the LU's look-ahead, which joins back (blocked_lu.cpp):
// the solver's cuBLAS and cuSOLVER handles in that context (libraries.hpp), the gemm library's
// kernels and the copies. The solve returns with the stream idle.
#include "../solver_cuda.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <functional>
#include <limits>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../beam_rules.hpp"
#include "../condition.hpp"
#include "../host_clock.hpp"
#include "../input_checks.hpp"
#include "../refinement_rules.hpp"
#include "blocked_lu.hpp"
#include "condition_cuda.hpp"
#include "device_run.hpp"
#include "device_system.hpp"
#include "fp64_lu.hpp"
#include "fp64_solve.hpp"
#include "libraries.hpp"
#include "phase_clock.hpp"
#include "refinement_cuda.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device_guard.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {
namespace {

void check_variant(Variant variant) {
  if (!implements(variant))
    throw Unavailable("variant " + std::string(to_string(variant)) +
                      " has no implementation on the cuda backend");
}

/// Refuses a solve that does not fit the free device memory (cuda_solve_bytes), before any
/// allocation: InvalidInput with the bytes needed and free.
void check_device_memory(int n, int nrhs, const SolveOptions& options) {
  const double need = cuda_solve_bytes(n, nrhs, options);
  const DeviceMemory memory = device_memory();
  if (memory.total == 0 || need <= static_cast<double>(memory.free)) return;
  auto gib = [](double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return std::string(text);
  };
  throw InvalidInput("a cuda solve of n = " + std::to_string(n) + " (" + std::to_string(nrhs) +
                     " right-hand side(s)) needs " + gib(need) + " of GPU memory" +
                     (options.fallback ? " with the FP64 fallback's LU" : "") + "; " +
                     gib(static_cast<double>(memory.free)) + " free of " + gib(static_cast<double>(memory.total)) +
                     " (" + device_name() + ")");
}

}  // namespace

namespace {

/// cond_1(A) into res (SolveOptions::condition_estimate; phase "condition"): through the FP32
/// factors f where they resolve A^-1 and no FP64 LU exists yet (`fp64_made`), else through
/// the FP64 LU `fp64` (made for it when needed).
void estimate_condition(DeviceRun& run, const DeviceSystem& s, const DeviceLu& f, const HostMatrix& host_a,
                        const HostScales& scales, bool fp64_made, const std::function<DeviceFp64Lu&()>& fp64,
                        PhaseClock& clock, SolveResult& res) {
  clock.mark("condition");
  const detail::ScaledNorm norm1 = norm_1(run, f.col_sum, host_a);
  DeviceConditionOps ops(run, s, f);
  const detail::EquilibratedInverse fp32 = ops.inverse(scales);
  const detail::VectorMap times_a = [&ops](Eigen::MatrixXd& y) { ops.times_a(y); };
  if (!fp64_made) {
    const detail::ConditionEstimate c = detail::estimate_condition(norm1, fp32, times_a);
    if (c.resolved)
      res.condition_estimate = c.estimate;
    else
      res.note += "; condition estimate from an FP64 LU (the FP32 factors do not resolve A^-1)";
  }
  if (!res.condition_estimate) res.condition_estimate = detail::estimate_condition(norm1, fp64().inverse(scales)).estimate;
  // A badly scaled A: cond_1 of the equilibrated A_s as well (condition.hpp).
  if (detail::needs_equilibrated_estimate(res.condition_estimate, fp32)) {
    if (!fp64_made) {
      const detail::ConditionEstimate c = detail::estimate_condition_equilibrated(host_a(), fp32, times_a);
      if (c.resolved) res.condition_estimate_equilibrated = c.estimate;
    }
    if (!res.condition_estimate_equilibrated)
      res.condition_estimate_equilibrated =
          detail::estimate_condition_equilibrated(host_a(), fp64().inverse(scales)).estimate;
  }
  clock.mark(nullptr);
}

/// The reported fields of the factorization f of the system s.
void report_factorization(const DeviceRun& run, const DeviceSystem& s, const DeviceLu& f, SolveResult& res) {
  res.backend = Backend::cuda;
  res.resolved_variant = f.resolved;
  res.cuda_plan = run.plan;
  res.cuda_plan->fp64_solves = fp64_solves_for(run.plan, f.n);  // what the FP64 fallback's solves take
  res.cuda_plan->residuals = residuals_for(run.plan, f.n, s.nrhs);  // what the residuals took
  res.gemm_kernels = f.kernels;
}

/// The story of a GPU solve of the system s already on the device with partial pivoting.
/// host_a, host_b: the host A and b for the rare paths that need them; meta: the system's
/// x_true (for the forward error). `transfer`: the seconds the system took to reach the device.
/// The partial-pivoting story after the LU f of s.a (made at t_start .. t_factored), for s.b:
/// the refinement, the fallback, the condition estimate, the end. lu64: the FP64 LU of A_s,
/// made here on first need and kept (a cuda Factorization's later solves reuse f and it).
SolveResult refine_partial(DeviceRun& run, const DeviceSystem& s, const DeviceLu& f,
                           std::optional<DeviceFp64Lu>& lu64, double transfer, const HostMatrix& host_a,
                           const HostMatrix& host_b, const LinearSystem& meta, const SolveOptions& options,
                           PhaseClock& clock, Clock::time_point t_start, Clock::time_point t_factored) {
  SolveResult res;
  report_factorization(run, s, f, res);

  std::optional<HostScales> host_scales;  // read back when the fallback or the estimate needs them
  auto scales = [&]() -> const HostScales& {
    if (!host_scales) host_scales.emplace(run, f);
    return *host_scales;
  };
  DeviceRefinement refinement(run, s, f, safe_norm(f.norm_a, host_a, true), options.refinement, clock);
  // The FP64 LU of A_s, made at most once: for the fallback, or for the condition estimate.
  auto fp64 = [&]() -> DeviceFp64Lu& {
    if (!lu64) lu64.emplace(run, host_a, s, f);
    return *lu64;
  };
  // The fallback's x = C A_s^-1 R b (the scalings on the host), into the iterate buffer.
  auto fallback_solution = [&]() {
    Eigen::MatrixXd x = host_b();
    fp64().inverse(scales()).apply(x);
    copy_to_device(refinement.x(), x.data(), elements(s.n, s.nrhs) * sizeof(double), run.stream);
  };

  if (f.zero_pivot >= 0) {
    // Exactly singular, or singular only to FP32 precision: the FP64 LU decides.
    clock.mark("fallback");
    fp64();
    const std::string why = "the FP32 LU hit a zero pivot in column " + std::to_string(f.zero_pivot + 1) +
                            " (singular to FP32 precision)";
    if (options.fallback)
      fallback_solution();
    else
      device_memset(refinement.x(), 0, elements(s.n, s.nrhs) * sizeof(double), run.stream);
    clock.mark(nullptr);
    const detail::Assessment a = refinement.assess();
    refinement.keep_best();
    res.backward_error = a.backward_error;
    if (options.fallback) {
      res.converged = a.all_done;
      res.fallback_used = true;
      res.note = why + "; FP64 LU fallback used";
    } else {
      res.note = why + "; no fallback: x = 0";
    }
    res.history.push_back(res.backward_error);
  } else {
    refinement.initial_solve();
    detail::refinement_loop(options.max_iterations, refinement, res, options.refinement == Refinement::auto_,
                            detail::refinement_step_hook(options));
    if (options.refinement == Refinement::gmres || res.gmres_from >= 0)
      res.note += "; GMRES inner iterations: " + std::to_string(refinement.inner_iterations());
    if (!res.converged && options.fallback) {
      clock.mark("fallback");
      fallback_solution();
      clock.mark(nullptr);
      detail::take_fallback(refinement.assess(), res, [&] { refinement.keep_best(); });
    }
  }
  if (detail::decide_condition_estimate(options, res, s.n, [&] { return pivot_span(run, f); }, singularity_search(s)))
    estimate_condition(run, s, f, host_a, scales(), lu64.has_value(), fp64, clock, res);
  finish_solve(run, [&] { return refinement.best(); }, f.note, transfer, clock, meta, t_start, t_factored, res);
  return res;
}

SolveResult solve_partial(DeviceRun& run, const DeviceSystem& s, double transfer, const HostMatrix& host_a,
                          const HostMatrix& host_b, const LinearSystem& meta, const SolveOptions& options,
                          PhaseClock& clock) {
  clock.reserve(4 * (static_cast<std::size_t>(s.n) / 16 + 64));  // the LU's marks and the refinement's
  run.synchronize();
  const auto t_start = Clock::now();
  const DeviceLu f = factorize(run, s, options.variant, options.block_size, clock);
  const auto t_factored = Clock::now();  // factorize() ends with a read-back: the stream is idle
  std::optional<DeviceFp64Lu> lu64;
  return refine_partial(run, s, f, lu64, transfer, host_a, host_b, meta, options, clock, t_start, t_factored);
}

/// The refinement of an attempt with other factors than partial pivoting's (rbt, beam), by
/// options' method (no fallback): the initial solve, the steps, the GMRES note; whether it
/// converged.
bool refine_attempt(DeviceRefinement& refinement, const SolveOptions& options, SolveResult& res) {
  refinement.initial_solve();
  detail::refinement_loop(options.max_iterations, refinement, res, options.refinement == Refinement::auto_,
                          detail::refinement_step_hook(options));
  if (options.refinement == Refinement::gmres || res.gmres_from >= 0)
    res.note += "; GMRES inner iterations: " + std::to_string(refinement.inner_iterations());
  return res.converged;
}

/// The end of an attempt that converged with other factors than partial pivoting's (rbt, beam):
/// the condition estimate where options ask for it (through f where its factors resolve A^-1,
/// else through an FP64 LU made for it), then finish_solve.
SolveResult finish_attempt(DeviceRun& run, const DeviceSystem& s, const DeviceLu& f, DeviceRefinement& refinement,
                           const HostMatrix& host_a, const LinearSystem& meta, const SolveOptions& options,
                           PhaseClock& clock, double transfer, Clock::time_point t_start,
                           Clock::time_point t_factored, SolveResult res) {
  if (detail::decide_condition_estimate(options, res, s.n, [&] { return pivot_span(run, f); }, singularity_search(s))) {
    const HostScales scales(run, f);
    std::optional<DeviceFp64Lu> lu64;
    estimate_condition(run, s, f, host_a, scales, false, [&]() -> DeviceFp64Lu& {
      if (!lu64) lu64.emplace(run, host_a, s, f);
      return *lu64;
    }, clock, res);
  }
  finish_solve(run, [&] { return refinement.best(); }, f.note, transfer, clock, meta, t_start, t_factored, res);
  return res;
}

/// rbt: the transformed LU without pivoting (factorize_rbt), refined against A as above; nullopt,
/// with `why`, when the LU breaks down or the refinement does not converge (the caller then
/// pivots). No FP64 fallback here: partial pivoting is rbt's fallback.
std::optional<SolveResult> solve_rbt(DeviceRun& run, const DeviceSystem& s, double transfer, const HostMatrix& host_a,
                                     const LinearSystem& meta, const SolveOptions& options, PhaseClock& clock,
                                     std::string& why) {
  SolveResult res;
  res.pivoting = Pivoting::rbt;
  clock.reserve(4 * (static_cast<std::size_t>(s.n) / 16 + 64));
  run.synchronize();
  const auto t_start = Clock::now();
  const DeviceLu f =
      factorize_rbt(run, s, options.variant, options.block_size, options.rbt_seed, options.rbt_window, clock);
  const auto t_factored = Clock::now();  // factorize_rbt() ends with read-backs: the stream is idle
  if (!f.breakdown.empty()) {
    why = f.breakdown;
    return std::nullopt;
  }
  report_factorization(run, s, f, res);
  DeviceRefinement refinement(run, s, f, safe_norm(f.norm_a, host_a, true), options.refinement, clock);
  if (!refine_attempt(refinement, options, res)) {
    why = "refinement did not converge (" + res.note + ")";
    return std::nullopt;
  }
  res.note = detail::rbt_description(options.rbt_window) + "; " + res.note;
  return finish_attempt(run, s, f, refinement, host_a, meta, options, clock, transfer, t_start, t_factored,
                        std::move(res));
}

/// beam: the LU with in-block pivoting and modified tiny pivots (factorize_beam), refined
/// against A: GMRES-IR where it modified pivots (the LU is that of A_s + E; the cpu's automatic
/// correction), the requested refinement otherwise; nullopt, with `why` and the modification
/// count, when the LU breaks down or the refinement does not converge (the caller then pivots).
/// No FP64 fallback here: partial pivoting is beam's fallback.
std::optional<SolveResult> solve_beam(DeviceRun& run, const DeviceSystem& s, double transfer, const HostMatrix& host_a,
                                      const LinearSystem& meta, const SolveOptions& options, PhaseClock& clock,
                                      std::string& why, int& modifications, double& growth) {
  SolveResult res;
  res.pivoting = Pivoting::beam;
  clock.reserve(4 * (static_cast<std::size_t>(s.n) / 16 + 64));
  run.synchronize();
  const auto t_start = Clock::now();
  const DeviceLu f = factorize_beam(run, s, options.variant, options.block_size, clock);
  const auto t_factored = Clock::now();  // factorize_beam() ends with read-backs: the stream is idle
  modifications = static_cast<int>(f.modifications.size());
  const std::string description = detail::beam_description(f.modifications.size());
  growth = f.growth;
  if (!f.breakdown.empty()) {
    why = "beam: " + f.breakdown;
    return std::nullopt;
  }
  report_factorization(run, s, f, res);
  res.modifications = modifications;
  res.growth = f.growth;
  SolveOptions refine = options;
  refine.refinement = detail::beam_refinement(options.refinement, f.modifications.size(), options.beam_correction);
  std::string how;
  DeviceRefinement refinement(run, s, f, safe_norm(f.norm_a, host_a, true), refine.refinement, clock);
  if (modifications > 0) {
    const bool woodbury = options.beam_correction == BeamCorrection::woodbury;
    res.beam_correction = woodbury ? BeamCorrection::woodbury : BeamCorrection::gmres;
    if (woodbury) {
      clock.mark("woodbury");
      const double rcond = refinement.use_woodbury();
      clock.mark(nullptr);
      if (!(rcond > std::numeric_limits<double>::epsilon())) {  // singular: A_s is, or the factors cannot resolve it
        char text[64];
        std::snprintf(text, sizeof text, "the Woodbury capacitance is singular (rcond %.1e)", rcond);
        why = description + ": " + text;
        return std::nullopt;
      }
      how = ", Woodbury correction of rank " + std::to_string(modifications);
    } else {
      how = ", GMRES-IR against A";
    }
  }
  if (!refine_attempt(refinement, refine, res)) {
    why = description + ": refinement did not converge (" + res.note + ")";
    return std::nullopt;
  }
  res.note = description + how + "; " + res.note;
  return finish_attempt(run, s, f, refinement, host_a, meta, options, clock, transfer, t_start, t_factored,
                        std::move(res));
}

/// The story of a GPU solve of the system s already on the device: rbt or beam first when asked
/// (and partial pivoting after it when it fails, its time counted in the total and as the phase
/// "rbt_attempt" or "beam_attempt", its phases as "rbt_<phase>" or "beam_<phase>"), else partial
/// pivoting.
SolveResult solve_on_device(DeviceRun& run, const DeviceSystem& s, double transfer, const HostMatrix& host_a,
                            const HostMatrix& host_b, const LinearSystem& meta, const SolveOptions& options,
                            PhaseClock& clock) {
  if (uses_fp64_lu(options, Backend::cuda, s.n))
    return solve_fp64(run, s, transfer, host_a, meta, options, clock);
  if (options.pivoting != Pivoting::rbt && options.pivoting != Pivoting::beam)
    return solve_partial(run, s, transfer, host_a, host_b, meta, options, clock);
  const bool beam = options.pivoting == Pivoting::beam;
  const std::string name = beam ? "beam" : "rbt";
  std::string why;
  int modifications = 0;
  double growth = 0;
  run.synchronize();
  const auto t = Clock::now();
  if (std::optional<SolveResult> r =
          beam ? solve_beam(run, s, transfer, host_a, meta, options, clock, why, modifications, growth)
               : solve_rbt(run, s, transfer, host_a, meta, options, clock, why))
    return std::move(*r);
  run.synchronize();
  const double attempt = seconds(t, Clock::now());
  std::vector<std::pair<std::string, double>> attempt_phases = clock.totals();
  PhaseClock partial_clock(clock.enabled(), run.stream);
  SolveResult res = solve_partial(run, s, transfer, host_a, host_b, meta, options, partial_clock);
  res.note = (beam ? why : name + ": " + why) + "; partial pivoting used: " + res.note;
  if (beam) {
    res.modifications = modifications;
    res.growth = growth;
  }
  res.time_s.factorization += attempt;
  res.time_s.total += attempt;
  res.time_s.phases.emplace_back(name + "_attempt", attempt);
  for (auto& [phase, seconds_] : attempt_phases) res.time_s.phases.emplace_back(name + "_" + phase, seconds_);
  return res;
}

/// A device matrix n x cols (leading dimension n) copied to the host on the first call (a
/// system given on the device: A or b for the rare paths that need them).
HostMatrix downloaded(const DeviceRun& run, const DeviceBuffer<double>& d, int n, int cols,
                      std::optional<Eigen::MatrixXd>& cache) {
  return [&run, &d, n, cols, &cache]() -> const Eigen::MatrixXd& {
    if (!cache) {
      cache.emplace(n, cols);
      copy_to_host(cache->data(), d.data(), elements(n, cols) * sizeof(double), run.stream);
    }
    return *cache;
  };
}

}  // namespace

SolveResult solve(const LinearSystem& sys, const SolveOptions& options) {
  require_device("the cuda solver");
  check_variant(options.variant);
  ContextFor ctx(options.cuda_context);
  const tcsolve::detail::DeviceGuard on_device(ctx.get().device());
  check_device_memory(static_cast<int>(sys.A.rows()), static_cast<int>(sys.b.cols()), options);
  DeviceRun run(ctx.get(), options.cuda_plan, options.gemm);
  PhaseClock clock(run.plan.phases != CudaLuPlan::Phases::off, run.stream);
  const auto t = Clock::now();
  const DeviceSystem s = upload(run, sys);
  const double transfer = seconds(t, Clock::now());
  const HostMatrix host_a = [&sys]() -> const Eigen::MatrixXd& { return sys.A; };
  const HostMatrix host_b = [&sys]() -> const Eigen::MatrixXd& { return sys.b; };
  return solve_on_device(run, s, transfer, host_a, host_b, sys, options, clock);
}

SolveResult solve_device(const DeviceSystemView& view, double* X, int ldx, const SolveOptions& options) {
  require_device("the cuda solver");
  check_variant(options.variant);
  ContextFor ctx(options.cuda_context);
  const tcsolve::detail::DeviceGuard on_device(ctx.get().device());
  check_device_memory(view.n, view.nrhs, options);
  DeviceRun run(ctx.get(), options.cuda_plan, options.gemm);
  PhaseClock clock(run.plan.phases != CudaLuPlan::Phases::off, run.stream);
  auto t = Clock::now();
  const DeviceSystem s = upload(run, view);  // device copies and the input checks
  double transfer = seconds(t, Clock::now());
  std::optional<Eigen::MatrixXd> a_cache, b_cache;
  LinearSystem meta;  // no x_true: no forward error
  SolveResult res = solve_on_device(run, s, transfer, downloaded(run, s.a, s.n, s.n, a_cache),
                                    downloaded(run, s.b, s.n, s.nrhs, b_cache), meta, options, clock);
  // x to X: its host copy back (n x nrhs; row-major transposed on the host first)
  t = Clock::now();
  const int n = s.n, k = s.nrhs;
  Eigen::MatrixXd packed = res.x;
  if (view.row_major) packed = Eigen::MatrixXd(res.x.transpose());  // column-major k x n: X's rows
  const int inner = view.row_major ? k : n, outer = view.row_major ? n : k;
  const std::size_t width = static_cast<std::size_t>(inner) * sizeof(double);
  TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(X, static_cast<std::size_t>(ldx) * sizeof(double), packed.data(), width,
                                       width, static_cast<std::size_t>(outer), cudaMemcpyHostToDevice, run.stream));
  run.synchronize();
  for (auto& [name, seconds_] : res.time_s.phases)
    if (name == "transfer") seconds_ += seconds(t, Clock::now());
  return res;
}

/// What factorize_kept keeps: the context (the caller's or one of its own), the run, A on the
/// device, the FP32 LU, the FP64 LU once a solve needed it; solves take the lock (one stream).
struct KeptFactors {
  explicit KeptFactors(const SolveOptions& o, const Eigen::MatrixXd& A)
      : options(o), ctx(o.cuda_context), host(A), run(ctx.get(), o.cuda_plan, o.gemm) {}
  SolveOptions options;
  ContextFor ctx;
  const Eigen::MatrixXd& host;  ///< the Factorization's FP64 A (it outlives this)
  DeviceRun run;
  DeviceSystem s;
  DeviceLu f;
  std::optional<DeviceFp64Lu> lu64;
  std::mutex mutex;
};

std::shared_ptr<KeptFactors> factorize_kept(const Eigen::MatrixXd& A, const SolveOptions& options) {
  require_device("the cuda solver");
  check_variant(options.variant);
  auto k = std::make_shared<KeptFactors>(options, A);
  const tcsolve::detail::DeviceGuard on_device(k->ctx.get().device());
  check_device_memory(static_cast<int>(A.rows()), 1, options);
  // A (no host copy), and one zero column as b until a solve brings its own
  DeviceSystem& s = k->s;
  s.n = static_cast<int>(A.rows());
  s.nrhs = 1;
  s.a = DeviceBuffer<double>(elements(s.n, s.n));
  s.b = DeviceBuffer<double>(elements(s.n, 1));
  copy_to_device(s.a.data(), A.data(), s.a.size() * sizeof(double), k->run.stream);
  device_memset(s.b.data(), 0, s.b.size() * sizeof(double), k->run.stream);
  const Eigen::MatrixXd* host = &k->host;  // the Factorization's: it outlives the kept factors
  s.singular = std::async(std::launch::async, [host] { return detail::exact_singularity(*host); }).share();
  s.b_norm = {0.0};
  PhaseClock clock(k->run.plan.phases != CudaLuPlan::Phases::off, k->run.stream);
  clock.reserve(4 * (static_cast<std::size_t>(k->s.n) / 16 + 64));
  k->f = factorize(k->run, k->s, options.variant, options.block_size, clock);
  // an FP32 zero pivot: the FP64 LU decides now (InvalidInput for an exactly singular A, as solve())
  if (k->f.zero_pivot >= 0) k->lu64.emplace(k->run, [&A]() -> const Eigen::MatrixXd& { return A; }, k->s, k->f);
  return k;
}

Variant resolved_variant(const KeptFactors& k) { return k.f.resolved; }

SolveResult solve_kept(KeptFactors& k, const Eigen::MatrixXd& b) {
  const std::lock_guard<std::mutex> lock(k.mutex);
  const tcsolve::detail::DeviceGuard on_device(k.ctx.get().device());
  DeviceRun& run = k.run;
  const auto t = Clock::now();
  k.s.nrhs = static_cast<int>(b.cols());
  k.s.b = DeviceBuffer<double>(elements(k.s.n, k.s.nrhs));
  copy_to_device(k.s.b.data(), b.data(), k.s.b.size() * sizeof(double), run.stream);
  k.s.b_norm.clear();
  for (Eigen::Index j = 0; j < b.cols(); ++j) k.s.b_norm.push_back(b.col(j).lpNorm<Eigen::Infinity>());
  run.synchronize();
  const double transfer = seconds(t, Clock::now());
  const HostMatrix host_a = [&k]() -> const Eigen::MatrixXd& { return k.host; };
  const HostMatrix host_b = [&b]() -> const Eigen::MatrixXd& { return b; };
  LinearSystem meta;  // no x_true: the caller's (solve(Factorization)) finish_result gives the forward error
  PhaseClock clock(run.plan.phases != CudaLuPlan::Phases::off, run.stream);
  const auto now = Clock::now();
  SolveResult res =
      refine_partial(run, k.s, k.f, k.lu64, transfer, host_a, host_b, meta, k.options, clock, now, now);
  res.block_size = k.options.block_size;
  res.factorization_reused = true;
  return res;
}

LuFactorization lu_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm, const CudaLuPlan& plan, Context* context) {
  require_device("the cuda LU factorization");
  check_variant(variant);
  LinearSystem sys;
  sys.A = A;
  sys.b = Eigen::MatrixXd::Zero(A.rows(), 1);
  ContextFor ctx(context);
  const tcsolve::detail::DeviceGuard on_device(ctx.get().device());
  DeviceRun run(ctx.get(), plan, gemm);
  const DeviceSystem s = upload(run, sys, EqualRows::skip);
  PhaseClock clock(run.plan.phases != CudaLuPlan::Phases::off, run.stream);
  const DeviceLu f = factorize(run, s, variant, block_size, clock);
  if (f.zero_pivot >= 0) throw InvalidInput(detail::zero_pivot_message(f.zero_pivot));
  LuFactorization out;
  const int n = s.n;
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major(n, n);
  copy_to_host(row_major.data(), f.lu.data(), f.lu.size() * sizeof(float), run.stream);
  out.lu = row_major;
  out.row_scale.resize(n);
  out.col_scale.resize(n);
  copy_to_host(out.row_scale.data(), f.row_scale.data(), static_cast<std::size_t>(n) * sizeof(double), run.stream);
  copy_to_host(out.col_scale.data(), f.col_scale.data(), static_cast<std::size_t>(n) * sizeof(double), run.stream);
  out.perm = f.perm_host;
  out.resolved_variant = f.resolved;
  return out;
}

}  // namespace tcsolve::cuda
