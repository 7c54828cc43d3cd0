// `tcsolve generate`: writes a randsvd (or U(-1,1)) test system to an HDF5 file
// (ARCHITECTURE.md, "Test inputs"; definitions in tcsolve/solver/generate.hpp). --backend picks
// where randsvd's U diag(sigma) V^T is formed (cpu: Eigen; cuda: cuSOLVER/cuBLAS on the GPU).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli_util.hpp"
#include "commands.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "versions.hpp"

namespace tcsolve::app {
namespace {

constexpr double kDefaultCond = 1e4;

std::string format_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

int run_generate(int argc, char** argv) {
  long long n = 0, seed = 1, nrhs = 1;
  double cond = kDefaultCond;
  std::string mode_name, output, backend_name;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("n", po::value(&n)->value_name("N"),
       ("order of A (required, 1.." + std::to_string(kMaxGeneratedOrder) + ")").c_str())
      ("cond", po::value(&cond)->default_value(kDefaultCond, "1e4")->value_name("C"),
       "2-norm condition number of A (>= 1; ignored by --mode random)")
      ("mode", po::value(&mode_name)->default_value("geometric")->value_name("geometric|arithmetic|clustered|random"),
       "singular values from 1 to 1/C: geometric | arithmetic | clustered (all 1 but the last); "
       "random: A ~ U(-1,1)")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of U, V (or A) and x")
      ("nrhs", po::value(&nrhs)->default_value(1)->value_name("K"), "right-hand sides (b is n x K; 1: a vector)")
      ("backend", po::value(&backend_name)->default_value("auto")->value_name("auto|cpu|cuda"),
       "auto | cpu | cuda: where randsvd's A is formed (auto: cuda when a usable GPU is present, "
       "else cpu). The random streams differ: one seed gives different U, V on cpu and cuda")
      ("output", po::value(&output)->value_name("F.h5"), "system file to write (required)")
      ("force", "overwrite an existing output file")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  // clang-format on
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"generate", {"n", "output"}, {}},
                "Writes a test system A x = b to an HDF5 file (datasets A, b and the true solution x,\n"
                "float64, row-major). randsvd: A = U diag(sigma) V^T with Haar-random orthogonal U, V\n"
                "and singular values sigma from 1 down to 1/C (LAPACK xLATMS modes); random: A ~\n"
                "U(-1,1). x ~ U(-1,1), b = A x in FP64.\n"
                "\n"
                "Backends (randsvd; random mode is generated on the host either way, the same file):\n"
                "  cpu   std::mt19937_64 Gaussians, Eigen Householder QR (U and V on two threads), the\n"
                "        product on several threads; O(n^3) on the host: 30 s at n = 4096 on 2 cores.\n"
                "        The reference: the systems of inputs/ were made with it.\n"
                "  cuda  Philox4x32-10 Gaussians, cuSOLVER dgeqrf + dorgqr, cuBLAS dgemm, in FP64 on the\n"
                "        GPU, copied back (3 n^2 doubles of device memory: 6 GiB at n = 16384).\n"
                "The two backends draw different random streams: the same seed gives a different A\n"
                "(with the same singular values) and x on cpu and on cuda. On one backend the same\n"
                "seed gives the same file (cuda: on the same GPU model and CUDA version). The file's\n"
                "description attribute and the output name the backend that generated it.",
                options);
    return 0;
  }

  if (!vm.count("n")) throw InvalidInput("--n is required (the order of the matrix)");
  const int order = positive_int("n", n);
  if (order > kMaxGeneratedOrder)
    throw InvalidInput("--n must be at most " + std::to_string(kMaxGeneratedOrder) + ", got " +
                       std::to_string(n));
  if (!std::isfinite(cond) || cond < 1)
    throw InvalidInput("--cond must be a finite number >= 1, got " + format_number(cond));
  if (mode_name != "geometric" && mode_name != "arithmetic" && mode_name != "clustered" &&
      mode_name != "random")
    throw InvalidInput("--mode must be geometric, arithmetic, clustered or random, got '" + mode_name + "'");
  const SpectrumMode mode = parse_spectrum_mode(mode_name);
  if (seed < 0) throw InvalidInput("--seed must be a non-negative integer, got " + std::to_string(seed));
  const int rhs_count = positive_int("nrhs", nrhs);
  if (!vm.count("output") || output.empty())
    throw InvalidInput("--output is required (the system file to write)");
  const OutputOptions output_rule = output_options(vm.count("force") > 0, {});
  const Backend requested = parse_backend(backend_name);
  prepare_output(output, output_rule);  // refuse before the (long, for large n) generation
  const Backend backend = choose_backend(requested);

  const bool randsvd = mode != SpectrumMode::random;
  {
    // Host: A, U and V with their QR workspaces (cpu randsvd: about 40 n^2 bytes at the peak,
    // freed before x and b are drawn); then A (random, or cuda randsvd's copied back), x and
    // b = A x (n x nrhs each), and the write: the HDF5 file built in memory (hdf5_file.hpp: all
    // disk I/O is ours, from HDF5's own buffer) with A, b and x in it, and the C-order copies
    // 32 MiB at a time (system_file.cpp): 18 n^2 + 32 n nrhs bytes and a margin (measured: 17.7
    // n^2 resident at n = 12000 with one right-hand side; with a copy of the image and
    // whole-matrix C-order copies it was 97.8 GB, 23.5 n^2, at n = 64512). b and x count: --n
    // 1000 --nrhs 2000000 (16 GB each) passed a check without them and was OOM-killed.
    // Device (cuda randsvd): 3 n^2 doubles.
    const double n2 = static_cast<double>(order) * order;
    const double rhs = static_cast<double>(order) * static_cast<double>(rhs_count);
    const double written = 18 * n2 + 32 * rhs + 512.0 * 1024 * 1024;
    const std::string what = "generate --n " + std::to_string(order) +
                             (rhs_count > 1 ? " --nrhs " + std::to_string(rhs_count) + " (b and x: " +
                                                  format_bytes(8 * rhs) + " each)"
                                            : std::string());
    require_host_memory(what, randsvd && backend == Backend::cpu ? std::max(40 * n2, written) : written);
    if (randsvd && backend == Backend::cuda) require_device_memory(what, 24 * n2 + 64.0 * 1024 * 1024);
  }
  Progress progress("generate", progress_mode(vm));
  progress.step("n = " + std::to_string(order) +
                (randsvd ? ", forming A on " + std::string(to_string(backend)) + " (two " + std::to_string(order) +
                               " x " + std::to_string(order) + " QR factorizations)"
                         : ", forming A ~ U(-1,1) on the host (random mode: the same on every backend)"));
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  const LinearSystem sys =
      generate_system(order, cond, mode, static_cast<std::uint64_t>(seed), rhs_count, backend);
  const auto t_generated = Clock::now();
  progress.step("writing " + output);
  write_system(output, sys, output_rule);
  const auto t_written = Clock::now();
  const double generate_s = std::chrono::duration<double>(t_generated - t_start).count();
  const double write_s = std::chrono::duration<double>(t_written - t_generated).count();

  if (vm.count("json")) {
    JsonWriter w(std::cout);
    w.begin_object().field("command", "generate").field("output", output).field("n", order);
    w.field_or_null("cond", randsvd, cond);
    w.field("mode", to_string(mode)).field("seed", seed).field("nrhs", rhs_count);
    w.field("backend", to_string(backend)).field("device", device_description(backend));
    w.key("time_s").begin_object().field("generate", generate_s).field("write", write_s).end_object();
    finish_command_json(w);
  } else {
    std::cout << "generate: wrote " << output << ": "
              << (randsvd ? "randsvd, n " + std::to_string(order) + ", cond " + format_number(cond) + ", " +
                                std::string(to_string(mode)) + " spectrum"
                          : "A ~ U(-1,1), n " + std::to_string(order))
              << ", seed " << seed << ", nrhs " << rhs_count << "; backend " << to_string(backend) << " ("
              << device_description(backend) << "), generated in " << fmt("%.3g", generate_s)
              << " s, written in " << fmt("%.3g", write_s) << " s\n";
  }
  return 0;
}

}  // namespace tcsolve::app
