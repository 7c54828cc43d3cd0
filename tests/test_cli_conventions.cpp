// The command line's conventions, run through the built executable: one JSON object on every
// exit path with --json (errors included), `versions` in every JSON and `tcsolve --version`,
// --progress, --layout, Matrix Market input to solve/compare, sizes checked against the memory
// available before anything is allocated, cheap contradictions refused before any work.
#include <hdf5.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "temp_dir.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/io/system_file.hpp"

namespace {

using namespace tcsolve::test;
namespace fs = std::filesystem;

using tcsolve::test::TempDir;

/// The "versions" member of a command's JSON, checked for its six strings.
void check_versions(const Json& doc) {
  const Json* v = doc.find("versions");
  REQUIRE(v != nullptr);
  REQUIRE(v->type == Json::Type::object);
  for (const char* key : {"tcsolve", "commit", "cuda_runtime", "cuda_driver", "cublas", "hdf5"}) {
    INFO(key);
    const Json* item = v->find(key);
    REQUIRE(item != nullptr);
    CHECK(item->type == Json::Type::string);
    CHECK(!item->string.empty());
  }
}

/// A small well-conditioned system (diagonally dominant, x = 1..n) written as h5py would.
tcsolve::LinearSystem small_system(int n) {
  tcsolve::LinearSystem sys;
  sys.A = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) sys.A(i, j) = i == j ? 4.0 * n : 1.0 / (1 + i + 2 * j);
  Eigen::MatrixXd x(n, 1);
  for (int i = 0; i < n; ++i) x(i, 0) = i + 1;
  sys.b = sys.A * x;
  sys.x_true = x;
  return sys;
}

/// An HDF5 file whose datasets A (n x n) and b (n) are declared but never written (chunked:
/// nothing is stored), so the file is a few KiB whatever n says.
void write_declared_only(const std::string& path, hsize_t n) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(file >= 0);
  for (int rank : {2, 1}) {
    const hsize_t dims[2] = {n, n}, chunk[2] = {64, rank == 2 ? hsize_t{64} : hsize_t{1}};
    const hid_t space = H5Screate_simple(rank, dims, nullptr);
    const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(create, rank, chunk);
    const hid_t d = H5Dcreate2(file, rank == 2 ? "A" : "b", H5T_IEEE_F64LE, space, H5P_DEFAULT, create,
                               H5P_DEFAULT);
    REQUIRE(d >= 0);
    H5Dclose(d);
    H5Pclose(create);
    H5Sclose(space);
  }
  H5Fclose(file);
}

/// The host's MemAvailable in bytes (/proc/meminfo), 0 when it cannot be read.
double host_memory_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  double kb = 0;
  while (meminfo >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

/// run_tcsolve(args) and the seconds it took.
struct TimedRun {
  CommandResult result;
  double seconds;
};
TimedRun run_timed(const std::string& args) {
  const auto t0 = std::chrono::steady_clock::now();
  CommandResult r = run_tcsolve(args);
  return {std::move(r), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

}  // namespace

TEST_CASE("tcsolve without a subcommand prints the usage on stderr and exits 2", "[cli]") {
  const CommandResult r = run_tcsolve("");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "Usage: tcsolve <subcommand>"));
}

TEST_CASE("tcsolve --version names the tool, commit, CUDA, cuBLAS and HDF5 versions", "[cli]") {
  CommandResult r = run_tcsolve("--version");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "tcsolve 0."));
  CHECK(contains(r.out, "commit "));
  CHECK(contains(r.out, "CUDA runtime "));
  CHECK(contains(r.out, "cuBLAS "));
  CHECK(contains(r.out, "HDF5 1."));
  r = run_tcsolve("--version --json");
  INFO(r);
  CHECK(r.exit_code == 0);
  const Json doc = require_one_object(r);
  check_versions(doc);
}

TEST_CASE("every subcommand prints one JSON error object with --json on a bad option, exit 2", "[cli]") {
  for (const char* sub : {"solve", "compare", "variants", "gemm-bench", "generate", "import", "probe",
                          "kmeans", "ffn"}) {
    const CommandResult r = run_tcsolve(std::string(sub) + " --json --no-such-option 3");
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "no-such-option"));  // stderr keeps its line
    const Json doc = require_one_object(r);
    const Json* command = doc.find("command");
    REQUIRE(command != nullptr);
    CHECK(command->string == sub);
    const Json* error = doc.find("error");
    REQUIRE(error != nullptr);
    const Json* code = error->find("exit_code");
    const Json* message = error->find("message");
    REQUIRE(code != nullptr);
    REQUIRE(message != nullptr);
    CHECK(code->number == 2);
    CHECK(contains(message->string, "no-such-option"));
    check_versions(doc);
  }
}

TEST_CASE("solve --json on a missing file and an unavailable backend gives the error object", "[cli]") {
  TempDir dir;
  CommandResult r = run_tcsolve("solve --json --input '" + dir.path("missing.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  Json doc = require_one_object(r);
  REQUIRE(doc.find("error") != nullptr);
  CHECK(contains(doc.find("error")->find("message")->string, "missing.h5"));
  CHECK(contains(doc.find("error")->find("message")->string, "no such file"));

  if (!tcsolve::cuda::device_available()) {
    tcsolve::write_system(dir.path("s.h5"), small_system(8), false);
    r = run_tcsolve("solve --json --backend cuda --input '" + dir.path("s.h5") + "'");
    INFO(r);
    CHECK(r.exit_code == 4);
    doc = require_one_object(r);
    CHECK(doc.find("error")->find("exit_code")->number == 4);
  }
}

TEST_CASE("solve's JSON carries versions, condition_estimate and time_s.phases", "[cli]") {
  TempDir dir;
  tcsolve::write_system(dir.path("s.h5"), small_system(12), false);
  const CommandResult r = run_tcsolve("solve --json --backend cpu --input '" + dir.path("s.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 0);
  const Json doc = require_one_object(r);
  check_versions(doc);
  REQUIRE(doc.find("condition_estimate") != nullptr);
  REQUIRE(doc.find("warnings") != nullptr);
  CHECK(doc.find("warnings")->type == Json::Type::array);
  const Json* time = doc.find("time_s");
  REQUIRE(time != nullptr);
  REQUIRE(time->find("phases") != nullptr);
  CHECK(time->find("phases")->type == Json::Type::object);
}

TEST_CASE("--progress always prints progress lines on a pipe, never and auto on a short run none",
          "[cli]") {
  const std::string bench = "gemm-bench --backend cpu --m 8 --n 8 --k 8 --repeats 1 --variants fp16-tc";
  CommandResult r = run_tcsolve(bench + " --progress always");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "gemm-bench: "));
  CHECK(contains(r.err, " s]"));
  for (const char* mode : {"never", "auto"}) {
    r = run_tcsolve(bench + " --progress " + mode);
    INFO(r);
    CHECK(r.exit_code == 0);
    CHECK(!contains(r.err, "gemm-bench: "));  // a run of milliseconds says nothing
  }
  r = run_tcsolve(bench + " --progress sometimes");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "sometimes"));
}

TEST_CASE("solve --layout column-major reads a file written column-major (the transpose)", "[cli]") {
  TempDir dir;
  // A non-symmetric system stored as a column-major writer stores it: the dataset A is A^T.
  tcsolve::LinearSystem sys = small_system(10);
  tcsolve::LinearSystem stored = sys;
  stored.A = sys.A.transpose();
  tcsolve::write_system(dir.path("cm.h5"), stored, false);
  CommandResult r = run_tcsolve("solve --json --backend cpu --layout column-major --input '" +
                                dir.path("cm.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 0);
  Json doc = require_one_object(r);
  // Forward error within a few units of FP64 roundoff times the (small) condition number.
  const double forward = doc.find("forward_error")->number;
  CHECK(forward < 1e-13);
  // Read as row-major, the same file is a different (transposed) system: x disagrees.
  r = run_tcsolve("solve --json --backend cpu --input '" + dir.path("cm.h5") + "'");
  INFO(r);
  doc = require_one_object(r);
  CHECK(doc.find("forward_error")->number > 1e-3);
  r = run_tcsolve("solve --backend cpu --layout diagonal --input '" + dir.path("cm.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--layout"));
}

TEST_CASE("solve and compare read a Matrix Market file directly (x = ones)", "[cli]") {
  TempDir dir;
  {
    std::ofstream mtx(dir.path("m.mtx"));
    mtx << "%%MatrixMarket matrix coordinate real general\n% a comment\n4 4 7\n"
           "1 1 4\n2 2 5\n3 3 6\n4 4 7\n1 2 1\n2 3 -1\n4 1 0.5\n";
  }
  CommandResult r = run_tcsolve("solve --json --backend cpu --input '" + dir.path("m.mtx") + "'");
  INFO(r);
  CHECK(r.exit_code == 0);
  const Json doc = require_one_object(r);
  CHECK(doc.find("n")->number == 4);
  CHECK(doc.find("forward_error")->number < 1e-14);
  r = run_tcsolve("compare --backend cpu --variants fp32-simt --input '" + dir.path("m.mtx") + "'");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "fp32-simt"));
  // Where a system file is required, a Matrix Market file is named as such, with the way out.
  r = run_tcsolve("kmeans --backend cpu --k 2 --input '" + dir.path("m.mtx") + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "Matrix Market"));
}

TEST_CASE("a file declaring a huge A is refused before allocating, naming the sizes", "[cli]") {
  TempDir dir;
  write_declared_only(dir.path("huge.h5"), 100000);
  CHECK(fs::file_size(dir.path("huge.h5")) < 64 * 1024);
  const auto [r, seconds] = run_timed("solve --json --backend cpu --input '" + dir.path("huge.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "huge.h5"));
  CHECK(contains(r.err, "100000 x 100000"));
  CHECK(contains(r.err, "needs "));
  CHECK(contains(r.err, "available"));
  const Json doc = require_one_object(r);
  CHECK(doc.find("error")->find("exit_code")->number == 2);
  CHECK(seconds < 10);  // refused from the metadata, not after reading 80 GB
}

TEST_CASE("a cuda solve larger than the device memory is refused up front with the bytes needed", "[gpu][cli]") {
  const tcsolve::cuda::DeviceMemory memory = tcsolve::cuda::device_memory();
  if (memory.total == 0) {
    WARN("no CUDA device: skipping the device-memory refusal");
    return;
  }
  // The smallest n whose cuda solve (20 n^2 bytes with the FP64 fallback's LU) does not fit the
  // free memory, rounded up to a multiple of 1000; the host check (16 n^2) must pass first.
  const double n_fit = std::sqrt(static_cast<double>(memory.free) / 20.0);
  const long long n = (static_cast<long long>(n_fit) / 1000 + 1) * 1000;
  if (host_memory_available() < 16.0 * static_cast<double>(n) * static_cast<double>(n)) {
    WARN("skipped: the host cannot hold the n = " << n << " system that exceeds the GPU");
    return;
  }
  TempDir dir;
  write_declared_only(dir.path("big.h5"), static_cast<hsize_t>(n));
  const auto [r, seconds] = run_timed("solve --json --backend cuda --input '" + dir.path("big.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "big.h5"));
  CHECK(contains(r.err, std::to_string(n) + " x " + std::to_string(n)));
  CHECK(contains(r.err, "of GPU memory"));
  CHECK(contains(r.err, "free of"));
  CHECK(seconds < 10);  // refused from the metadata, before reading or allocating
}

TEST_CASE("kmeans refuses k above the points before any work", "[cli]") {
  const auto [r, seconds] = run_timed("kmeans --backend cpu --synthetic 100:2 --k 1000000000");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "1000000000"));
  CHECK(contains(r.err, "100 points"));
  CHECK(seconds < 5);
}

TEST_CASE("generate refuses n above 131072 and names the memory when a large n does not fit", "[cli]") {
  TempDir dir;
  // 2^17 is the largest order (tcsolve/solver/generate.hpp); above it the option is refused
  // whatever the memory.
  CommandResult r = run_tcsolve("generate --n 131073 --backend cpu --output '" + dir.path("g.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "131072"));
  // A cpu randsvd of n = 100000 needs about 40 n^2 bytes = 372.5 GiB on the host; random mode goes
  // by blocks of rows (one block in memory), so one block of all 100000 rows (--block-rows; 8 n^2
  // bytes and the margin = 74.6 GiB) is what a host refuses. Refused on machines with less. (The
  // default blocks are not tried: on a big disk they would write the 74.5 GiB file.)
  if (host_memory_available() > 8.0 * 1e10 + 512.0 * 1024 * 1024) {
    WARN("skipped: this machine has the memory for n = 100000 in one block");
    return;
  }
  for (const char* mode : {"random --block-rows 100000", "geometric"}) {
    r = run_tcsolve(std::string("generate --n 100000 --mode ") + mode + " --backend cpu --output '" +
                    dir.path("g.h5") + "'");
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "needs "));
    CHECK(contains(r.err, mode == std::string("geometric") ? "372.5 GiB" : "74.6 GiB of host memory"));
    CHECK(contains(r.err, "MemAvailable"));
    CHECK(!fs::exists(dir.path("g.h5")));
  }
}

TEST_CASE("an A of zeros is refused as exactly singular before any LU, naming the file", "[cli]") {
  TempDir dir;
  write_declared_only(dir.path("zeros.h5"), 3000);  // reads as zeros (HDF5's fill value)
  const auto [r, seconds] = run_timed("solve --backend cpu --input '" + dir.path("zeros.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "zeros.h5"));
  CHECK(contains(r.err, "exactly singular"));
  CHECK(contains(r.err, "column 1 (1-based) is zero"));
  CHECK(seconds < 20);  // an O(n^2) scan, not the cpu LU's O(n^3) (minutes at n = 20000)
}

TEST_CASE("every subcommand's --help --json is one JSON object holding the usage", "[cli]") {
  for (const char* sub : {"solve", "compare", "variants", "gemm-bench", "generate", "import", "probe",
                          "kmeans", "ffn"}) {
    const CommandResult r = run_tcsolve(std::string(sub) + " --help --json");
    INFO(r);
    CHECK(r.exit_code == 0);
    const Json doc = require_one_object(r);
    REQUIRE(doc.find("help") != nullptr);
    CHECK(contains(doc.find("help")->string, std::string("Usage: tcsolve ") + sub));
    check_versions(doc);
  }
}

// --- issue 31: outputs that cannot be written, gnuplot, complete memory checks ----------------

namespace {

/// The gnuplot on PATH, or "".
std::string gnuplot_on_path() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, colon - start) + "/gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = colon + 1;
  }
  return "";
}

/// An HDF5 system file whose A (n x n) and b (n x nrhs) are declared but never written.
void write_declared_system(const std::string& path, hsize_t n, hsize_t nrhs) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(file >= 0);
  for (const char* name : {"A", "b"}) {
    const hsize_t dims[2] = {n, name[0] == 'A' ? n : nrhs}, chunk[2] = {std::min<hsize_t>(n, 64), 64};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(create, 2, chunk);
    const hid_t d = H5Dcreate2(file, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, create, H5P_DEFAULT);
    REQUIRE(d >= 0);
    H5Dclose(d);
    H5Pclose(create);
    H5Sclose(space);
  }
  H5Fclose(file);
}

/// A K-means data file whose X (points x dim, float32) is declared but never written.
void write_declared_points(const std::string& path, hsize_t points, hsize_t dim) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hsize_t dims[2] = {points, dim}, chunk[2] = {64, std::min<hsize_t>(dim, 64)};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(create, 2, chunk);
  const hid_t d = H5Dcreate2(file, "X", H5T_IEEE_F32LE, space, H5P_DEFAULT, create, H5P_DEFAULT);
  REQUIRE(d >= 0);
  H5Dclose(d);
  H5Pclose(create);
  H5Sclose(space);
  H5Fclose(file);
}

/// The system A = I, b = x: every method's first solve is exact, backward error 0.
tcsolve::LinearSystem identity_system(int n) {
  tcsolve::LinearSystem sys;
  sys.A = Eigen::MatrixXd::Identity(n, n);
  Eigen::MatrixXd x(n, 1);
  for (int i = 0; i < n; ++i) x(i, 0) = 0.5 + i;
  sys.b = x;
  sys.x_true = x;
  return sys;
}

}  // namespace

TEST_CASE("compare --plot to a file that cannot be written exits 2, as --csv does", "[cli]") {
  TempDir dir;
  tcsolve::write_system(dir.path("s.h5"), small_system(16), false);
  const std::string base = "compare --backend cpu --variants fp32-simt --input '" + dir.path("s.h5") + "'";
  if (gnuplot_on_path().empty()) WARN("gnuplot is not on PATH: --plot only warns; the plot is not checked");
  // /dev/full: every write fails (ENOSPC), as on a full disk; or the rule refuses a device.
  for (const char* option : {"--csv", "--plot"}) {
    for (const char* json : {"", " --json"}) {
      const CommandResult r = run_tcsolve(base + " " + option + " /dev/full" + json);
      INFO(r);
      if (std::string(option) == "--plot" && gnuplot_on_path().empty()) {
        CHECK(r.exit_code == 0);
        continue;
      }
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, "/dev/full"));
      if (*json) {  // the error object alone: the table is not printed before it
        const Json doc = require_one_object(r);
        CHECK(doc.find("error")->find("exit_code")->number == 2);
      } else {
        CHECK(!contains(r.out, "fp32-simt"));
      }
    }
  }
  CHECK(dir.entries() == std::vector<std::string>{"s.h5"});
  if (::geteuid() != 0) {  // root writes in a read-only directory
    fs::create_directory(dir.path("ro"));
    fs::permissions(dir.path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
    const CommandResult r = run_tcsolve(base + " --plot '" + dir.path("ro/p.png") + "'");
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "ro/p.png"));
    CHECK(fs::is_empty(dir.path("ro")));
    fs::permissions(dir.path("ro"), fs::perms::owner_all);
  }
}

TEST_CASE("compare --plot on a full disk exits 2, as --csv does, and leaves nothing behind", "[cli]") {
  // A full file system: a 16 KiB tmpfs, filled, mounted in a private mount namespace
  // (unshare -rm: no privileges needed where user namespaces are allowed; gone with the process).
  if (run_shell("unshare -rm true", "unshare -rm true").exit_code != 0) {
    WARN("skipped: unshare -rm (a private tmpfs) is not available here");
    return;
  }
  const bool gnuplot = !gnuplot_on_path().empty();
  if (!gnuplot) WARN("gnuplot is not on PATH: only --csv is checked");
  TempDir dir;
  tcsolve::write_system(dir.path("s.h5"), small_system(16), false);
  fs::create_directory(dir.path("full"));
  for (const char* option : {"--csv", "--plot"}) {
    if (std::string(option) == "--plot" && !gnuplot) continue;
    const std::string file = dir.path("full") + (std::string(option) == "--csv" ? "/t.csv" : "/p.png");
    const std::string args = "compare --backend cpu --variants fp32-simt --input '" + dir.path("s.h5") + "' " +
                             option + " '" + file + "'";
    std::ofstream(dir.path("run.sh")) << "mount -t tmpfs -o size=16k tmpfs '" << dir.path("full") << "' || exit 99\n"
                                      << "head -c 65536 /dev/zero > '" << dir.path("full/fill") << "' 2>/dev/null\n"
                                      << "'" << tcsolve_exe() << "' " << args << "\n"
                                      << "status=$?\nls -A '" << dir.path("full") << "' >&2\nexit $status\n";
    const CommandResult r = run_shell("unshare -rm sh '" + dir.path("run.sh") + "'", args);
    INFO(r);
    REQUIRE(r.exit_code != 99);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, file + ": writing failed: No space left on device"));
    CHECK(r.out.empty());  // the table comes after the files: not printed on failure
    CHECK(r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1) == "fill\n");  // no temporary left
  }
}

TEST_CASE("compare --plot with backward errors of 0: a PNG, and nothing of gnuplot's on stderr", "[cli]") {
  if (gnuplot_on_path().empty()) {
    WARN("gnuplot is not on PATH: skipped");
    return;
  }
  TempDir dir;
  tcsolve::write_system(dir.path("id.h5"), identity_system(8), false);
  const CommandResult r = run_tcsolve("compare --backend cpu --variants fp32-simt,fp16-tc --input '" +
                                      dir.path("id.h5") + "' --plot '" + dir.path("p.png") + "' --csv '" +
                                      dir.path("p.csv") + "'");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());  // no raw gnuplot warning (empty ranges, log of 0), no warning of ours
  const std::string png = read_file(dir.path("p.png"));
  REQUIRE(png.size() > 8);
  CHECK(png.compare(0, 4, "\x89PNG") == 0);
  CHECK(dir.entries() == std::vector<std::string>{"id.h5", "p.csv", "p.png"});  // no temporaries
}

TEST_CASE("generate counts --nrhs in its memory check: refused at once, naming the bytes, nothing written",
          "[cli]") {
  // b and x are n x nrhs doubles each: 80 GB apiece at n = 100, nrhs = 1e8.
  if (host_memory_available() > 32.0 * 100 * 1e8) {
    WARN("skipped: this machine has the memory for n = 100, nrhs = 1e8");
    return;
  }
  TempDir dir;
  const auto [r, seconds] =
      run_timed("generate --backend cpu --n 100 --nrhs 100000000 --output '" + dir.path("g.h5") + "' --json");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--nrhs 100000000"));
  CHECK(contains(r.err, "74.5 GiB each"));  // b and x, 8e10 bytes apiece
  CHECK(contains(r.err, "needs 298.5 GiB"));  // 32 n nrhs + 18 n^2 + 512 MiB
  CHECK(contains(r.err, "MemAvailable"));
  CHECK(!contains(r.err, "out of memory"));
  CHECK(require_one_object(r).find("error")->find("exit_code")->number == 2);
  CHECK(seconds < 10);
  CHECK(dir.entries().empty());
}

TEST_CASE("kmeans counts the centroids and the fp64 agreement run in its memory check", "[cli]") {
  // X: points x dim declared only (a few KiB on disk). Reading it needs 12 bytes a value, which
  // fits (0.6 of MemAvailable); with k = points / 2 the centroids (the start, the run's, its FP64
  // sums, the GEMM's copy of them, the result), which the check left out, need about 20 bytes a
  // value of X more: refused up front, before X is read.
  const double available = host_memory_available();
  const double values = available / 20;  // reading: 0.6 of MemAvailable; the whole run: 2.2
  const hsize_t dim = 1000, points = static_cast<hsize_t>(values / dim);
  if (available == 0 || values > 2147483647.0) {
    WARN("skipped: X of " << values << " values exceeds what the file reader takes (2^31 - 1)");
    return;
  }
  TempDir dir;
  write_declared_points(dir.path("x.h5"), points, dim);
  const auto [r, seconds] = run_timed("kmeans --backend cpu --input '" + dir.path("x.h5") + "' --k " +
                                      std::to_string(points / 2) + " --output '" + dir.path("out.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "x.h5: X: " + std::to_string(points) + " x 1000, k = " + std::to_string(points / 2)));
  CHECK(contains(r.err, "with the fp64 agreement run"));
  CHECK(contains(r.err, "needs "));
  CHECK(contains(r.err, "MemAvailable"));
  CHECK(seconds < 10);
  CHECK(dir.entries() == std::vector<std::string>{"x.h5"});
}

TEST_CASE("ffn counts its FP64 reference in its memory check", "[cli]") {
  // d_model 16, T = d_ff: H (d_ff x T) dominates. The reference holds it in FP64 twice (GELU),
  // the runs the FP32 H beside an emulated GEMM's copy of it: about 20 bytes a value of H, where
  // 12 were counted; T d_ff = MemAvailable / 16 fits the old count, not the new one.
  const double available = host_memory_available();
  const long long side = static_cast<long long>(std::sqrt(available / 16));
  if (available == 0 || side > 2147483647LL) {
    WARN("skipped: MemAvailable unknown or too large");
    return;
  }
  const auto [r, seconds] = run_timed("ffn --backend cpu --variants fp32-simt --d-model 16 --tokens " +
                                      std::to_string(side) + " --d-ff " + std::to_string(side) + " --json");
  INFO(r);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--tokens " + std::to_string(side)));
  CHECK(contains(r.err, "needs "));
  CHECK(contains(r.err, "MemAvailable"));
  CHECK(require_one_object(r).find("error")->find("exit_code")->number == 2);
  CHECK(seconds < 10);
}

TEST_CASE("compare holds no solution per row: its peak memory is about one solve's", "[cli]") {
  // n = 64, nrhs = 40000: x is 20 MB. Kept for each of the cpu rows, it added 20 MB a row that
  // the memory check (one solve) did not count; compare reports no solution, so none is kept.
  TempDir dir;
  tcsolve::LinearSystem sys = small_system(64);
  const Eigen::MatrixXd x = Eigen::MatrixXd::Constant(64, 40000, 1.0);
  sys.b = sys.A * x;
  sys.x_true = x;
  tcsolve::write_system(dir.path("many.h5"), sys, false);
  const std::string input = " --backend cpu --input '" + dir.path("many.h5") + "'";
  const MeasuredRun solve = run_tcsolve_measured("solve --variant fp32-simt" + input);
  INFO(solve.result);
  REQUIRE(solve.result.exit_code == 0);
  const std::string variants = "fp32-simt,fp16-tc,tf32-tc,fp16-simt,markidis,ec-fp16,ec-tf32,fp64";
  const MeasuredRun compare = run_tcsolve_measured("compare --variants " + variants + input);
  INFO(compare.result);
  REQUIRE(compare.result.exit_code == 0);
  const double x_bytes = 8.0 * 64 * 40000;
  INFO("peak resident: solve " << solve.max_rss_bytes / 1e6 << " MB, compare " << compare.max_rss_bytes / 1e6
                               << " MB, x " << x_bytes / 1e6 << " MB");
  CHECK(compare.max_rss_bytes < solve.max_rss_bytes + 3 * x_bytes);  // 9 rows kept: + 9 x
}
