#include "cli_util.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "signals.hpp"

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/error.hpp"

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

namespace {

std::size_t synopsis_only_width = 0;  ///< set_synopsis_only: print_usage prints the synopsis alone

/// "--name VALUE" or "--name" for one option of the table.
std::string synopsis_item(const po::option_description& o) {
  const std::string flag = "--" + o.long_name();
  if (o.semantic()->max_tokens() == 0) return flag;
  std::string value = o.semantic()->name();
  if (const std::size_t d = value.find(" (="); d != std::string::npos) value.erase(d);  // " (=default)"
  if (value.empty() || value == "arg")
    throw std::logic_error("option " + flag + " has no value_name: its help would read 'arg'");
  return flag + ' ' + value;
}

}  // namespace

std::vector<std::string> synopsis_lines(const Synopsis& synopsis, const po::options_description& options,
                                        std::size_t head_width, std::size_t line_width) {
  const auto find = [&](const std::string& name) -> const po::option_description& {
    for (const auto& o : options.options())
      if (o->long_name() == name) return *o;
    throw std::logic_error("synopsis of " + synopsis.command + ": no option --" + name + " in its table");
  };
  for (const std::string& name : synopsis.required) find(name);
  std::vector<std::string> items;
  std::set<std::string> done;
  for (const auto& o : options.options()) {
    const std::string& name = o->long_name();
    if (name == "help" || done.count(name)) continue;
    const Synopsis::Group* group = nullptr;
    for (const Synopsis::Group& g : synopsis.groups)
      if (std::find(g.options.begin(), g.options.end(), name) != g.options.end()) group = &g;
    if (group) {
      std::string text;
      for (const std::string& member : group->options) {
        text += (text.empty() ? "" : " | ") + synopsis_item(find(member));
        done.insert(member);
      }
      items.push_back(group->required ? "(" + text + ")" : "[" + text + "]");
      continue;
    }
    const bool required =
        std::find(synopsis.required.begin(), synopsis.required.end(), name) != synopsis.required.end();
    items.push_back(required ? synopsis_item(*o) : "[" + synopsis_item(*o) + "]");
    done.insert(name);
  }
  std::string head = "tcsolve " + synopsis.command;
  head.resize(std::max(head_width, head.size() + 1), ' ');
  std::vector<std::string> lines{head};
  bool first = true;  // the line holds no item yet
  for (const std::string& item : items) {
    if (!first && lines.back().size() + 1 + item.size() > line_width) {
      lines.push_back(std::string(head.size(), ' '));
      first = true;
    }
    lines.back() += (first ? "" : " ") + item;
    first = false;
  }
  return lines;
}

void print_usage(std::ostream& out, const Synopsis& synopsis, std::string_view summary,
                 const po::options_description& options) {
  if (synopsis_only_width > 0) {
    for (const std::string& line : synopsis_lines(synopsis, options, synopsis_only_width)) out << line << '\n';
    return;
  }
  const std::string prefix = "Usage: ";
  const std::vector<std::string> lines =
      synopsis_lines(synopsis, options, 0, 100 - prefix.size());  // continuation lines indented below
  out << prefix << lines.front() << '\n';
  for (std::size_t i = 1; i < lines.size(); ++i) out << std::string(prefix.size(), ' ') << lines[i] << '\n';
  out << '\n' << summary << "\n\n" << options << '\n';
}

void print_usage(std::ostream& out, std::string_view usage, std::string_view summary,
                 const po::options_description& options) {
  // "tcsolve <command> ..." : the command, and the options outside [ ] (depth 0) are required.
  Synopsis synopsis;
  std::istringstream words{std::string(usage)};
  std::string word;
  words >> word >> synopsis.command;
  int depth = 0;
  while (words >> word) {
    if (depth == 0 && word.rfind("--", 0) == 0) synopsis.required.push_back(word.substr(2));
    for (char c : word) depth += c == '[' ? 1 : c == ']' ? -1 : 0;
  }
  print_usage(out, synopsis, summary, options);
}

void set_synopsis_only(std::size_t head_width) { synopsis_only_width = head_width; }

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

void CsvFile::write() {
  const std::string text = out_.str();
  file_.write(text.data(), text.size());
}

void CsvFile::publish() { file_.publish(); }

void CsvFile::commit() {
  write();
  publish();
}

std::string fmt(const char* format, double x) {
  if (std::isnan(x)) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

}  // namespace tcsolve::app
