// Matrix Market files (NIST's exchange format) read as dense square matrices, and turned into
// systems with a known solution (`tcsolve import`).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tcsolve/solver/system.hpp"

namespace tcsolve {

enum class RhsKind { ones, random };

/// "ones" | "random"; throws InvalidInput otherwise.
RhsKind parse_rhs_kind(std::string_view name);
std::string_view to_string(RhsKind kind);

/// A Matrix Market file read as a dense matrix (import_matrix_market's first step).
struct MatrixMarketMatrix {
  Eigen::MatrixXd A;          ///< n x n, column-major, symmetric parts expanded
  std::string format;         ///< "coordinate" | "array"
  std::string field;          ///< "real" | "integer"
  std::string symmetry;       ///< "general" | "symmetric" | "skew-symmetric"
  long long stored_entries = 0;  ///< entries in the file (the size line's count for coordinate)
  /// What was read but looks wrong, one line each, "<file>:<line>: <what>" or "<file>: <what>"
  /// (the library never prints: the caller shows them): a coordinate entry listed twice
  /// (summed); (i, j) and (j, i) both listed in a symmetric or skew-symmetric file (summed);
  /// entries in the upper triangle of such a file (mirrored as lower ones); real values below
  /// the smallest subnormal (read as 0); 0 entries declared, or every entry zero (A = 0); a
  /// zero row or column (A singular). Each kind once, with the first place and a count.
  std::vector<std::string> warnings;
};

/// Largest order read_matrix_market accepts: 2^17, as generate (tcsolve/solver/generate.hpp:
/// the solver's indices are 64-bit); held dense, whether it fits in memory is the caller's check.
constexpr int kMaxMatrixMarketOrder = 131072;

/// Whether `path` starts with a %%MatrixMarket banner (case-insensitive): the readers of HDF5
/// files name such a file as what it is, and solve/compare import it.
bool is_matrix_market_file(const std::string& path);

/// Whether the file name ends in ".mtx" or ".mtx.gz" (case-insensitive): such a file is read as
/// Matrix Market whatever its content (an empty one is named empty, not "not HDF5"). A gzip
/// file (gzip's magic bytes, whatever its name) is decompressed as it is read, by every
/// function here.
bool has_matrix_market_extension(const std::string& path);

/// The order (rows) on the size line of a Matrix Market file, 0 when it cannot be read or has
/// none: a cheap look before the memory checks (reads up to the size line only).
std::int64_t matrix_market_order(const std::string& path);

/// Parses a Matrix Market file: the %%MatrixMarket banner (object matrix; coordinate or array;
/// real or integer; general, symmetric or skew-symmetric; pattern, complex and hermitian are
/// rejected), % comments and blank lines, the size line, then the entries with 1-based indices
/// (coordinate: "i j value", duplicates summed; array: values column by column, the lower
/// triangle only for symmetric and the strictly lower one for skew-symmetric). Symmetric files
/// are mirrored (A(j, i) = A(i, j)), skew-symmetric ones negated across the diagonal. Throws
/// InvalidInput "<file>:<line>: <problem>" for malformed input, an index out of range, a wrong
/// entry count, a non-finite value, a value out of range ("real value '1e400' out of range
/// (beyond float64's largest finite value, 1.8e308)", "integer value '...' out of range (beyond
/// 64-bit integers)", the same for indices and sizes) or a matrix that is not square;
/// "<file>: <problem>" when it cannot be read or is empty. Suspicious content is read and
/// named in MatrixMarketMatrix::warnings.
MatrixMarketMatrix read_matrix_market(const std::string& path);

/// Reads a Matrix Market file (coordinate or array; real or integer; general, symmetric or
/// skew-symmetric; symmetric files expanded) as a dense square matrix, and builds the system
/// with x_true = ones or U(-1,1) (seeded) and b = A x_true. Throws InvalidInput naming the file
/// and the line for malformed input, and for non-square or complex/pattern matrices. The
/// reader's warnings (MatrixMarketMatrix::warnings) are appended to `*warnings` when given.
LinearSystem import_matrix_market(const std::string& path, RhsKind rhs, std::uint64_t seed,
                                  std::vector<std::string>* warnings = nullptr);

}  // namespace tcsolve
