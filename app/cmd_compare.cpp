// `tcsolve compare`: solves one system with every selected GEMM variant and the baseline
// methods, and prints one table (ARCHITECTURE.md, "Solver", "JSON": compare). --csv writes the
// rows, --plot a PNG of backward error against iteration (through gnuplot), both by the output
// rule (tcsolve/io/output_file.hpp), both written before the table is printed.
// Exit 0 whether or not each method converged: non-convergence is a row of the table.
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "solve_report.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"
#include "versions.hpp"

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

void write_json(const std::string& input, const LinearSystem& sys, const std::vector<std::string>& input_warnings,
                const std::string& device, const std::vector<SolveReport>& rows,
                const std::vector<std::string>& skipped) {
  JsonWriter w(std::cout);
  w.begin_object()
      .field("command", "compare")
      .field("input", input)
      .field("n", sys.n())
      .field("nrhs", sys.nrhs());
  write_input_warnings(w, input_warnings);
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

/// An unnamed file (memfd, else tmpfile) holding `data` and positioned at its start, or -1. Its
/// descriptor is 10 or above (close-on-exec), so that dup2 onto gnuplot's 0 to 3 never meets it.
int unnamed_file(const std::string& name, const std::string& data) {
  const int made = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  int fd = -1;
  if (made >= 0) {
    fd = ::fcntl(made, F_DUPFD_CLOEXEC, 10);
    ::close(made);
  } else if (std::FILE* f = std::tmpfile()) {
    fd = ::fcntl(::fileno(f), F_DUPFD_CLOEXEC, 10);
    std::fclose(f);
  }
  if (fd < 0) return -1;
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// The whole content of the file behind `fd` (read from offset 0).
std::string read_all(int fd) {
  std::string data;
  char buf[65536];
  for (off_t offset = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, offset);
    if (n <= 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    offset += n;
  }
  return data;
}

/// The last non-empty line of `text`, at most 200 characters.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const std::size_t newline = text.rfind('\n', end);
  const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
  std::string line = text.substr(start, end + 1 - start);
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

/// The gnuplot script of the plot: backward error (log scale) against iteration, one line per
/// method; NaN and inf left out, 0 drawn at zero_floor. Both ranges are set, never autoscaled,
/// so that gnuplot has nothing to warn about (an empty range: one point, or all errors equal).
/// Empty when no method has a point to draw.
std::string plot_script(const std::string& input, const std::vector<SolveReport>& rows) {
  const double floor = zero_floor(rows);
  bool clamped = false;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  std::size_t last = 1;
  std::string data, plot;
  for (const SolveReport& r : rows) {  // one inline data block ('-') per method with points
    std::string block;
    for (std::size_t i = 0; i < r.result.history.size(); ++i) {
      const double e = r.result.history[i];
      if (!std::isfinite(e) || e < 0) continue;
      clamped = clamped || e == 0;
      const double y = e > 0 ? e : floor;
      lo = std::min(lo, y);
      hi = std::max(hi, y);
      last = std::max(last, i);
      block += std::to_string(i) + ' ' + csv_number(y) + '\n';
    }
    if (block.empty()) continue;
    plot += std::string(plot.empty() ? "plot " : ", \\\n     ") + "'-' using 1:2 with linespoints title " +
            gnuplot_quote(r.name);
    data += block + "e\n";
  }
  if (plot.empty()) return "";
  // Whole decades around the points with a decade to spare below and above, and half an
  // iteration left and right, so that no point sits on the frame.
  const double y0 = std::pow(10.0, std::floor(std::log10(lo)) - 1);
  const double y1 = std::pow(10.0, std::ceil(std::log10(hi)) + 1);
  const std::string title =
      "tcsolve compare " + input + (clamped ? " (backward error 0 drawn at " + fmt("%g", floor) + ")" : "");
  return std::string("if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                     "  set terminal pngcairo size 1000,650 noenhanced\n"
                     "} else {\n"
                     "  set terminal png size 1000,650 noenhanced\n"
                     "}\n") +
         "set output '/dev/fd/3'\n" + "set title " + gnuplot_quote(title) + "\n" +
         "set logscale y\nset format y '%.0e'\nset grid\nset key outside right\n"
         "set xlabel 'iteration'\nset ylabel 'backward error'\nset xtics 1\n" +
         "set xrange [-0.5:" + std::to_string(last) + ".5]\n" +
         "set yrange [" + csv_number(y0) + ":" + csv_number(y1) + "]\n" +
         plot + "\n" + data + "unset output\n";
}

/// The PNG made by gnuplot from plot_script, or nullopt after a warning on stderr ("compare:
/// warning: ...; no plot": the table is the result, the plot an extra). The script reaches
/// gnuplot on stdin and the image comes back through fd 3, both unnamed files in memory
/// (nothing named on disk, so that a signal leaves nothing behind); what gnuplot prints (its
/// warnings included) is captured, never shown raw, and its last line is named when it fails.
std::optional<std::string> render_plot(const std::string& gnuplot, const std::string& input,
                                       const std::vector<SolveReport>& rows) {
  const auto give_up = [](const std::string& why) -> std::optional<std::string> {
    std::cerr << "compare: warning: " << why << "; no plot" << std::endl;
    return std::nullopt;
  };
  const std::string script = plot_script(input, rows);
  if (script.empty()) return give_up("no method has a finite backward error to plot");
  std::error_code ec;
  if (!std::filesystem::is_directory("/dev/fd", ec))
    return give_up("/dev/fd is missing (gnuplot writes the image through it)");
  const int in = unnamed_file("tcsolve-plot-script", script);
  const int image = unnamed_file("tcsolve-plot-image", "");
  const int said = unnamed_file("tcsolve-plot-messages", "");
  const auto close_all = [&] {
    for (int fd : {in, image, said})
      if (fd >= 0) ::close(fd);
  };
  if (in < 0 || image < 0 || said < 0) {
    close_all();
    return give_up("cannot make the temporary files gnuplot needs");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, said, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, said, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, image, 3);
  pid_t pid = 0;
  std::string arg0 = "gnuplot";
  char* args[] = {arg0.data(), nullptr};
  int status = 0;
  const bool spawned = ::posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, args, environ) == 0;
  posix_spawn_file_actions_destroy(&actions);
  pid_t waited_for = -1;
  if (spawned)
    do waited_for = ::waitpid(pid, &status, 0);
    while (waited_for < 0 && errno == EINTR);
  const bool waited = spawned && waited_for == pid;
  const std::string png = read_all(image), messages = read_all(said);
  close_all();
  if (!spawned) return give_up("cannot run " + gnuplot);
  if (!waited || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string line = last_line(messages);
    return give_up("gnuplot failed" + (line.empty() ? std::string() : " (" + line + ")"));
  }
  if (png.empty()) return give_up("gnuplot wrote an empty image");
  return png;
}

}  // namespace

int run_compare(int argc, char** argv) {
  std::string input, variants;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("input", po::value(&input)->value_name("SYS.h5|M.mtx"),
       "the system (required): an HDF5 file with datasets A (n x n) and b (n or n x nrhs), and "
       "optionally the true solution x; or a Matrix Market matrix (solved with x = ones, b = A x)")
      ("variants", po::value(&variants)->default_value("all")->value_name("all|V1,V2,..."),
       ("all (every variant the backend has), or a comma-separated list of: " + variant_names()).c_str());
  add_solver_options(options);
  options.add_options()
      ("csv", po::value<std::string>()->value_name("FILE"), "also write the rows as CSV to this file")
      ("plot", po::value<std::string>()->value_name("F.png"),
       "plot backward error against iteration per method (needs gnuplot: without it a warning and "
       "no plot; a file that cannot be written: exit 2, as for --csv)")
      ("force", "overwrite existing --csv and --plot files")
      ("json", "print one JSON object on stdout (also on errors)")
      ("help", "print this help");
  // clang-format on
  add_layout_option(options);
  add_progress_option(options);
  const auto vm = parse_options(argc, argv, options);
  if (vm.count("help")) {
    print_usage(std::cout, Synopsis{"compare", {"input"}, {}},
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
                "Exit 0 whether or not each method converged (see the table); 2 invalid input, or a\n"
                "--csv or --plot file that cannot be written (no plot without gnuplot: a warning).",
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
  std::vector<std::string> input_warnings;  // the Matrix Market reader's (printed by load_system)
  const LinearSystem sys = load_system(input, layout_option(vm), so.backend, so.fallback, progress, &input_warnings);
  const std::vector<std::string> baselines = baseline_methods(so.backend);
  const std::size_t total = run.size() + baselines.size();
  // compare reports errors and times, never a solution: each row's x (n x nrhs) is dropped as
  // soon as it is solved, so that the rows hold no more than one solve does (what load_system
  // checked against the memory); kept, they were 8 n nrhs bytes a row beyond that check.
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
    rows.back().result.x = Eigen::MatrixXd();  // never reported (above)
  }
  for (const std::string& method : baselines) {
    progress.step("[" + std::to_string(rows.size() + 1) + "/" + std::to_string(total) + "] " + method);
    rows.push_back({method, true, so, solve_baseline_system(input, sys, method, &context)});
    rows.back().result.x = Eigen::MatrixXd();
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
  // The files first, then the table: a file that cannot be written (a full disk) is the error,
  // exit 2 with the rule's message for --csv and --plot alike (with --json its object alone on
  // stdout), and neither file is left half written.
  std::optional<std::string> image;
  if (png) {
    progress.step("plotting " + plot);
    image = render_plot(gnuplot, input, rows);
    if (!image) png->discard();
  }
  if (csv) {
    csv->stream() << csv_header();
    for (const SolveReport& r : rows) csv->stream() << csv_row(r, device, sys.n(), sys.nrhs());
    csv->write();
  }
  if (image) png->write(image->data(), image->size());
  if (csv) csv->publish();
  if (image) png->publish();
  if (vm.count("json")) {
    for (const std::string& name : skipped)  // the table says it on stdout
      std::cerr << "compare: skipped " << name << ": not available on the " << backend_name << " backend"
                << std::endl;
    write_json(input, sys, input_warnings, device, rows, skipped);
  } else {
    print_table(input, sys, backend_name, device, rows, skipped);
  }
  return 0;
}

}  // namespace tcsolve::app
