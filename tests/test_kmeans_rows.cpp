// A K-means data file read by rows (tcsolve/io/kmeans_file.hpp: read_kmeans_shape,
// read_kmeans_rows, read_kmeans_init; [io][kmeans_file]): what each rank of a distributed run
// reads. Claims, each a test:
//   - the shape is the full reader's, and rows read in 1, 2 or 3 pieces concatenate bitwise to
//     the full read, for float64 files (inputs/iris.h5, inputs/wine.h5) and a float32 file;
//   - a non-finite value or one beyond FP32's range is refused only by a read whose rows hold it,
//     named at its (row, column) of the whole X;
//   - a bad file gets the full reader's message from every reader; a range outside X is refused;
//   - init alone is the full reader's init;
//   - an X of more than 2^31 values (never allocated on disk) has its shape and rows read, where
//     the full reader refuses it.
#include <hdf5.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tcsolve/io/kmeans_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"

namespace {

using tcsolve::test::TempDir;

std::string input(const std::string& name) { return tcsolve::test::test_data_path("inputs/" + name); }

/// One dataset of a hand-made file: its name, HDF5 file type (H5T_IEEE_F64LE, H5T_IEEE_F32LE,
/// H5T_STD_I32LE, ...), shape, and values (C order) written through H5T_NATIVE_DOUBLE.
struct Dataset {
  std::string name;
  hid_t type;
  std::vector<hsize_t> dims;
  std::vector<double> values;
};

void write_file(const std::string& path, const std::vector<Dataset>& datasets) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(file >= 0);
  for (const Dataset& d : datasets) {
    const hid_t space = H5Screate_simple(static_cast<int>(d.dims.size()), d.dims.data(), nullptr);
    const hid_t set = H5Dcreate2(file, d.name.c_str(), d.type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(set >= 0);
    // No values: the dataset is left unallocated (reads give its fill value, 0).
    if (!d.values.empty())
      REQUIRE(H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.values.data()) >= 0);
    H5Dclose(set);
    H5Sclose(space);
  }
  H5Fclose(file);
}

/// Points x dim values i + d / 8 + 0.1 (0.1 is inexact: float64 files round on reading).
std::vector<double> ramp(int points, int dim) {
  std::vector<double> v;
  for (int i = 0; i < points; ++i)
    for (int d = 0; d < dim; ++d) v.push_back(i + d / 8.0 + 0.1);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// The message of the InvalidInput `f` throws ("" when it throws none).
template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const tcsolve::InvalidInput& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE(
    "a K-means file's shape, and its rows read in 1, 2 or 3 pieces, are the full read's (float64 iris "
    "and wine, a float32 file)",
    "[io][kmeans_file]") {
  TempDir dir("kmeans_rows");
  const std::string single = dir.path("float32.h5");
  write_file(single,
             {{"X", H5T_IEEE_F32LE, {41, 5}, ramp(41, 5)}, {"init", H5T_IEEE_F32LE, {2, 5}, ramp(2, 5)}});
  for (const std::string& path : {input("iris.h5"), input("wine.h5"), single}) {
    INFO(path);
    const tcsolve::KmeansData full = tcsolve::read_kmeans_data(path);
    const tcsolve::KmeansShape shape = tcsolve::read_kmeans_shape(path);
    CHECK(shape.points == full.points);
    CHECK(shape.dim == full.dim);
    CHECK(shape.has_init == full.init.has_value());
    CHECK(shape.init_k == full.init_k);
    for (int pieces = 1; pieces <= 3; ++pieces) {
      std::vector<float> joined;
      std::int64_t begin = 0;
      for (int p = 0; p < pieces; ++p) {
        // Uneven pieces: the first takes the rounding up, the last what is left.
        const std::int64_t end =
            p + 1 == pieces ? shape.points : (shape.points * (p + 1) + pieces - 1) / pieces;
        const std::vector<float> part = tcsolve::read_kmeans_rows(path, begin, end - begin);
        CHECK(part.size() == static_cast<std::size_t>((end - begin) * shape.dim));
        joined.insert(joined.end(), part.begin(), part.end());
        begin = end;
      }
      INFO(pieces << " pieces");
      CHECK(same_bits(joined, full.X));
    }
    CHECK(tcsolve::read_kmeans_rows(path, shape.points, 0).empty());
    CHECK(tcsolve::read_kmeans_rows(path, 3, 0).empty());
    const std::optional<std::vector<float>> init = tcsolve::read_kmeans_init(path);
    REQUIRE(init.has_value() == full.init.has_value());
    if (init) CHECK(same_bits(*init, *full.init));
  }
}

TEST_CASE(
    "reading rows: a bad value is refused only where it is read, named at its row and column of the whole X",
    "[io][kmeans_file]") {
  TempDir dir("kmeans_rows");
  struct Bad {
    double value;
    const char* problem;
  };
  for (const Bad& bad : {Bad{std::nan(""), "contains NaN at (7, 2)"},
                         Bad{-std::numeric_limits<double>::infinity(), "contains -inf at (7, 2)"},
                         Bad{1e39, "value 1e+39 at (7, 2) exceeds FP32's range"}}) {
    const std::string path = dir.path("bad.h5");
    std::vector<double> X = ramp(10, 3);
    X[7 * 3 + 2] = bad.value;
    write_file(path, {{"X", H5T_IEEE_F64LE, {10, 3}, X}});
    INFO(bad.problem);
    CHECK_NOTHROW(tcsolve::read_kmeans_shape(path));
    CHECK(tcsolve::read_kmeans_rows(path, 0, 7).size() == 21u);
    CHECK(tcsolve::read_kmeans_rows(path, 8, 2).size() == 6u);
    const std::string full = message_of([&] { tcsolve::read_kmeans_data(path); });
    CHECK_THAT(full, Catch::Contains(std::string(": X: ") + bad.problem));
    CHECK(message_of([&] { tcsolve::read_kmeans_rows(path, 5, 5); }) == full);
    CHECK(message_of([&] { tcsolve::read_kmeans_rows(path, 7, 1); }) == full);
  }
}

TEST_CASE(
    "reading rows: a bad file gets the full reader's message from every reader; a range outside X is refused",
    "[io][kmeans_file]") {
  TempDir dir("kmeans_rows");
  const std::string text = dir.path("text.h5");
  std::ofstream(text) << "not HDF5\n";
  struct Case {
    std::string name;
    std::vector<Dataset> datasets;
    const char* problem;
  };
  const std::vector<Case> cases = {
      {"no_x.h5", {{"Y", H5T_IEEE_F64LE, {2, 2}, ramp(2, 2)}}, "X: dataset missing"},
      {"rank1.h5", {{"X", H5T_IEEE_F64LE, {4}, {1, 2, 3, 4}}}, "X: 1-D (4), expected 2-D (points x dim)"},
      {"empty.h5", {{"X", H5T_IEEE_F64LE, {0, 3}, {}}}, "X: empty 2-D (0 x 3)"},
      {"integer.h5",
       {{"X", H5T_STD_I32LE, {2, 2}, {1, 2, 3, 4}}},
       "X: type integer, expected float64 or float32"},
      {"init_dim.h5",
       {{"X", H5T_IEEE_F64LE, {4, 3}, ramp(4, 3)}, {"init", H5T_IEEE_F64LE, {2, 2}, ramp(2, 2)}},
       "init: 2 x 2, expected k x 3"},
      {"init_int.h5",
       {{"X", H5T_IEEE_F64LE, {4, 3}, ramp(4, 3)}, {"init", H5T_STD_I32LE, {2, 3}, ramp(2, 3)}},
       "init: type integer"},
  };
  std::vector<std::pair<std::string, std::string>> files = {{dir.path("missing.h5"), ""}, {text, ""}};
  for (const Case& c : cases) {
    write_file(dir.path(c.name), c.datasets);
    files.emplace_back(dir.path(c.name), c.problem);
  }
  for (const auto& [path, problem] : files) {
    INFO(path);
    const std::string full = message_of([&] { tcsolve::read_kmeans_data(path); });
    REQUIRE_FALSE(full.empty());
    CHECK_THAT(full, Catch::StartsWith(path + ": "));
    CHECK_THAT(full, Catch::Contains(problem));
    CHECK(message_of([&] { tcsolve::read_kmeans_shape(path); }) == full);
    CHECK(message_of([&] { tcsolve::read_kmeans_init(path); }) == full);
    if (path.find("init") == std::string::npos)  // the rows reader does not look at init
      CHECK(message_of([&] { tcsolve::read_kmeans_rows(path, 0, 1); }) == full);
  }
  const std::string iris = input("iris.h5");
  CHECK(message_of([&] { tcsolve::read_kmeans_rows(iris, 140, 11); }) ==
        iris + ": X: rows [140, 151) outside its 150 rows");
  CHECK(message_of([&] { tcsolve::read_kmeans_rows(iris, 151, 0); }) ==
        iris + ": X: rows [151, 151) outside its 150 rows");
  CHECK_THAT(message_of([&] { tcsolve::read_kmeans_rows(iris, -1, 2); }),
             Catch::Contains("X: rows from -1, count 2: begin and count must be >= 0"));
  CHECK_THAT(message_of([&] { tcsolve::read_kmeans_rows(iris, 0, -1); }), Catch::Contains("must be >= 0"));
}

TEST_CASE(
    "reading rows: an X of 2^31 x 2 values (unallocated on disk) has its shape and last rows read, where the "
    "full reader refuses it",
    "[io][kmeans_file]") {
  TempDir dir("kmeans_rows");
  const std::string path = dir.path("huge.h5");
  const hsize_t points = hsize_t{1} << 31;
  write_file(path, {{"X", H5T_IEEE_F32LE, {points, 2}, {}}});
  CHECK_THAT(message_of([&] { tcsolve::read_kmeans_data(path); }),
             Catch::Contains("X: 2-D (2147483648 x 2): too large"));
  const tcsolve::KmeansShape shape = tcsolve::read_kmeans_shape(path);
  CHECK(shape.points == static_cast<std::int64_t>(points));
  CHECK(shape.dim == 2);
  CHECK_FALSE(shape.has_init);
  CHECK(tcsolve::read_kmeans_rows(path, shape.points - 3, 3) ==
        std::vector<float>(6, 0.0f));  // the fill value
}
