// Helpers shared by the subcommands: one way to parse options, print --help, check numbers,
// name the device, choose the backend, and write files by the output rule (CSV files among them).
#pragma once

#include <boost/program_options.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/io/output_file.hpp"

namespace tcsolve::app {

namespace po = boost::program_options;

/// Parses argv[1..argc) against `options` (long options only, no prefix guessing, no
/// positional arguments) and runs notify. Throws po::error on unknown or malformed options.
po::variables_map parse_options(int argc, char** argv, const po::options_description& options);

/// How a subcommand's synopsis shows its options. The synopsis itself is generated from the
/// option table (synopsis_lines), so that it names every option the command takes: each option in
/// table order but --help, "--name VALUE" (VALUE the option's value_name) or "--name" for a
/// switch, in [ ] unless it is named in `required`; the options of a group are shown together at
/// the first one's place, "(--a A | --b B)" when exactly one of them is required, "[--a | --b]"
/// when at most one may be given.
struct Synopsis {
  struct Group {
    std::vector<std::string> options;
    bool required = false;
  };
  std::string command;                ///< "solve"
  std::vector<std::string> required;  ///< options shown without brackets
  std::vector<Group> groups;
};

/// The synopsis of `tcsolve <command>` from the option table: "tcsolve <command>" padded to
/// `head_width` characters (at least its length plus one space), then the options, wrapped
/// before `line_width` columns onto lines indented by `head_width` (+ `indent`). Throws
/// std::logic_error for an option with a value but no value_name (Boost's "arg"), or for a
/// name in `synopsis` that the table lacks.
std::vector<std::string> synopsis_lines(const Synopsis& synopsis, const po::options_description& options,
                                        std::size_t head_width = 0, std::size_t line_width = 100);

/// "Usage: <synopsis>\n\n<summary>\n\n<options>" on `out`, the synopsis generated from `options`.
void print_usage(std::ostream& out, const Synopsis& synopsis, std::string_view summary,
                 const po::options_description& options);
/// The same for a synopsis written by hand ("tcsolve import --mtx M.mtx [--rhs ones|random] ..."):
/// only its command and which options stand outside [ ] (the required ones) are read from it;
/// the synopsis printed is generated from `options` as above.
void print_usage(std::ostream& out, std::string_view usage, std::string_view summary,
                 const po::options_description& options);

/// `tcsolve help-synopsis`: from now on print_usage prints the synopsis alone, in the layout of
/// the synopsis block of docs/guide/cli.md ("tcsolve <command>" padded to `head_width`).
void set_synopsis_only(std::size_t head_width);

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

/// The output rule's options for one of a command's files (tcsolve/io/output_file.hpp):
/// `force` (its --force), the command's input files, and the app's registry of temporaries
/// (signals.hpp), so that SIGINT or SIGTERM leaves none behind.
OutputOptions output_options(bool force, std::vector<std::string> inputs);

/// Checks `path` by the output rule before the command's work (refusals throw InvalidInput,
/// exit 2) and names on stderr the temporaries killed runs left beside it
/// (warn_stale_temporaries).
void prepare_output(const std::string& path, const OutputOptions& options);

/// "tcsolve: warning: <file> is left over from a killed tcsolve run (process N); remove it" on
/// stderr, once per file and process.
void warn_stale_temporaries(const std::vector<StaleTemporary>& stale);

/// A CSV output (--csv FILE) by the output rule: its temporary is created beside FILE before
/// the work runs, so that a refused or unwritable path fails fast; the rows are kept in memory
/// and written, synced and published by commit(); never committed, the temporary is removed.
class CsvFile {
 public:
  /// Throws InvalidInput when the rule refuses `path`; warns of stale temporaries beside it.
  explicit CsvFile(std::string path, const OutputOptions& options = output_options(false, {}));
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  std::ostream& stream() { return out_; }
  /// Writes the rows into the temporary; throws InvalidInput when writing failed (a full disk).
  void write();
  /// Publishes the file; throws InvalidInput when that failed or (without force) another process
  /// created the file meanwhile.
  void publish();
  /// write(), then publish().
  void commit();

 private:
  std::ostringstream out_;
  TemporaryOutput file_;
};

/// x printed with printf `format`, or "n/a" when x is NaN (a missing measurement).
std::string fmt(const char* format, double x);

}  // namespace tcsolve::app
