// The output rule (tcsolve/io/output_file.hpp) as the executable applies it to every file it
// writes: solve --output, compare --csv and --plot, generate --output, import --output, kmeans
// --output. Each case runs the real `tcsolve` in a fresh directory and checks that the input is
// byte for byte untouched and that no temporary is left there; a few library cases check the
// pieces (the registry, same_file, publishing without force) directly.
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/io/output_file.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "temp_dir.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using tcsolve::test::CommandResult;
using tcsolve::test::contains;
using tcsolve::test::read_file;
using tcsolve::test::run_tcsolve;

/// A fresh directory (temp_dir.hpp) that also tells whether a temporary is left in it.
class Scratch : public tcsolve::test::TempDir {
 public:
  Scratch() : TempDir("output") {}
  /// Whether a temporary ("<name>.tcsolve-tmp-<pid>-<k>") is in the directory.
  bool has_temporary() const {
    for (const std::string& name : entries())
      if (contains(name, tcsolve::kTemporaryMarker)) return true;
    return false;
  }
};

std::string quoted(const std::string& path) { return "'" + path + "'"; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

/// A small system file (n = 8) at `path`, written by the library.
void small_system(const std::string& path) {
  tcsolve::write_system(path, tcsolve::generate_system(8, 100, tcsolve::SpectrumMode::geometric, 1), false);
}

/// A K-means data file: X (6 x 2, float64, two obvious clusters).
void kmeans_data(const std::string& path) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hsize_t dims[2] = {6, 2};
  const double X[12] = {0, 0, 0, 1, 1, 0, 10, 10, 10, 11, 11, 10};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t ds = H5Dcreate2(file, "X", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(ds >= 0);
  REQUIRE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, X) >= 0);
  H5Dclose(ds);
  H5Sclose(space);
  H5Fclose(file);
}

bool gnuplot_installed() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

/// A process id that belonged to a process now gone (a child that exited and was reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return pid;
}

/// `tcsolve args...` started without a shell (stdout and stderr to files, SIGINT and SIGTERM
/// at their defaults, nothing blocked), so that the test can signal it by its pid.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& out, const std::string& err) : err_(err) {
    std::vector<std::string> argv_strings = {tcsolve::test::tcsolve_exe()};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, none;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    const int rc = ::posix_spawn(&pid_, argv[0], &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    REQUIRE(rc == 0);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
    }
  }
  pid_t pid() const { return pid_; }
  /// Waits for the exit (at most `limit`; then killed and the test fails); the wait status.
  int wait(std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!reaped_) {
      const pid_t got = ::waitpid(pid_, &status_, WNOHANG);
      if (got == pid_) {
        reaped_ = true;
        break;
      }
      if (std::chrono::steady_clock::now() > end) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status_, 0);
        reaped_ = true;
        FAIL("tcsolve did not finish in time");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return status_;
  }
  bool running() {
    if (reaped_) return false;
    if (::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
    return !reaped_;
  }
  std::string err() const { return read_file(err_); }

 private:
  std::string err_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

/// Polls `dir` until a temporary appears or `child` ends; whether one appeared while it ran.
bool wait_for_temporary(const Scratch& dir, Child& child) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < end && child.running()) {
    if (dir.has_temporary()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

/// Runs `compare` (n = 8, fp32-simt, cpu) on `input` with `extra` options.
CommandResult compare(const std::string& input, const std::string& extra) {
  return run_tcsolve("compare --input " + quoted(input) + " --backend cpu --variants fp32-simt " + extra);
}

}  // namespace

// --- the executable -----------------------------------------------------------------------------

TEST_CASE("compare --csv and --plot never write the input: itself, a hard link or a symbolic link",
          "[output]") {
  Scratch dir;
  const std::string input = dir.path("sys.h5");
  small_system(input);
  REQUIRE(::link(input.c_str(), dir.path("hard.h5").c_str()) == 0);
  fs::create_symlink(input, dir.path("sym.h5"));
  const std::string before = read_file(input);
  const std::vector<std::string> names = dir.entries();
  for (const char* option : {"--csv", "--plot"})
    for (const char* name : {"sys.h5", "hard.h5", "sym.h5"})
      for (const char* force : {"", " --force"}) {
        const CommandResult r = compare(input, std::string(option) + " " + quoted(dir.path(name)) + force);
        INFO(r);
        CHECK(r.exit_code == 2);
        CHECK(contains(r.err, dir.path(name) + ": is the input file " + input));
        CHECK(r.out.empty());  // refused before the solves
        CHECK(read_file(input) == before);
        CHECK(dir.entries() == names);
      }
  CHECK(fs::is_symlink(dir.path("sym.h5")));
}

TEST_CASE("an existing output is refused without --force and replaced with it, for every command",
          "[output]") {
  Scratch dir;
  const std::string input = dir.path("sys.h5"), mtx = dir.path("m.mtx"), data = dir.path("points.h5");
  small_system(input);
  write_text(mtx, "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 2\n2 2 3\n3 3 4\n");
  kmeans_data(data);
  const std::string input_bytes = read_file(input), mtx_bytes = read_file(mtx), data_bytes = read_file(data);
  const std::string out = dir.path("out"), old = "old contents\n";
  const bool gnuplot = gnuplot_installed();

  struct Case {
    std::string command;   ///< writes `out`
    std::string expected;  ///< what the replaced file starts with
  };
  const std::vector<Case> cases = {
      {"compare --input " + quoted(input) + " --backend cpu --variants fp32-simt --csv " + quoted(out),
       "method,"},
      {"compare --input " + quoted(input) + " --backend cpu --variants fp32-simt --plot " + quoted(out),
       gnuplot ? "\x89PNG" : old},
      {"solve --input " + quoted(input) + " --backend cpu --variant fp32-simt --output " + quoted(out),
       "\x89HDF"},
      {"generate --n 8 --mode random --backend cpu --output " + quoted(out), "\x89HDF"},
      {"import --mtx " + quoted(mtx) + " --output " + quoted(out), "\x89HDF"},
      {"kmeans --input " + quoted(data) +
           " --k 2 --variant fp32-simt --backend cpu --no-agreement --output " + quoted(out),
       "\x89HDF"},
  };
  for (const Case& c : cases) {
    write_text(out, old);
    CommandResult r = run_tcsolve(c.command);
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, out + ": exists (use --force to overwrite)"));
    CHECK(read_file(out) == old);
    r = run_tcsolve(c.command + " --force");
    INFO(r);
    CHECK(r.exit_code == 0);
    CHECK(read_file(out).rfind(c.expected, 0) == 0);
    CHECK_FALSE(dir.has_temporary());
    CHECK(read_file(input) == input_bytes);
    CHECK(read_file(mtx) == mtx_bytes);
    CHECK(read_file(data) == data_bytes);
  }
  // Through a symbolic link with --force: the file it names is replaced, the link kept.
  write_text(out, old);
  fs::create_symlink(out, dir.path("link"));
  const CommandResult r =
      run_tcsolve("generate --n 8 --mode random --backend cpu --force --output " + quoted(dir.path("link")));
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(fs::is_symlink(dir.path("link")));
  CHECK(tcsolve::read_system(out).n() == 8);
  CHECK(dir.entries() == std::vector<std::string>{"link", "m.mtx", "out", "points.h5", "sys.h5"});
}

TEST_CASE("a FIFO, a directory or a dangling symbolic link is never an output, even with --force",
          "[output]") {
  Scratch dir;
  const std::string input = dir.path("sys.h5");
  small_system(input);
  const std::string before = read_file(input);
  REQUIRE(::mkfifo(dir.path("fifo").c_str(), 0600) == 0);
  fs::create_directory(dir.path("folder"));
  fs::create_symlink(dir.path("nowhere"), dir.path("dangling"));
  const std::vector<std::string> names = dir.entries();
  const std::vector<std::pair<std::string, std::string>> targets = {
      {"fifo", "is a FIFO, not a regular file"},
      {"folder", "is a directory"},
      {"dangling", "is a dangling symbolic link to '" + dir.path("nowhere") + "'"}};
  const std::vector<std::string> commands = {
      "generate --n 8 --mode random --backend cpu --output ",
      "compare --input " + quoted(input) + " --backend cpu --variants fp32-simt --csv ",
      "compare --input " + quoted(input) + " --backend cpu --variants fp32-simt --plot "};
  for (const auto& [name, problem] : targets)
    for (const std::string& command : commands)
      for (const char* force : {"", " --force"}) {
        const CommandResult r = run_tcsolve(command + quoted(dir.path(name)) + force);
        INFO(r);
        CHECK(r.exit_code == 2);
        CHECK(contains(r.err, dir.path(name) + ": " + problem));
        CHECK(dir.entries() == names);
      }
  CHECK(read_file(input) == before);
  CHECK_FALSE(fs::exists(dir.path("nowhere")));
}

TEST_CASE("import --output is never the --mtx file and kmeans --output never the --input file", "[output]") {
  Scratch dir;
  const std::string mtx = dir.path("m.mtx"), data = dir.path("points.h5");
  write_text(mtx, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n");
  kmeans_data(data);
  fs::create_symlink(mtx, dir.path("mtx-link"));
  fs::create_symlink(data, dir.path("data-link"));
  const std::string mtx_bytes = read_file(mtx), data_bytes = read_file(data);
  const std::vector<std::string> names = dir.entries();
  for (const char* force : {"", " --force"}) {
    for (const std::string& output : {mtx, dir.path("mtx-link")}) {
      const CommandResult r =
          run_tcsolve("import --mtx " + quoted(mtx) + " --output " + quoted(output) + force);
      INFO(r);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, output + ": is the input file " + mtx));
    }
    for (const std::string& output : {data, dir.path("data-link")}) {
      const CommandResult r =
          run_tcsolve("kmeans --input " + quoted(data) +
                      " --k 2 --backend cpu --variant fp32-simt --output " + quoted(output) + force);
      INFO(r);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, output + ": is the input file " + data));
    }
    CHECK(read_file(mtx) == mtx_bytes);
    CHECK(read_file(data) == data_bytes);
    CHECK(dir.entries() == names);
  }
}

TEST_CASE("of several runs writing the same new file at once without --force exactly one wins", "[output]") {
  Scratch dir;
  const std::string out = dir.path("same.h5");
  constexpr int kRuns = 4;
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    std::vector<std::unique_ptr<Child>> runs;
    for (int i = 0; i < kRuns; ++i)
      runs.push_back(std::make_unique<Child>(
          std::vector<std::string>{"generate", "--n", "96", "--mode", "random", "--seed",
                                   std::to_string(i + 1), "--backend", "cpu", "--output", out},
          dir.path("out" + std::to_string(i)), dir.path("err" + std::to_string(i))));
    int winners = 0, winner = -1;
    for (int i = 0; i < kRuns; ++i) {
      const int status = runs[static_cast<std::size_t>(i)]->wait();
      const std::string err = runs[static_cast<std::size_t>(i)]->err();
      INFO("run " << i << " stderr: " << err);
      REQUIRE(WIFEXITED(status));
      if (WEXITSTATUS(status) == 0) {
        ++winners;
        winner = i;
      } else {
        CHECK(WEXITSTATUS(status) == 2);
        CHECK(contains(err, out + ": exists (use --force to overwrite)"));
        CHECK_FALSE(contains(read_file(dir.path("out" + std::to_string(i))), "wrote"));
      }
    }
    CHECK(winners == 1);
    // The file is the winner's, complete.
    const tcsolve::LinearSystem s = tcsolve::read_system(out);
    CHECK(s.n() == 96);
    CHECK(s.A == tcsolve::generate_system(96, 1, tcsolve::SpectrumMode::random,
                                          static_cast<std::uint64_t>(winner + 1))
                     .A);
    CHECK_FALSE(dir.has_temporary());
    fs::remove(out);
  }
}

TEST_CASE("SIGINT and SIGTERM during a write leave no temporary behind", "[output]") {
  Scratch dir;
  const std::string input = dir.path("sys.h5");
  // Large enough that the emulated variants take seconds on the cpu: the signal comes first.
  tcsolve::write_system(input, tcsolve::generate_system(500, 1e3, tcsolve::SpectrumMode::random, 7), false);
  const std::string before = read_file(input);
  const bool gnuplot = gnuplot_installed();
  struct Case {
    int signal_number;
    std::string option, output;
  };
  const std::vector<Case> cases = {{SIGINT, "--csv", "rows.csv"},
                                   {SIGTERM, "--csv", "rows.csv"},
                                   {SIGTERM, gnuplot ? "--plot" : "--csv", "history.png"}};
  for (const Case& c : cases) {
    INFO(c.option << " " << c.output << ", signal " << c.signal_number);
    Child child(
        {"compare", "--input", input, "--backend", "cpu", "--variants", "all", c.option, dir.path(c.output)},
        dir.path("stdout.txt"), dir.path("stderr.txt"));
    REQUIRE(wait_for_temporary(dir, child));
    REQUIRE(::kill(child.pid(), c.signal_number) == 0);
    const int status = child.wait();
    INFO("stderr: " << child.err());
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == c.signal_number);
    CHECK_FALSE(dir.has_temporary());
    CHECK_FALSE(fs::exists(dir.path(c.output)));
    CHECK(read_file(input) == before);
  }
}

TEST_CASE("a temporary left by a killed run is named on stderr by the next write beside it", "[output]") {
  Scratch dir;
  const std::string out = dir.path("F.h5");
  const pid_t gone = dead_pid();
  const std::string stale = out + std::string(tcsolve::kTemporaryMarker) + std::to_string(gone) + "-0";
  const std::string live =  // this test's own process is alive: not stale
      dir.path("G.h5") + std::string(tcsolve::kTemporaryMarker) + std::to_string(::getpid()) + "-0";
  write_text(stale, "half a file");
  write_text(live, "being written");
  const CommandResult r = run_tcsolve("generate --n 8 --mode random --backend cpu --output " + quoted(out));
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "warning: " + stale + " is left over from a killed tcsolve run (process " +
                            std::to_string(gone) + "); remove it"));
  CHECK_FALSE(contains(r.err, live));
  CHECK(tcsolve::read_system(out).n() == 8);
  CHECK(fs::exists(stale));  // named, not removed: the user decides
  const std::vector<tcsolve::StaleTemporary> found = tcsolve::find_stale_temporaries(out);
  REQUIRE(found.size() == 1);
  CHECK(found[0].path == stale);
  CHECK(found[0].pid == gone);
}

TEST_CASE("compare --plot never leaves an empty PNG: gnuplot failing or drawing nothing leaves no file",
          "[output]") {
  Scratch dir;
  const std::string input = dir.path("identity.h5"), png = dir.path("plot.png");
  // A = I: every method solves it exactly, backward error 0 at every iteration.
  tcsolve::LinearSystem identity;
  identity.A = Eigen::MatrixXd::Identity(4, 4);
  identity.b = Eigen::MatrixXd::Ones(4, 1);
  identity.x_true = identity.b;
  tcsolve::write_system(input, identity, false);
  const std::string before = read_file(input);
  // Stand-ins for gnuplot, first on PATH: one that fails after keeping its script, one that
  // succeeds without drawing.
  fs::create_directory(dir.path("fail"));
  fs::create_directory(dir.path("silent"));
  write_text(dir.path("fail/gnuplot"), "#!/bin/sh\ncat > '" + dir.path("script.gp") + "'\nexit 1\n");
  write_text(dir.path("silent/gnuplot"), "#!/bin/sh\ncat > /dev/null\nexit 0\n");
  fs::permissions(dir.path("fail/gnuplot"), fs::perms::owner_all);
  fs::permissions(dir.path("silent/gnuplot"), fs::perms::owner_all);
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  const auto run_with = [&](const std::string& first) {
    ::setenv("PATH", (first + ":" + path).c_str(), 1);
    const CommandResult r = run_tcsolve("compare --input " + quoted(input) +
                                        " --backend cpu --variants fp32-simt --plot " + quoted(png));
    ::setenv("PATH", path.c_str(), 1);
    return r;
  };
  CommandResult r = run_with(dir.path("fail"));
  INFO(r);
  CHECK(r.exit_code == 0);  // the table is the result, the plot an extra
  CHECK(contains(r.err, "compare: warning: gnuplot failed; no plot"));
  CHECK_FALSE(fs::exists(png));
  // The zero errors were drawn (at 1e-20), not dropped: every method has points.
  const std::string script = read_file(dir.path("script.gp"));
  CHECK(contains(script, "title 'fp32-simt'"));
  CHECK(contains(script, "title 'fp64-lu'"));
  char floor[32];
  std::snprintf(floor, sizeof floor, "\n0 %.17g\ne\n", 1e-20);  // as the data are written
  CHECK(contains(script, floor));
  CHECK(contains(script, "backward error 0 drawn at 1e-20"));
  r = run_with(dir.path("silent"));
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "compare: warning: gnuplot wrote an empty image; no plot"));
  CHECK_FALSE(fs::exists(png));
  CHECK_FALSE(dir.has_temporary());
  CHECK(read_file(input) == before);
  if (!gnuplot_installed()) {
    WARN("gnuplot is not installed: the real plot of zero errors is not checked");
    return;
  }
  r = run_tcsolve("compare --input " + quoted(input) + " --backend cpu --variants fp32-simt --plot " +
                  quoted(png));
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(read_file(png).rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  CHECK_FALSE(dir.has_temporary());
}

// --- the library ----------------------------------------------------------------------------------

TEST_CASE("TempFileRegistry records, forgets and unlinks temporaries", "[output]") {
  Scratch dir;
  tcsolve::TempFileRegistry registry;
  const std::string a = dir.path("a"), b = dir.path("b");
  write_text(a, "a");
  write_text(b, "b");
  const int sa = registry.add(a), sb = registry.add(b);
  CHECK(sa >= 0);
  CHECK(sb >= 0);
  CHECK(sa != sb);
  CHECK(registry.size() == 2);
  registry.remove(sb);
  CHECK(registry.size() == 1);
  registry.unlink_all();
  CHECK_FALSE(fs::exists(a));
  CHECK(fs::exists(b));
  CHECK(registry.add(std::string(tcsolve::TempFileRegistry::kMaxPath, 'x')) == -1);  // too long
  std::vector<int> slots;
  for (int i = 0; i < tcsolve::TempFileRegistry::kSlots; ++i) slots.push_back(registry.add(dir.path("x")));
  CHECK(std::count(slots.begin(), slots.end(), -1) == 1);  // one slot was still taken by a
  CHECK(registry.add(dir.path("y")) == -1);                // full
}

TEST_CASE("a temporary is registered while it lives; publishing without force never replaces a file",
          "[output]") {
  Scratch dir;
  tcsolve::TempFileRegistry registry;
  tcsolve::OutputOptions options;
  options.temporaries = &registry;
  const std::string out = dir.path("out.txt");
  {
    tcsolve::TemporaryOutput first(out, options), second(out, options);  // both pass the check
    CHECK(registry.size() == 2);
    CHECK(first.temporary() != second.temporary());
    CHECK(contains(first.temporary(), "out.txt.tcsolve-tmp-" + std::to_string(::getpid()) + "-"));
    first.write("first", 5);
    second.write("second", 6);
    first.publish();
    CHECK(registry.size() == 1);
    try {
      second.publish();
      FAIL("the second publish replaced the file");
    } catch (const tcsolve::InvalidInput& e) {
      CHECK(std::string(e.what()) == out + ": exists (use --force to overwrite)");
    }
    CHECK(registry.size() == 0);
    tcsolve::TemporaryOutput abandoned(dir.path("never.txt"), options);
    abandoned.write("x", 1);
  }  // never published: removed
  CHECK(read_file(out) == "first");
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});
  CHECK(registry.size() == 0);

  options.force = true;
  tcsolve::TemporaryOutput third(out, options);
  third.write("third", 5);
  third.publish();
  CHECK(read_file(out) == "third");
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});
}

TEST_CASE("same_file compares by device and inode, through hard and symbolic links", "[output]") {
  Scratch dir;
  const std::string a = dir.path("a");
  write_text(a, "a");
  write_text(dir.path("b"), "a");
  REQUIRE(::link(a.c_str(), dir.path("hard").c_str()) == 0);
  fs::create_symlink(a, dir.path("sym"));
  fs::create_directory(dir.path("sub"));
  CHECK(tcsolve::same_file(a, dir.path("hard")));
  CHECK(tcsolve::same_file(a, dir.path("sym")));
  CHECK(tcsolve::same_file(a, dir.path("sub/../a")));
  CHECK_FALSE(tcsolve::same_file(a, dir.path("b")));                   // equal bytes, another file
  CHECK(tcsolve::same_file(dir.path("new"), dir.path("sub/../new")));  // neither exists: by path
  CHECK_FALSE(tcsolve::same_file(dir.path("new"), dir.path("other")));
}

// --- issue 31: long names, a regular file as a folder, the standard streams ----------------------

TEST_CASE("an output name of 236-255 bytes is written: its temporary's name is cut to fit NAME_MAX",
          "[output]") {
  Scratch dir;
  const std::string input = dir.path("sys.h5");
  small_system(input);
  const std::string before = read_file(input);
  const std::string name250 = std::string(247, 'g') + ".h5", name255 = std::string(251, 'c') + ".csv";
  REQUIRE(name250.size() == 250);
  REQUIRE(name255.size() == 255);
  CommandResult r = run_tcsolve("generate --n 8 --mode random --backend cpu --output " + quoted(dir.path(name250)));
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(tcsolve::read_system(dir.path(name250)).n() == 8);
  r = run_tcsolve("solve --input " + quoted(input) + " --backend cpu --variant fp32-simt --output " +
                  quoted(dir.path(name250)) + " --force");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(tcsolve::read_solution(dir.path(name250)).x.rows() == 8);
  r = compare(input, "--csv " + quoted(dir.path(name255)));
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(read_file(dir.path(name255)).rfind("method,", 0) == 0);
  CHECK(read_file(input) == before);
  CHECK(dir.entries() == std::vector<std::string>{name255, name250, "sys.h5"});
  CHECK_FALSE(dir.has_temporary());
}

TEST_CASE("a temporary of a long name stays within NAME_MAX, unique, registered and whole UTF-8",
          "[output]") {
  Scratch dir;
  tcsolve::TempFileRegistry registry;
  tcsolve::OutputOptions options;
  options.temporaries = &registry;
  const long name_max = ::pathconf(dir.path(".").c_str(), _PC_NAME_MAX);
  const std::size_t longest = name_max > 0 ? static_cast<std::size_t>(name_max) : 255;
  // Two names alike in their first 250 bytes, and one of two-byte characters (U+00E9).
  const std::string a = std::string(250, 'a') + "1.txt", b = std::string(250, 'a') + "2.txt";
  std::string accents;
  while (accents.size() + 2 <= longest) accents += "\xC3\xA9";
  {
    tcsolve::TemporaryOutput ta(dir.path(a), options), tb(dir.path(b), options), tc(dir.path(accents), options);
    CHECK(registry.size() == 3);
    CHECK(ta.temporary() != tb.temporary());
    for (const tcsolve::TemporaryOutput* t : {&ta, &tb, &tc}) {
      const std::string name = fs::path(t->temporary()).filename().string();
      INFO(name);
      CHECK(name.size() <= longest);
      CHECK(contains(name, std::string(tcsolve::kTemporaryMarker) + std::to_string(::getpid()) + "-"));
      CHECK(fs::exists(t->temporary()));
      CHECK(tcsolve::find_stale_temporaries(t->temporary()).empty());  // ours, alive
    }
    // Cut between characters: the accented prefix is an even number of bytes, each pair é.
    const std::string name = fs::path(tc.temporary()).filename().string();
    const std::string prefix = name.substr(0, name.find(tcsolve::kTemporaryMarker));
    CHECK(prefix.size() % 2 == 0);
    CHECK(accents.compare(0, prefix.size(), prefix) == 0);
    ta.write("a", 1);
    tb.write("b", 1);
    ta.publish();
    tb.publish();
  }  // tc never published: removed
  CHECK(read_file(dir.path(a)) == "a");
  CHECK(read_file(dir.path(b)) == "b");
  CHECK(registry.size() == 0);
  CHECK(dir.entries() == std::vector<std::string>{a, b});
}

TEST_CASE("an output under a regular file is refused as 'is not a directory', naming it", "[output]") {
  Scratch dir;
  const std::string input = dir.path("sys.h5");
  small_system(input);
  const std::string before = read_file(input);
  const std::vector<std::string> names = dir.entries();
  for (const std::string& out : {input + "/k.h5", input + "/sub/k.h5"})
    for (const std::string& command :
         {"generate --n 8 --mode random --backend cpu --output " + quoted(out),
          "solve --input " + quoted(input) + " --backend cpu --variant fp32-simt --output " + quoted(out),
          "compare --input " + quoted(input) + " --backend cpu --variants fp32-simt --csv " + quoted(out)}) {
      const CommandResult r = run_tcsolve(command);
      INFO(r);
      CHECK(r.exit_code == 2);
      CHECK(tcsolve::test::count_lines(r.err) == 1);
      CHECK(contains(r.err, out + ": '" + input + "' is not a directory"));
      CHECK(r.out.empty());
      CHECK(read_file(input) == before);
      CHECK(dir.entries() == names);
    }
  // A folder that is really missing is still called missing.
  const CommandResult r = run_tcsolve("generate --n 8 --backend cpu --output " + quoted(dir.path("no/k.h5")));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, dir.path("no/k.h5") + ": directory '" + dir.path("no") + "' does not exist"));
}

TEST_CASE("--csv /dev/stdout and /dev/stderr write the CSV to the stream: a pipe or the shell's file",
          "[output]") {
  Scratch dir;
  const std::string input = dir.path("sys.h5");
  small_system(input);
  const std::string before = read_file(input);
  // stdout a pipe (popen): the table and the CSV.
  CommandResult r = compare(input, "--csv /dev/stdout");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "fp32-simt"));
  CHECK((contains(r.out, "\nmethod,") || r.out.rfind("method,", 0) == 0));
  CHECK(dir.entries() == std::vector<std::string>{"sys.h5"});
  // stderr, with --force too (nothing is replaced, so it changes nothing).
  for (const char* path : {"/dev/stderr", "/dev/fd/2"}) {
    r = compare(input, std::string("--force --csv ") + path);
    INFO(r);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "method,"));
    CHECK_FALSE(contains(r.out, "method,"));
  }
  // stdout redirected by the shell to a file: the file is written through, never replaced.
  const std::string log = dir.path("log.txt");
  write_text(log, "");
  struct stat st {};
  REQUIRE(::stat(log.c_str(), &st) == 0);
  const ino_t inode = st.st_ino;
  r = compare(input, "--csv /dev/stdout >> " + quoted(log));
  INFO(r);
  CHECK(r.exit_code == 0);
  const std::string text = read_file(log);
  CHECK(contains(text, "fp32-simt"));
  CHECK(contains(text, "method,"));
  REQUIRE(::stat(log.c_str(), &st) == 0);
  CHECK(st.st_ino == inode);
  CHECK(read_file(input) == before);
  CHECK(dir.entries() == std::vector<std::string>{"log.txt", "sys.h5"});
  CHECK_FALSE(dir.has_temporary());
}

TEST_CASE("a standard stream's name is written directly, never registered or removed", "[output]") {
  tcsolve::TempFileRegistry registry;
  tcsolve::OutputOptions options;
  options.temporaries = &registry;
  CHECK(tcsolve::check_output("/dev/stderr", options).empty());
  {
    tcsolve::TemporaryOutput out("/dev/stderr", options);
    CHECK(registry.size() == 0);
    CHECK(out.temporary() == "/dev/stderr");
    CHECK(out.fd() > 2);
    out.write("", 0);
  }  // discarded: /dev/stderr is still there
  CHECK(fs::exists("/dev/stderr"));
  tcsolve::TemporaryOutput out("/dev/fd/2", options);
  out.publish();
  CHECK(out.fd() == -1);
  CHECK(::fcntl(STDERR_FILENO, F_GETFL) >= 0);  // our descriptor 2 is left open
}
