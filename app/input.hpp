// What `solve` and `compare` read, and whether it fits: --layout, a system file (HDF5), a Matrix
// Market file (imported in memory) or NumPy files (--rhs), and the host and device memory a
// command needs, checked against what is available before anything is allocated (exit 2 naming
// both).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "progress.hpp"
#include "tcsolve/io/system_file.hpp"

namespace tcsolve::app {

/// Adds `--layout row-major|column-major`.
void add_layout_option(po::options_description& options);
/// The layout from the parsed options; throws InvalidInput naming a bad value.
Layout layout_option(const po::variables_map& vm);

/// Adds `--rhs B.npy`: b of an --input .npy matrix.
void add_rhs_option(po::options_description& options);
/// The --rhs file from the parsed options ("" when not given); throws InvalidInput for an empty
/// name.
std::string rhs_option(const po::variables_map& vm);

/// MemAvailable of /proc/meminfo in bytes (what can be allocated without swapping); 0 when it
/// cannot be read.
std::uint64_t host_memory_available();

/// "1.50 GiB", "312 MiB", "4.0 KiB".
std::string format_bytes(double bytes);

/// Throws InvalidInput "<what> needs <needed> of host memory; <available> available
/// (MemAvailable)" when more is needed than is available (nothing is checked when the
/// available memory is unknown).
void require_host_memory(const std::string& what, double needed);
/// The same for the GPU's free memory (cudaMemGetInfo); nothing is checked without a device.
void require_device_memory(const std::string& what, double needed);

/// Bytes a solve of an n x n system with nrhs right-hand sides needs at its peak, on the host
/// and, for cuda, on the device (A in FP64, its FP32 LU, the FP64 fallback's LU, the vectors).
struct SolveMemory {
  double host = 0, device = 0;
};
SolveMemory solve_memory(std::int64_t n, std::int64_t nrhs, Backend backend, bool fallback);

/// Whether `path` is read as a Matrix Market file: its %%MatrixMarket banner, or a ".mtx" name
/// on a file that is not HDF5 (an empty or damaged one is then named by the Matrix Market
/// reader, not called "not an HDF5 file").
bool is_matrix_market_input(const std::string& path);

/// "tcsolve: warning: <warning>" on stderr, one line each (the readers' warnings).
void print_warnings(const std::vector<std::string>& warnings);

/// The system of `solve` / `compare`: an HDF5 system file read with `layout`, a Matrix Market
/// file (is_matrix_market_input) imported in memory (x = ones, b = A x, as `tcsolve import`
/// does), or NumPy files (tcsolve/io/numpy_system.hpp: a .npz with A and b, a .npy A with b
/// from `rhs`, or a .npy A alone with x = ones, b = A x; they carry their own order, so
/// `layout` does not apply), after checking that the solve fits in memory (solve_memory). The
/// Matrix Market reader's warnings are printed (print_warnings) and, when `warnings` is given,
/// appended to it (for --json). Throws InvalidInput naming the file; `rhs` with an input that
/// is not a .npy matrix is refused.
LinearSystem load_system(const std::string& path, Layout layout, Backend backend, bool fallback,
                         Progress& progress, std::vector<std::string>* warnings = nullptr,
                         const std::string& rhs = {});

}  // namespace tcsolve::app
