// `tcsolve compare`: solves one system with every selected GEMM variant and the baseline
// methods, and prints one table (ARCHITECTURE.md, "Solver", "JSON": compare). --csv writes the
// rows, --plot a PNG of backward error against iteration (through gnuplot).
// Exit 0 whether or not each method converged: non-convergence is a row of the table.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "solve_report.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/solver/system.hpp"

extern char** environ;

namespace tcsolve::app {
namespace {

// --- table ----------------------------------------------------------------------------------

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

void print_table(const std::string& input, const LinearSystem& sys, const std::string& backend,
                 const std::string& device, const std::vector<SolveReport>& rows,
                 const std::vector<std::string>& skipped) {
  std::cout << "compare " << input << ": n = " << sys.n() << ", nrhs = " << sys.nrhs() << ", " << backend
            << " (" << device << ")";
  if (!rows.empty() && !rows.front().baseline)
    std::cout << ", block size " << rows.front().options.block_size << ", "
              << to_string(rows.front().options.refinement) << " refinement";
  std::cout << "\n\n";
  const std::vector<std::pair<std::string, std::size_t>> columns = {
      {"method", 14},   {"resolved", 14}, {"iters", 6},  {"converged", 10}, {"fallback", 9},
      {"backward", 10}, {"forward", 10},  {"fact_s", 9}, {"refine_s", 9},   {"total_s", 9}};
  std::string header, rule;
  for (const auto& [name, width] : columns) {
    header += pad(name, width) + ' ';
    rule += std::string(width, '-') + ' ';
  }
  std::cout << header << '\n' << rule << '\n';
  for (const SolveReport& r : rows) {
    const SolveResult& s = r.result;
    const std::vector<std::string> cells = {r.name,
                                            r.baseline ? "-" : std::string(to_string(s.resolved_variant)),
                                            std::to_string(s.iterations),
                                            s.converged ? "yes" : "NO",
                                            s.fallback_used ? "yes" : "no",
                                            format_error(s.backward_error),
                                            format_error(s.forward_error),
                                            format_seconds(s.time_s.factorization),
                                            format_seconds(s.time_s.refinement),
                                            format_seconds(s.time_s.total)};
    for (std::size_t c = 0; c < cells.size(); ++c) std::cout << pad(cells[c], columns[c].second) << ' ';
    std::cout << '\n';
  }
  for (const std::string& name : skipped)
    std::cout << "\nskipped " << name << ": not available on the " << backend << " backend";
  if (!skipped.empty()) std::cout << '\n';
}

void write_json(const std::string& input, const LinearSystem& sys, const std::string& device,
                const std::vector<SolveReport>& rows, const std::vector<std::string>& skipped) {
  JsonWriter w(std::cout);
  w.begin_object()
      .field("command", "compare")
      .field("input", input)
      .field("n", sys.n())
      .field("nrhs", sys.nrhs());
  w.key("results").begin_array();
  for (const SolveReport& r : rows) {
    w.begin_object();
    write_solve_members(w, r, device);
    w.end_object();
  }
  w.end_array();
  w.key("skipped").begin_array();
  for (const std::string& name : skipped) w.value(name);
  w.end_array().end_object().finish();
}

// --- plot -----------------------------------------------------------------------------------

/// The executable `name` found on PATH, or nullopt.
std::optional<std::string> find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  return std::nullopt;
}

/// `text` as a single-quoted gnuplot string (a quote inside is doubled).
std::string gnuplot_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

/// Writes the histories and a gnuplot script to a temporary folder and runs gnuplot on them to
/// make `png`: backward error (log scale) against iteration, one line per method. Failures are
/// warnings on stderr (the table is the result; the plot an extra); the folder is kept then.
void plot_histories(const std::string& gnuplot, const std::string& png, const std::string& input,
                    const std::vector<SolveReport>& rows) {
  char dir_template[] = "/tmp/tcsolve_plot_XXXXXX";
  if (!::mkdtemp(dir_template)) {
    std::cerr << "compare: warning: cannot create a temporary folder for --plot; no plot" << std::endl;
    return;
  }
  const std::string dir = dir_template, data = dir + "/history.dat", script = dir + "/plot.gp";
  {
    std::ofstream out(data);
    for (const SolveReport& r : rows) {  // one gnuplot data block (index) per method
      out << "# " << r.name << "\n";
      for (std::size_t i = 0; i < r.result.history.size(); ++i) {
        const double e = r.result.history[i];
        if (e > 0 && std::isfinite(e)) out << i << ' ' << csv_number(e) << '\n';
      }
      out << "\n\n";
    }
    std::ofstream gp(script);
    gp << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "  set terminal pngcairo size 1000,650 noenhanced\n"
          "} else {\n"
          "  set terminal png size 1000,650 noenhanced\n"
          "}\n"
       << "set output " << gnuplot_quote(png) << "\n"
       << "set title " << gnuplot_quote("tcsolve compare " + input) << "\n"
       << "set logscale y\nset format y '%.0e'\nset grid\nset key outside right\n"
          "set xlabel 'iteration'\nset ylabel 'backward error'\nset xtics 1\n"
          "plot ";
    for (std::size_t i = 0; i < rows.size(); ++i)
      gp << (i ? ", \\\n     " : "") << gnuplot_quote(data) << " index " << i
         << " using 1:2 with linespoints title " << gnuplot_quote(rows[i].name);
    gp << '\n';
    if (!out || !gp) {
      std::cerr << "compare: warning: writing the plot data in " << dir << " failed; no plot" << std::endl;
      return;
    }
  }
  // gnuplot's stdout goes to stderr: stdout holds the table or the one JSON object.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = 0;
  std::string arg0 = "gnuplot", arg1 = script;
  char* args[] = {arg0.data(), arg1.data(), nullptr};
  int status = 0;
  const bool spawned = ::posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, args, environ) == 0;
  posix_spawn_file_actions_destroy(&actions);
  if (!spawned || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "compare: warning: gnuplot failed; its script and data are in " << dir << std::endl;
    return;
  }
  std::remove(data.c_str());
  std::remove(script.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace

int run_compare(int argc, char** argv) {
  std::string input, variants;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("input", po::value(&input)->value_name("SYS.h5"),
       "system file: datasets A (n x n), b (n or n x nrhs), optional x (required)")
      ("variants", po::value(&variants)->default_value("all")->value_name("LIST"),
       ("all (every variant the backend has), or a comma-separated list of: " + variant_names()).c_str());
  add_solver_options(options);
  options.add_options()
      ("csv", po::value<std::string>()->value_name("FILE"), "also write the rows as CSV to this file")
      ("plot", po::value<std::string>()->value_name("F.png"),
       "plot backward error against iteration per method (needs gnuplot; warns without it)")
      ("json", "print one JSON object on stdout")
      ("help", "print this help");
  // clang-format on
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout,
                "tcsolve compare --input SYS.h5 [--variants all|v1,v2] [--backend auto|cpu|cuda]\n"
                "                       [--block-size NB] [--refine classical|gmres] [--max-iter N]\n"
                "                       [--no-fallback] [--csv FILE] [--plot F.png] [--json]",
                "Solves one system with each selected GEMM variant in the LU's trailing updates\n"
                "(as `tcsolve solve` does) and with the baseline methods -- on the cpu, fp64-lu\n"
                "(Eigen FP64 PartialPivLU); on cuda, cusolver-dgetrf (FP64 dgetrf + dgetrs) and\n"
                "cuSOLVER's refinement solvers cusolver-dsgesv, -dhgesv, -dbgesv, -dxgesv -- and\n"
                "prints one table: iterations, convergence, fallback, backward and forward error,\n"
                "times (cuda: device times with A on the device; --json adds the phases). Variants\n"
                "the backend lacks are skipped from 'all' (named explicitly: exit 4).\n"
                "On the cpu backend the tensor-core variants are emulated: their LU costs O(n^3)\n"
                "emulated products (~n^3/3, times 3 terms for the split variants), 10-30x an\n"
                "fp32-simt LU (n = 900 on 2 cores: 0.2-0.8 s per variant, fp32-simt 0.03 s).\n"
                "On cuda every method first runs once untimed on the same system (variants: one\n"
                "correction, no fallback), so that no row pays kernel loading or library start-up.\n"
                "Exit 0 whether or not each method converged (see the table); 2 invalid input.",
                options);
    return 0;
  }

  if (!vm.count("input") || input.empty()) throw InvalidInput("--input is required (the system file)");
  SolveOptions so = solver_options(vm);
  const std::vector<Variant> selected = parse_variant_list(variants);
  const bool explicit_list = variants != "all";
  so.backend = choose_backend(so.backend);
  const std::string backend_name(to_string(so.backend));

  std::vector<Variant> run;
  std::vector<std::string> skipped;
  for (Variant v : selected) {
    if (available(v, so.backend)) {
      run.push_back(v);
    } else if (explicit_list) {
      throw Unavailable("variant " + std::string(to_string(v)) + " is not available on the " + backend_name +
                        " backend");
    } else {
      skipped.emplace_back(to_string(v));
    }
  }
  std::optional<CsvFile> csv;
  if (vm.count("csv")) {
    const std::string path = vm["csv"].as<std::string>();
    if (path.empty()) throw InvalidInput("--csv needs a file name");
    csv.emplace(path);
  }
  std::string plot, gnuplot;
  if (vm.count("plot")) {
    plot = vm["plot"].as<std::string>();
    if (plot.empty()) throw InvalidInput("--plot needs a file name");
    if (const auto found = find_program("gnuplot"))
      gnuplot = *found;
    else
      std::cerr << "compare: warning: gnuplot not found on PATH; no plot (install gnuplot)" << std::endl;
  }

  const LinearSystem sys = read_system(input);
  const bool progress = stderr_is_terminal();
  const std::vector<std::string> baselines = baseline_methods(so.backend);
  const std::size_t total = run.size() + baselines.size();
  std::vector<SolveReport> rows;
  if (so.backend == Backend::cuda) {
    // Warm-up, untimed, of every row at the system's own size: the first solve on a device pays
    // the libraries' start-up (cuSOLVER and cuBLAS handles, workspaces, the LU's streams), and
    // every kernel's first launch its loading (lazy module loading); cuBLAS and the LU pick
    // kernels by size, so a smaller warm-up leaves some of them to the timed run. With a warm-up
    // at n = 2 nb + 1, the first row at n = 16384 still paid 2-3 ms (session 5: auto's "update
    // wait" and "trsm rest" when it ran first, not when second). Variants: one correction, no
    // fallback; baselines: the whole call.
    SolveOptions warm = so;
    warm.max_iterations = 1;
    warm.fallback = false;
    for (Variant v : run) {
      if (progress) std::cerr << "compare: warm-up " << to_string(v) << std::endl;
      warm.variant = v;
      solve(sys, warm);
    }
    for (const std::string& method : baselines) {
      if (progress) std::cerr << "compare: warm-up " << method << std::endl;
      solve_baseline(sys, method);
    }
  }
  for (Variant v : run) {
    const std::string name(to_string(v));
    if (progress) std::cerr << "compare: [" << rows.size() + 1 << "/" << total << "] " << name << std::endl;
    SolveOptions o = so;
    o.variant = v;
    rows.push_back({name, false, o, solve(sys, o)});
  }
  for (const std::string& method : baselines) {
    if (progress) std::cerr << "compare: [" << rows.size() + 1 << "/" << total << "] " << method << std::endl;
    rows.push_back({method, true, so, solve_baseline(sys, method)});
  }

  const std::string device = device_description(so.backend);
  if (vm.count("json")) {
    for (const std::string& name : skipped)  // the table says it on stdout
      std::cerr << "compare: skipped " << name << ": not available on the " << backend_name << " backend"
                << std::endl;
    write_json(input, sys, device, rows, skipped);
  } else {
    print_table(input, sys, backend_name, device, rows, skipped);
  }
  if (csv) {
    csv->stream() << csv_header();
    for (const SolveReport& r : rows) csv->stream() << csv_row(r, device, sys.n(), sys.nrhs());
    csv->commit();
  }
  if (!gnuplot.empty()) plot_histories(gnuplot, plot, input, rows);
  return 0;
}

}  // namespace tcsolve::app
