// `tcsolve solve` under mpirun: the distributed solve on cpu or GPU ranks (solve_ranks.hpp).
#include "solve_ranks.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "input.hpp"
#include "json.hpp"
#include "rank_system.hpp"
#include "solve_devices.hpp"
#include "solve_report.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/block_cyclic.hpp"
#include "tcsolve/solver/distributed.hpp"
#include "tcsolve/solver/solver.hpp"
#include "versions.hpp"

namespace tcsolve::app {
namespace {

constexpr int kExitNotConverged = 3;

/// max_j ||x_j - t_j||_inf / ||t_j||_inf (solve's forward_error; 0/0 = 0, e/0 = inf).
double forward_error(const Eigen::MatrixXd& x, const Eigen::MatrixXd& t) {
  double worst = 0;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    const double tn = t.col(j).lpNorm<Eigen::Infinity>(), en = (x.col(j) - t.col(j)).lpNorm<Eigen::Infinity>();
    double e = tn > 0 ? en / tn : en > 0 ? std::numeric_limits<double>::infinity() : 0.0;
    if (!std::isfinite(e)) e = std::numeric_limits<double>::infinity();
    worst = std::max(worst, e);
  }
  return worst;
}

}  // namespace

int run_solve_ranks(const JobRanks& job, SolveRanksArgs a) {
  runtime::Communicator& world = *job.world;
  const bool speaks = job.speaks();
  Grid grid{1, job.size};
  SystemShape shape;
  runtime::agreed(&world, [&] {
    if (!a.grid.empty()) grid = parse_grid(a.grid);
    check_grid(grid, job.size);
    if (a.options.backend == Backend::automatic) a.options.backend = a.synthetic > 0 ? Backend::cuda : Backend::cpu;
    if (a.options.backend == Backend::cuda && !runtime::have_nccl())
      throw Unavailable("solve under mpirun --backend cuda: this build has no NCCL");
    if (a.options.backend == Backend::cuda && runtime::device_count() == 0)
      throw Unavailable("solve under mpirun --backend cuda: no usable CUDA device on rank " +
                        std::to_string(world.rank()));
    if (a.synthetic > 0 && a.options.backend != Backend::cuda)
      throw InvalidInput("--synthetic makes the system on the GPUs: --backend cuda");
    if (!available(a.options.variant, a.options.backend))
      throw Unavailable("variant " + a.variant_name + " is not available on the " +
                        std::string(to_string(a.options.backend)) + " backend");
    if (a.synthetic > 0) {
      if (a.synthetic > std::numeric_limits<int>::max())
        throw InvalidInput("--synthetic " + std::to_string(a.synthetic) + " exceeds 2^31 - 1");
      shape.n = a.synthetic;
      shape.nrhs = 1;
      if (speaks && !a.output.empty()) prepare_output(a.output, a.output_rule);
      return;
    }
    if (!is_hdf5_file(a.input) && std::filesystem::exists(a.input))
      throw InvalidInput(a.input + ": under mpirun, solve reads an HDF5 system file, each rank its blocks; make one "
                                   "with `tcsolve import --mtx " + a.input + " --output SYS.h5`");
    shape = inspect_system(a.input, a.layout);
    if (shape.n > std::numeric_limits<int>::max() || shape.nrhs > std::numeric_limits<int>::max())
      throw InvalidInput(a.input + ": A: order " + std::to_string(shape.n) + " exceeds 2^31 - 1");
    if (speaks && !a.output.empty()) prepare_output(a.output, a.output_rule);
  });
  const int nrhs = static_cast<int>(shape.nrhs);
  const bool on_gpus = a.options.backend == Backend::cuda;
  const int nb = a.options.block_size > 0 ? a.options.block_size
                                          : (on_gpus ? default_block_size(Backend::cuda, shape.n) : kDefaultBlockSizeCpu);
  a.options.block_size = nb;
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(on_gpus ? runtime::Memory::device : runtime::Memory::host);
  SolveReport report{a.variant_name, false, a.options, {}};
  std::optional<Eigen::MatrixXd> x_true;
  bool b_is_vector = true;
  const std::string input = a.synthetic > 0 ? synthetic_name(a.synthetic, a.seed) : a.input;
  if (a.synthetic > 0) {  // made on the GPUs: no file, no host copy of A
    if (a.warmup) {
      SolveOptions warm = a.options;
      warm.max_iterations = 1;
      warm.fallback = false;
      solve_generated(static_cast<int>(shape.n), a.seed, warm, group, &grid);
    }
    report.result = solve_generated(static_cast<int>(shape.n), a.seed, a.options, group, &grid);
  } else {
    // this rank: its piece of A in FP64 (read) and FP32 (the LU), b, x, and the vectors of the
    // refinement (b, x, r, d and their FP32 copies, whole: about 8 n x nrhs doubles)
    RankSystem mine;
    read_rank_system(world, a.input, a.layout, grid, nb, shape, 12.0, 64.0 * shape.n * shape.nrhs, mine);
    const SystemPiece& piece = mine.piece;
    const DistributedSystem& sys = mine.system;
    x_true = piece.x_true;
    b_is_vector = piece.b_is_vector;
    try {
      if (a.warmup && on_gpus) {
        SolveOptions warm = a.options;
        warm.max_iterations = 1;
        warm.fallback = false;
        solve(sys, warm, group);
      }
      report.result = solve(sys, a.options, group);
    } catch (const InvalidInput& e) {  // an exactly singular A: name the file, as solve does alone
      if (std::string(e.what()).rfind("matrix is exactly singular", 0) == 0)
        throw runtime::Agreed<InvalidInput>(a.input + ": A: " + e.what());
      throw;
    }
  }
  SolveResult& s = report.result;
  if (x_true) s.forward_error = forward_error(s.x, *x_true);
  const bool finite = s.x.allFinite();
  std::string output = a.output;
  runtime::agreed(&world, [&] {
    if (!speaks) return;
    for (const std::string& warning : s.warnings) std::cerr << "solve: warning: " << warning << std::endl;
    if (!finite) {
      std::cerr << "solve: error: the solution is not finite (" << s.note << ")"
                << (output.empty() ? "" : "; nothing written to " + output) << std::endl;
      output.clear();
    }
    if (!output.empty()) {
      SolutionAttributes attributes;
      attributes.variant = a.variant_name;
      attributes.backend = to_string(s.backend);
      attributes.iterations = s.iterations;
      attributes.backward_error = s.backward_error;
      attributes.converged = s.converged;
      write_solution(output, s.x, b_is_vector && nrhs == 1, attributes, a.output_rule);
    }
  });
  if (speaks) {
    const std::string device = device_description(a.options.backend);
    if (a.json) {
      JsonWriter w(std::cout);
      w.begin_object()
          .field("command", "solve")
          .field("input", input)
          .field("n", shape.n)
          .field("nrhs", shape.nrhs)
          .field("warmup", false)
          .field("grid", grid_text(grid))
          .field("ranks", job.size)
          .field("group", group.describe());
      write_input_warnings(w, {});
      write_solve_members(w, report, device);
      finish_command_json(w);
    } else {
      print_solve_summary(input, shape.n, shape.nrhs, report, device, output,
                          ", on a " + grid_text(grid) + " grid of " + std::to_string(job.size) +
                              (on_gpus ? " GPU ranks" : " cpu ranks"));
    }
  }
  return s.converged && finite ? 0 : kExitNotConverged;
}

}  // namespace tcsolve::app
