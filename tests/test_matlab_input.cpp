// A MATLAB v7.3 MAT-file (HDF5 with a 512-byte user block holding MATLAB's text header, each
// variable a dataset with a MATLAB_class attribute, every array stored column-major, so HDF5
// sees it transposed: an n x n A as the dataset A^T, an n x 1 b as a 1 x n dataset) read with
// `--layout column-major`: the same system as the matrices in memory, and `tcsolve solve` on it.
// The file is written here the way MATLAB's `save -v7.3` lays it out (h5py would give the same
// bytes for the datasets; MATLAB's header text is written into the user block as MATLAB does).
#include <hdf5.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/io/system_file.hpp"
#include "temp_dir.hpp"

namespace {

/// An n x n matrix and an n x 1 vector as MATLAB's `save('m.mat', 'A', 'b', '-v7.3')` stores
/// them: A's dataset has dims (n, n) and holds A column by column (so in C order it is A^T), b's
/// dataset has dims (1, n); both carry MATLAB_class = "double".
void write_mat73(const std::string& path, const Eigen::MatrixXd& A, const Eigen::VectorXd& b) {
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  REQUIRE(H5Pset_userblock(fcpl, 512) >= 0);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t cls = H5Tcopy(H5T_C_S1);
  H5Tset_size(cls, 6);
  const hid_t scalar = H5Screate(H5S_SCALAR);
  auto variable = [&](const char* name, const std::vector<hsize_t>& dims, const double* column_major) {
    const hid_t space = H5Screate_simple(2, dims.data(), nullptr);
    const hid_t ds = H5Dcreate2(file, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(ds >= 0);
    REQUIRE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, column_major) >= 0);
    const hid_t attr = H5Acreate2(ds, "MATLAB_class", cls, scalar, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(H5Awrite(attr, cls, "double") >= 0);
    H5Aclose(attr);
    H5Dclose(ds);
    H5Sclose(space);
  };
  const hsize_t n = static_cast<hsize_t>(A.rows());
  variable("A", {n, n}, A.data());  // Eigen's storage is column-major, as MATLAB's
  variable("b", {1, n}, b.data());
  H5Sclose(scalar);
  H5Tclose(cls);
  H5Fclose(file);
  H5Pclose(fcpl);
  // MATLAB's 128-byte text header at the start of the user block
  std::FILE* f = std::fopen(path.c_str(), "r+b");
  REQUIRE(f != nullptr);
  char header[128];
  std::memset(header, ' ', sizeof header);
  const char* text =
      "MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Sat Nov 28 05:00:00 2026 HDF5 schema 1.00 .";
  std::memcpy(header, text, std::strlen(text));
  header[124] = 0, header[125] = 2, header[126] = 'I', header[127] = 'M';  // version 0x0200, endian "IM"
  REQUIRE(std::fwrite(header, 1, sizeof header, f) == sizeof header);
  std::fclose(f);
}

}  // namespace

TEST_CASE("a MATLAB v7.3 MAT-file reads with the column-major layout as the matrices it saved", "[io]") {
  tcsolve::test::TempDir dir("mat73");
  const int n = 5;
  Eigen::MatrixXd A(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A(i, j) = (i == j ? 8.0 : 0.0) + 0.5 * i - 0.25 * j + 1.0 / (1 + i + 3 * j);
  Eigen::VectorXd b(n);
  for (int i = 0; i < n; ++i) b(i) = 1.0 + i;
  const std::string path = dir.path("system.mat");
  write_mat73(path, A, b);
  REQUIRE(tcsolve::is_hdf5_file(path));  // the user block does not hide the HDF5 signature

  const tcsolve::LinearSystem s = tcsolve::read_system(path, tcsolve::Layout::column_major);
  REQUIRE(s.n() == n);
  REQUIRE(s.nrhs() == 1);
  CHECK(s.A == A);  // A(0, 1) is A(0, 1): not transposed
  CHECK(s.A(0, 1) != s.A(1, 0));
  CHECK(s.b.col(0) == b);
  // the default (row-major, h5py's) would read A^T and a 1 x n b: refused, naming b
  try {
    tcsolve::read_system(path);
    FAIL("the row-major layout read a MATLAB file");
  } catch (const std::exception& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("b") != std::string::npos);
  }

  const tcsolve::test::CommandResult r =
      tcsolve::test::run_tcsolve("solve --input '" + path + "' --layout column-major --backend cpu --json");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"converged\": true") != std::string::npos);
}
