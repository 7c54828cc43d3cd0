// `tcsolve solve`: reads a system, solves it with the mixed-precision LU solver (FP32 LU whose
// trailing updates run on the chosen GEMM variant, FP64 refinement) and reports the outcome;
// --output writes the solution (docs/architecture.md, "Solver", "Command line", "JSON": solve).
// Exit 3 when the solve did not converge (the result is still printed and written, flagged).
// Under mpirun -np P it runs the distributed solver as P ranks (solve_ranks.hpp).
#include <filesystem>
#include <climits>
#include <iostream>
#include <string>

#include "cli_util.hpp"
#include "commands.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "ranks.hpp"
#include "solve_report.hpp"
#include "solve_devices.hpp"
#include "solve_ranks.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"
#include "versions.hpp"

namespace tcsolve::app {
namespace {

constexpr int kExitNotConverged = 3;

void write_json(const std::string& input, const LinearSystem& sys, const std::vector<std::string>& input_warnings,
                const SolveReport& r, const std::string& device, bool warmup) {
  JsonWriter w(std::cout);
  w.begin_object()
      .field("command", "solve")
      .field("input", input)
      .field("n", sys.n())
      .field("nrhs", sys.nrhs())
      // one LU serves every column of b (each refined on its own): the factorization is shared
      .field("shared_lu", sys.nrhs() > 1)
      .field("warmup", warmup);
  write_input_warnings(w, input_warnings);
  write_solve_members(w, r, device);
  finish_command_json(w);
}

}  // namespace

int run_solve(int argc, char** argv) {
  const JobRanks job = job_ranks();
  std::string input, variant, output, grid, gpus;
  long long synthetic = 0, seed = 1;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("input", po::value(&input)->value_name("SYS.h5|M.mtx|A.npy|S.npz"),
       "the system (required unless --synthetic): an HDF5 file with datasets A (n x n) and b (n or "
       "n x nrhs: one LU shared by the nrhs columns, each refined on its own), and optionally the "
       "true solution x; or a Matrix Market matrix, .mtx or .mtx.gz (solved with x = ones, b = A x); "
       "or NumPy: a .npz with arrays A, b and optionally x (np.savez, np.savez_compressed), or a "
       ".npy matrix A with b from --rhs (alone: x = ones, b = A x); float64, float32 or integer, C "
       "or Fortran order (--layout does not apply)")
      ("synthetic", po::value(&synthetic)->value_name("N"),
       "instead of --input: the system `tcsolve generate --n N --seed S` writes (A, x ~ U(-1,1), "
       "b = A x, the same bits), made on the GPUs themselves, each its columns (no file, no host "
       "copy of A: systems beyond a disk or a host's memory); cuda only")
      ("seed", po::value(&seed)->value_name("S"), "--synthetic's seed (default 1, as generate's)")
      ("gpus", po::value(&gpus)->value_name("N|all|0,1"),
       "the distributed solver on this process' GPUs: the first N, all, or a list; one member per "
       "GPU on a 1 x N grid (column blocks), NCCL between them; cuda only")
      ("variant", po::value(&variant)->default_value("auto")->value_name("VARIANT"),
       ("GEMM variant of the LU's trailing updates: " + variant_names()).c_str());
  add_solver_options(options);
  long long fp64_below = kFp64BelowDefault;
  options.add_options()
      ("fp64-below", po::value(&fp64_below)->value_name("N"),
       "variant auto: solve systems with n < N by an FP64 LU refined in FP64 (the same criterion) "
       "instead of the FP32 LU; 0: never. Default: 3072 on cuda (the measured crossover: below it "
       "the FP64 LU is the faster), 0 on cpu (its variants are the mixed path's reference)")
      ("grid", po::value(&grid)->value_name("PxQ"),
       "under mpirun -np P*Q: the process grid of the distributed solver (ScaLAPACK's 2D "
       "block-cyclic layout, row-major rank order; default 1 x the ranks); alone: 1x1 only")
      ("output", po::value(&output)->value_name("X.h5"),
       "write x and the attributes variant, backend, iterations, backward_error, converged")
      ("force", "overwrite an existing --output file")
      ("warmup", "cuda: solve once untimed first, as compare does, so that the reported times leave "
       "out the libraries' start-up and the kernels' first loading (a fresh process pays tens of ms)")
      ("json", "print one JSON object on stdout (also on errors)")
      ("help", "print this help");
  // clang-format on
  add_rhs_option(options);
  add_layout_option(options);
  add_progress_option(options);
  po::variables_map vm;
  runtime::agreed(job.world.get(), [&] {
    try {
      vm = parse_options(argc, argv, options);
    } catch (const po::error& e) {  // under mpirun: agreed as a bad argument (exit 2)
      if (job.world == nullptr) throw;
      throw InvalidInput(std::string(e.what()) + " (see --help)");
    }
  });
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"solve", {}, {{{"input", "synthetic"}, true}}},
                "Solves A x = b: exact power-of-two equilibration, blocked LU with partial pivoting\n"
                "in FP32 whose trailing updates A22 -= L21*U12 run on the GEMM variant, then FP64\n"
                "iterative refinement until LAPACK dsgesv's test ||r|| <= sqrt(n) ||x|| ||A|| eps\n"
                "holds (stopping early when the correction stops shrinking), and an FP64 LU when it\n"
                "fails (unless --no-fallback). On the cpu backend the tensor-core variants are\n"
                "emulated: their LU costs 10-30x an fp32-simt LU, growing as n^3.\n"
                "Reports a 1-norm condition estimate from the LU and warns when the forward error\n"
                "cannot be trusted (condition x 2^-53 large), or when the file's x disagrees with a\n"
                "small backward error (ill-conditioning, or a column-major file: --layout).\n"
                "Exit codes: 0 converged, 2 invalid input (singular matrix included), 3 not\n"
                "converged (still printed and written, flagged; a non-finite x is never written),\n"
                "4 variant or backend unavailable.",
                options);
    return 0;
  }

  SolveOptions so;
  OutputOptions output_rule;
  runtime::agreed(job.world.get(), [&] {
    if (vm.count("synthetic") && vm.count("input"))
      throw InvalidInput("--synthetic and --input exclude each other: the system is made, or read");
    if (vm.count("synthetic") && synthetic < 1) throw InvalidInput("--synthetic needs an order N >= 1");
    if (vm.count("seed") && seed < 0) throw InvalidInput("--seed must be >= 0");
    if (vm.count("gpus") && gpus.empty()) throw InvalidInput("--gpus needs N, all or a list such as 0,1");
    if (vm.count("gpus") && job.size > 1) throw InvalidInput("--gpus runs in one process: under mpirun each rank takes its GPU");
    if (!vm.count("synthetic") && (!vm.count("input") || input.empty()))
      throw InvalidInput("--input is required (the system file), or --synthetic N");
    if (vm.count("rhs") && (vm.count("synthetic") || vm.count("gpus") || job.size > 1))
      throw InvalidInput(
          "--rhs goes with an --input .npy matrix solved in one process on one device "
          "(not with --synthetic, --gpus or mpirun)");
    so = solver_options(vm);
    so.variant = parse_variant(variant);
    if (vm.count("fp64-below")) {
      if (fp64_below < 0 || fp64_below > INT_MAX)
        throw InvalidInput("--fp64-below must be an integer in [0, " + std::to_string(INT_MAX) + "], got " +
                           std::to_string(fp64_below));
      so.fp64_below = static_cast<int>(fp64_below);
    }
    if (vm.count("output") && output.empty()) throw InvalidInput("--output needs a file name");
    if (job.size == 1 && vm.count("grid") && grid != "1x1")
      throw InvalidInput("--grid " + grid + " needs as many ranks: run under mpirun -np P*Q (one process: 1x1)");
    std::vector<std::string> inputs;
    for (const std::string& file : {input, rhs_option(vm)})
      if (!file.empty()) inputs.push_back(file);
    output_rule = output_options(vm.count("force") > 0, inputs);
  });
  if (job.size == 1 && (vm.count("gpus") || synthetic > 0)) {
    SolveDevicesArgs d;
    d.input = input;
    d.variant_name = variant;
    d.output = output;
    d.grid = grid;
    d.gpus = gpus;
    d.synthetic = synthetic;
    d.seed = static_cast<std::uint64_t>(seed);
    d.layout = layout_option(vm);
    d.options = so;
    d.output_rule = output_rule;
    d.progress = progress_mode(vm);
    d.json = vm.count("json") > 0;
    d.warmup = vm.count("warmup") > 0;
    return run_solve_devices(d);
  }
  if (job.size > 1)  // the distributed solver, this rank of the job
    return run_solve_ranks(job, SolveRanksArgs{input, variant, output, grid, layout_option(vm), so, output_rule,
                                               vm.count("json") > 0, synthetic, static_cast<std::uint64_t>(seed),
                                               vm.count("warmup") > 0});
  if (vm.count("output")) {
    if (output.empty()) throw InvalidInput("--output needs a file name");
    prepare_output(output, output_rule);  // refused before the solve, not after it
  }
  so.backend = choose_backend(so.backend);
  cuda::Context context;  // the command's: on cuda, its handles serve the solve (default stream)
  so.cuda_context = &context;
  if (!available(so.variant, so.backend))
    throw Unavailable("variant " + variant + " is not available on the " +
                      std::string(to_string(so.backend)) + " backend");

  Progress progress("solve", progress_mode(vm));
  std::vector<std::string> input_warnings;  // the Matrix Market reader's (printed by load_system)
  const LinearSystem sys = load_system(input, layout_option(vm), so.backend, so.fallback, progress,
                                       &input_warnings, rhs_option(vm));
  progress.step("n = " + std::to_string(sys.n()) + ", LU with " + variant + " trailing updates on " +
                std::string(to_string(so.backend)));
  const bool warmup = vm.count("warmup") > 0 && so.backend == Backend::cuda;
  if (warmup) {  // untimed, as compare's: one correction, no fallback, the same options otherwise
    progress.step("warm-up");
    const SolveOptions warm = warmup_options(so);
    solve_system(input, sys, warm);
  }
  if (so.backend == Backend::cpu && so.variant != Variant::fp32_simt && so.variant != Variant::fp64)
    so.progress = solve_progress(progress, "the cpu backend emulates " + variant +
                                               "'s tensor-core arithmetic: --variant fp32-simt is its fast path");
  else if (so.backend == Backend::cpu)
    so.progress = solve_progress(progress, "");
  SolveReport report{variant, false, so, solve_system(input, sys, so)};
  const SolveResult& s = report.result;
  const bool finite = s.x.allFinite();
  output = write_solve_output(s, variant, output, sys.b_is_vector && sys.nrhs() == 1, output_rule);
  const std::string device = device_description(s.backend);
  if (vm.count("json"))
    write_json(input, sys, input_warnings, report, device, warmup);
  else
    print_solve_summary(input, sys.n(), sys.nrhs(), report, device, output);
  return s.converged && finite ? 0 : kExitNotConverged;
}

}  // namespace tcsolve::app
