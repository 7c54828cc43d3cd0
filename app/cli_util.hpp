// Helpers shared by the subcommands: one way to parse options, print --help, check numbers,
// name the device, choose the backend and write CSV files.
#pragma once

#include <boost/program_options.hpp>
#include <fstream>
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

/// The backend that will run (cpu or cuda): `auto` falls back to cpu without a usable GPU, said
/// once on stderr ("tcsolve: no usable CUDA device, using the cpu backend"); an explicit cuda
/// without a device throws Unavailable.
Backend choose_backend(Backend requested);

/// Whether progress lines should go to stderr (it is a terminal).
bool stderr_is_terminal();

/// `s` as one CSV field: quoted (quotes doubled) when it holds a comma, quote or line break.
std::string csv_field(std::string_view s);
/// %.17g, or an empty field for NaN.
std::string csv_number(double x);

/// A CSV output (--csv FILE): opened as a temporary beside FILE before the work runs, so that an
/// unwritable path fails fast; renamed over FILE by commit() only when complete, removed if
/// never committed.
class CsvFile {
 public:
  explicit CsvFile(std::string path);
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  ~CsvFile();
  std::ostream& stream() { return out_; }
  /// Closes and renames; throws Error when writing failed.
  void commit();

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

/// x printed with printf `format`, or "n/a" when x is NaN (a missing measurement).
std::string fmt(const char* format, double x);

}  // namespace tcsolve::app
