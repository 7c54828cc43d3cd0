// Linear systems and their HDF5 files (docs/architecture.md, "HDF5 files"): datasets A (n x n), b (n
// or n x nrhs) and optional x (true solution), float64 or float32, row-major as h5py writes.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tcsolve/io/output_file.hpp"
#include "tcsolve/solver/block_cyclic.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve {

/// How a file's 2-D datasets are laid out. row_major: as h5py/NumPy (C order) write, element
/// (i, j) of an array of dims (r, c) at offset i c + j. column_major: as MATLAB, Fortran, Julia
/// and R write through HDF5, which store an r x c array with its dims reversed (c, r): the
/// matrix is the dataset transposed (A(i, j) = the file's A[j][i]; a b of dims (nrhs, n) is
/// n x nrhs).
enum class Layout { row_major, column_major };
Layout parse_layout(std::string_view name);  ///< "row-major" | "column-major"
std::string_view to_string(Layout layout);

/// What a system file declares, read from its metadata alone (no data): used to check the
/// memory a command needs before anything is allocated.
struct SystemShape {
  std::int64_t n = 0, nrhs = 0;
  bool has_x = false;
  int a_bytes_per_element = 8;  ///< 8 float64, 4 float32 (in the file)
};

/// Whether `path` is an HDF5 file (its signature, as H5Fis_hdf5 finds it); false when it is
/// missing, unreadable or anything else. Never throws.
bool is_hdf5_file(const std::string& path);

/// The shapes of a system file, checked as read_system checks them (same errors), without
/// reading the data.
SystemShape inspect_system(const std::string& path, Layout layout = Layout::row_major);

/// Reads and validates a system file. Throws InvalidInput naming the file, the dataset and the
/// problem: missing file, not HDF5 (a Matrix Market file is named as such), A or b missing, A
/// not square or not 2-D, b's length not n, x's shape not b's, a non-float dataset, NaN or inf
/// in A or b.
LinearSystem read_system(const std::string& path, Layout layout = Layout::row_major);

/// One process' part of a system file for the distributed solver (tcsolve/solver/
/// block_cyclic.hpp): its piece of A, and b and x whole (n x nrhs: small beside A).
struct SystemPiece {
  /// A's rows rows.global(i, prow) and columns cols.global(j, pcol), column-major with leading
  /// dimension ld = max(1, local rows): ScaLAPACK's local array.
  std::vector<double> a;
  int ld = 1, local_rows = 0, local_cols = 0;
  Eigen::MatrixXd b;
  bool b_is_vector = true;
  std::optional<Eigen::MatrixXd> x_true;
  std::string description;
};

/// Reads this process' piece of A (2D block-cyclic: `rows` dealt over the process rows, this
/// being process row `prow`; `cols` over the process columns, this one `pcol`) by one HDF5
/// hyperslab selection of exactly its elements -- nothing else of A is read, so no process holds
/// more than its piece -- and b and x whole. The file is checked as read_system checks it (same
/// errors); rows.n and cols.n must be A's order (InvalidInput otherwise). A non-finite entry of
/// the piece is named by its file index, as read_system names it.
SystemPiece read_system_piece(const std::string& path, Layout layout, const CyclicMap& rows, int prow,
                              const CyclicMap& cols, int pcol);

/// Writes A, b (1-D when b_is_vector and nrhs == 1), x_true when present, and the description,
/// float64, row-major, by the output rule (output_file.hpp: never an input, an existing regular
/// file only with options.force, a temporary beside `path` renamed over it). Throws
/// InvalidInput on refusal or I/O failure.
void write_system(const std::string& path, const LinearSystem& system, const OutputOptions& options);
/// write_system with OutputOptions{force}: no inputs, no registry (tests, scripts).
inline void write_system(const std::string& path, const LinearSystem& system, bool force) {
  OutputOptions options;
  options.force = force;
  write_system(path, system, options);
}

/// What a solve writes beside the solution (docs/architecture.md: attributes of the output file).
struct SolutionAttributes {
  std::string variant, backend;
  int iterations = 0;
  double backward_error = 0;
  bool converged = false;
};

/// Writes dataset x (n, or n x nrhs) and the attributes by the output rule (output_file.hpp:
/// never one of options.inputs, an existing regular file only with options.force, a temporary
/// beside `path` renamed over it). Attribute types: variant, backend variable-length UTF-8
/// strings; iterations int32; backward_error float64; converged h5py's bool (int8 enum FALSE = 0,
/// TRUE = 1, read by h5py as numpy.bool_). Throws InvalidInput on refusal or I/O failure.
void write_solution(const std::string& path, const Eigen::MatrixXd& x, bool as_vector,
                    const SolutionAttributes& attributes, const OutputOptions& options);

/// A solution file read back (tests, scripts): x (n x nrhs, column-major), whether it was 1-D.
struct Solution {
  Eigen::MatrixXd x;
  bool x_is_vector = true;
  SolutionAttributes attributes;
};

/// Reads a file written by write_solution. Throws InvalidInput ("<file>: <dataset or
/// attribute>: <problem>") when x or an attribute is missing or malformed.
Solution read_solution(const std::string& path);

}  // namespace tcsolve
