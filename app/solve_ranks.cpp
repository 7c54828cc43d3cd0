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
    if (!is_hdf5_file(a.input) && std::filesystem::exists(a.input)) {
      const std::string ext = std::filesystem::path(a.input).extension().string();
      const bool numpy = ext == ".npy" || ext == ".npz";
      throw InvalidInput(a.input + ": under mpirun, solve reads an HDF5 system file, each rank its blocks; " +
                         (numpy ? std::string("write A and b as HDF5 datasets A and b (h5py), or solve the NumPy "
                                              "file in one process (tcsolve solve --input " + a.input + ")")
                                : "make one with `tcsolve import --mtx " + a.input + " --output SYS.h5`"));
    }
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
      const SolveOptions warm = warmup_options(a.options);
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
        const SolveOptions warm = warmup_options(a.options);
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
    if (speaks) output = write_solve_output(s, a.variant_name, output, b_is_vector && nrhs == 1, a.output_rule);
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
