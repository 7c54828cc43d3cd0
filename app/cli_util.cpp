#include "cli_util.hpp"

#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <utility>
#include <vector>

#include "signals.hpp"

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

Backend choose_backend(Backend requested) {
  if (requested == Backend::cuda && !cuda::device_available())
    throw Unavailable("--backend cuda: no usable CUDA device here; use --backend cpu or auto");
  const Backend b = resolve_backend(requested);
  if (requested == Backend::automatic && b == Backend::cpu)
    std::cerr << "tcsolve: no usable CUDA device, using the cpu backend" << std::endl;
  return b;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + '"';
}

std::string csv_number(double x) {
  if (std::isnan(x)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

OutputOptions output_options(bool force, std::vector<std::string> inputs) {
  OutputOptions options;
  options.force = force;
  options.inputs = std::move(inputs);
  options.temporaries = &temporaries();
  return options;
}

void prepare_output(const std::string& path, const OutputOptions& options) {
  warn_stale_temporaries(check_output(path, options));
}

void warn_stale_temporaries(const std::vector<StaleTemporary>& stale) {
  static std::set<std::string> warned;  // two outputs in one folder: each file named once
  for (const StaleTemporary& t : stale)
    if (warned.insert(t.path).second)
      std::cerr << "tcsolve: warning: " << t.path << " is left over from a killed tcsolve run (process " << t.pid
                << "); remove it" << std::endl;
}

CsvFile::CsvFile(std::string path, const OutputOptions& options) : file_(path, options) {
  warn_stale_temporaries(file_.stale_temporaries());
}

void CsvFile::commit() {
  const std::string text = out_.str();
  file_.write(text.data(), text.size());
  file_.publish();
}

std::string fmt(const char* format, double x) {
  if (std::isnan(x)) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

}  // namespace tcsolve::app
