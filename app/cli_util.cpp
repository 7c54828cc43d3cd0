#include "cli_util.hpp"

#include <unistd.h>

#include <climits>
#include <fstream>
#include <vector>

#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/gemm.hpp"

namespace tcsolve::app {

po::variables_map parse_options(int argc, char** argv, const po::options_description& options) {
  namespace style = po::command_line_style;
  // Prefix guessing off: "--m" must never silently become "--max-iter" as options are added.
  const int cli_style = style::default_style & ~style::allow_guessing;
  // No positional arguments: a stray word is an error naming it, not silently ignored.
  po::options_description all;
  all.add(options).add_options()("tcsolve-unexpected", po::value<std::vector<std::string>>());
  po::positional_options_description positionals;
  positionals.add("tcsolve-unexpected", -1);
  po::variables_map vm;
  // command_line_parser(argc, argv) skips argv[0] (here the subcommand's name).
  po::store(po::command_line_parser(argc, argv)
                .options(all)
                .positional(positionals)
                .style(cli_style)
                .run(),
            vm);
  if (vm.count("tcsolve-unexpected"))
    throw InvalidInput("unexpected argument '" +
                       vm["tcsolve-unexpected"].as<std::vector<std::string>>().front() +
                       "' (options start with --; see --help)");
  po::notify(vm);
  return vm;
}

void print_usage(std::ostream& out, std::string_view usage, std::string_view summary,
                 const po::options_description& options) {
  out << "Usage: " << usage << "\n\n" << summary << "\n\n" << options << '\n';
}

int positive_int(std::string_view name, long long value) {
  if (value < 1 || value > INT_MAX)
    throw InvalidInput("--" + std::string(name) + " must be a positive integer (at most " +
                       std::to_string(INT_MAX) + "), got " + std::to_string(value));
  return static_cast<int>(value);
}

std::string host_cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    if (start == std::string::npos) break;
    return line.substr(start);
  }
  return "host cpu";
}

std::string device_description(Backend backend) {
  return backend == Backend::cuda ? cuda::device_name() : host_cpu_name();
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace tcsolve::app
