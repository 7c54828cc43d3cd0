// The mixed-precision solver (solver.hpp): power-of-two equilibration, blocked FP32 LU whose
// trailing updates run through tcsolve::gemm, FP64 iterative refinement (classical or GMRES-IR),
// FP64 LU fallback, condition estimate and warnings. This file is the one dispatch between the
// backends; each path tells the same story in its own folder, each step in its own file:
//
//   cpu/   the reference: solver_cpu.cpp (the story), blocked_lu (equilibration, LU, lu_apply),
//          refinement_cpu (classical, GMRES-IR), fp64_lu (fallback), baselines_cpu (fp64-lu).
//   cuda/  the device: solver_cuda.cpp (the story), blocked_lu (with look-ahead), refinement_cuda,
//          fp64_lu, condition_cuda, baselines_cuda (cuSOLVER), phase_clock (times).
//
// Shared by both: the stopping rules, the refinement loop, the fallback's rule and the end of a
// solve (refinement_rules.hpp), the overflow-safe norms (scaled_norm.hpp), the input checks and
// exact singularity (input_checks.hpp), the condition estimate (condition.hpp).
//
// Before either path: a system whose A or b lies below 2^-511 is solved as its exactly scaled
// copy (powers of two; prescale.hpp), so that the residual keeps full precision.
//
// After refinement (both paths, in this order):
//   fallback   when refinement did not converge (options.fallback): the FP64 LU of the
//              equilibrated A_s = R A C (refinement_rules.hpp states the rule).
//   exactly singular  InvalidInput when an LU meets an exact zero pivot, or two rows or columns
//              are equal up to sign and a power of two (input_checks.hpp).
//   condition  cond_1(A) ~= ||A||_1 est(||A^-1||_1) (condition.hpp) with A^-1 = C U^-1 L^-1 P R
//              from the FP32 factors, checked by up to two refinement steps along the estimate's
//              vector; where the FP32 factors do not resolve A^-1 there (cond_1(A) u32 near 1 or
//              beyond: the estimate would saturate near 1/u32 however singular A is), from the
//              FP64 LU of A_s instead (the fallback's, or one made for it).
//   finish     a non-finite x is never "converged"; the forward error; the warnings
//              (refinement_rules.hpp, finish_result).
#include "tcsolve/solver/solver.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "host_clock.hpp"
#include "input_checks.hpp"
#include "prescale.hpp"
#include "solver_cpu.hpp"
#include "solver_cuda.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/where.hpp"
#include "tcsolve/solver/distributed.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve {

namespace {

constexpr std::string_view kFp64Baseline = "fp64-lu";  ///< Eigen FP64 PartialPivLU

}  // namespace

Refinement parse_refinement(std::string_view name) {
  if (name == "classical") return Refinement::classical;
  if (name == "gmres") return Refinement::gmres;
  if (name == "auto") return Refinement::auto_;
  throw InvalidInput("unknown refinement '" + std::string(name) + "' (valid: classical, gmres, auto)");
}

Pivoting parse_pivoting(std::string_view name) {
  if (name == "partial") return Pivoting::partial;
  if (name == "rbt") return Pivoting::rbt;
  if (name == "auto") return Pivoting::auto_;
  if (name == "beam") return Pivoting::beam;
  throw InvalidInput("unknown pivoting '" + std::string(name) + "' (valid: partial, rbt, auto, beam)");
}

std::string_view to_string(Pivoting p) {
  switch (p) {
    case Pivoting::rbt: return "rbt";
    case Pivoting::auto_: return "auto";
    case Pivoting::beam: return "beam";
    case Pivoting::partial: break;
  }
  return "partial";
}

BeamCorrection parse_beam_correction(std::string_view name) {
  if (name == "auto") return BeamCorrection::automatic;
  if (name == "gmres") return BeamCorrection::gmres;
  if (name == "woodbury") return BeamCorrection::woodbury;
  throw InvalidInput("unknown beam correction '" + std::string(name) + "' (valid: auto, gmres, woodbury)");
}

std::string_view to_string(BeamCorrection c) {
  switch (c) {
    case BeamCorrection::automatic: return "auto";
    case BeamCorrection::gmres: return "gmres";
    case BeamCorrection::woodbury: return "woodbury";
    case BeamCorrection::none: break;
  }
  return "none";
}

ConditionEstimate parse_condition_estimate(std::string_view name) {
  if (name == "auto") return ConditionEstimate::automatic;
  if (name == "always") return ConditionEstimate::always;
  if (name == "never") return ConditionEstimate::never;
  throw InvalidInput("unknown condition estimate '" + std::string(name) + "' (valid: auto, always, never)");
}

std::string_view to_string(ConditionEstimate c) {
  switch (c) {
    case ConditionEstimate::always:
      return "always";
    case ConditionEstimate::never:
      return "never";
    case ConditionEstimate::automatic:
      break;
  }
  return "auto";
}

Pivoting resolve_pivoting(Pivoting requested, Backend, int) {
  // rbt was slower than partial pivoting on every size measured (Pivoting's comment): auto is
  // partial pivoting until a measured case says otherwise.
  return requested == Pivoting::auto_ ? Pivoting::partial : requested;
}

std::string_view to_string(Refinement r) {
  switch (r) {
    case Refinement::classical: return "classical";
    case Refinement::gmres: return "gmres";
    case Refinement::auto_: return "auto";
  }
  return "?";
}

LuFactorization lu_factorize(Backend backend, const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm, const CudaLuPlan& plan, cuda::Context* ctx) {
  if (resolve_backend(backend) != Backend::cuda) return lu_factorize(A, variant, block_size, gemm);
  detail::check_lu_input(A, block_size);
  detail::check_plan(plan);
  return cuda::lu_factorize(A, variant, block_size, gemm, plan, ctx);
}

int default_block_size(Backend backend, std::int64_t n) {
  if (resolve_backend(backend) != Backend::cuda) return kDefaultBlockSizeCpu;
  return n >= kLargeBlockFromCuda ? kLargeBlockSizeCuda : kDefaultBlockSizeCuda;
}

int resolve_block_size(const SolveOptions& options, Backend backend, std::int64_t n) {
  const bool beam_on_cuda = options.pivoting == Pivoting::beam && resolve_backend(backend) == Backend::cuda;
  if (options.block_size == 0) {
    const int nb = default_block_size(backend, n);
    return beam_on_cuda ? std::min(nb, kMaxBeamBlockCuda) : nb;
  }
  if (beam_on_cuda && options.block_size > kMaxBeamBlockCuda)
    throw InvalidInput("pivoting beam on cuda takes a block size of at most " + std::to_string(kMaxBeamBlockCuda) +
                       ", got " + std::to_string(options.block_size));
  return options.block_size;
}

int fp64_below_default(Backend backend) { return resolve_backend(backend) == Backend::cuda ? kFp64BelowCuda : 0; }

bool uses_fp64_lu(const SolveOptions& options, Backend backend, std::int64_t n) {
  const int below = options.fp64_below == kFp64BelowDefault ? fp64_below_default(backend) : options.fp64_below;
  return options.variant == Variant::auto_ && n < below;
}

double cuda_solve_bytes(std::int64_t n, std::int64_t nrhs, const SolveOptions& options) {
  const double nd = static_cast<double>(n);
  const double p = options.pivoting == Pivoting::rbt ? static_cast<double>((n + 3) / 4 * 4) : nd;
  const double vectors = 16.0 * nd * static_cast<double>(nrhs) * 8;  // b, x, the best x, r, d, ...
  return 8 * nd * nd + 4 * p * p + (options.fallback ? 8 * nd * nd : 0.0) + vectors + 64.0 * 1024 * 1024;
}

SolveResult solve(const LinearSystem& sys, const SolveOptions& requested) {
  const auto t_start = Clock::now();
  const double max_abs_a = detail::check_system(sys);
  detail::check_solve_options(requested);
  // A system near FP64's underflow is solved as its exactly scaled copy (prescale.hpp).
  if (const detail::Prescale p = detail::prescale_for(sys, max_abs_a); p.any()) {
    SolveResult r = solve(detail::prescaled(sys, p), requested);
    detail::unscale(r, p, sys);
    return r;
  }
  SolveOptions options = requested;
  if (!options.gemm.interrupt) options.gemm.interrupt = options.interrupt;
  options.pivoting = resolve_pivoting(options.pivoting, resolve_backend(options.backend), static_cast<int>(sys.A.rows()));
  options.block_size = resolve_block_size(options, options.backend, sys.A.rows());
  // The one switch between the backends; cuda::solve times its own phases.
  if (resolve_backend(options.backend) == Backend::cuda) {
    SolveResult r = cuda::solve(sys, options);
    r.block_size = options.block_size;
    return r;
  }
  return cpu::solve(sys, options, t_start);
}

SolveResult solve(const LinearSystem& sys, const SolveOptions& options, const runtime::Where& where) {
  SolveOptions o = options;
  switch (where.kind()) {
    case runtime::Where::Kind::host:
      o.backend = Backend::cpu;
      o.cuda_context = nullptr;
      return solve(sys, o);
    case runtime::Where::Kind::context:
      o.backend = Backend::cuda;
      o.cuda_context = where.context();
      return solve(sys, o);
    case runtime::Where::Kind::group:
      break;
  }
  // A group: the distributed solver (distributed.hpp), on mpi() groups of cpu ranks for now.
  return solve_on_ranks(sys, options, *where.group());
}

SolveResult solve_device(const DeviceSystemView& v, double* X, int ldx, const SolveOptions& requested) {
  detail::check_solve_options(requested);
  if (resolve_backend(requested.backend) != Backend::cuda)
    throw Unavailable("solve_device: the system is on a CUDA device, but the backend is " +
                      std::string(to_string(resolve_backend(requested.backend))));
  if (v.n < 1 || v.nrhs < 1)
    throw InvalidInput("A must be square and non-empty and b have a column, got n = " + std::to_string(v.n) +
                       ", nrhs = " + std::to_string(v.nrhs));
  const int b_rows = v.row_major ? v.nrhs : v.n;  // the leading dimension's minimum of B and X
  if (v.lda < v.n || v.ldb < b_rows || ldx < b_rows)
    throw InvalidInput("leading dimensions lda = " + std::to_string(v.lda) + ", ldb = " + std::to_string(v.ldb) +
                       ", ldx = " + std::to_string(ldx) + " too small for n = " + std::to_string(v.n) +
                       ", nrhs = " + std::to_string(v.nrhs));
  if (!v.A || !v.B || !X) throw InvalidInput("solve_device: A, B and X must not be null");
  SolveOptions options = requested;
  options.backend = Backend::cuda;
  options.pivoting = resolve_pivoting(options.pivoting, Backend::cuda, v.n);
  options.block_size = resolve_block_size(options, Backend::cuda, v.n);
  SolveResult r = cuda::solve_device(v, X, ldx, options);
  r.block_size = options.block_size;
  return r;
}

std::vector<std::string> baseline_methods(Backend backend) {
  if (resolve_backend(backend) == Backend::cuda)
    return {"cusolver-dgetrf", "cusolver-dsgesv", "cusolver-dhgesv", "cusolver-dbgesv", "cusolver-dxgesv"};
  return {std::string(kFp64Baseline)};
}

SolveResult solve_baseline(const LinearSystem& sys, std::string_view method, cuda::Context* ctx) {
  if (method == kFp64Baseline) return solve_fp64_baseline(sys);
  const std::vector<std::string> on_cuda = baseline_methods(Backend::cuda);
  if (std::find(on_cuda.begin(), on_cuda.end(), method) == on_cuda.end())
    throw InvalidInput("unknown baseline method '" + std::string(method) +
                       "' (valid: fp64-lu, cusolver-dgetrf, cusolver-dsgesv, cusolver-dhgesv, "
                       "cusolver-dbgesv, cusolver-dxgesv)");
  detail::check_system(sys);
  return cuda::solve_baseline(sys, method, ctx);
}

SolveResult solve_baseline_device(const DeviceSystemView& system, std::string_view method, cuda::Context* ctx) {
  const std::vector<std::string> on_cuda = baseline_methods(Backend::cuda);
  if (std::find(on_cuda.begin(), on_cuda.end(), method) == on_cuda.end())
    throw InvalidInput("unknown baseline method on the device '" + std::string(method) +
                       "' (valid: cusolver-dgetrf, cusolver-dsgesv, cusolver-dhgesv, cusolver-dbgesv, "
                       "cusolver-dxgesv)");
  if (system.n < 1 || system.nrhs < 1 || system.A == nullptr || system.B == nullptr ||
      system.lda < system.n || system.ldb < (system.row_major ? system.nrhs : system.n))
    throw InvalidInput("solve_baseline_device: bad view (n, nrhs, pointers or leading dimensions)");
  return cuda::solve_baseline_device(system, method, ctx);
}

}  // namespace tcsolve
