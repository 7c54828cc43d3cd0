// `tcsolve compare`: solves one system with every selected GEMM variant and the baseline
// methods, and prints one table (docs/architecture.md, "Solver", "JSON": compare). --csv writes the
// rows, --plot a PNG of backward error against iteration (through gnuplot), both by the output
// rule (tcsolve/io/output_file.hpp), both written before the table is printed.
// Exit 0 whether or not each method converged: non-convergence is a row of the table.
// Under mpirun -np P it runs as P cpu ranks (compare_ranks.hpp: each variant's distributed solve
// and ScaLAPACK's pdgesv on the same pieces); rank 0 alone writes --csv and --plot and prints,
// and every error is agreed (ranks.hpp).
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
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
#include "compare_devices.hpp"
#include "compare_ranks.hpp"
#include "solve_devices.hpp"
#include "input.hpp"
#include "json.hpp"
#include "progress.hpp"
#include "ranks.hpp"
#include "solve_report.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/communicator.hpp"
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

/// What the table and the JSON report: the rows and what surrounds them.
struct Outcome {
  std::string input;
  std::int64_t n = 0, nrhs = 0;
  std::vector<std::string> input_warnings;  ///< the Matrix Market reader's
  std::string backend, device;
  std::vector<SolveReport> rows;
  std::vector<std::string> skipped;  ///< variants left out of 'all' (not on the backend)
  /// Under mpirun: the grid ("2x2"), the ranks, the group, and why a baseline is absent.
  std::optional<CompareRanksRows> ranks;
  int rank_count = 1;
};

void print_table(const Outcome& o) {
  const std::vector<SolveReport>& rows = o.rows;
  std::cout << "compare " << o.input << ": n = " << o.n << ", nrhs = " << o.nrhs << ", " << o.backend << " ("
            << o.device << ")";
  if (o.ranks)
    std::cout << ", on a " << o.ranks->grid << " grid of " << o.rank_count
              << (o.backend == "cuda" ? " GPUs (" + o.ranks->group + ")" : std::string(" cpu ranks"));
  if (!rows.empty() && !rows.front().baseline)
    std::cout << ", block size " << rows.front().result.block_size << ", "
              << to_string(rows.front().options.refinement) << " refinement";
  std::cout << "\n\n";
  std::size_t method_width = 14;  // the longest name: scalapack-pdgesv and cusolver-dgetrf are wider
  for (const SolveReport& r : rows) method_width = std::max(method_width, r.name.size());
  const std::vector<std::pair<std::string, std::size_t>> columns = {
      {"method", method_width}, {"resolved", 14}, {"iters", 6},   {"converged", 10},
      {"fallback", 9},          {"backward", 10}, {"forward", 10}, {"cond", 10},
      {"fact_s", 9},            {"refine_s", 9},  {"total_s", 9}};
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
  for (const std::string& name : o.skipped)
    std::cout << "\nskipped " << name << ": not available on the " << o.backend << " backend";
  if (!o.skipped.empty()) std::cout << '\n';
  if (o.ranks)
    for (const std::string& note : o.ranks->notes) std::cout << "\nnote: " << note << '\n';
}

/// compare's object; under mpirun also grid, ranks, group and notes (why a baseline is absent).
void write_json(const Outcome& o) {
  JsonWriter w(std::cout);
  w.begin_object()
      .field("command", "compare")
      .field("input", o.input)
      .field("n", o.n)
      .field("nrhs", o.nrhs);
  if (o.ranks) w.field("grid", o.ranks->grid).field("ranks", o.rank_count).field("group", o.ranks->group);
  write_input_warnings(w, o.input_warnings);
  w.key("results").begin_array();
  for (const SolveReport& r : o.rows) {
    w.begin_object();
    write_solve_members(w, r, o.device);
    w.end_object();
  }
  w.end_array();
  w.key("skipped").begin_array();
  for (const std::string& name : o.skipped) w.value(name);
  w.end_array();
  if (o.ranks) {
    w.key("notes").begin_array();
    for (const std::string& note : o.ranks->notes) w.value(note);
    w.end_array();
  }
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

// --- the run --------------------------------------------------------------------------------

/// --csv and --plot by the output rule, their temporaries created before the work: refusals
/// come first.
struct Outputs {
  std::optional<CsvFile> csv;
  std::string plot, gnuplot;
  std::optional<TemporaryOutput> png;
};

void prepare_outputs(Outputs& out, const po::variables_map& vm, const std::string& input) {
  std::vector<std::string> inputs{input};
  if (!rhs_option(vm).empty()) inputs.push_back(rhs_option(vm));  // never overwritten either
  const OutputOptions output_rule = output_options(vm.count("force") > 0, inputs);
  const std::string csv_path = vm.count("csv") ? vm["csv"].as<std::string>() : "";
  out.plot = vm.count("plot") ? vm["plot"].as<std::string>() : "";
  if (vm.count("csv") && csv_path.empty()) throw InvalidInput("--csv needs a file name");
  if (vm.count("plot") && out.plot.empty()) throw InvalidInput("--plot needs a file name");
  if (!csv_path.empty() && !out.plot.empty() && same_file(csv_path, out.plot))
    throw InvalidInput(out.plot + ": named by both --csv and --plot");
  if (!csv_path.empty()) out.csv.emplace(csv_path, output_rule);
  if (!out.plot.empty()) {
    prepare_output(out.plot, output_rule);
    if (const auto found = find_program("gnuplot")) {
      out.gnuplot = *found;
      out.png.emplace(out.plot, output_rule);
    } else {
      std::cerr << "compare: warning: gnuplot not found on PATH; no plot (install gnuplot)" << std::endl;
    }
  }
}

/// The selected variants the backend has (`run`), and those it lacks (`skipped` from 'all'; named
/// explicitly: Unavailable).
void split_variants(const std::vector<Variant>& selected, bool explicit_list, Backend backend,
                    std::vector<Variant>& run, std::vector<std::string>& skipped) {
  for (Variant v : selected) {
    if (available(v, backend)) {
      run.push_back(v);
    } else if (explicit_list) {
      throw Unavailable("variant " + std::string(to_string(v)) + " is not available on the " +
                        std::string(to_string(backend)) + " backend");
    } else {
      skipped.emplace_back(to_string(v));
    }
  }
}

/// The rows' warnings once, the files, then the table or the JSON.
void report(const Outcome& o, Outputs& out, bool json, Progress& progress) {
  // The rows share the system: a warning about it (conditioning, layout) is said once.
  std::vector<std::string> warned;
  for (const SolveReport& r : o.rows)
    for (const std::string& warning : r.result.warnings)
      if (std::find(warned.begin(), warned.end(), warning) == warned.end()) {
        warned.push_back(warning);
        std::cerr << "compare: warning: " << warning << " (" << r.name << ")" << std::endl;
      }
  // The files first, then the table: a file that cannot be written (a full disk) is the error,
  // exit 2 with the rule's message for --csv and --plot alike (with --json its object alone on
  // stdout), and neither file is left half written.
  std::optional<std::string> image;
  if (out.png) {
    progress.step("plotting " + out.plot);
    image = render_plot(out.gnuplot, o.input, o.rows);
    if (!image) out.png->discard();
  }
  if (out.csv) {
    out.csv->stream() << csv_header();
    for (const SolveReport& r : o.rows)
      out.csv->stream() << csv_row(r, o.device, static_cast<int>(o.n), static_cast<int>(o.nrhs));
    out.csv->write();
  }
  if (image) out.png->write(image->data(), image->size());
  if (out.csv) out.csv->publish();
  if (image) out.png->publish();
  if (json) {
    for (const std::string& name : o.skipped)  // the table says it on stdout
      std::cerr << "compare: skipped " << name << ": not available on the " << o.backend << " backend"
                << std::endl;
    if (o.ranks)
      for (const std::string& note : o.ranks->notes) std::cerr << "compare: note: " << note << std::endl;
    write_json(o);
  } else {
    print_table(o);
  }
}

}  // namespace

int run_compare(int argc, char** argv) {
  const JobRanks job = job_ranks();
  runtime::Communicator* world = job.world.get();
  std::string input, variants, grid, gpus;
  long long synthetic = 0, seed = 1;
  po::options_description options("Options", 100, 50);
  // clang-format off
  options.add_options()
      ("input", po::value(&input)->value_name("SYS.h5|M.mtx|A.npy|S.npz"),
       "the system (required unless --synthetic): an HDF5 file with datasets A (n x n) and b (n or "
       "n x nrhs), and optionally the true solution x; or a Matrix Market matrix, .mtx or .mtx.gz "
       "(solved with x = ones, b = A x); or NumPy: a .npz with arrays A, b and optionally x, or a "
       ".npy matrix A with b from --rhs (alone: x = ones, b = A x)")
      ("synthetic", po::value(&synthetic)->value_name("N"),
       "instead of --input: the system `tcsolve generate --n N --seed S` writes, made on the GPUs "
       "(no file); the variants run the one-GPU solver, or with --gpus the distributed one, beside "
       "cusolvermg-dgetrf (cuSOLVER's multi-GPU FP64 getrf + getrs) on the same GPUs; cuda only")
      ("seed", po::value(&seed)->value_name("S"), "--synthetic's seed (default 1)")
      ("gpus", po::value(&gpus)->value_name("N|all|0,1"),
       "with --synthetic: the distributed solver on these GPUs (1 x N grid) and cusolverMg on them")
      ("variants", po::value(&variants)->default_value("all")->value_name("all|V1,V2,..."),
       ("all (every variant the backend has), or a comma-separated list of: " + variant_names()).c_str());
  add_solver_options(options);
  options.add_options()
      ("grid", po::value(&grid)->value_name("PxQ"),
       "under mpirun -np P*Q: the process grid of the distributed solver and of ScaLAPACK's pdgesv "
       "(2D block-cyclic, row-major rank order; default 1 x the ranks); alone: 1x1 only")
      ("csv", po::value<std::string>()->value_name("FILE"), "also write the rows as CSV to this file")
      ("plot", po::value<std::string>()->value_name("F.png"),
       "plot backward error against iteration per method (needs gnuplot: without it a warning and "
       "no plot; a file that cannot be written: exit 2, as for --csv)")
      ("force", "overwrite existing --csv and --plot files")
      ("json", "print one JSON object on stdout (also on errors)")
      ("help", "print this help");
  // clang-format on
  add_rhs_option(options);
  add_layout_option(options);
  add_progress_option(options);
  po::variables_map vm;
  runtime::agreed(world, [&] {
    try {
      vm = parse_options(argc, argv, options);
    } catch (const po::error& e) {  // under mpirun: agreed as a bad argument (exit 2), main's text
      if (world == nullptr) throw;
      throw InvalidInput(std::string(e.what()) + " (see --help)");
    }
  });
  if (vm.count("help")) {
    if (!job.speaks()) return 0;
    print_usage(std::cout, Synopsis{"compare", {}, {{{"input", "synthetic"}, true}}},
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
                "--synthetic N [--gpus G] solves the U(-1,1) system of `generate --n N` made on the\n"
                "GPUs, one GPU or G (the distributed solver), beside cusolvermg-dgetrf on them.\n"
                "Under mpirun -np P (cpu ranks only: --backend cuda exits 4) each rank reads its\n"
                "block-cyclic piece of an HDF5 system once, on a --grid P x Q (default 1 x P); each\n"
                "variant runs the distributed solver on it and the baseline scalapack-pdgesv\n"
                "(ScaLAPACK's FP64 pdgesv on a copy of the pieces, timed between two MPI_Barriers;\n"
                "its errors measured as the solver's: x gathered, r = b - A x by the distributed\n"
                "product) runs where the build found ScaLAPACK, else a note says why not. Rank 0\n"
                "alone prints (the JSON adds grid, ranks, group, notes) and writes --csv, --plot.\n"
                "Exit 0 whether or not each method converged (see the table); 2 invalid input, or a\n"
                "--csv or --plot file that cannot be written (no plot without gnuplot: a warning).",
                options);
    return 0;
  }

  SolveOptions so;
  std::vector<Variant> selected;
  ProgressMode progress_wanted = ProgressMode::never;
  runtime::agreed(world, [&] {
    if (vm.count("synthetic") && vm.count("input"))
      throw InvalidInput("--synthetic and --input exclude each other: the system is made, or read");
    if (vm.count("synthetic") && (synthetic < 1 || synthetic > INT_MAX))
      throw InvalidInput("--synthetic needs an order N in [1, 2^31 - 1]");
    if ((vm.count("synthetic") || vm.count("gpus")) && job.size > 1)
      throw InvalidInput("--synthetic and --gpus run in one process (not under mpirun)");
    if (vm.count("gpus") && !vm.count("synthetic"))
      throw InvalidInput("--gpus compares on the system made on the GPUs: give --synthetic N");
    if (vm.count("seed") && seed < 0) throw InvalidInput("--seed must be >= 0");
    if (!vm.count("synthetic") && (!vm.count("input") || input.empty()))
      throw InvalidInput("--input is required (the system file), or --synthetic N");
    if (vm.count("rhs") && (vm.count("synthetic") || job.size > 1))
      throw InvalidInput(
          "--rhs goes with an --input .npy matrix in one process (not with --synthetic or mpirun)");
    so = solver_options(vm);
    selected = parse_variant_list(variants);
    progress_wanted = progress_mode(vm);
    if (job.size == 1 && vm.count("grid") && grid != "1x1")
      throw InvalidInput("--grid " + grid +
                         " needs as many ranks: run under mpirun -np P*Q (one process: 1x1)");
  });
  const bool explicit_list = variants != "all";
  const bool json = vm.count("json") > 0;
  Outputs outputs;
  Outcome outcome;
  outcome.input = input;

  if (job.size > 1) {  // this rank of the job: the distributed solves and pdgesv on cpu ranks
    CompareRanksArgs args{input, grid, layout_option(vm), so};
    const CompareRanksPlan plan = plan_compare_ranks(job, args);
    std::vector<Variant> run;
    runtime::agreed(world, [&] {
      split_variants(selected, explicit_list, Backend::cpu, run, outcome.skipped);
      if (job.speaks()) prepare_outputs(outputs, vm, input);
    });
    Progress progress("compare", job.speaks() ? progress_wanted : ProgressMode::never);
    outcome.ranks = compare_on_ranks(job, args, plan, run, progress);
    outcome.rows = std::move(outcome.ranks->rows);
    outcome.rank_count = job.size;
    outcome.n = plan.shape.n;
    outcome.nrhs = plan.shape.nrhs;
    outcome.backend = to_string(Backend::cpu);
    outcome.device = device_description(Backend::cpu);
    runtime::agreed(world, [&] {
      if (job.speaks()) report(outcome, outputs, json, progress);
    });
    return 0;
  }

  if (synthetic > 0) {  // the system made on the GPUs: the one-GPU or distributed solver, cusolverMg
    if (so.backend == Backend::cpu) throw InvalidInput("--synthetic makes the system on the GPUs: --backend cuda");
    so.backend = Backend::cuda;
    cuda::Context context;
    so.cuda_context = &context;
    std::vector<Variant> run;
    split_variants(selected, explicit_list, Backend::cuda, run, outcome.skipped);
    outcome.input = synthetic_name(synthetic, static_cast<std::uint64_t>(seed));
    prepare_outputs(outputs, vm, outcome.input);
    Progress progress("compare", progress_wanted);
    outcome.ranks = compare_synthetic(run, so, static_cast<int>(synthetic), static_cast<std::uint64_t>(seed), gpus,
                                      progress);
    outcome.rows = std::move(outcome.ranks->rows);
    outcome.rank_count = std::stoi(outcome.ranks->grid.substr(2));  // "1xG"
    outcome.n = synthetic;
    outcome.nrhs = 1;
    outcome.backend = to_string(Backend::cuda);
    outcome.device = device_description(Backend::cuda);
    report(outcome, outputs, json, progress);
    return 0;
  }
  so.backend = choose_backend(so.backend);
  cuda::Context context;  // the command's: on cuda, one set of handles and streams for every row
  so.cuda_context = &context;
  outcome.backend = to_string(so.backend);
  std::vector<Variant> run;
  split_variants(selected, explicit_list, so.backend, run, outcome.skipped);
  prepare_outputs(outputs, vm, input);

  Progress progress("compare", progress_wanted);
  // the Matrix Market reader's warnings (printed by load_system)
  const LinearSystem sys = load_system(input, layout_option(vm), so.backend, so.fallback, progress,
                                       &outcome.input_warnings, rhs_option(vm));
  outcome.n = sys.n();
  outcome.nrhs = sys.nrhs();
  const std::vector<std::string> baselines = baseline_methods(so.backend);
  const std::size_t total = run.size() + baselines.size();
  // compare reports errors and times, never a solution: each row's x (n x nrhs) is dropped as
  // soon as it is solved, so that the rows hold no more than one solve does (what load_system
  // checked against the memory); kept, they were 8 n nrhs bytes a row beyond that check.
  std::vector<SolveReport>& rows = outcome.rows;
  if (so.backend == Backend::cuda) {
    // Warm-up, untimed, of every row at the system's own size: the first solve on a device pays
    // the libraries' start-up (cuSOLVER and cuBLAS handles, workspaces, the LU's streams), and
    // every kernel's first launch its loading (lazy module loading); cuBLAS and the LU pick
    // kernels by size, so a smaller warm-up leaves some of them to the timed run. With a warm-up
    // at n = 2 nb + 1, the first row at n = 16384 still paid 2-3 ms (session 5: auto's
    // "update_wait" and "trsm_rest" when it ran first, not when second). Variants: one correction, no
    // fallback; baselines: the whole call.
    SolveOptions warm = warmup_options(so);
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
    // every variant's own mixed path, but auto's: it is what `solve` runs by default (the FP64 LU
    // below fp64_below; the JSON's fp64_lu says so)
    if (v != Variant::auto_) o.fp64_below = 0;
    rows.push_back({name, false, o, solve_system(input, sys, o)});
    rows.back().result.x = Eigen::MatrixXd();  // never reported (above)
  }
  for (const std::string& method : baselines) {
    progress.step("[" + std::to_string(rows.size() + 1) + "/" + std::to_string(total) + "] " + method);
    rows.push_back({method, true, so, solve_baseline_system(input, sys, method, &context)});
    rows.back().result.x = Eigen::MatrixXd();
  }
  outcome.device = device_description(so.backend);
  report(outcome, outputs, json, progress);
  return 0;
}

}  // namespace tcsolve::app
