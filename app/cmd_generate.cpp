// `tcsolve generate`: writes a randsvd (or U(-1,1)) test system to an HDF5 file
// (ARCHITECTURE.md, "Test inputs"; definitions in tcsolve/solver/generate.hpp).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli_util.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/system.hpp"

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
  std::string mode_name, output;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("n", po::value(&n)->value_name("N"),
       ("order of A (required, 1.." + std::to_string(kMaxGeneratedOrder) + ")").c_str())
      ("cond", po::value(&cond)->default_value(kDefaultCond, "1e4")->value_name("C"),
       "2-norm condition number of A (>= 1; ignored by --mode random)")
      ("mode", po::value(&mode_name)->default_value("geometric")->value_name("MODE"),
       "singular values from 1 to 1/C: geometric | arithmetic | clustered (all 1 but the last); "
       "random: A ~ U(-1,1)")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of U, V (or A) and x")
      ("nrhs", po::value(&nrhs)->default_value(1)->value_name("K"), "right-hand sides (b is n x K; 1: a vector)")
      ("output", po::value(&output)->value_name("F.h5"), "system file to write (required)")
      ("force", "overwrite an existing output file")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  // clang-format on
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout,
                "tcsolve generate --n N [--cond C] [--mode geometric|arithmetic|clustered|random]\n"
                "                        [--seed S] [--nrhs K] --output F.h5 [--force] [--json]",
                "Writes a test system A x = b to an HDF5 file (datasets A, b and the true solution x,\n"
                "float64, row-major). randsvd: A = U diag(sigma) V^T with Haar-random orthogonal U, V\n"
                "and singular values sigma from 1 down to 1/C (LAPACK xLATMS modes); random: A ~\n"
                "U(-1,1). x ~ U(-1,1), b = A x in FP64. The same seed gives the same file.",
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
  const bool force = vm.count("force") > 0;
  check_output_path(output, force);  // refuse before the (long, for large n) generation

  if (stderr_is_terminal() && order >= 2048)
    std::cerr << "generate: n = " << order << ", forming A (two " << order << " x " << order
              << " QR factorizations)" << std::endl;
  const LinearSystem sys = generate_system(order, cond, mode, static_cast<std::uint64_t>(seed), rhs_count);
  write_system(output, sys, force);

  const bool randsvd = mode != SpectrumMode::random;
  if (vm.count("json")) {
    JsonWriter w(std::cout);
    w.begin_object().field("command", "generate").field("output", output).field("n", order);
    w.key("cond");
    if (randsvd)
      w.value(cond);
    else
      w.null();
    w.field("mode", to_string(mode)).field("seed", seed).field("nrhs", rhs_count).end_object().finish();
  } else {
    std::cout << "generate: wrote " << output << ": "
              << (randsvd ? "randsvd, n " + std::to_string(order) + ", cond " + format_number(cond) + ", " +
                                std::string(to_string(mode)) + " spectrum"
                          : "A ~ U(-1,1), n " + std::to_string(order))
              << ", seed " << seed << ", nrhs " << rhs_count << '\n';
  }
  return 0;
}

}  // namespace tcsolve::app
