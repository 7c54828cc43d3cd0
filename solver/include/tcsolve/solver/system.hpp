// Linear systems and their HDF5 files (ARCHITECTURE.md, "HDF5 files"): datasets A (n x n), b (n
// or n x nrhs) and optional x (true solution), float64 or float32, row-major as h5py writes.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <optional>
#include <string>

namespace tcsolve {

/// A x = b held in FP64 (column-major in memory whatever the file's layout).
struct LinearSystem {
  Eigen::MatrixXd A;                     ///< n x n
  Eigen::MatrixXd b;                     ///< n x nrhs
  std::optional<Eigen::MatrixXd> x_true; ///< n x nrhs when known
  bool b_is_vector = true;               ///< b was a 1-D dataset (solutions are written 1-D too)
  std::string description;               ///< provenance, stored as the file attribute "description"
  int n() const { return static_cast<int>(A.rows()); }
  int nrhs() const { return static_cast<int>(b.cols()); }
};

/// Reads and validates a system file. Throws InvalidInput naming the file, the dataset and the
/// problem: missing file, not HDF5, A or b missing, A not square or not 2-D, b's length not n,
/// x's shape not b's, a non-float dataset, NaN or inf in A or b.
LinearSystem read_system(const std::string& path);

/// Writes A, b (1-D when b_is_vector and nrhs == 1), x_true when present, and the description,
/// float64, row-major. The file is written to a temporary name beside `path` and renamed; an
/// existing `path` is refused unless `force`. Throws InvalidInput on refusal or I/O failure.
void write_system(const std::string& path, const LinearSystem& system, bool force);

/// What a solve writes beside the solution (ARCHITECTURE.md: attributes of the output file).
struct SolutionAttributes {
  std::string variant, backend;
  int iterations = 0;
  double backward_error = 0;
  bool converged = false;
};

/// Writes dataset x (n, or n x nrhs) and the attributes; temporary file + rename; refuses an
/// existing file without `force`, and always refuses `path` equal to `input_path` (same file:
/// std::filesystem::equivalent when both exist, else equal absolute normal paths; an empty
/// `input_path` names no input). Attribute types: variant, backend variable-length UTF-8
/// strings; iterations int32; backward_error float64; converged h5py's bool (int8 enum FALSE = 0,
/// TRUE = 1, read by h5py as numpy.bool_).
void write_solution(const std::string& path, const Eigen::MatrixXd& x, bool as_vector,
                    const SolutionAttributes& attributes, bool force, const std::string& input_path);

/// A solution file read back (tests, scripts): x (n x nrhs, column-major), whether it was 1-D.
struct Solution {
  Eigen::MatrixXd x;
  bool x_is_vector = true;
  SolutionAttributes attributes;
};

/// Reads a file written by write_solution. Throws InvalidInput ("<file>: <dataset or
/// attribute>: <problem>") when x or an attribute is missing or malformed.
Solution read_solution(const std::string& path);

/// Throws InvalidInput "<path>: exists (use --force to overwrite)" when `path` exists and not
/// `force`, and "<path>: is a directory" when it is one. The writers call it; commands call it
/// before long work so that a refusal comes first.
void check_output_path(const std::string& path, bool force);

}  // namespace tcsolve
