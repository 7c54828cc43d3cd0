// `tcsolve compare --synthetic N [--gpus G]` (compare_devices.hpp).
#include "compare_devices.hpp"

#include <optional>
#include <string>
#include <vector>

#include "solve_devices.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve::app {

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
