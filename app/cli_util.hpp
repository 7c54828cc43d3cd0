// Helpers shared by the subcommands: one way to parse options, print --help, check numbers
// and name the device.
#pragma once

#include <boost/program_options.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "tcsolve/gemm/variant.hpp"

namespace tcsolve::app {

namespace po = boost::program_options;

/// Parses argv[1..argc) against `options` (long options only, no prefix guessing, no
/// positional arguments) and runs notify. Throws po::error on unknown or malformed options.
po::variables_map parse_options(int argc, char** argv, const po::options_description& options);

/// "Usage: <usage>\n\n<summary>\n\n<options>" on `out`.
void print_usage(std::ostream& out, std::string_view usage, std::string_view summary,
                 const po::options_description& options);

/// `value` of option `--name` as an int in [1, INT_MAX]; throws InvalidInput
/// ("--m must be a positive integer, got -5") otherwise.
int positive_int(std::string_view name, long long value);

/// Model name of the host CPU (from /proc/cpuinfo), "host cpu" when unknown.
std::string host_cpu_name();

/// What `backend` (resolved: cpu or cuda) runs on: the CUDA device's name or the host CPU's.
std::string device_description(Backend backend);

/// Whether progress lines should go to stderr (it is a terminal).
bool stderr_is_terminal();

}  // namespace tcsolve::app
