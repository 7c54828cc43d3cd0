// Linear systems from NumPy files: a .npz archive holding arrays A, b and optionally x (as
// np.savez or np.savez_compressed write them: the layout of the HDF5 system files), or a .npy
// matrix A with b from a second .npy file, or alone (x = ones, b = A x, as Matrix Market input).
#pragma once

#include <string>

#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve {

/// Whether `path` is read as NumPy: a name ending in ".npy" or ".npz" (case-insensitive), or a
/// file that starts with the .npy magic string or a ZIP signature. Never throws.
bool is_numpy_file(const std::string& path);

/// The system's shapes from the arrays' headers alone (read_numpy_system's checks, its errors,
/// no data): to check the memory a command needs before anything is allocated. A lone matrix
/// has nrhs 1 and has_x (x = ones).
SystemShape inspect_numpy_system(const std::string& path, const std::string& rhs_path = {});

/// Reads a system from NumPy files, into FP64 whatever the dtype:
/// - `path` a .npz archive (rhs_path empty): arrays A (n, n), b (n,) or (n, nrhs) and optional x
///   (b's shape); entries stored or deflated;
/// - `path` a .npy matrix A (n, n) and `rhs_path` a .npy b (n,) or (n, nrhs);
/// - `path` a .npy matrix alone: x_true = ones, b = A x_true (b a vector).
/// dtypes float64, float32 and integers (up to 2^53 in magnitude), little-endian; C order
/// (row-major: A(i, j) = A[i][j]) and Fortran order both read as NumPy indexes them, so no
/// layout option applies. Throws InvalidInput "<file>: <array>: <problem>" (archive-level
/// problems "<file>: <problem>", an archive entry's "<file>: <entry>: <problem>"): a missing or
/// unreadable file, not .npy or not ZIP, an unknown .npy version, compression method or
/// encryption, a truncated file or entry, a CRC-32 mismatch, a big-endian, object, complex, bool,
/// string or structured dtype, A not 2-D, not square or empty, b's rows not A's (both files
/// named), x's shape not b's, A or b missing from an archive, a second file for b given with an
/// archive, NaN or inf.
LinearSystem read_numpy_system(const std::string& path, const std::string& rhs_path = {});

}  // namespace tcsolve
