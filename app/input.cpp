// Reading the system of solve/compare and the memory checks (input.hpp).
#include "input.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/io/matrix_market.hpp"
#include "tcsolve/io/numpy_system.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::app {

void add_layout_option(po::options_description& options) {
  options.add_options()(
      "layout", po::value<std::string>()->default_value("row-major")->value_name("row-major|column-major"),
      "row-major (h5py, NumPy: the default) | column-major (MATLAB, Fortran, Julia, R: "
      "their HDF5 datasets are the matrices transposed)");
}

Layout layout_option(const po::variables_map& vm) {
  if (!vm.count("layout")) return Layout::row_major;
  const std::string& name = vm["layout"].as<std::string>();
  if (name != "row-major" && name != "column-major")
    throw InvalidInput("--layout must be row-major or column-major, got '" + name + "'");
  return parse_layout(name);
}

void add_rhs_option(po::options_description& options) {
  options.add_options()(
      "rhs", po::value<std::string>()->value_name("B.npy"),
      "with an --input .npy matrix A: b from this .npy file, shape (n,) or (n, nrhs) (without it, "
      "x = ones and b = A x)");
}

std::string rhs_option(const po::variables_map& vm) {
  if (!vm.count("rhs")) return {};
  const std::string& rhs = vm["rhs"].as<std::string>();
  if (rhs.empty()) throw InvalidInput("--rhs needs a file name (a .npy b)");
  return rhs;
}

std::uint64_t host_memory_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t value = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return value * 1024;  // kB
  }
  return 0;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : bytes < 10 ? "%.2f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

void require_host_memory(const std::string& what, double needed) {
  const std::uint64_t available = host_memory_available();
  if (available == 0 || needed <= static_cast<double>(available)) return;
  throw InvalidInput(what + " needs " + format_bytes(needed) + " of host memory; " +
                     format_bytes(static_cast<double>(available)) + " available (MemAvailable)");
}

void require_device_memory(const std::string& what, double needed) {
  const cuda::DeviceMemory memory = cuda::device_memory();
  if (memory.total == 0 || needed <= static_cast<double>(memory.free)) return;
  throw InvalidInput(what + " needs " + format_bytes(needed) + " of GPU memory; " +
                     format_bytes(static_cast<double>(memory.free)) + " free of " +
                     format_bytes(static_cast<double>(memory.total)) + " (" + cuda::device_name() + ")");
}

SolveMemory solve_memory(std::int64_t n, std::int64_t nrhs, Backend backend, bool fallback) {
  const double n2 = static_cast<double>(n) * static_cast<double>(n);
  const double vectors = 16.0 * static_cast<double>(n) * static_cast<double>(nrhs) * 8;  // b, x, r, d, ...
  SolveMemory m;
  // Reading: the file's buffer and A (FP64) at once.
  const double read = 16 * n2 + vectors;
  if (backend == Backend::cuda) {
    m.host = read;
    SolveOptions options;
    options.fallback = fallback;
    m.device = cuda_solve_bytes(n, nrhs, options);  // the library's own check (solver.hpp)
  } else {
    // A, the FP32 LU and, when it may run, the FP64 LU of the fallback.
    m.host = std::max(read, (fallback ? 20 : 12) * n2 + vectors);
  }
  return m;
}

bool is_matrix_market_input(const std::string& path) {
  return is_matrix_market_file(path) || (has_matrix_market_extension(path) && !is_hdf5_file(path));
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) std::cerr << "tcsolve: warning: " << warning << std::endl;
}

LinearSystem load_system(const std::string& path, Layout layout, Backend backend, bool fallback,
                         Progress& progress, std::vector<std::string>* warnings, const std::string& rhs) {
  if (is_numpy_file(path)) {
    const SystemShape shape = inspect_numpy_system(path, rhs);
    const SolveMemory need = solve_memory(shape.n, shape.nrhs, backend, fallback);
    const std::string what = path + ": A: " + std::to_string(shape.n) + " x " + std::to_string(shape.n) +
                             " (NumPy): the solve on " + std::string(to_string(backend));
    require_host_memory(what, need.host);
    if (backend == Backend::cuda) require_device_memory(what, need.device);
    progress.step("reading " + path + (rhs.empty() ? "" : " and " + rhs));
    return read_numpy_system(path, rhs);
  }
  if (!rhs.empty())
    throw InvalidInput(
        "--rhs " + rhs + ": b from its own file goes with an --input .npy matrix; " + path +
        (is_matrix_market_input(path) ? " is Matrix Market (b = A x with x = ones)" : " holds its own b"));
  if (is_matrix_market_input(path)) {
    const std::int64_t n = matrix_market_order(path);
    if (n > 0) {
      const SolveMemory need = solve_memory(n, 1, backend, fallback);
      const std::string what =
          path + ": n = " + std::to_string(n) + " (Matrix Market, held dense): the solve";
      require_host_memory(what, need.host);
      if (backend == Backend::cuda) require_device_memory(what, need.device);
    }
    progress.step("importing " + path + " (Matrix Market; x = ones, b = A x)");
    std::vector<std::string> read_warnings;
    LinearSystem sys = import_matrix_market(path, RhsKind::ones, 1, &read_warnings);
    print_warnings(read_warnings);
    if (warnings != nullptr) warnings->insert(warnings->end(), read_warnings.begin(), read_warnings.end());
    return sys;
  }
  const SystemShape shape = inspect_system(path, layout);
  const SolveMemory need = solve_memory(shape.n, shape.nrhs, backend, fallback);
  const std::string what = path + ": A: " + std::to_string(shape.n) + " x " + std::to_string(shape.n) +
                           (shape.nrhs > 1 ? ", " + std::to_string(shape.nrhs) + " right-hand sides" : "") +
                           ": the solve on " + std::string(to_string(backend));
  require_host_memory(what, need.host);
  if (backend == Backend::cuda) require_device_memory(what, need.device);
  progress.step("reading " + path);
  return read_system(path, layout);
}

}  // namespace tcsolve::app
