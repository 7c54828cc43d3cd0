// Issue 33, "generate makes systems larger than one host's memory block by block": the block
// writer (tcsolve/io/system_writer.hpp) and random mode's block stream (tcsolve/solver/
// generate.hpp, generate_blocks.cpp), and `tcsolve generate` on that path.
#include <hdf5.h>

#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/io/system_writer.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using tcsolve::LinearSystem;
using tcsolve::OutputOptions;
using tcsolve::SystemWriter;
using tcsolve::test::CommandResult;
using tcsolve::test::contains;
using tcsolve::test::TempDir;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

OutputOptions with_force(bool force) {
  OutputOptions o;
  o.force = force;
  return o;
}

/// `sys` through SystemWriter by blocks of `block` rows (A, then b and x the same way).
void write_by_blocks(const std::string& path, const LinearSystem& sys, int block, OutputOptions options = {}) {
  SystemWriter::Shape shape;
  shape.n = sys.n();
  shape.nrhs = sys.nrhs();
  shape.b_is_vector = sys.b_is_vector;
  shape.has_x = sys.x_true.has_value();
  SystemWriter w(path, shape, sys.description, std::move(options));
  const RowMajor a = sys.A, b = sys.b;
  const RowMajor x = shape.has_x ? RowMajor(*sys.x_true) : RowMajor();
  for (int r0 = 0; r0 < sys.n(); r0 += block) {
    const int rows = std::min(block, sys.n() - r0);
    w.write_a_rows(r0, rows, a.data() + static_cast<std::ptrdiff_t>(r0) * sys.n());
    w.write_b_rows(r0, rows, b.data() + static_cast<std::ptrdiff_t>(r0) * sys.nrhs());
    if (shape.has_x) w.write_x_rows(r0, rows, x.data() + static_cast<std::ptrdiff_t>(r0) * sys.nrhs());
  }
  w.commit();
}

/// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
double host_memory_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

bool has_temporary_file(const TempDir& dir) {
  for (const std::string& name : dir.entries())
    if (contains(name, std::string(tcsolve::kTemporaryMarker))) return true;
  return false;
}

/// Bitwise: the same doubles (== would call -0 and 0 equal; NaN never occurs here).
bool same_bits(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q) {
  return p.rows() == q.rows() && p.cols() == q.cols() &&
         std::memcmp(p.data(), q.data(), sizeof(double) * static_cast<std::size_t>(p.size())) == 0;
}

/// What HDF5 says of dataset `name`: its shape, whether its type is float64 little-endian.
struct DatasetFacts {
  std::vector<hsize_t> dims;
  bool f64le = false;
};
DatasetFacts facts(const std::string& path, const char* name) {
  DatasetFacts f;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  REQUIRE(ds >= 0);
  const hid_t space = H5Dget_space(ds), type = H5Dget_type(ds);
  f.dims.assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)), 0);
  H5Sget_simple_extent_dims(space, f.dims.data(), nullptr);
  f.f64le = H5Tequal(type, H5T_IEEE_F64LE) > 0;
  H5Tclose(type);
  H5Sclose(space);
  H5Dclose(ds);
  H5Fclose(file);
  return f;
}

/// The description attribute's type: a variable-length UTF-8 string (h5py's str).
bool description_is_vlen_utf8(const std::string& path) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t attr = H5Aopen(file, "description", H5P_DEFAULT);
  REQUIRE(attr >= 0);
  const hid_t type = H5Aget_type(attr);
  const bool ok = H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0 && H5Tget_cset(type) == H5T_CSET_UTF8;
  H5Tclose(type);
  H5Aclose(attr);
  H5Fclose(file);
  return ok;
}

void check_same_system(const LinearSystem& p, const LinearSystem& q) {
  CHECK(same_bits(p.A, q.A));
  CHECK(same_bits(p.b, q.b));
  REQUIRE(p.x_true.has_value() == q.x_true.has_value());
  if (p.x_true) CHECK(same_bits(*p.x_true, *q.x_true));
  CHECK(p.b_is_vector == q.b_is_vector);
  CHECK(p.description == q.description);
}

}  // namespace

TEST_CASE("the block writer's file reads back bit for bit as write_system's, same datasets and attribute", "[io]") {
  TempDir dir;
  for (const int nrhs : {1, 3}) {
    // n = 300: A has 90000 elements, which write_system stores deflated in chunks; the values
    // read back must not care.
    const LinearSystem sys = tcsolve::generate_random_system(300, 11, nrhs);
    const std::string whole = dir.path("whole.h5"), blocks = dir.path("blocks.h5");
    tcsolve::write_system(whole, sys, true);
    write_by_blocks(blocks, sys, 7, with_force(true));
    const LinearSystem a = tcsolve::read_system(whole), b = tcsolve::read_system(blocks);
    check_same_system(b, a);
    check_same_system(b, sys);
    for (const char* name : {"A", "b", "x"}) {
      INFO(name << ", nrhs " << nrhs);
      const DatasetFacts fw = facts(whole, name), fb = facts(blocks, name);
      CHECK(fb.dims == fw.dims);
      CHECK(fb.f64le);
      CHECK(fw.f64le);
    }
    CHECK(facts(blocks, "b").dims == (nrhs == 1 ? std::vector<hsize_t>{300} : std::vector<hsize_t>{300, 3}));
    CHECK(description_is_vlen_utf8(blocks));
    CHECK(description_is_vlen_utf8(whole));
    // The shape read from metadata alone, as solve checks memory with it.
    const tcsolve::SystemShape shape = tcsolve::inspect_system(blocks);
    CHECK(shape.n == 300);
    CHECK(shape.nrhs == nrhs);
    CHECK(shape.has_x);
  }
  // Without x: no dataset x, as write_system.
  LinearSystem nox = tcsolve::generate_random_system(20, 2);
  nox.x_true.reset();
  write_by_blocks(dir.path("nox.h5"), nox, 3);
  CHECK_FALSE(tcsolve::read_system(dir.path("nox.h5")).x_true.has_value());
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("random mode by blocks does not depend on the block size: the same bits, the same file", "[io]") {
  TempDir dir;
  constexpr int kN = 97;  // prime: blocks of 7 end with a short one, odd n puts Philox pairs across rows
  const LinearSystem whole = tcsolve::generate_random_system(kN, 5, 2, kN);
  std::string first_file;
  for (const int block : {1, 7, kN}) {
    INFO("block rows " << block);
    const LinearSystem sys = tcsolve::generate_random_system(kN, 5, 2, block);
    check_same_system(sys, whole);
    const std::string path = dir.path("b" + std::to_string(block) + ".h5");
    write_by_blocks(path, sys, block);
    const std::string bytes = tcsolve::test::read_file(path);
    if (first_file.empty()) first_file = bytes;
    CHECK(bytes == first_file);  // the whole file, byte for byte
  }
  // Any row block on its own: rows 50..52 alone are rows 50..52 of the whole.
  std::vector<double> a(3 * kN), b(3 * 2);
  tcsolve::random_rows(kN, 5, 50, 3, *whole.x_true, a.data(), b.data());
  CHECK(same_bits(Eigen::Map<const RowMajor>(a.data(), 3, kN), whole.A.middleRows(50, 3)));
  CHECK(same_bits(Eigen::Map<const RowMajor>(b.data(), 3, 2), whole.b.middleRows(50, 3)));
  // Another seed, another matrix.
  CHECK_FALSE(same_bits(tcsolve::generate_random_system(kN, 6, 2).A, whole.A));
}

TEST_CASE("the block stream: A and x from Philox by index, b = A x_true row by row in FP64, exactly", "[io]") {
  constexpr int kN = 64, kRhs = 2;
  constexpr std::uint64_t kSeed = 0x123456789abcdefULL;  // both key words non-zero
  const LinearSystem sys = tcsolve::generate_random_system(kN, kSeed, kRhs, 5);
  const Eigen::MatrixXd& x = *sys.x_true;
  bool in_range = true, a_by_index = true, x_by_index = true, b_exact = true;
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) {
      const double v = sys.A(i, j);
      in_range = in_range && v >= -1 && v < 1;
      a_by_index = a_by_index && v == tcsolve::block_stream_uniform(kSeed, 2, static_cast<std::uint64_t>(i) * kN + j);
    }
    for (int c = 0; c < kRhs; ++c) {
      x_by_index = x_by_index && x(i, c) == tcsolve::block_stream_uniform(kSeed, 3, static_cast<std::uint64_t>(i) * kRhs + c);
      double sum = 0;  // the defined order: j = 0, 1, ..., n-1
      for (int j = 0; j < kN; ++j) sum += sys.A(i, j) * x(j, c);
      b_exact = b_exact && sum == sys.b(i, c);
    }
  }
  CHECK(in_range);
  CHECK(a_by_index);
  CHECK(x_by_index);
  CHECK(b_exact);
  CHECK(sys.b_is_vector == false);
  CHECK(contains(sys.description, "Philox4x32-10"));
  CHECK(same_bits(tcsolve::random_x_true(kN, kRhs, kSeed), x));
}

TEST_CASE("random_x_true goes beyond the files' order for solve --synthetic, up to 2^20", "[io]") {
  // `solve --synthetic` on GPUs makes A on the devices (their memory is the bound); the host
  // makes x_true only. Files and host systems keep kMaxGeneratedOrder.
  constexpr int kBeyond = tcsolve::kMaxGeneratedOrder + 16385;  // 147457
  const Eigen::MatrixXd x = tcsolve::random_x_true(kBeyond, 1, 5);
  REQUIRE(x.rows() == kBeyond);
  bool by_index = true;
  for (const int i : {0, 1, 131072, kBeyond - 1})
    by_index = by_index && x(i, 0) == tcsolve::block_stream_uniform(5, 3, static_cast<std::uint64_t>(i));
  CHECK(by_index);
  CHECK_THROWS_AS(tcsolve::random_x_true((1 << 20) + 1, 1, 5), tcsolve::InvalidInput);
  CHECK_THROWS_AS(tcsolve::random_x_true(0, 1, 5), tcsolve::InvalidInput);
  CHECK_THROWS_AS(tcsolve::generate_random_system(tcsolve::kMaxGeneratedOrder + 1, 5), tcsolve::InvalidInput);
}

TEST_CASE("generate_system's random mode: the mt19937_64 stream up to 1024, the block stream above", "[io]") {
  // n <= kWholeMatrixRandomOrder: inputs/random_n512.h5's stream, A drawn column by column from
  // one std::mt19937_64 seeded with the seed, then x.
  const LinearSystem small = tcsolve::generate_system(40, 1, tcsolve::SpectrumMode::random, 9);
  std::mt19937_64 rng(9);
  const auto next = [&] { return 2.0 * (static_cast<double>(rng() >> 11) * 0x1.0p-53) - 1.0; };
  bool column_order = true;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 40; ++i) column_order = column_order && small.A(i, j) == next();
  CHECK(column_order);
  CHECK_FALSE(contains(small.description, "Philox"));
  // Above it: the block stream, the same bits as generate_random_system.
  constexpr int kAbove = tcsolve::kWholeMatrixRandomOrder + 1;
  const LinearSystem big = tcsolve::generate_system(kAbove, 1, tcsolve::SpectrumMode::random, 9);
  check_same_system(big, tcsolve::generate_random_system(kAbove, 9, 1, 100));
}

TEST_CASE("a block write that fails half way leaves neither the output nor a temporary", "[io]") {
  TempDir dir;
  const std::string out = dir.path("sys.h5");
  tcsolve::TempFileRegistry registry;
  OutputOptions options;
  options.temporaries = &registry;
  const Eigen::MatrixXd x = tcsolve::random_x_true(50, 1, 3);

  SECTION("an exception between blocks") {
    int blocks = 0;
    bool temporary_seen = false;
    try {
      SystemWriter::Shape shape;
      shape.n = 50;
      SystemWriter w(out, shape, "half", options);
      tcsolve::generate_random_blocks(50, 3, x, 8, [&](std::int64_t row0, int rows, const double* a, const double* b) {
        w.write_a_rows(row0, rows, a);
        w.write_b_rows(row0, rows, b);
        temporary_seen = fs::exists(w.temporary()) && registry.size() == 1;
        if (++blocks == 3) throw std::runtime_error("interrupted between blocks");
      });
      FAIL("not reached");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "interrupted between blocks");
    }
    CHECK(blocks == 3);
    CHECK(temporary_seen);
    CHECK(dir.entries().empty());
    CHECK(registry.size() == 0);
  }
  SECTION("commit with rows missing is refused, naming the first") {
    SystemWriter::Shape shape;
    shape.n = 50;
    SystemWriter w(out, shape, "missing", options);
    std::vector<double> rows(10 * 50, 0.5);
    w.write_a_rows(0, 10, rows.data());
    w.write_b_rows(0, 10, rows.data());
    CHECK_THROWS_WITH(w.commit(), out + ": A: row 10 not written");
    CHECK(dir.entries().empty());
    CHECK(registry.size() == 0);
  }
  SECTION("rows outside the matrix") {
    SystemWriter::Shape shape;
    shape.n = 50;
    SystemWriter w(out, shape, "", options);
    std::vector<double> rows(2 * 50, 0.5);
    CHECK_THROWS_WITH(w.write_a_rows(49, 2, rows.data()), out + ": A: rows 49..50 outside 0..49");
  }
  SECTION("a directory that does not exist, or a file named as a directory: nothing created") {
    SystemWriter::Shape shape;
    shape.n = 5;
    CHECK_THROWS_WITH(SystemWriter(dir.path("no/such/sys.h5"), shape, "", options),
                      Catch::Contains("does not exist"));
    std::ofstream(dir.path("plain")) << "x";
    CHECK_THROWS_WITH(SystemWriter(dir.path("plain/sys.h5"), shape, "", options), Catch::Contains("is not a directory"));
    CHECK(dir.entries() == std::vector<std::string>{"plain"});
  }
  SECTION("a standard stream cannot take it") {
    SystemWriter::Shape shape;
    shape.n = 5;
    CHECK_THROWS_WITH(SystemWriter("/dev/stdout", shape, "", options), Catch::Contains("standard stream"));
  }
  CHECK(registry.size() == 0);
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("the block writer keeps write_system's overwrite rules: --force, inputs, directories", "[io]") {
  TempDir dir;
  const LinearSystem sys = tcsolve::generate_random_system(12, 4);
  const LinearSystem other = tcsolve::generate_random_system(12, 5);
  const std::string out = dir.path("sys.h5");
  write_by_blocks(out, sys, 5);
  const std::string before = tcsolve::test::read_file(out);
  // Each refusal the same message as write_system's, the file untouched.
  const auto message = [](const auto& write) -> std::string {
    try {
      write();
    } catch (const tcsolve::InvalidInput& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string exists = message([&] { write_by_blocks(out, other, 5); });
  CHECK(exists == out + ": exists (use --force to overwrite)");
  CHECK(exists == message([&] { tcsolve::write_system(out, other, false); }));
  CHECK(tcsolve::test::read_file(out) == before);

  OutputOptions as_input = with_force(true);
  as_input.inputs = {out};
  const std::string input = message([&] { write_by_blocks(out, other, 5, as_input); });
  CHECK(contains(input, "is the input file"));
  CHECK(input == message([&] { tcsolve::write_system(out, other, as_input); }));
  CHECK(tcsolve::test::read_file(out) == before);

  fs::create_directory(dir.path("d.h5"));
  const std::string directory = message([&] { write_by_blocks(dir.path("d.h5"), other, 5, with_force(true)); });
  CHECK(directory == dir.path("d.h5") + ": is a directory");
  CHECK(directory == message([&] { tcsolve::write_system(dir.path("d.h5"), other, true); }));

  // With force: replaced, through a symbolic link the file it names.
  fs::create_symlink("sys.h5", dir.path("link.h5"));
  write_by_blocks(dir.path("link.h5"), other, 5, with_force(true));
  CHECK(fs::is_symlink(dir.path("link.h5")));
  check_same_system(tcsolve::read_system(out), other);
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("tcsolve generate --mode random: by blocks above 1024 or with --block-rows; solve converges", "[io][cli]") {
  TempDir dir;
  const auto q = [&](const std::string& name) { return "'" + dir.path(name) + "'"; };
  // n = 300: the whole-matrix stream (its file as before), and by blocks with --block-rows.
  CommandResult r = tcsolve::test::run_tcsolve("generate --mode random --n 300 --backend cpu --output " + q("w.h5"));
  INFO(r);
  REQUIRE(r.exit_code == 0);
  check_same_system(tcsolve::read_system(dir.path("w.h5")),
                    tcsolve::generate_system(300, 1, tcsolve::SpectrumMode::random, 1));
  r = tcsolve::test::run_tcsolve("generate --mode random --n 300 --block-rows 7 --backend cpu --json --output " +
                                 q("b7.h5"));
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const tcsolve::test::Json j = tcsolve::test::require_one_object(r);
  REQUIRE(j.find("by_blocks") != nullptr);
  CHECK(j.find("by_blocks")->number == 7);
  check_same_system(tcsolve::read_system(dir.path("b7.h5")), tcsolve::generate_random_system(300, 1));
  r = tcsolve::test::run_tcsolve("generate --mode random --n 300 --block-rows 300 --backend cpu --output " +
                                 q("b300.h5"));
  REQUIRE(r.exit_code == 0);
  CHECK(tcsolve::test::read_file(dir.path("b7.h5")) == tcsolve::test::read_file(dir.path("b300.h5")));
  for (const char* name : {"w.h5", "b7.h5"}) {
    r = tcsolve::test::run_tcsolve("solve --backend cpu --variant fp32-simt --json --input " + q(name));
    INFO(r);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "\"converged\": true"));
  }

  // n = 1100 > 1024: by blocks by default (rows from the memory), the block stream; solved.
  r = tcsolve::test::run_tcsolve("generate --mode random --n 1100 --seed 4 --backend cpu --json --output " +
                                 q("big.h5"));
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const tcsolve::test::Json big = tcsolve::test::require_one_object(r);
  REQUIRE(big.find("by_blocks") != nullptr);
  CHECK(big.find("by_blocks")->number >= 1);
  check_same_system(tcsolve::read_system(dir.path("big.h5")), tcsolve::generate_random_system(1100, 4, 1, 64));
  r = tcsolve::test::run_tcsolve("solve --backend cpu --variant fp32-simt --json --input " + q("big.h5"));
  INFO(r);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "\"converged\": true"));

  // randsvd modes are made whole: --block-rows refused.
  r = tcsolve::test::run_tcsolve("generate --mode geometric --n 10 --block-rows 2 --backend cpu --output " + q("g.h5"));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--block-rows is for --mode random"));
  // A block larger than the memory is refused before anything is written, naming the bytes.
  const double block_bytes = 8.0 * 131072 * 131073;
  if (host_memory_available_bytes() < block_bytes) {
    r = tcsolve::test::run_tcsolve("generate --mode random --n 131072 --block-rows 131072 --backend cpu --output " +
                                   q("huge.h5"));
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "needs 128.1 GiB of host memory"));
    CHECK(contains(r.err, "MemAvailable"));
  }
  CHECK_FALSE(fs::exists(dir.path("g.h5")));
  CHECK_FALSE(fs::exists(dir.path("huge.h5")));
  CHECK_FALSE(has_temporary_file(dir));
}

TEST_CASE("tcsolve generate by blocks stopped by SIGTERM half way leaves neither the file nor a temporary", "[io][cli]") {
  TempDir dir;
  // n = 6000 by single rows: 6000 blocks, 288 MB, about a second on two cores; TERM after 0.3 s.
  const std::string out = dir.path("sys.h5");
  const CommandResult r = tcsolve::test::run_shell(
      "timeout -s TERM 0.3 '" + tcsolve::test::tcsolve_exe() +
          "' generate --mode random --n 6000 --block-rows 1 --backend cpu --progress never --output '" + out + "'",
      "generate --n 6000 --block-rows 1 (TERM after 0.3 s)");
  INFO(r);
  if (r.exit_code == 0) {
    WARN("skipped: generate finished within 0.3 s on this machine");
    return;
  }
  CHECK(r.exit_code == 124);  // timeout's code for a command it ended
  CHECK(dir.entries().empty());
}
