// `tcsolve solve --gpus` and `--synthetic` in one process (solve_devices.cpp): the distributed
// solver on this process' GPUs (one member per GPU on a thread of its own, a 1 x Q grid, NCCL),
// from a file or from the random-mode system made on the GPUs themselves; or, --synthetic
// without --gpus, the one-GPU solver on that system made on its device (no host copy of A).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cli_util.hpp"
#include "progress.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::app {

struct SolveDevicesArgs {
  std::string input;            ///< the system file, or empty with synthetic > 0
  std::string variant_name, output, grid;
  std::string gpus;             ///< --gpus N|all|LIST; empty: one GPU (synthetic only)
  long long synthetic = 0;      ///< --synthetic N: the random-mode system of order N
  std::uint64_t seed = 1;       ///< --seed
  Layout layout = Layout::row_major;
  SolveOptions options;         ///< the variant set; the backend as given (auto: cuda here)
  OutputOptions output_rule;
  ProgressMode progress = ProgressMode::automatic;
  bool json = false, warmup = false;
};

/// Runs it; returns the exit code (0 converged, 3 not converged); throws InvalidInput and
/// Unavailable with the command's messages.
int run_solve_devices(SolveDevicesArgs args);

/// The one-GPU solver (solve_device) on the random-mode system of `seed` made on the device of
/// options.cuda_context (or the current device's), the forward error against its x_true; throws
/// InvalidInput when it does not fit the device's memory.
SolveResult solve_synthetic_one(int n, std::uint64_t seed, const SolveOptions& options);

/// `solve` on the random-mode system of `seed` made on ctx's device (memory checked first: A, the
/// solver's copy of it and the FP32 factors), the forward error against its x_true set.
SolveResult on_synthetic_device(int n, std::uint64_t seed, cuda::Context& ctx,
                                const std::function<SolveResult(const DeviceSystemView&)>& solve);

/// The input's name in the report for a synthetic system: "synthetic:N:seed=S".
std::string synthetic_name(long long n, std::uint64_t seed);

}  // namespace tcsolve::app
