// `tcsolve import`: a Matrix Market matrix turned into an HDF5 system with a known solution,
// x = ones or U(-1,1) and b = A x (tcsolve/io/matrix_market.hpp, import_matrix_market); the
// reader's warnings on stderr ("tcsolve: warning: ...") and in --json's "warnings".
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "tcsolve/io/matrix_market.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "versions.hpp"

namespace tcsolve::app {

int run_import(int argc, char** argv) {
  long long seed = 1;
  std::string mtx, rhs_name, output;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("mtx", po::value(&mtx)->value_name("M.mtx"),
       "Matrix Market file (required; .mtx, or gzip-compressed .mtx.gz): square; coordinate or "
       "array; real or integer; general, symmetric or skew-symmetric")
      ("rhs", po::value(&rhs_name)->default_value("ones")->value_name("KIND"),
       "true solution x: ones | random (U(-1,1)); b = A x in FP64")
      ("seed", po::value(&seed)->default_value(1)->value_name("S"), "seed of x for --rhs random")
      ("output", po::value(&output)->value_name("SYS.h5"), "system file to write (required)")
      ("force", "overwrite an existing output file")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  // clang-format on
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout,
                "tcsolve import --mtx M.mtx [--rhs ones|random] [--seed S] --output SYS.h5 "
                "[--force] [--json]",
                "Reads a Matrix Market matrix as a dense A (symmetric files expanded) and writes the\n"
                "system A x = b to an HDF5 file (datasets A, b and the true solution x, float64,\n"
                "row-major; attribute description names the source file).",
                options);
    return 0;
  }

  if (!vm.count("mtx") || mtx.empty()) throw InvalidInput("--mtx is required (the Matrix Market file)");
  if (rhs_name != "ones" && rhs_name != "random")
    throw InvalidInput("--rhs must be ones or random, got '" + rhs_name + "'");
  const RhsKind rhs = parse_rhs_kind(rhs_name);
  if (seed < 0) throw InvalidInput("--seed must be a non-negative integer, got " + std::to_string(seed));
  if (!vm.count("output") || output.empty())
    throw InvalidInput("--output is required (the system file to write)");
  const OutputOptions output_rule = output_options(vm.count("force") > 0, {mtx});  // never the --mtx
  prepare_output(output, output_rule);

  // A held dense, then the write (the HDF5 image in memory, its C-order buffer, the bytes).
  if (const std::int64_t n = matrix_market_order(mtx); n > 0)
    require_host_memory(mtx + ": n = " + std::to_string(n) + " held dense and written",
                        32.0 * static_cast<double>(n) * static_cast<double>(n));
  Progress progress("import", progress_mode(vm));
  progress.step("reading " + mtx);
  std::vector<std::string> warnings;
  const LinearSystem sys = import_matrix_market(mtx, rhs, static_cast<std::uint64_t>(seed), &warnings);
  print_warnings(warnings);  // before the write: a refused output still shows what was suspicious
  progress.step("writing " + output);
  write_system(output, sys, output_rule);

  if (vm.count("json")) {
    JsonWriter w(std::cout);
    w.begin_object()
        .field("command", "import")
        .field("mtx", mtx)
        .field("output", output)
        .field("n", sys.n())
        .field("rhs", to_string(rhs));
    w.field_or_null("seed", rhs == RhsKind::random, seed);
    w.field("description", sys.description);
    w.key("warnings").begin_array();
    for (const std::string& warning : warnings) w.value(warning);
    w.end_array();
    finish_command_json(w);
  } else {
    std::cout << "import: wrote " << output << ": " << sys.description << '\n';
  }
  return 0;
}

}  // namespace tcsolve::app
