// System files, generated and imported systems ([io]): HDF5 round trips and layout (row-major in
// the file, as h5py writes, column-major in memory), every documented bad input with its message,
// the writers' refusals and clean failure, Matrix Market parsing, randsvd condition numbers, and
// the `generate` / `import` subcommands run as a user would.
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "randsvd_test_util.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/io/matrix_market.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/philox.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"

namespace {

namespace fs = std::filesystem;
namespace cli = tcsolve::test;
using tcsolve::InvalidInput;
using tcsolve::LinearSystem;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using tcsolve::test::TempDir;

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

/// An HDF5 file written directly with the C API, for inputs our writer would never produce.
class RawFile {
 public:
  explicit RawFile(const std::string& path)
      : id_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {
    REQUIRE(id_ >= 0);
  }
  RawFile(const RawFile&) = delete;
  RawFile& operator=(const RawFile&) = delete;
  ~RawFile() { H5Fclose(id_); }

  /// Dataset `name` of `file_type` and shape `dims` ({} for a scalar), holding `data` in C order
  /// (converted from double by HDF5).
  RawFile& dataset(const char* name, hid_t file_type, const std::vector<hsize_t>& dims,
                   const std::vector<double>& data) {
    const hid_t space = dims.empty() ? H5Screate(H5S_SCALAR)
                                     : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t ds = H5Dcreate2(id_, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(ds >= 0);
    if (!data.empty())
      REQUIRE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
    H5Dclose(ds);
    H5Sclose(space);
    return *this;
  }
  RawFile& matrix(const char* name, hsize_t rows, hsize_t cols, double fill = 1.0) {
    std::vector<double> data(rows * cols, fill);
    for (hsize_t i = 0; i < rows && i < cols; ++i) data[i * cols + i] = 4.0;
    return dataset(name, H5T_IEEE_F64LE, {rows, cols}, data);
  }
  RawFile& vector(const char* name, hsize_t n) {
    return dataset(name, H5T_IEEE_F64LE, {n}, std::vector<double>(n, 1.0));
  }
  RawFile& group(const char* name) {
    const hid_t g = H5Gcreate2(id_, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(g >= 0);
    H5Gclose(g);
    return *this;
  }

 private:
  hid_t id_;
};

/// The raw contents of dataset `name` in file order, and its shape.
std::vector<double> read_raw(const std::string& path, const char* name, std::vector<hsize_t>& dims) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  REQUIRE(ds >= 0);
  const hid_t space = H5Dget_space(ds);
  dims.assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)), 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  std::vector<double> data(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  REQUIRE(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
  H5Sclose(space);
  H5Dclose(ds);
  H5Fclose(file);
  return data;
}

/// The non-symmetric test matrix of tests/data/rowmajor_3x3.h5, built in memory.
Eigen::MatrixXd rowmajor_A() {
  Eigen::MatrixXd A(3, 3);
  A << 1, 2, 3,  //
      4, 5, 6,   //
      7, 8, 10;
  return A;
}

/// A small well-formed system: A non-symmetric n x n, b n x nrhs.
LinearSystem small_system(int n, int nrhs) {
  LinearSystem s;
  s.A.resize(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) s.A(i, j) = (i == j ? n : 0) + 0.25 * i - 0.125 * j + 1.0 / (1 + i + 2 * j);
  Eigen::MatrixXd x(n, nrhs);
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) x(i, j) = 1.0 - 0.5 * i + 3.0 * j;
  s.b = s.A * x;
  s.x_true = x;
  s.b_is_vector = nrhs == 1;
  s.description = "small test system";
  return s;
}

/// The message of the InvalidInput `f` throws; fails the test when it throws nothing else.
std::string invalid_input_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  FAIL("no InvalidInput thrown");
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

/// The output rule with `force` and one input (none when empty), no registry.
tcsolve::OutputOptions output_rule(bool force, const std::string& input) {
  tcsolve::OutputOptions options;
  options.force = force;
  if (!input.empty()) options.inputs.push_back(input);
  return options;
}

bool has_temporary_file(const TempDir& dir) {
  for (const std::string& name : dir.entries())
    if (contains(name, std::string(tcsolve::kTemporaryMarker))) return true;
  return false;
}

double cond2(const Eigen::MatrixXd& A) {
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(A);
  const Eigen::VectorXd& s = svd.singularValues();
  return s(0) / s(s.size() - 1);
}

}  // namespace

// --- HDF5 systems -------------------------------------------------------------------------------

TEST_CASE("write_system then read_system gives back A, b, x and the description bit for bit", "[io]") {
  TempDir dir;
  for (int nrhs : {1, 3}) {
    INFO("nrhs " << nrhs);
    const LinearSystem s = small_system(7, nrhs);
    const std::string path = dir.path("sys" + std::to_string(nrhs) + ".h5");
    tcsolve::write_system(path, s, false);
    const LinearSystem r = tcsolve::read_system(path);
    CHECK(r.A == s.A);
    CHECK(r.b == s.b);
    REQUIRE(r.x_true.has_value());
    CHECK(*r.x_true == *s.x_true);
    CHECK(r.b_is_vector == (nrhs == 1));
    CHECK(r.description == s.description);
    CHECK(r.n() == 7);
    CHECK(r.nrhs() == nrhs);
    std::vector<hsize_t> dims;
    read_raw(path, "b", dims);
    CHECK(dims == (nrhs == 1 ? std::vector<hsize_t>{7} : std::vector<hsize_t>{7, 3}));
  }
  // Without x_true: no dataset x, and none read back.
  LinearSystem s = small_system(4, 1);
  s.x_true.reset();
  tcsolve::write_system(dir.path("nox.h5"), s, false);
  CHECK_FALSE(tcsolve::read_system(dir.path("nox.h5")).x_true.has_value());
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("write_system writes a large A by blocks of rows: read back bit for bit, in C order", "[io]") {
  // 6000^2 = 3.6e7 elements: nine of write_matrix's 2^22-element blocks of 699 rows (the last
  // one partial).
  TempDir dir;
  constexpr int kN = 6000;
  const LinearSystem s = tcsolve::generate_system(kN, 1, tcsolve::SpectrumMode::random, 3);
  const std::string path = dir.path("large.h5");
  tcsolve::write_system(path, s, false);
  const LinearSystem r = tcsolve::read_system(path);
  CHECK(r.A == s.A);
  CHECK(r.b == s.b);
  std::vector<hsize_t> dims;
  const std::vector<double> raw = read_raw(path, "A", dims);  // the file's own order
  REQUIRE(dims == std::vector<hsize_t>{kN, kN});
  bool c_order = true;
  for (int i : {0, 698, 699, 5591, 5592, kN - 1})  // around blocks' seams (2^22 / 6000 = 699 rows)
    for (int j : {0, 1, kN - 1}) c_order = c_order && raw[static_cast<std::size_t>(i) * kN + j] == s.A(i, j);
  CHECK(c_order);
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("a non-symmetric A is not transposed: h5py's file, our writer and memory agree", "[io]") {
  // tests/data/rowmajor_3x3.h5 was written by h5py 3.7 (numpy 1.24, C order), from the repository root:
  // /usr/bin/python3 -c 'import h5py, numpy as np; f = h5py.File("tests/data/rowmajor_3x3.h5", "w"); f["A"] =
  // np.array([[1, 2, 3], [4, 5, 6], [7, 8, 10]], dtype=np.float64); f["b"] = np.array([[1, 2], [3, 4], [5,
  // 6]], dtype=np.float32); f["x"] = np.array([[0.5, -1], [0.25, 2], [-0.125, 4]], dtype=np.float64);
  // f.attrs["description"] = "row-major test (h5py)"; f.close()'
  const std::string h5py_file = tcsolve::test::test_data_path("tests/data/rowmajor_3x3.h5");
  const Eigen::MatrixXd A = rowmajor_A();
  Eigen::MatrixXd b(3, 2), x(3, 2);
  b << 1, 2, 3, 4, 5, 6;
  x << 0.5, -1, 0.25, 2, -0.125, 4;

  const LinearSystem from_h5py = tcsolve::read_system(h5py_file);
  CHECK(from_h5py.A == A);
  CHECK(from_h5py.A(0, 2) == 3);  // row 0, column 2: the file's A[0][2]
  CHECK(from_h5py.A(2, 0) == 7);
  CHECK(from_h5py.b == b);  // float32 in the file, read exactly
  CHECK_FALSE(from_h5py.b_is_vector);
  REQUIRE(from_h5py.x_true.has_value());
  CHECK(*from_h5py.x_true == x);
  CHECK(from_h5py.description == "row-major test (h5py)");

  // Our writer puts the same bytes in the same order as h5py did.
  TempDir dir;
  LinearSystem s;
  s.A = A;
  s.b = b;
  s.x_true = x;
  s.b_is_vector = false;
  tcsolve::write_system(dir.path("ours.h5"), s, false);
  for (const char* name : {"A", "b", "x"}) {
    INFO(name);
    std::vector<hsize_t> ours_dims, h5py_dims;
    CHECK(read_raw(dir.path("ours.h5"), name, ours_dims) == read_raw(h5py_file, name, h5py_dims));
    CHECK(ours_dims == h5py_dims);
  }
  std::vector<hsize_t> dims;
  CHECK(read_raw(dir.path("ours.h5"), "A", dims) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 10});
  CHECK(tcsolve::read_system(dir.path("ours.h5")).A == A);
}

TEST_CASE("read_system reads float32 A and b and converts them exactly", "[io]") {
  TempDir dir;
  RawFile(dir.path("f32.h5"))
      .dataset("A", H5T_IEEE_F32LE, {2, 2}, {1.5, -2.25, 0.1, 4})
      .dataset("b", H5T_IEEE_F32LE, {2}, {3, 0.3});
  const LinearSystem s = tcsolve::read_system(dir.path("f32.h5"));
  CHECK(s.A(0, 1) == -2.25);
  CHECK(s.A(1, 0) == static_cast<double>(0.1f));
  CHECK(s.b(1, 0) == static_cast<double>(0.3f));
  CHECK(s.b_is_vector);
}

TEST_CASE("read_system rejects every documented bad input with '<file>: <dataset>: <problem>'", "[io]") {
  TempDir dir;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  struct Case {
    const char* name;
    std::function<void(const std::string&)> make;  ///< writes the file (nothing: missing)
    std::string problem;                           ///< message after "<file>: "
  };
  // float16 as h5py writes it: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
  const hid_t float16 = H5Tcopy(H5T_IEEE_F32LE);
  H5Tset_fields(float16, 15, 10, 5, 0, 10);
  H5Tset_size(float16, 2);
  H5Tset_ebias(float16, 15);
  std::vector<double> nan_A(16, 1.0), inf_b(4, 1.0);
  nan_A[2 * 4 + 3] = kNaN;  // A[2][3] in C order
  inf_b[1] = kInf;

  const std::vector<Case> cases = {
      {"missing.h5", nullptr, "no such file"},
      {"notes.txt", [](const std::string& p) { write_text(p, "not an HDF5 file\n"); }, "not an HDF5 file"},
      {"empty.h5", [](const std::string& p) { write_text(p, ""); }, "empty file (0 bytes), not an HDF5 file"},
      {"empty.mtx", [](const std::string& p) { write_text(p, ""); },
       "empty file (0 bytes), not an HDF5 file (named as a Matrix Market file: solve and compare read it "
       "directly; `tcsolve import` turns it into a system file)"},
      {"m.mtx", [](const std::string& p) { write_text(p, "%%MatrixMarket matrix array real general\n1 1\n1\n"); },
       "a Matrix Market file, not HDF5 (solve and compare read it directly; `tcsolve import` turns it into "
       "a system file)"},
      {"dir.h5", [](const std::string& p) { fs::create_directory(p); }, "is a directory"},
      {"noA.h5", [](const std::string& p) { RawFile(p).vector("b", 3); }, "A: dataset missing"},
      {"nob.h5", [](const std::string& p) { RawFile(p).matrix("A", 3, 3); }, "b: dataset missing"},
      {"groupA.h5", [](const std::string& p) { RawFile(p).group("A").vector("b", 3); },
       "A: not a dataset (a group?)"},
      {"rect.h5", [](const std::string& p) { RawFile(p).matrix("A", 3, 4).vector("b", 3); },
       "A: not square (3 x 4)"},
      {"A1d.h5", [](const std::string& p) { RawFile(p).vector("A", 4).vector("b", 4); },
       "A: 1-D (length 4), expected 2-D (n x n)"},
      {"A3d.h5",
       [](const std::string& p) {
         RawFile(p).dataset("A", H5T_IEEE_F64LE, {2, 2, 2}, std::vector<double>(8, 1.0)).vector("b", 2);
       },
       "A: 3-D (2 x 2 x 2), expected 2-D (n x n)"},
      {"Ascalar.h5",
       [](const std::string& p) { RawFile(p).dataset("A", H5T_IEEE_F64LE, {}, {1.0}).vector("b", 1); },
       "A: a scalar, expected 2-D (n x n)"},
      {"A0.h5",
       [](const std::string& p) {
         RawFile(p).dataset("A", H5T_IEEE_F64LE, {0, 0}, {}).vector("b", 0);
       },
       "A: empty (0 x 0)"},
      {"blen.h5", [](const std::string& p) { RawFile(p).matrix("A", 4, 4).vector("b", 5); },
       "b: length 5, expected 4 (rows of A)"},
      {"b2d.h5",
       [](const std::string& p) {
         RawFile(p).matrix("A", 4, 4).dataset("b", H5T_IEEE_F64LE, {5, 2}, std::vector<double>(10, 1.0));
       },
       "b: 5 x 2, expected 4 rows (rows of A) (a column-major file? see --layout)"},
      {"b3d.h5",
       [](const std::string& p) {
         RawFile(p).matrix("A", 2, 2).dataset("b", H5T_IEEE_F64LE, {2, 1, 1}, {1.0, 1.0});
       },
       "b: 3-D (2 x 1 x 1), expected 1-D (n) or 2-D (n x nrhs)"},
      {"xshape.h5",
       [](const std::string& p) {
         RawFile(p).matrix("A", 4, 4).vector("b", 4).dataset("x", H5T_IEEE_F64LE, {4, 1},
                                                             std::vector<double>(4, 1.0));
       },
       "x: shape (4 x 1), expected (4) as b"},
      {"int.h5",
       [](const std::string& p) {
         RawFile(p).dataset("A", H5T_STD_I32LE, {2, 2}, {1, 2, 3, 4}).vector("b", 2);
       },
       "A: type int32, expected float64 or float32"},
      {"half.h5",
       [float16](const std::string& p) {
         RawFile(p).matrix("A", 2, 2).dataset("b", float16, {2}, {1.0, 2.0});
       },
       "b: type float16, expected float64 or float32"},
      {"nan.h5",
       [nan_A](const std::string& p) {
         RawFile(p).dataset("A", H5T_IEEE_F64LE, {4, 4}, nan_A).vector("b", 4);
       },
       "A: contains NaN at (2, 3)"},
      {"inf.h5",
       [inf_b](const std::string& p) {
         RawFile(p).matrix("A", 4, 4).dataset("b", H5T_IEEE_F64LE, {4}, inf_b);
       },
       "b: contains inf at (1)"},
      {"nanx.h5",
       [](const std::string& p) {
         RawFile(p).matrix("A", 2, 2).vector("b", 2).dataset("x", H5T_IEEE_F32LE, {2}, {1.0, -kInf});
       },
       "x: contains -inf at (1)"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.path(c.name);
    INFO(c.name);
    if (c.make) c.make(path);
    CHECK(invalid_input_message([&] { tcsolve::read_system(path); }) == path + ": " + c.problem);
  }
  H5Tclose(float16);
}

TEST_CASE("write_system refuses an existing file without force and replaces it with force", "[io]") {
  TempDir dir;
  const std::string path = dir.path("out.h5");
  const LinearSystem first = small_system(3, 1), second = small_system(5, 2);
  tcsolve::write_system(path, first, false);
  CHECK(invalid_input_message([&] { tcsolve::write_system(path, second, false); }) ==
        path + ": exists (use --force to overwrite)");
  CHECK(tcsolve::read_system(path).A == first.A);  // untouched
  tcsolve::write_system(path, second, true);
  CHECK(tcsolve::read_system(path).A == second.A);
  CHECK(dir.entries() == std::vector<std::string>{"out.h5"});

  CHECK(invalid_input_message([&] { tcsolve::write_system(dir.path("nowhere/out.h5"), first, false); }) ==
        dir.path("nowhere/out.h5") + ": directory '" + dir.path("nowhere") + "' does not exist");
  fs::create_directory(dir.path("adir"));
  CHECK(invalid_input_message([&] { tcsolve::write_system(dir.path("adir"), first, true); }) ==
        dir.path("adir") + ": is a directory");
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("a write that fails half way leaves neither the output nor a temporary file", "[io]") {
  TempDir dir;
  const std::string path = dir.path("big.h5");
  const LinearSystem s = small_system(128, 1);  // A alone is 128 KiB
  // The file size limit makes the writes fail (EFBIG; SIGXFSZ ignored) as a full disk would.
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = 16 * 1024;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
  std::string message;
  try {
    tcsolve::write_system(path, s, false);
  } catch (const InvalidInput& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  INFO(message);
  CHECK(contains(message, path + ": "));
  CHECK(dir.entries().empty());
}

TEST_CASE("write_solution writes x and the attributes that read_solution and h5py read", "[io]") {
  TempDir dir;
  Eigen::MatrixXd x(4, 1);
  x << 1, -2, 3.5, 0.25;
  const tcsolve::SolutionAttributes attributes{"ec-fp16", "cpu", 3, 1.5e-17, true};
  tcsolve::write_solution(dir.path("x.h5"), x, true, attributes, output_rule(false, dir.path("sys.h5")));
  const tcsolve::Solution s = tcsolve::read_solution(dir.path("x.h5"));
  CHECK(s.x == x);
  CHECK(s.x_is_vector);
  CHECK(s.attributes.variant == "ec-fp16");
  CHECK(s.attributes.backend == "cpu");
  CHECK(s.attributes.iterations == 3);
  CHECK(s.attributes.backward_error == 1.5e-17);
  CHECK(s.attributes.converged);

  // converged is h5py's bool: an int8 enum {FALSE = 0, TRUE = 1} (numpy.bool_ in Python).
  const hid_t file = H5Fopen(dir.path("x.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t attr = H5Aopen(file, "converged", H5P_DEFAULT);
  const hid_t type = H5Aget_type(attr);
  CHECK(H5Tget_class(type) == H5T_ENUM);
  CHECK(H5Tget_size(type) == 1);
  REQUIRE(H5Tget_nmembers(type) == 2);
  char* name0 = H5Tget_member_name(type, 0);
  char* name1 = H5Tget_member_name(type, 1);
  CHECK(std::string(name0) == "FALSE");
  CHECK(std::string(name1) == "TRUE");
  H5free_memory(name0);
  H5free_memory(name1);
  H5Tclose(type);
  H5Aclose(attr);
  H5Fclose(file);

  Eigen::MatrixXd X(3, 2);
  X << 1, 2, 3, 4, 5, 6;
  tcsolve::write_solution(dir.path("X.h5"), X, false, {"fp32-simt", "cuda", 30, 0.5, false}, output_rule(false, ""));
  const tcsolve::Solution S = tcsolve::read_solution(dir.path("X.h5"));
  CHECK(S.x == X);
  CHECK_FALSE(S.x_is_vector);
  CHECK_FALSE(S.attributes.converged);
  std::vector<hsize_t> dims;
  CHECK(read_raw(dir.path("X.h5"), "x", dims) == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(invalid_input_message([&] { tcsolve::write_solution(dir.path("X.h5"), X, false, {}, output_rule(false, "")); }) ==
        dir.path("X.h5") + ": exists (use --force to overwrite)");
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("write_solution never overwrites its input, even with force", "[io]") {
  TempDir dir;
  const std::string input = dir.path("sys.h5");
  const LinearSystem sys = small_system(3, 1);
  tcsolve::write_system(input, sys, false);
  fs::create_directory(dir.path("sub"));
  fs::create_symlink(input, dir.path("link.h5"));
  const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 1);
  // The same file under other names: itself, through "sub/..", through a symbolic link.
  for (const std::string& output : {input, dir.path("sub/../sys.h5"), dir.path("link.h5")}) {
    INFO(output);
    const std::string message =
        invalid_input_message([&] { tcsolve::write_solution(output, x, true, {}, output_rule(true, input)); });
    CHECK(message == output + ": is the input file " + input + "; write the output to another file");
  }
  // Neither exists yet: compared as normalized paths.
  CHECK(contains(invalid_input_message([&] {
                   tcsolve::write_solution(dir.path("new.h5"), x, true, {}, output_rule(true, dir.path("./new.h5")));
                 }),
                 "is the input file"));
  CHECK(tcsolve::read_system(input).A == sys.A);  // untouched
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("every system in inputs/ reads and satisfies b = A x", "[io]") {
  const fs::path inputs = tcsolve::test::test_data_path("inputs");
  int count = 0;
  for (const auto& e : fs::directory_iterator(inputs)) {
    if (e.path().extension() != ".h5") continue;
    // K-means data sets (datasets X, no A) share the folder: their own tests read them
    const std::string name = e.path().filename().string();
    if (name.rfind("iris", 0) == 0 || name.rfind("wine", 0) == 0) continue;
    INFO(e.path().string());
    const LinearSystem s = tcsolve::read_system(e.path().string());
    REQUIRE(s.x_true.has_value());
    // b was computed as A x in FP64: |b - A x| within the rounding of one product.
    const double bound = 2.0 * s.n() * kEps * (s.A.cwiseAbs() * s.x_true->cwiseAbs()).maxCoeff();
    CHECK((s.b - s.A * *s.x_true).cwiseAbs().maxCoeff() <= bound);
    CHECK_FALSE(s.description.empty());
    ++count;
  }
  CHECK(count >= 6);
}

// --- generated systems --------------------------------------------------------------------------

TEST_CASE("randsvd matrices have the requested singular values and 2-norm condition number", "[io]") {
  constexpr int n = 64;
  // Forming U diag(sigma) V^T perturbs each singular value by O(n u sigma_1); relative to
  // sigma_n = 1/cond that is about n u cond = 1e-8 for cond = 1e6.
  constexpr double kTolerance = 1e-8;
  for (const double cond : {1e2, 1e6}) {
    for (const tcsolve::SpectrumMode mode :
         {tcsolve::SpectrumMode::geometric, tcsolve::SpectrumMode::arithmetic,
          tcsolve::SpectrumMode::clustered}) {
      INFO("cond " << cond << ", mode " << tcsolve::to_string(mode));
      const LinearSystem s = tcsolve::generate_system(n, cond, mode, 7);
      CHECK(std::abs(cond2(s.A) - cond) <= kTolerance * cond);
      const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(s.A).singularValues();
      CHECK(std::abs(sv(0) - 1.0) <= kTolerance);
      CHECK(std::abs(sv(n - 1) * cond - 1.0) <= kTolerance);
      if (mode == tcsolve::SpectrumMode::geometric)
        CHECK(std::abs(sv(n / 2) - std::pow(cond, -static_cast<double>(n / 2) / (n - 1))) <=
              kTolerance * sv(n / 2) * cond);
      if (mode == tcsolve::SpectrumMode::clustered) CHECK(std::abs(sv(n - 2) - 1.0) <= kTolerance);
      REQUIRE(s.x_true.has_value());
      CHECK(s.b == s.A * *s.x_true);  // b = A x_true, the same FP64 product
      CHECK(s.x_true->cwiseAbs().maxCoeff() <= 1.0);
      CHECK(s.b_is_vector);
    }
  }
}

TEST_CASE("every singular value of a cpu randsvd matrix is sigma_i within the QR bound", "[io]") {
  // The bound of randsvd_test_util.hpp: |sv_i - sigma_i| <= 8 n^(3/2) u sigma_1 (Higham Thm
  // 19.4 for the computed Q), and cond_2 relative to cond within twice that times cond. n = 129:
  // odd, so the Box-Muller spare of U's last pair starts V's matrix, and above no threshold;
  // n = 300: U and V factored on two threads, the product by column blocks.
  for (const int n : {64, 129, 300}) {
    for (const double cond : {1e2, 1e8}) {
      for (const tcsolve::SpectrumMode mode :
           {tcsolve::SpectrumMode::geometric, tcsolve::SpectrumMode::arithmetic,
            tcsolve::SpectrumMode::clustered}) {
        if (n == 300 && cond == 1e2) continue;  // the SVDs of n = 300 are the slow part
        const LinearSystem s = tcsolve::generate_system(n, cond, mode, 11, 1, tcsolve::Backend::cpu);
        const tcsolve::test::SpectrumCheck c = tcsolve::test::check_randsvd_spectrum(s.A, cond, mode);
        INFO("n " << n << ", cond " << cond << ", " << tcsolve::to_string(mode) << ": max |sv - sigma| "
                  << c.max_error << " (bound " << c.bound << "), cond error " << c.cond_error << " (bound "
                  << c.cond_bound << ")");
        CHECK(c.max_error <= c.bound);
        CHECK(c.cond_error <= c.cond_bound);
        CHECK(s.description.find("backend cpu") != std::string::npos);
      }
    }
  }
}

TEST_CASE("Philox4x32-10 reproduces the Random123 known-answer vectors", "[exact]") {
  using tcsolve::philox::Block;
  struct Kat {
    Block counter;
    std::uint32_t k0, k1;
    Block expected;
  };
  // Random123 1.09, kat_vectors: philox4x32 10 (counter, key, result).
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Kat& k : kats) {
    const Block out = tcsolve::philox::philox4x32_10(k.counter, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) CHECK(out.w[i] == k.expected.w[i]);
  }
}

TEST_CASE("the Philox Box-Muller pairs are standard normal: mean, variance and streams", "[io]") {
  // N = 2^18 samples: the sample mean has standard deviation 1/sqrt(N), the sample variance
  // sqrt(2/N); 5 of each is a false alarm once in 10^6 runs (and the numbers are fixed anyway).
  constexpr std::uint64_t kPairs = 1u << 17;
  constexpr double kN = 2.0 * kPairs;
  for (const std::uint32_t stream : {0u, 1u}) {
    double sum = 0, sum2 = 0, beyond4 = 0;
    for (std::uint64_t p = 0; p < kPairs; ++p) {
      const tcsolve::philox::GaussianPair g = tcsolve::philox::gaussian_pair(2026, stream, p);
      for (const double x : {g.first, g.second}) {
        REQUIRE(std::isfinite(x));
        sum += x;
        sum2 += x * x;
        beyond4 += std::abs(x) > 4 ? 1 : 0;
      }
    }
    const double mean = sum / kN, variance = sum2 / kN - mean * mean;
    INFO("stream " << stream << ": mean " << mean << ", variance " << variance);
    CHECK(std::abs(mean) <= 5 / std::sqrt(kN));
    CHECK(std::abs(variance - 1) <= 5 * std::sqrt(2 / kN));
    // P(|x| > 4) = 6.3e-5: about 17 of 2^18; a broken tail (uniforms, or none) is far off.
    CHECK(beyond4 >= 3);
    CHECK(beyond4 <= 50);
  }
  // A pure function of (seed, stream, index); the streams and seeds differ.
  const auto a = tcsolve::philox::gaussian_pair(1, 0, 5), b = tcsolve::philox::gaussian_pair(1, 0, 5);
  CHECK((a.first == b.first && a.second == b.second));
  CHECK(tcsolve::philox::gaussian_pair(1, 1, 5).first != a.first);
  CHECK(tcsolve::philox::gaussian_pair(2, 0, 5).first != a.first);
}

TEST_CASE("generated systems are deterministic in the seed, random mode is U(-1,1)", "[io]") {
  const auto geometric = tcsolve::SpectrumMode::geometric;
  const LinearSystem a = tcsolve::generate_system(16, 1e3, geometric, 42, 2);
  const LinearSystem b = tcsolve::generate_system(16, 1e3, geometric, 42, 2);
  const LinearSystem c = tcsolve::generate_system(16, 1e3, geometric, 43, 2);
  CHECK(a.A == b.A);
  CHECK(a.b == b.b);
  CHECK(a.A != c.A);
  CHECK(a.nrhs() == 2);
  CHECK_FALSE(a.b_is_vector);

  const LinearSystem r = tcsolve::generate_system(100, 1e4, tcsolve::SpectrumMode::random, 1);
  CHECK(r.A.maxCoeff() < 1.0);
  CHECK(r.A.minCoeff() >= -1.0);
  CHECK(std::abs(r.A.mean()) < 0.05);  // 10^4 draws: standard deviation of the mean 0.006
  CHECK(tcsolve::generate_system(1, 1e4, geometric, 1).A.cwiseAbs()(0, 0) == 1.0);
}

TEST_CASE("generate_system and parse_spectrum_mode reject bad arguments", "[io]") {
  const auto g = tcsolve::SpectrumMode::geometric;
  CHECK_THROWS_AS(tcsolve::generate_system(0, 10, g, 1), InvalidInput);
  CHECK_THROWS_AS(tcsolve::generate_system(tcsolve::kMaxGeneratedOrder + 1, 10, g, 1), InvalidInput);
  CHECK_THROWS_AS(tcsolve::generate_system(4, 0.5, g, 1), InvalidInput);
  CHECK_THROWS_AS(tcsolve::generate_system(4, kInf, g, 1), InvalidInput);
  CHECK_THROWS_AS(tcsolve::generate_system(4, kNaN, g, 1), InvalidInput);
  CHECK_THROWS_AS(tcsolve::generate_system(4, 10, g, 1, 0), InvalidInput);
  CHECK_THROWS_AS(tcsolve::parse_spectrum_mode("gaussian"), InvalidInput);
  for (const char* name : {"geometric", "arithmetic", "clustered", "random"})
    CHECK(tcsolve::to_string(tcsolve::parse_spectrum_mode(name)) == name);
}

// --- Matrix Market --------------------------------------------------------------------------------

TEST_CASE("Matrix Market: symmetric and skew-symmetric files are expanded, array files read by column",
          "[io]") {
  TempDir dir;
  write_text(dir.path("sym.mtx"),
             "%%MatrixMarket matrix coordinate real symmetric\r\n"
             "% a comment\r\n"
             "\r\n"
             "3 3 4\r\n"
             "1 1 2.0\r\n"
             "2 1 -1.5\r\n"
             "3 1 +0.25\r\n"
             "3 3 4e0\r\n");
  Eigen::MatrixXd expected(3, 3);
  expected << 2, -1.5, 0.25,  //
      -1.5, 0, 0,             //
      0.25, 0, 4;
  const tcsolve::MatrixMarketMatrix sym = tcsolve::read_matrix_market(dir.path("sym.mtx"));
  CHECK(sym.A == expected);
  CHECK(sym.symmetry == "symmetric");
  CHECK(sym.stored_entries == 4);

  write_text(dir.path("skew.mtx"),
             "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 2 -7\n");
  expected << 0, -5, 0,  //
      5, 0, 7,           //
      0, -7, 0;
  CHECK(tcsolve::read_matrix_market(dir.path("skew.mtx")).A == expected);

  // Array: column by column; general non-symmetric, so a transposition would show.
  write_text(dir.path("array.mtx"), "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
  Eigen::MatrixXd expected2(2, 2);
  expected2 << 1, 3,  //
      2, 4;
  CHECK(tcsolve::read_matrix_market(dir.path("array.mtx")).A == expected2);
  write_text(dir.path("arraysym.mtx"), "%%MATRIXMARKET Matrix Array Real Symmetric\n2 2\n1\n2\n3\n");
  expected2 << 1, 2,  //
      2, 3;
  CHECK(tcsolve::read_matrix_market(dir.path("arraysym.mtx")).A == expected2);

  // Duplicates are summed (as scipy.io.mmread does).
  write_text(dir.path("dup.mtx"),
             "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 1\n1 2 2\n2 1 5\n");
  expected2 << 0, 3,  //
      5, 0;
  CHECK(tcsolve::read_matrix_market(dir.path("dup.mtx")).A == expected2);
}

TEST_CASE("Matrix Market: malformed files are rejected with '<file>:<line>: <problem>'", "[io]") {
  TempDir dir;
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    std::string text;
    int line;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"hello\n", 1, "not a Matrix Market file (the first line must start with %%MatrixMarket)"},
      {"%%MatrixMarket matrix coordinate real\n", 1,
       "malformed banner, expected '%%MatrixMarket matrix coordinate|array real|integer "
       "general|symmetric|skew-symmetric'"},
      {"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n", 1,
       "pattern matrices (no values) are not supported: a system needs real values"},
      {"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n", 1,
       "complex matrices are not supported (real or integer only)"},
      {"%%MatrixMarket vector coordinate real general\n", 1,
       "object 'vector' is not supported (only matrix)"},
      {"%%MatrixMarket matrix coordinate real hermitian\n", 1,
       "hermitian matrices are not supported (complex)"},
      {head + "% only comments\n", 2, "end of file before the size line"},
      {head + "% c\n3 4 1\n1 1 1\n", 3, "matrix is 3 x 4, not square"},
      {head + "3 3\n", 2, "malformed size line '3 3', expected 'rows columns entries'"},
      {head + "3 3 2\n1 1 1.0\n4 1 2.0\n", 4, "row index 4 out of range 1..3"},
      {head + "3 3 2\n1 1 1.0\n1 0 2.0\n", 4, "column index 0 out of range 1..3"},
      {head + "3 3 2\n1 1 1.2.3\n2 2 1\n", 3, "malformed real value '1.2.3'"},
      {head + "3 3 2\n1 x 1\n2 2 1\n", 3, "malformed column index 'x'"},
      {head + "3 3 2\n1 1 nan\n2 2 1\n", 3, "value 'nan' is not finite"},
      {head + "3 3 2\n1 1\n", 3, "expected 'row column value', got 2 fields"},
      {head + "3 3 3\n1 1 1\n2 2 1\n", 4, "end of file after 2 of the 3 entries declared on line 2"},
      {head + "3 3 1\n1 1 1\n\n2 2 1\n", 5, "more entries than the 1 declared on line 2"},
      {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
       "malformed integer value '1.5'"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", 3,
       "diagonal entry (1, 1) in a skew-symmetric matrix (its diagonal is zero)"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 5,
       "end of file after 3 of the 4 entries declared on line 2"},
      // Out of range is not malformed (issue 31): the value and the limit are named.
      {head + "3 3 2\n1 1 1e400\n2 2 1\n", 3,
       "real value '1e400' out of range (beyond float64's largest finite value, 1.8e308)"},
      {head + "3 3 2\n1 1 1\n2 2 -0.5E+309\n", 4,
       "real value '-0.5E+309' out of range (beyond float64's largest finite value, 1.8e308)"},
      {head + "3 3 1\n1 1 1" + std::string(400, '0') + "\n", 3,
       "real value '1" + std::string(400, '0') + "' out of range (beyond float64's largest finite value, 1.8e308)"},
      {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 12345678901234567890\n", 3,
       "integer value '12345678901234567890' out of range (beyond 64-bit integers)"},
      {"%%MatrixMarket matrix array integer general\n1 1\n-99999999999999999999\n", 3,
       "integer value '-99999999999999999999' out of range (beyond 64-bit integers)"},
      {head + "3 3 1\n12345678901234567890 1 1\n", 3, "row index '12345678901234567890' out of range 1..3"},
      {head + "3 3 1\n1 99999999999999999999 1\n", 3, "column index '99999999999999999999' out of range 1..3"},
      {head + "12345678901234567890 3 1\n", 2, "number of rows '12345678901234567890' out of range (beyond 64-bit integers)"},
      {head + "3 3 12345678901234567890\n", 2, "entry count '12345678901234567890' out of range (beyond 64-bit integers)"},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const std::string path = dir.path("bad" + std::to_string(k) + ".mtx");
    write_text(path, c.text);
    INFO(c.text);
    CHECK(invalid_input_message([&] { tcsolve::read_matrix_market(path); }) ==
          path + ":" + std::to_string(c.line) + ": " + c.problem);
  }
  CHECK(invalid_input_message([&] { tcsolve::read_matrix_market(dir.path("none.mtx")); }) ==
        dir.path("none.mtx") + ": no such file");
  write_text(dir.path("empty.mtx"), "");
  CHECK(invalid_input_message([&] { tcsolve::read_matrix_market(dir.path("empty.mtx")); }) ==
        dir.path("empty.mtx") + ": empty file (0 bytes), expected a %%MatrixMarket banner");
}

TEST_CASE("Matrix Market: suspicious files are read with warnings naming the line, clean ones with none",
          "[io]") {
  TempDir dir;
  const std::string general = "%%MatrixMarket matrix coordinate real general\n";
  const std::string symmetric = "%%MatrixMarket matrix coordinate real symmetric\n";
  const std::string skew = "%%MatrixMarket matrix coordinate real skew-symmetric\n";
  struct Case {
    std::string text;
    std::vector<std::string> warnings;  ///< after "<file>"
    std::vector<double> A;              ///< the matrix read, row by row (empty: not checked)
  };
  const std::vector<Case> cases = {
      // Clean: no warning.
      {general + "2 2 3\n1 1 2\n2 1 1\n2 2 3\n", {}, {2, 0, 1, 3}},
      {symmetric + "2 2 3\n1 1 2\n2 1 1\n2 2 3\n", {}, {2, 1, 1, 3}},
      {"%%MatrixMarket matrix array real symmetric\n2 2\n2\n1\n3\n", {}, {2, 1, 1, 3}},
      // A symmetric file listing (1, 2) and (2, 1): summed, and said so (twice the entry).
      {symmetric + "2 2 4\n1 1 2\n2 1 1\n1 2 1\n2 2 3\n",
       {":5: entry (1, 2) is in the upper triangle, but a symmetric file lists the lower one; mirrored all "
        "the same",
        ":5: entry (1, 2) on line 5 and entry (2, 1) on line 4 are one entry of a symmetric matrix, given "
        "twice; they are summed"},
       {2, 2, 2, 3}},
      // Upper-triangle entries alone: mirrored, counted.
      {symmetric + "3 3 5\n1 1 1\n1 2 5\n2 2 1\n2 3 6\n3 3 1\n",
       {":4: entry (1, 2) is in the upper triangle, but a symmetric file lists the lower one; mirrored all "
        "the same (and 1 more upper-triangle entries)"},
       {1, 5, 0, 5, 1, 6, 0, 6, 1}},
      {skew + "2 2 2\n1 2 3\n2 1 -3\n",
       {":3: entry (1, 2) is in the upper triangle, but a skew-symmetric file lists the lower one; mirrored "
        "all the same",
        ":4: entry (2, 1) on line 4 and entry (1, 2) on line 3 are one entry of a skew-symmetric matrix, "
        "given twice; they are summed"},
       {0, 6, -6, 0}},
      // Repeats in a general file: summed, named with both lines.
      {general + "2 2 4\n1 2 1\n2 1 5\n1 2 2\n1 2 4\n",
       {":5: entry (1, 2) on line 5 repeats the entry (1, 2) on line 3; repeated entries are summed (and 1 "
        "more repeats)"},
       {0, 7, 5, 0}},
      // 0 entries: an all-zero A.
      {general + "3 3 0\n", {":2: declares 0 entries: A is all zero (singular)"}, {}},
      {"%%MatrixMarket matrix array real general\n2 2\n0\n0\n0\n0\n",
       {": every entry is zero: A is all zero (singular)"}, {0, 0, 0, 0}},
      // A zero row or column: singular.
      {general + "3 3 3\n1 1 1\n2 2 1\n3 2 1\n",
       {": column 3 of A is zero: A is singular"}, {1, 0, 0, 0, 1, 0, 0, 1, 0}},
      {general + "3 3 2\n1 1 1\n1 2 1\n",
       {": row 2 of A is zero (and 1 more rows): A is singular", ": column 3 of A is zero: A is singular"}, {}},
      // A value below the smallest subnormal reads as 0.
      {general + "2 2 3\n1 1 1\n2 2 1\n2 1 1e-400\n",
       {":5: real value '1e-400' is below the smallest float64 subnormal (4.9e-324) and reads as 0"},
       {1, 0, 0, 1}},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const std::string path = dir.path("w" + std::to_string(k) + ".mtx");
    write_text(path, c.text);
    INFO(c.text);
    const tcsolve::MatrixMarketMatrix m = tcsolve::read_matrix_market(path);
    std::vector<std::string> expected;
    for (const std::string& w : c.warnings) expected.push_back(path + w);
    CHECK(m.warnings == expected);
    if (!c.A.empty()) {
      const Eigen::Index n = m.A.rows();
      REQUIRE(static_cast<std::size_t>(n * n) == c.A.size());
      for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j < n; ++j) CHECK(m.A(i, j) == c.A[static_cast<std::size_t>(i * n + j)]);
    }
    std::vector<std::string> passed;
    tcsolve::import_matrix_market(path, tcsolve::RhsKind::ones, 1, &passed);
    CHECK(passed == expected);
  }
}

TEST_CASE("import_matrix_market builds b = A x with x = ones or a seeded U(-1,1)", "[io]") {
  TempDir dir;
  write_text(dir.path("m.mtx"),
             "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 4\n2 1 1\n2 2 3\n3 3 2\n1 3 -1\n");
  const LinearSystem ones = tcsolve::import_matrix_market(dir.path("m.mtx"), tcsolve::RhsKind::ones, 1);
  Eigen::MatrixXd b(3, 1);
  b << 3, 4, 2;
  CHECK(ones.b == b);
  CHECK(*ones.x_true == Eigen::MatrixXd::Ones(3, 1));
  CHECK(ones.b_is_vector);
  CHECK(contains(ones.description, "m.mtx"));

  const LinearSystem r1 = tcsolve::import_matrix_market(dir.path("m.mtx"), tcsolve::RhsKind::random, 5);
  const LinearSystem r2 = tcsolve::import_matrix_market(dir.path("m.mtx"), tcsolve::RhsKind::random, 5);
  CHECK(*r1.x_true == *r2.x_true);
  CHECK(r1.x_true->cwiseAbs().maxCoeff() <= 1.0);
  CHECK(r1.b == r1.A * *r1.x_true);
  CHECK(tcsolve::parse_rhs_kind("random") == tcsolve::RhsKind::random);
  CHECK_THROWS_AS(tcsolve::parse_rhs_kind("zeros"), InvalidInput);
}

// --- the subcommands ------------------------------------------------------------------------------

TEST_CASE("tcsolve generate writes the system and refuses to overwrite it", "[io]") {
  TempDir dir;
  const std::string out = dir.path("g.h5");
  cli::CommandResult r =
      cli::run_tcsolve("generate --n 32 --cond 100 --seed 3 --backend cpu --output '" + out + "' --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const cli::Json doc = cli::require_one_object(r);
  for (const char* key : {"command", "output", "n", "cond", "mode", "seed", "backend", "device", "time_s"}) {
    INFO(key);
    REQUIRE(doc.find(key) != nullptr);
  }
  CHECK(doc.find("backend")->string == "cpu");
  REQUIRE(doc.find("time_s")->find("generate") != nullptr);
  CHECK(doc.find("time_s")->find("generate")->number >= 0);
  CHECK(doc.find("command")->string == "generate");
  CHECK(doc.find("output")->string == out);
  CHECK(doc.find("n")->number == 32);
  CHECK(doc.find("cond")->number == 100);
  CHECK(doc.find("mode")->string == "geometric");
  CHECK(doc.find("seed")->number == 3);
  const LinearSystem s = tcsolve::read_system(out);
  CHECK(s.A == tcsolve::generate_system(32, 100, tcsolve::SpectrumMode::geometric, 3).A);
  CHECK(s.description.find("backend cpu") != std::string::npos);
  CHECK(std::abs(cond2(s.A) - 100) <= 1e-10 * 100);

  r = cli::run_tcsolve("generate --n 32 --output '" + out + "'");
  CHECK(r.exit_code == 2);
  CHECK(cli::count_lines(r.err) == 1);
  CHECK(contains(r.err, out + ": exists (use --force to overwrite)"));
  r = cli::run_tcsolve("generate --n 8 --mode random --output '" + out + "' --force");
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "generate: wrote"));
  CHECK(tcsolve::read_system(out).n() == 8);
  CHECK(dir.entries() == std::vector<std::string>{"g.h5"});
}

TEST_CASE("tcsolve generate rejects a bad --mode, a missing --output and a bad --cond with exit 2", "[io]") {
  TempDir dir;
  const std::string out = dir.path("g.h5");
  struct Case {
    std::string args, needle;
  };
  const std::vector<Case> cases = {
      {"generate --n 8 --mode gaussian --output '" + out + "'", "--mode"},
      {"generate --n 8", "--output"},
      {"generate --output '" + out + "'", "--n"},
      {"generate --n 8 --cond 0.5 --output '" + out + "'", "--cond"},
      {"generate --n 0 --output '" + out + "'", "--n"},
      {"generate --n 131073 --output '" + out + "'", "--n"},  // above kMaxGeneratedOrder
      {"generate --n 8 --seed -1 --output '" + out + "'", "--seed"},
      // --backend cpu: without a GPU, auto would add its one note on stderr before this error
      // (the directory is found missing when the file is written).
      {"generate --n 8 --backend cpu --output '" + dir.path("no/such/dir.h5") + "'", "does not exist"},
      {"generate --n 8 --backend gpu --output '" + out + "'", "unknown backend 'gpu'"},
  };
  for (const Case& c : cases) {
    const cli::CommandResult r = cli::run_tcsolve(c.args);
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(cli::count_lines(r.err) == 1);
    CHECK(contains(r.err, c.needle));
  }
  CHECK(dir.entries().empty());
}

TEST_CASE("tcsolve generate --backend cuda without a GPU exits 4 and writes nothing", "[io]") {
  if (tcsolve::cuda::device_available()) {
    WARN("a CUDA device is present: the cuda generator is tested by the [gpu] tests");
    return;
  }
  TempDir dir;
  const cli::CommandResult r =
      cli::run_tcsolve("generate --n 8 --backend cuda --output '" + dir.path("g.h5") + "'");
  INFO(r);
  CHECK(r.exit_code == 4);
  CHECK(r.out.empty());
  CHECK(cli::count_lines(r.err) == 1);
  CHECK(contains(r.err, "cuda"));
  CHECK(dir.entries().empty());
}

TEST_CASE("tcsolve import turns a Matrix Market file into a system; bad files exit 2 naming the line",
          "[io]") {
  TempDir dir;
  write_text(dir.path("m.mtx"),
             "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 1\n2 2 3\n3 3 2\n");
  const std::string out = dir.path("m.h5");
  cli::CommandResult r =
      cli::run_tcsolve("import --mtx '" + dir.path("m.mtx") + "' --output '" + out + "' --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const cli::Json doc = cli::require_one_object(r);
  REQUIRE(doc.find("command") != nullptr);
  CHECK(doc.find("command")->string == "import");
  REQUIRE(doc.find("n") != nullptr);
  CHECK(doc.find("n")->number == 3);
  REQUIRE(doc.find("output") != nullptr);
  CHECK(doc.find("output")->string == out);
  const LinearSystem s = tcsolve::read_system(out);
  CHECK(s.A(0, 1) == 1);
  CHECK(s.A(1, 0) == 1);
  Eigen::MatrixXd b(3, 1);
  b << 5, 4, 2;
  CHECK(s.b == b);
  CHECK(contains(s.description, "m.mtx"));

  write_text(dir.path("bad.mtx"), "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n");
  r = cli::run_tcsolve("import --mtx '" + dir.path("bad.mtx") + "' --output '" + dir.path("bad.h5") + "'");
  CHECK(r.exit_code == 2);
  CHECK(cli::count_lines(r.err) == 1);
  CHECK(contains(r.err, dir.path("bad.mtx") + ":3: row index 3 out of range 1..2"));
  r = cli::run_tcsolve("import --mtx '" + dir.path("m.mtx") + "' --rhs zeros --output '" + dir.path("z.h5") +
                       "'");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--rhs"));
  r = cli::run_tcsolve("import --output '" + dir.path("z.h5") + "'");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--mtx"));
  CHECK_FALSE(fs::exists(dir.path("bad.h5")));
  CHECK_FALSE(fs::exists(dir.path("z.h5")));
}

TEST_CASE("import, solve and compare print a Matrix Market file's warnings; import's --json lists them",
          "[io]") {
  TempDir dir;
  const std::string mtx = dir.path("both.mtx");
  write_text(mtx, "%%MatrixMarket matrix coordinate real symmetric\n2 2 4\n1 1 4\n2 1 1\n1 2 1\n2 2 3\n");
  const std::string before = cli::read_file(mtx);
  const std::vector<std::string> warnings = tcsolve::read_matrix_market(mtx).warnings;
  REQUIRE(warnings.size() == 2);
  const std::string out = dir.path("both.h5");
  cli::CommandResult r = cli::run_tcsolve("import --mtx '" + mtx + "' --output '" + out + "' --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err == "tcsolve: warning: " + warnings[0] + "\ntcsolve: warning: " + warnings[1] + "\n");
  const cli::Json doc = cli::require_one_object(r);
  REQUIRE(doc.find("warnings") != nullptr);
  REQUIRE(doc.find("warnings")->items.size() == 2);
  CHECK(doc.find("warnings")->items[0].string == warnings[0]);
  CHECK(doc.find("warnings")->items[1].string == warnings[1]);
  CHECK(tcsolve::read_system(out).A(0, 1) == 2);  // summed, as warned
  for (const std::string& command : {std::string("solve --backend cpu --variant fp32-simt"),
                                     std::string("compare --backend cpu --variants fp32-simt")}) {
    r = cli::run_tcsolve(command + " --input '" + mtx + "'");
    INFO(r);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "tcsolve: warning: " + warnings[0] + "\n"));
    CHECK(contains(r.err, "tcsolve: warning: " + warnings[1] + "\n"));
  }
  // A clean file: no warning, an empty list.
  write_text(dir.path("clean.mtx"), "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n");
  r = cli::run_tcsolve("import --mtx '" + dir.path("clean.mtx") + "' --output '" + dir.path("clean.h5") + "' --json");
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  const cli::Json clean = cli::require_one_object(r);
  REQUIRE(clean.find("warnings") != nullptr);
  CHECK(clean.find("warnings")->items.empty());
  CHECK(cli::read_file(mtx) == before);
  CHECK(dir.entries() == std::vector<std::string>{"both.h5", "both.mtx", "clean.h5", "clean.mtx"});
}

TEST_CASE("an empty or broken .mtx given to solve or compare is named by the Matrix Market reader", "[io]") {
  TempDir dir;
  write_text(dir.path("empty.mtx"), "");
  write_text(dir.path("text.MTX"), "1 2 3\n");
  write_text(dir.path("big.mtx"), "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e400\n");
  struct Case {
    std::string file, message;
  };
  const std::vector<Case> cases = {
      {"empty.mtx", ": empty file (0 bytes), expected a %%MatrixMarket banner"},
      {"text.MTX", ":1: not a Matrix Market file (the first line must start with %%MatrixMarket)"},
      {"big.mtx", ":3: real value '1e400' out of range (beyond float64's largest finite value, 1.8e308)"},
  };
  const std::vector<std::string> names = dir.entries();
  for (const Case& c : cases)
    for (const std::string& command : {std::string("solve --backend cpu --output '") + dir.path("x.h5") + "'",
                                       std::string("compare --backend cpu --variants fp32-simt")}) {
      const std::string path = dir.path(c.file);
      const cli::CommandResult r = cli::run_tcsolve(command + " --input '" + path + "'");
      INFO(r);
      CHECK(r.exit_code == 2);
      CHECK(cli::count_lines(r.err) == 1);
      CHECK(contains(r.err, path + c.message));
      CHECK(dir.entries() == names);
    }
  // import names the empty file the same way.
  const cli::CommandResult r =
      cli::run_tcsolve("import --mtx '" + dir.path("empty.mtx") + "' --output '" + dir.path("e.h5") + "'");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, dir.path("empty.mtx") + ": empty file (0 bytes)"));
  CHECK(dir.entries() == names);
}
