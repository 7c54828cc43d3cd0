// `tcsolve compare`: solves one system with every selected GEMM variant and the baseline
// methods, and prints one table (ARCHITECTURE.md, "Solver", "JSON": compare). --csv writes the
// rows, --plot a PNG of backward error against iteration (through gnuplot), both by the output
// rule (tcsolve/io/output_file.hpp).
// Exit 0 whether or not each method converged: non-convergence is a row of the table.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "solve_report.hpp"
#include "versions.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/io/system_file.hpp"

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
    std::cout << ", block size " << rows.front().result.block_size << ", "
              << to_string(rows.front().options.refinement) << " refinement";
  std::cout << "\n\n";
  const std::vector<std::pair<std::string, std::size_t>> columns = {
      {"method", 14},   {"resolved", 14}, {"iters", 6},  {"converged", 10}, {"fallback", 9},
      {"backward", 10}, {"forward", 10},  {"cond", 10}, {"fact_s", 9}, {"refine_s", 9}, {"total_s", 9}};
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
                                            format_error(s.condition_estimate),
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
  w.end_array();
  finish_command_json(w);
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

/// Where a backward error of 0 (an exact solution) is drawn on the log axis: 1e-20, or a decade
/// below the smallest positive error when that is smaller, so that no method loses its points.
double zero_floor(const std::vector<SolveReport>& rows) {
  double floor = 1e-20;
  for (const SolveReport& r : rows)
    for (const double e : r.result.history)
      if (e > 0 && std::isfinite(e)) floor = std::min(floor, e / 10);
  return floor;
}

/// Makes the PNG `png` (its temporary, created before the solves) with gnuplot: backward error
/// (log scale) against iteration, one line per method; NaN and inf are left out, 0 is drawn at
/// zero_floor. The script and its data reach gnuplot on stdin from an unnamed temporary file
/// (nothing named on disk), and gnuplot writes the image into the temporary through
/// /dev/fd/3, so that a signal that removes the temporary leaves nothing behind even while
/// gnuplot runs. Failures are warnings on stderr (the table is the result; the plot an extra)
/// and remove the temporary: never an empty or partial PNG. Publishing follows the output rule
/// (InvalidInput when another run created the file meanwhile).
void plot_histories(const std::string& gnuplot, TemporaryOutput& png, const std::string& input,
                    const std::vector<SolveReport>& rows) {
  const auto give_up = [&](const std::string& why) {
    std::cerr << "compare: warning: " << why << "; no plot" << std::endl;
    png.discard();
  };
  const double floor = zero_floor(rows);
  bool clamped = false;
  std::string data, plot;
  for (const SolveReport& r : rows) {  // one inline data block ('-') per method with points
    std::string block;
    for (std::size_t i = 0; i < r.result.history.size(); ++i) {
      const double e = r.result.history[i];
      if (!std::isfinite(e) || e < 0) continue;
      clamped = clamped || e == 0;
      block += std::to_string(i) + ' ' + csv_number(e > 0 ? e : floor) + '\n';
    }
    if (block.empty()) continue;
    plot += std::string(plot.empty() ? "plot " : ", \\\n     ") + "'-' using 1:2 with linespoints title " +
            gnuplot_quote(r.name);
    data += block + "e\n";
  }
  if (plot.empty()) return give_up("no method has a finite backward error to plot");
  std::error_code ec;
  const std::string target = std::filesystem::is_directory("/dev/fd", ec) ? "/dev/fd/3" : png.temporary();
  const std::string title =
      "tcsolve compare " + input + (clamped ? " (backward error 0 drawn at " + fmt("%g", floor) + ")" : "");
  const std::string script = std::string("if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                                         "  set terminal pngcairo size 1000,650 noenhanced\n"
                                         "} else {\n"
                                         "  set terminal png size 1000,650 noenhanced\n"
                                         "}\n") +
                             "set output " + gnuplot_quote(target) + "\n" + "set title " + gnuplot_quote(title) +
                             "\n" +
                             "set logscale y\nset format y '%.0e'\nset grid\nset key outside right\n"
                             "set xlabel 'iteration'\nset ylabel 'backward error'\nset xtics 1\n" +
                             plot + "\n" + data + "unset output\n";

  // stdin: the script in an unnamed file; stdout: our stderr (stdout holds the table or the
  // one JSON object); fd 3: the temporary.
  std::FILE* in = std::tmpfile();
  if (!in || std::fwrite(script.data(), 1, script.size(), in) != script.size() || std::fflush(in) != 0 ||
      ::lseek(::fileno(in), 0, SEEK_SET) != 0) {
    if (in) std::fclose(in);
    return give_up("cannot write the gnuplot script to a temporary file");
  }
  const int out = ::fcntl(png.fd(), F_DUPFD_CLOEXEC, 10);  // above 3, whatever fd in holds
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ::fileno(in), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  if (out >= 0) posix_spawn_file_actions_adddup2(&actions, out, 3);
  pid_t pid = 0;
  std::string arg0 = "gnuplot";
  char* args[] = {arg0.data(), nullptr};
  int status = 0;
  const bool spawned = out >= 0 && ::posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, args, environ) == 0;
  posix_spawn_file_actions_destroy(&actions);
  const bool ran = spawned && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::fclose(in);
  if (out >= 0) ::close(out);
  struct stat st {};
  if (!ran) return give_up("gnuplot failed");
  if (::fstat(png.fd(), &st) != 0 || st.st_size == 0) return give_up("gnuplot wrote an empty image");
  png.publish();
}

}  // namespace

int run_compare(int argc, char** argv) {
  std::string input, variants;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("input", po::value(&input)->value_name("SYS.h5|M.mtx"),
       "system file: datasets A (n x n), b (n or n x nrhs), optional x (required); or a Matrix "
       "Market matrix (solved with x = ones, b = A x)")
      ("variants", po::value(&variants)->default_value("all")->value_name("LIST"),
       ("all (every variant the backend has), or a comma-separated list of: " + variant_names()).c_str());
  add_solver_options(options);
  options.add_options()
      ("csv", po::value<std::string>()->value_name("FILE"), "also write the rows as CSV to this file")
      ("plot", po::value<std::string>()->value_name("F.png"),
       "plot backward error against iteration per method (needs gnuplot; warns without it)")
      ("force", "overwrite existing --csv and --plot files")
      ("json", "print one JSON object on stdout (also on errors)")
      ("help", "print this help");
  // clang-format on
  add_layout_option(options);
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout,
                "tcsolve compare --input SYS.h5 [--variants all|v1,v2] [--backend auto|cpu|cuda]\n"
                "                       [--block-size NB] [--refine classical|gmres|auto] [--pivoting partial|rbt|auto] [--rbt-window W] [--max-iter N]\n"
                "                       [--no-fallback] [--layout row-major|column-major] [--csv FILE]\n"
                "                       [--plot F.png] [--force] [--progress auto|always|never] [--json]",
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
  cuda::Context context;  // the command's: on cuda, one set of handles and streams for every row
  so.cuda_context = &context;
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
  // --csv and --plot by the output rule, their temporaries created now: refusals come first.
  const OutputOptions output_rule = output_options(vm.count("force") > 0, {input});
  const std::string csv_path = vm.count("csv") ? vm["csv"].as<std::string>() : "";
  const std::string plot = vm.count("plot") ? vm["plot"].as<std::string>() : "";
  if (vm.count("csv") && csv_path.empty()) throw InvalidInput("--csv needs a file name");
  if (vm.count("plot") && plot.empty()) throw InvalidInput("--plot needs a file name");
  if (!csv_path.empty() && !plot.empty() && same_file(csv_path, plot))
    throw InvalidInput(plot + ": named by both --csv and --plot");
  std::optional<CsvFile> csv;
  if (!csv_path.empty()) csv.emplace(csv_path, output_rule);
  std::string gnuplot;
  std::optional<TemporaryOutput> png;
  if (!plot.empty()) {
    prepare_output(plot, output_rule);
    if (const auto found = find_program("gnuplot")) {
      gnuplot = *found;
      png.emplace(plot, output_rule);
    } else {
      std::cerr << "compare: warning: gnuplot not found on PATH; no plot (install gnuplot)" << std::endl;
    }
  }

  Progress progress("compare", progress_mode(vm));
  const LinearSystem sys = load_system(input, layout_option(vm), so.backend, so.fallback, progress);
  const std::vector<std::string> baselines = baseline_methods(so.backend);
  const std::size_t total = run.size() + baselines.size();
  std::vector<SolveReport> rows;
  if (so.backend == Backend::cuda) {
    // Warm-up, untimed, of every row at the system's own size: the first solve on a device pays
    // the libraries' start-up (cuSOLVER and cuBLAS handles, workspaces, the LU's streams), and
    // every kernel's first launch its loading (lazy module loading); cuBLAS and the LU pick
    // kernels by size, so a smaller warm-up leaves some of them to the timed run. With a warm-up
    // at n = 2 nb + 1, the first row at n = 16384 still paid 2-3 ms (session 5: auto's
    // "update_wait" and "trsm_rest" when it ran first, not when second). Variants: one correction, no
    // fallback; baselines: the whole call.
    SolveOptions warm = so;
    warm.max_iterations = 1;
    warm.fallback = false;
    for (Variant v : run) {
      progress.step("warm-up " + std::string(to_string(v)));
      warm.variant = v;
      solve_system(input, sys, warm);
    }
    for (const std::string& method : baselines) {
      progress.step("warm-up " + method);
      solve_baseline_system(input, sys, method, &context);
    }
  }
  for (Variant v : run) {
    const std::string name(to_string(v));
    progress.step("[" + std::to_string(rows.size() + 1) + "/" + std::to_string(total) + "] " + name);
    SolveOptions o = so;
    o.variant = v;
    o.fp64_below = 0;  // every variant's own mixed path (solve may choose an FP64 LU for small n)
    rows.push_back({name, false, o, solve_system(input, sys, o)});
  }
  for (const std::string& method : baselines) {
    progress.step("[" + std::to_string(rows.size() + 1) + "/" + std::to_string(total) + "] " + method);
    rows.push_back({method, true, so, solve_baseline_system(input, sys, method, &context)});
  }

  // The rows share the system: a warning about it (conditioning, layout) is said once.
  std::vector<std::string> warned;
  for (const SolveReport& r : rows)
    for (const std::string& warning : r.result.warnings)
      if (std::find(warned.begin(), warned.end(), warning) == warned.end()) {
        warned.push_back(warning);
        std::cerr << "compare: warning: " << warning << " (" << r.name << ")" << std::endl;
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
  if (png) plot_histories(gnuplot, *png, input, rows);
  return 0;
}

}  // namespace tcsolve::app
