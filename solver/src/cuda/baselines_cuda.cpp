// The cuda baselines of `compare` (solve_baseline, solver_cuda.hpp): cuSOLVER dgetrf + dgetrs
// (fp64_lu.hpp), and the IRS solvers cusolverDnD{S,H,B,X}gesv with their defaults (classical
// refinement, dsgesv's tolerance, 50 iterations, FP64 fallback); each x assessed by the solver's
// own residual check (DeviceChecker, dsgesv's criterion).
#include <cusolverDn.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../host_clock.hpp"
#include "../input_checks.hpp"
#include "../refinement_rules.hpp"
#include "../solver_cuda.hpp"
#include "device_system.hpp"
#include "fp64_lu.hpp"
#include "libraries.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/device_guard.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

namespace {

/// The method on the device system s (host_a: the host A for the rare norm paths; transfer: the
/// seconds its upload took).
SolveResult baseline_on(const DeviceRun& run, const DeviceSystem& s, std::string_view method, const HostMatrix& host_a,
                        double transfer) {
  using Gesv = cusolverStatus_t (*)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, double*,
                                    cusolver_int_t, cusolver_int_t*, double*, cusolver_int_t, double*,
                                    cusolver_int_t, void*, size_t, cusolver_int_t*, cusolver_int_t*);
  using GesvBufferSize =
      cusolverStatus_t (*)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, double*, cusolver_int_t,
                           cusolver_int_t*, double*, cusolver_int_t, double*, cusolver_int_t, void*, size_t*);
  struct Irs {
    std::string_view method;
    const char* function;
    Gesv gesv;
    GesvBufferSize buffer_size;
  };
  static const Irs kIrs[] = {
      {"cusolver-dsgesv", "cusolverDnDSgesv", cusolverDnDSgesv, cusolverDnDSgesv_bufferSize},
      {"cusolver-dhgesv", "cusolverDnDHgesv", cusolverDnDHgesv, cusolverDnDHgesv_bufferSize},
      {"cusolver-dbgesv", "cusolverDnDBgesv", cusolverDnDBgesv, cusolverDnDBgesv_bufferSize},
      {"cusolver-dxgesv", "cusolverDnDXgesv", cusolverDnDXgesv, cusolverDnDXgesv_bufferSize},
  };

  SolveResult res;
  res.backend = Backend::cuda;
  res.resolved_variant = Variant::fp64;
  const int n = s.n, nrhs = s.nrhs;
  DeviceBuffer<double> x(elements(n, nrhs));
  std::string what;

  if (method == "cusolver-dgetrf") {
    const Fp64Solve fs = fp64_lu_solve(run, s, x.data(), true);
    if (fs.info > 0) throw InvalidInput(detail::zero_pivot_message(fs.info - 1));
    res.time_s.factorization = fs.factorization_s;
    res.time_s.refinement = fs.solve_s;
    what = "cuSOLVER FP64 dgetrf + dgetrs";
  } else {
    const Irs* irs = nullptr;
    for (const Irs& candidate : kIrs)
      if (candidate.method == method) irs = &candidate;
    if (!irs) throw InvalidInput("unknown cuda baseline method '" + std::string(method) + "'");
    // the IRS solvers index with 32-bit ints: n^2 beyond 2^31 - 1 ends in an illegal address
    // (n = 65536 on an H200, 2026-11-27) that poisons the context
    if (static_cast<long long>(n) * n > 2147483647LL || static_cast<long long>(n) * nrhs > 2147483647LL)
      throw Unavailable(std::string(irs->function) + " indexes with 32-bit ints: n^2 must stay below 2^31 (n <= "
                        "46340), got n = " + std::to_string(n));
    cusolverDnHandle_t solver = run.dense();
    DeviceBuffer<double> a(elements(n, n));  // the IRS may overwrite A with its FP64 LU
    copy_device_to_device(a.data(), s.a.data(), a.size() * sizeof(double), run.stream);
    DeviceBuffer<double> b(elements(n, nrhs));
    copy_device_to_device(b.data(), s.b.data(), b.size() * sizeof(double), run.stream);
    DeviceBuffer<int> ipiv(static_cast<std::size_t>(n));
    DeviceBuffer<int> info(1);
    device_memset(info.data(), 0, sizeof(int), run.stream);
    std::size_t bytes = 0;
    TCSOLVE_CUSOLVER_CHECK(irs->buffer_size(solver, n, nrhs, a.data(), n, ipiv.data(), b.data(), n, x.data(),
                                            n, nullptr, &bytes));
    DeviceBuffer<unsigned char> work(std::max<std::size_t>(bytes, 1));
    cusolver_int_t niters = 0;
    run.synchronize();
    const auto t_start = Clock::now();
    const cusolverStatus_t status = irs->gesv(solver, n, nrhs, a.data(), n, ipiv.data(), b.data(), n,
                                              x.data(), n, work.data(), bytes, &niters, info.data());
    run.synchronize();
    const auto t_end = Clock::now();
    const int info_host = info.download(run.stream)[0];
    if (info_host > 0) throw InvalidInput(detail::zero_pivot_message(info_host - 1));
    if (status == CUSOLVER_STATUS_IRS_MATRIX_SINGULAR)
      throw InvalidInput("matrix is exactly singular (" + std::string(irs->function) + ")");
    cusolver_check(status, irs->function, __FILE__, __LINE__);
    if (info_host < 0)
      throw CudaError(std::string(irs->function) + ": invalid argument " + std::to_string(-info_host));
    res.time_s.factorization = seconds(t_start, t_end);  // one call: factorization and refinement
    res.time_s.refinement = 0;
    res.iterations = niters >= 0 ? niters : 0;
    res.fallback_used = niters < 0;
    what = "cuSOLVER " + std::string(irs->function) + ", niters = " + std::to_string(niters) +
           (niters >= 0     ? " (converged by cuSOLVER's test)"
            : niters == -50 ? " (50 iterations without convergence; FP64 fallback)"
                            : " (refinement not used or failed; FP64 fallback)") +
           "; one call: time_s.factorization holds factorization and refinement";
  }
  res.time_s.total = res.time_s.factorization + res.time_s.refinement;

  DeviceChecker checker(run, s, norm_inf(run, s, host_a));
  const detail::Assessment a = checker.assess(x.data());
  res.backward_error = a.backward_error;
  res.converged = a.all_done;
  res.history.push_back(res.backward_error);
  const auto t = Clock::now();
  res.x.resize(n, nrhs);
  copy_to_host(res.x.data(), x.data(), x.size() * sizeof(double), run.stream);
  transfer += seconds(t, Clock::now());
  res.time_s.phases.emplace_back("transfer", transfer);
  res.note = what + (res.converged ? "; dsgesv criterion holds" : "; dsgesv criterion does not hold");
  return res;
}

}  // namespace

SolveResult solve_baseline(const LinearSystem& sys, std::string_view method, Context* context) {
  require_device("baseline " + std::string(method));
  ContextFor ctx(context);
  const tcsolve::detail::DeviceGuard on_device(ctx.get().device());
  const DeviceRun run(ctx.get(), CudaLuPlan{}, GemmOptions{});
  const auto t = Clock::now();
  const DeviceSystem s = upload(run, sys, EqualRows::skip);
  SolveResult res = baseline_on(run, s, method, [&sys]() -> const Eigen::MatrixXd& { return sys.A; },
                                seconds(t, Clock::now()));
  res.forward_error = detail::forward_error(sys, res.x);
  return res;
}

SolveResult solve_baseline_device(const DeviceSystemView& view, std::string_view method, Context* context) {
  require_device("baseline " + std::string(method));
  ContextFor ctx(context);
  const tcsolve::detail::DeviceGuard on_device(ctx.get().device());
  const DeviceRun run(ctx.get(), CudaLuPlan{}, GemmOptions{});
  const auto t = Clock::now();
  const DeviceSystem s = upload(run, view, EqualRows::skip);  // device copies and the input checks
  std::optional<Eigen::MatrixXd> host;  // A on the host only where a rare norm path asks for it
  const HostMatrix host_a = [&]() -> const Eigen::MatrixXd& {
    if (!host) {
      host.emplace(s.n, s.n);
      copy_to_host(host->data(), s.a.data(), elements(s.n, s.n) * sizeof(double), run.stream);
    }
    return *host;
  };
  return baseline_on(run, s, method, host_a, seconds(t, Clock::now()));
}

}  // namespace tcsolve::cuda
