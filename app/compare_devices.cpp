// `tcsolve compare --synthetic N [--gpus G]` (compare_devices.hpp).
#include "compare_devices.hpp"

#include <optional>
#include <string>
#include <vector>

#include "solve_devices.hpp"
#include "solve_report.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve::app {

namespace {

/// cusolverDnDSgesv on the random-mode system made on the current device (one GPU's memory: A,
/// its copy, the FP32 factors).
SolveResult dsgesv_synthetic(int n, std::uint64_t seed) {
  // cuSOLVER's IRS solvers index with 32-bit ints (cusolver_int_t): n^2 above 2^31 - 1 (n = 65536
  // on 2 x H200, 2026-11-27) ends in an illegal address that poisons the process' context
  if (static_cast<long long>(n) * n > 2147483647LL)
    throw Unavailable("cuSOLVER's DSgesv indexes with 32-bit ints: n^2 must stay below 2^31 (n <= 46340)");
  cuda::Context ctx;
  return on_synthetic_device(n, seed, ctx, [&](const DeviceSystemView& view) {
    return solve_baseline_device(view, "cusolver-dsgesv", &ctx);
  });
}

}  // namespace

CompareRanksRows compare_synthetic(const std::vector<Variant>& variants, const SolveOptions& options, int n,
                                   std::uint64_t seed, const std::string& gpus, Progress& progress) {
  if (runtime::device_count() == 0) throw Unavailable("compare --synthetic: no usable CUDA device");
  CompareRanksRows out;
  std::vector<int> devices{cuda::current_device()};
  std::optional<runtime::DeviceGroup> group;
  if (!gpus.empty()) {
    devices = runtime::parse_device_list(gpus, runtime::device_count());
    group.emplace(runtime::DeviceGroup::gpus(devices));
    out.group = group->describe();
  } else {
    out.group = "one GPU (device " + std::to_string(devices[0]) + ")";
  }
  out.grid = "1x" + std::to_string(devices.size());
  const Grid grid{1, static_cast<int>(devices.size())};
  auto solve_variant = [&](const SolveOptions& o) {
    return group ? solve_generated(n, seed, o, *group, &grid) : solve_synthetic_one(n, seed, o);
  };
  const std::size_t total = variants.size() + 1;
  for (const Variant v : variants) {
    const std::string name(to_string(v));
    SolveOptions o = options;
    o.variant = v;
    o.fp64_below = 0;  // every variant's own mixed path
    const SolveOptions warm = warmup_options(o);
    progress.step("warm-up " + name);
    solve_variant(warm);
    progress.step("[" + std::to_string(out.rows.size() + 1) + "/" + std::to_string(total) + "] " + name);
    out.rows.push_back({name, false, o, solve_variant(o)});
    out.rows.back().result.x = Eigen::MatrixXd();
  }
  // cuSOLVER's one-GPU refinement solver (its iterations, the yardstick) on the first GPU
  {
    const std::string dsgesv = "cusolver-dsgesv";
    try {
      const runtime::DeviceScope scope(devices[0]);
      progress.step("warm-up " + dsgesv);
      dsgesv_synthetic(n, seed);
      progress.step(dsgesv);
      out.rows.push_back({dsgesv, true, options, dsgesv_synthetic(n, seed)});
      out.rows.back().result.x = Eigen::MatrixXd();
    } catch (const Unavailable& e) {
      out.notes.push_back(dsgesv + ": not run: " + e.what());
    } catch (const InvalidInput& e) {
      out.notes.push_back(dsgesv + ": not run: " + e.what());
    }
  }
  const std::string method = "cusolvermg-dgetrf";
  try {
    progress.step("warm-up " + method);
    solve_generated_cusolvermg(n, seed, devices);
    progress.step("[" + std::to_string(total) + "/" + std::to_string(total) + "] " + method);
    out.rows.push_back({method, true, options, solve_generated_cusolvermg(n, seed, devices)});
    out.rows.back().result.x = Eigen::MatrixXd();
  } catch (const Unavailable& e) {
    out.notes.push_back(method + ": not run: " + e.what());
  } catch (const InvalidInput& e) {  // the GPUs' memory
    out.notes.push_back(method + ": not run: " + e.what());
  }
  return out;
}

}  // namespace tcsolve::app
