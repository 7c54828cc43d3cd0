// `tcsolve <subcommand> [options]`: dispatch through one table, and the one place where errors
// become messages and exit codes (docs/architecture.md, "Command line"):
//   0 success, 1 internal error, 2 bad arguments or invalid input,
//   3 a solve that did not converge (returned by `solve`, not thrown),
//   4 the requested variant or backend is unavailable here.
// Launched as several ranks (mpirun -np P, launcher.hpp), a subcommand that supports it runs with
// an MPI session of its own, its errors said once (ranks.hpp); the others are refused up front.
#include <algorithm>
#include <boost/program_options/errors.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli_util.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "launcher.hpp"
#include "ranks.hpp"
#include "signals.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/mpi.hpp"
#include "versions.hpp"

namespace {

struct Subcommand {
  std::string_view name;
  std::string_view summary;  ///< one line, shown by `tcsolve --help`
  int (*run)(int argc, char** argv);
  bool ranks = false;  ///< runs as P ranks under mpirun -np P (ranks.hpp); else refused there
};

// Adding a subcommand is one row.
constexpr Subcommand kSubcommands[] = {
    {"solve", "solve A x = b: FP32 LU on a GEMM variant, FP64 iterative refinement",
     tcsolve::app::run_solve, true},
    {"compare", "solve one system with every GEMM variant and the baselines; one table",
     tcsolve::app::run_compare, true},
    {"variants", "list the GEMM variants and where they run", tcsolve::app::run_variants},
    {"gemm-bench", "time GEMM variants on random matrices and measure their accuracy",
     tcsolve::app::run_gemm_bench},
    {"generate", "write a randsvd or random test system (HDF5) with a chosen condition number",
     tcsolve::app::run_generate},
    {"import", "turn a Matrix Market matrix into a test system (HDF5) with a known solution",
     tcsolve::app::run_import},
    {"probe", "measure the accumulator precision of each tensor-core path", tcsolve::app::run_probe},
    {"kmeans", "K-means (Lloyd) with the distance step on a GEMM variant; agreement with fp64",
     tcsolve::app::run_kmeans, true},
    {"ffn", "a BERT-base FFN block on each GEMM variant: error against FP64, time, TFLOP/s",
     tcsolve::app::run_ffn},
};

/// "compare, kmeans and solve": the subcommands that run as ranks under mpirun.
std::string ranks_subcommands() {
  std::vector<std::string_view> names;
  for (const Subcommand& s : kSubcommands)
    if (s.ranks) names.push_back(s.name);
  std::sort(names.begin(), names.end());
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + std::string(names[i]);
  return text;
}

constexpr int kExitError = 1;
constexpr int kExitInvalid = 2;
constexpr int kExitUnavailable = 4;

const Subcommand* find_subcommand(std::string_view name) {
  for (const Subcommand& s : kSubcommands)
    if (s.name == name) return &s;
  return nullptr;
}

void print_subcommands(std::ostream& out) {
  out << "Usage: tcsolve <subcommand> [options]\n\n"
         "Error-corrected FP32 GEMM on tensor cores, and a mixed-precision solver on it.\n\n"
         "Subcommands:\n";
  std::size_t width = 0;
  for (const Subcommand& s : kSubcommands) width = std::max(width, s.name.size());
  for (const Subcommand& s : kSubcommands)
    out << "  " << s.name << std::string(width - s.name.size() + 3, ' ') << s.summary << '\n';
  out << "\nRun 'tcsolve <subcommand> --help' for its options, 'tcsolve --version' for the versions.\n"
         "Exit codes: 0 success, 1 internal error, 2 bad arguments or input, "
         "3 not converged, 4 variant or backend unavailable.\n";
}

/// The error line on stderr and, with --json, the error object on stdout:
/// {"command", "error": {"exit_code", "message"}, "versions"}. `rank` >= 0 names the rank of a
/// job that met the error alone ("error (rank 2): ...").
int fail(std::string_view command, bool json, int code, std::string_view message, int rank = -1) {
  std::cerr << "tcsolve " << command << ": error" << (rank >= 0 ? " (rank " + std::to_string(rank) + ")" : "")
            << ": " << message << std::endl;
  if (json) {
    std::cout.clear();
    tcsolve::app::JsonWriter w(std::cout);
    w.begin_object().field("command", command);
    w.key("error").begin_object().field("exit_code", code).field("message", message).end_object();
    tcsolve::app::finish_command_json(w);
  }
  return code;
}

/// An error the subcommand threw (e: null when not a std::exception): said by fail(), once in a
/// job of several ranks (ranks.hpp: rank 0 says an agreed error, the others exit with its code
/// silently; a rank that met an error alone says it and ends the job).
int failed(std::string_view command, bool json, int code, std::string_view message, const std::exception* e) {
  switch (tcsolve::app::rank_failure(e)) {
    case tcsolve::app::RankFailure::print: return fail(command, json, code, message);
    case tcsolve::app::RankFailure::silent: return code;
    case tcsolve::app::RankFailure::abort_job:
      fail(command, json, code, message, tcsolve::app::job_ranks().rank);
      std::cout.flush();
      tcsolve::runtime::MpiSession::abort(code);
  }
  return code;
}

/// A Boost.Program_options error as one line that points to --help.
std::string option_error_text(const boost::program_options::error& e) {
  return std::string(e.what()) + " (see --help)";
}

/// Whether `flag` is among the subcommand's arguments argv[1..argc).
bool has_argument(int argc, char** argv, std::string_view flag) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == flag) return true;
  return false;
}

/// Whether --json is among the subcommand's arguments.
bool wants_json(int argc, char** argv) { return has_argument(argc, argv, "--json"); }

/// `tcsolve help-synopsis` (not listed): every subcommand's synopsis, generated from its option
/// table as its --help prints it, in the layout of the synopsis block of docs/guide/cli.md; tests
/// keep that copy equal to it and to each --help (scripts/readme-examples rewrites it).
int print_synopses() {
  std::size_t width = std::string_view("--version").size();
  for (const Subcommand& s : kSubcommands) width = std::max(width, s.name.size());
  const std::size_t head = std::string_view("tcsolve ").size() + width + 1;
  tcsolve::app::set_synopsis_only(head);
  char help_flag[] = "--help";
  for (const Subcommand& s : kSubcommands) {
    std::string name(s.name);
    char* args[] = {name.data(), help_flag, nullptr};
    s.run(2, args);
  }
  std::string version = "tcsolve --version";
  version.resize(head, ' ');
  std::cout << version << "[--json]" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tcsolve::app::install_signal_cleanup();  // SIGINT/SIGTERM: no temporary left behind
  if (argc < 2) {  // no subcommand: the usage, as an error
    print_subcommands(std::cerr);
    return kExitInvalid;
  }
  std::string_view name = argv[1];
  if (name == "--json") {  // no subcommand, or options before it: the error line and object
    const std::string message =
        argc == 2 ? "no subcommand given; run 'tcsolve --help' for the list"
                  : "options follow the subcommand: tcsolve <subcommand> [options] --json";
    std::cerr << "tcsolve: error: " << message << std::endl;
    tcsolve::app::JsonWriter w(std::cout);
    w.begin_object().key("command").null();
    w.key("error").begin_object().field("exit_code", kExitInvalid).field("message", message).end_object();
    tcsolve::app::finish_command_json(w);
    return kExitInvalid;
  }
  if (name == "help-synopsis") {
    if (argc > 2) return fail(name, wants_json(argc - 1, argv + 1), kExitInvalid, "takes no arguments");
    return print_synopses();
  }
  if (name == "--version" || name == "version") {
    if (wants_json(argc, argv)) {
      tcsolve::app::JsonWriter w(std::cout);
      w.begin_object().field("command", "version");
      tcsolve::app::finish_command_json(w);
    } else {
      tcsolve::app::print_versions(std::cout);
    }
    return 0;
  }
  int sub_argc = argc - 1;  // the subcommand sees its own name as argv[0]
  char** sub_argv = argv + 1;
  char help_flag[] = "--help";
  char* help_args[] = {nullptr, help_flag, nullptr};
  if (name == "--help" || name == "-h" || name == "help") {
    if (name != "help" || argc < 3) {
      print_subcommands(std::cout);
      return 0;
    }
    // `tcsolve help <subcommand>` is `tcsolve <subcommand> --help`.
    name = argv[2];
    help_args[0] = argv[2];
    sub_argc = 2;
    sub_argv = help_args;
  }
  const Subcommand* sub = find_subcommand(name);
  const bool json = wants_json(sub_argc, sub_argv);
  if (!sub) {
    std::cerr << "tcsolve: error: unknown subcommand '" << name
              << "'; run 'tcsolve --help' for the list" << std::endl;
    if (json) {
      tcsolve::app::JsonWriter w(std::cout);
      w.begin_object().field("command", name);
      w.key("error")
          .begin_object()
          .field("exit_code", kExitInvalid)
          .field("message", "unknown subcommand '" + std::string(name) + "'")
          .end_object();
      tcsolve::app::finish_command_json(w);
    }
    return kExitInvalid;
  }

  // Several ranks from an MPI launcher (launcher.hpp): --help from rank 0 alone; a subcommand
  // that supports ranks gets an MPI session (it must be built with MPI); the others are refused.
  // The reason is said once, by rank 0.
  std::optional<tcsolve::runtime::MpiSession> session;
  if (const tcsolve::app::LaunchRanks ranks = tcsolve::app::launcher_ranks(); ranks.size > 1) {
    const std::string launched = "launched as " + std::to_string(ranks.size) + " ranks (" + ranks.variable + "=" +
                                 std::to_string(ranks.size) + ")";
    if (has_argument(sub_argc, sub_argv, "--help")) {
      if (ranks.rank != 0) return 0;
    } else if (!sub->ranks) {
      if (ranks.rank != 0) return kExitUnavailable;
      return fail(name, json, kExitUnavailable,
                  launched + ", but tcsolve runs every subcommand as one process except " + ranks_subcommands() +
                      ": run " + std::string(name) + " without mpirun (or with -np 1)");
    } else if (!tcsolve::runtime::have_mpi()) {
      if (ranks.rank != 0) return kExitUnavailable;
      return fail(name, json, kExitUnavailable,
                  launched + ", but this tcsolve was built without MPI (cmake -DTCSOLVE_MPI=ON with an MPI "
                             "installed): run " + std::string(name) + " without mpirun (or with -np 1)");
    } else {
      try {
        session.emplace(&argc, &argv);
      } catch (const std::exception& e) {
        return fail(name, json, kExitError, e.what(), ranks.rank);
      }
    }
  }
  try {
    if (json && has_argument(sub_argc, sub_argv, "--help")) {
      // --help --json: the usage as one JSON object, {"command", "help", "versions"}.
      std::ostringstream usage;
      std::streambuf* const saved = std::cout.rdbuf(usage.rdbuf());
      int code = 0;
      try {
        code = sub->run(sub_argc, sub_argv);
      } catch (...) {
        std::cout.rdbuf(saved);
        throw;
      }
      std::cout.rdbuf(saved);
      tcsolve::app::JsonWriter w(std::cout);
      w.begin_object().field("command", sub->name).field("help", usage.str());
      tcsolve::app::finish_command_json(w);
      return code;
    }
    const int code = sub->run(sub_argc, sub_argv);
    std::cout.flush();
    return code;
  } catch (const boost::program_options::error& e) {
    return failed(sub->name, json, kExitInvalid, option_error_text(e), &e);
  } catch (const tcsolve::InvalidInput& e) {
    return failed(sub->name, json, kExitInvalid, e.what(), &e);
  } catch (const tcsolve::Unavailable& e) {
    return failed(sub->name, json, kExitUnavailable, e.what(), &e);
  } catch (const tcsolve::Error& e) {
    return failed(sub->name, json, kExitError, e.what(), &e);
  } catch (const std::bad_alloc& e) {
    return failed(sub->name, json, kExitError,
                  "out of memory (the sizes passed the memory check against MemAvailable; another "
                  "process may have taken memory since)",
                  &e);
  } catch (const std::exception& e) {
    return failed(sub->name, json, kExitError, e.what(), &e);
  } catch (...) {
    return failed(sub->name, json, kExitError, "unknown error", nullptr);
  }
}
