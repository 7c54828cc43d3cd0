// A system file written piece by piece (issue 33: systems larger than host memory): the same
// datasets and attribute as write_system (system_file.hpp) -- A (n x n), b (n, or n x nrhs), x
// optional, float64, row-major as h5py writes, and the description -- but A arrives by blocks of
// rows, so that no more than a block is ever in memory, and the file is written where it will
// live, not built in memory.
//
// The output rule (output_file.hpp) as for every written file: refused when it is an input, or
// exists without force; written to a temporary "<name>.tcsolve-tmp-<pid>-<k>" beside it (recorded
// in options.temporaries, so a SIGINT/SIGTERM handler removes it), published by commit() (synced,
// renamed), removed by the destructor when commit() was not reached.
//
// Layout. HDF5 (its default sec2 driver, on the temporary) creates the datasets contiguous and
// allocated at once (no fill: every byte is written afterwards) and closes the file before any
// data is written; the data are then written by pwrite(2) at each dataset's offset in the file
// (H5Dget_offset): a block of rows of a contiguous row-major dataset is one run of bytes. Why
// contiguous and not chunked: each block is written once, in place, with no chunk cache and no
// read-modify-write of a chunk a block boundary cuts; and HDF5 holds no open file while the
// long generation runs (a write that fails inside HDF5 -- disk full -- leaves HDF5 1.10 with a
// half-closed file it crashes on at exit: hdf5_file.hpp). write_system stores A of 64 Ki to 4 Mi
// elements deflated in chunks instead: the values read back are the same, bit for bit, the
// bytes of the file are not (U(-1, 1) doubles hardly compress).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tcsolve/io/output_file.hpp"

namespace tcsolve {

class SystemWriter {
 public:
  /// What the file will hold.
  struct Shape {
    std::int64_t n = 0;      ///< order of A
    std::int64_t nrhs = 1;   ///< columns of b (and x)
    bool b_is_vector = true; ///< b (and x) 1-D when nrhs == 1
    bool has_x = true;       ///< a dataset x (the true solution)
  };

  /// Bytes of the file for `shape` (the data and about 4 KiB of HDF5 metadata): what the disk
  /// must have free.
  static double file_bytes(const Shape& shape);

  /// Checks `path` by the output rule, creates the temporary beside it with the datasets and the
  /// description attribute. Throws InvalidInput "<path>: <problem>" (a refusal; n < 1 or nrhs <
  /// 1; a standard stream's name such as /dev/stdout: an HDF5 file written in place needs a
  /// regular file; HDF5 failing to create it) and leaves nothing behind.
  SystemWriter(const std::string& path, const Shape& shape, const std::string& description,
               OutputOptions options);
  SystemWriter(const SystemWriter&) = delete;
  SystemWriter& operator=(const SystemWriter&) = delete;
  /// Without commit(): the temporary removed.
  ~SystemWriter();

  /// Rows row0 .. row0 + rows - 1 of A from `a`, rows x n doubles, row-major (A(row0 + r, j) at
  /// a[r n + j]). Throws InvalidInput for rows outside 0..n-1 or a failed write ("<path>: writing
  /// failed: <reason>", the temporary then removed).
  void write_a_rows(std::int64_t row0, std::int64_t rows, const double* a);
  /// Rows row0 .. row0 + rows - 1 of b (rows x nrhs doubles, row-major); as write_a_rows.
  void write_b_rows(std::int64_t row0, std::int64_t rows, const double* b);
  /// Rows of x (rows x nrhs doubles, row-major); as write_a_rows; InvalidInput without has_x.
  void write_x_rows(std::int64_t row0, std::int64_t rows, const double* x);

  /// Checks that every row of A, b and x was written, then syncs the file, checks the rule again
  /// and publishes it (force: replaces the file; else only while the name is free). Throws
  /// InvalidInput (the temporary removed): "<path>: A: row i not written", or the rule's
  /// refusal or failure.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temporary() const;  ///< the temporary's path (tests)

 private:
  struct Dataset {
    const char* name;
    std::uint64_t offset = 0;       ///< of element (0, 0) in the file, bytes
    std::int64_t cols = 0;          ///< doubles per row
    std::vector<bool> written;      ///< per row
  };
  void write_rows(Dataset& d, std::int64_t row0, std::int64_t rows, const double* data);

  std::string path_;
  Shape shape_;
  std::unique_ptr<TemporaryOutput> out_;
  Dataset a_{"A", 0, 0, {}}, b_{"b", 0, 0, {}}, x_{"x", 0, 0, {}};
};

}  // namespace tcsolve
