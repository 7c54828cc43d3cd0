// `tcsolve solve --gpus` / `--synthetic` (solve_devices.hpp).
#include "solve_devices.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "input.hpp"
#include "json.hpp"
#include "rank_system.hpp"
#include "solve_report.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/block_cyclic.hpp"
#include "tcsolve/solver/distributed.hpp"
#include "tcsolve/solver/generate.hpp"
#include "versions.hpp"

namespace tcsolve::app {
namespace {

constexpr int kExitNotConverged = 3;


}  // namespace

SolveResult on_synthetic_device(int n, std::uint64_t seed, cuda::Context& ctx,
                                const std::function<SolveResult(const DeviceSystemView&)>& solve) {
  const std::size_t nn = static_cast<std::size_t>(n);
  const cuda::DeviceMemory m = cuda::device_memory();
  // A and b here, then the solver's copy of A (FP64) and its FP32 factors
  const double need = 8.0 * nn * nn * 2 + 4.0 * nn * nn;
  if (need > static_cast<double>(m.free))
    throw InvalidInput("--synthetic " + std::to_string(n) + " on one GPU needs about " +
                       std::to_string(static_cast<long long>(need)) + " bytes of device memory (A made there, its "
                       "copy and the FP32 factors); " + std::to_string(m.free) + " are free: use --gpus");
  cuda::DeviceBuffer<double> a(nn * nn), b(nn);
  generate_random_device(n, seed, a.data(), n, b.data(), ctx);
  DeviceSystemView view;
  view.n = n;
  view.A = a.data();
  view.lda = n;
  view.B = b.data();
  view.ldb = n;
  SolveResult r = solve(view);
  r.forward_error = forward_error(r.x, random_x_true(n, 1, seed));
  return r;
}

SolveResult solve_synthetic_one(int n, std::uint64_t seed, const SolveOptions& options) {
  std::optional<cuda::Context> own;
  if (options.cuda_context == nullptr) own.emplace();
  cuda::Context& ctx = options.cuda_context != nullptr ? *options.cuda_context : *own;
  SolveOptions o = options;
  o.cuda_context = &ctx;
  cuda::DeviceBuffer<double> x(static_cast<std::size_t>(n));
  return on_synthetic_device(n, seed, ctx,
                             [&](const DeviceSystemView& view) { return solve_device(view, x.data(), n, o); });
}

std::string synthetic_name(long long n, std::uint64_t seed) {
  return "synthetic:" + std::to_string(n) + ":seed=" + std::to_string(seed);
}

int run_solve_devices(SolveDevicesArgs a) {
  if (a.options.backend == Backend::automatic) a.options.backend = Backend::cuda;
  if (a.options.backend != Backend::cuda)
    throw InvalidInput(std::string(a.gpus.empty() ? "--synthetic" : "--gpus") +
                       " runs on GPUs: --backend cuda (or auto), not " + std::string(to_string(a.options.backend)));
  if (runtime::device_count() == 0) throw Unavailable("solve: no usable CUDA device (" + cuda::device_name() + ")");
  if (!available(a.options.variant, Backend::cuda))
    throw Unavailable("variant " + a.variant_name + " is not available on the cuda backend");
  if (a.synthetic < 0 || a.synthetic > std::numeric_limits<int>::max())
    throw InvalidInput("--synthetic must be an order in [1, 2^31 - 1], got " + std::to_string(a.synthetic));
  if (!a.output.empty()) prepare_output(a.output, a.output_rule);
  Progress progress("solve", a.progress);
  std::vector<int> devices;
  Grid grid{1, 1};
  if (!a.gpus.empty()) {
    devices = runtime::parse_device_list(a.gpus, runtime::device_count());
    grid = Grid{1, static_cast<int>(devices.size())};
    if (!a.grid.empty()) {
      grid = parse_grid(a.grid);
      if (grid.size() != static_cast<int>(devices.size()))
        throw InvalidInput("--grid " + a.grid + " has " + std::to_string(grid.size()) + " processes for " +
                           std::to_string(devices.size()) + " GPUs (--gpus " + a.gpus + ")");
    }
  } else if (!a.grid.empty() && a.grid != "1x1") {
    throw InvalidInput("--grid " + a.grid + " needs --gpus (or mpirun)");
  }
  cuda::Context context;
  a.options.cuda_context = &context;
  std::vector<std::string> input_warnings;
  LinearSystem sys;
  const bool synthetic = a.synthetic > 0;
  const std::string input = synthetic ? synthetic_name(a.synthetic, a.seed) : a.input;
  if (!synthetic) sys = load_system(a.input, a.layout, Backend::cuda, a.options.fallback, progress, &input_warnings);
  const int n = synthetic ? static_cast<int>(a.synthetic) : sys.n();
  const int nrhs = synthetic ? 1 : sys.nrhs();
  std::optional<runtime::DeviceGroup> group;
  if (!devices.empty()) group.emplace(runtime::DeviceGroup::gpus(devices));
  auto run = [&](const SolveOptions& o) -> SolveResult {
    if (!group) return solve_synthetic_one(n, a.seed, o);
    return synthetic ? solve_generated(n, a.seed, o, *group, &grid) : solve_on_ranks(sys, o, *group, &grid);
  };
  progress.step("n = " + std::to_string(n) + ", LU with " + a.variant_name + " trailing updates on " +
                (group ? group->describe() : std::string("one GPU")));
  if (a.warmup) {  // untimed, as compare's: one correction, no fallback
    progress.step("warm-up");
    const SolveOptions warm = warmup_options(a.options);
    run(warm);
  }
  SolveReport report{a.variant_name, false, a.options, run(a.options)};
  const SolveResult& s = report.result;
  const bool finite = s.x.allFinite();
  const std::string output =
      write_solve_output(s, a.variant_name, a.output, synthetic || (sys.b_is_vector && nrhs == 1), a.output_rule);
  const std::string device = device_description(Backend::cuda);
  const std::string where =
      group ? ", on a " + grid_text(grid) + " grid of " + std::to_string(devices.size()) + " GPUs" : "";
  if (a.json) {
    JsonWriter w(std::cout);
    w.begin_object()
        .field("command", "solve")
        .field("input", input)
        .field("n", static_cast<std::int64_t>(n))
        .field("nrhs", static_cast<std::int64_t>(nrhs))
        .field("warmup", a.warmup);
    if (group) w.field("grid", grid_text(grid)).field("ranks", group->size()).field("group", group->describe());
    write_input_warnings(w, input_warnings);
    write_solve_members(w, report, device);
    finish_command_json(w);
  } else {
    print_solve_summary(input, n, nrhs, report, device, output, where);
  }
  return s.converged && finite ? 0 : kExitNotConverged;
}

}  // namespace tcsolve::app
