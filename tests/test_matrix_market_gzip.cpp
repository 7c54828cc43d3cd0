// Matrix Market files read through gzip (.mtx.gz, tcsolve::io's text_input): the same matrix,
// bitwise, as the uncompressed file; the name, the banner check and the size-line look work on
// the compressed file; a truncated gzip file is refused naming the file and gzip's reason; and
// `tcsolve solve` takes one.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_test_util.hpp"
#include "tcsolve/io/matrix_market.hpp"
#include "tcsolve/runtime/error.hpp"
#include "temp_dir.hpp"

namespace {

const char* const kText =
    "%%MatrixMarket matrix coordinate real general\n"
    "% a 3 x 3 test matrix\n"
    "3 3 5\n"
    "1 1 4\n"
    "2 2 5.25\n"
    "3 3 6\n"
    "1 3 1.5e-3\n"
    "3 1 -2\n";

void write_plain(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

void write_gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb9");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a gzip Matrix Market file (.mtx.gz) reads bitwise as its text; a truncated one is named", "[io]") {
  tcsolve::test::TempDir dir("mtxgz");
  const std::string plain = dir.path("m.mtx"), gz = dir.path("m.mtx.gz");
  write_plain(plain, kText);
  write_gzip(gz, kText);
  REQUIRE(read_bytes(gz).substr(0, 2) == "\x1f\x8b");  // really compressed

  CHECK(tcsolve::is_matrix_market_file(gz));
  CHECK(tcsolve::has_matrix_market_extension(dir.path("M.MTX.GZ")));
  CHECK_FALSE(tcsolve::has_matrix_market_extension(dir.path("m.gz")));
  CHECK(tcsolve::matrix_market_order(gz) == 3);
  CHECK(tcsolve::matrix_market_order(plain) == 3);

  const tcsolve::MatrixMarketMatrix a = tcsolve::read_matrix_market(plain),
                                    b = tcsolve::read_matrix_market(gz);
  CHECK(a.A == b.A);
  CHECK(b.A(0, 2) == 1.5e-3);
  CHECK(b.A(2, 0) == -2);
  const tcsolve::LinearSystem sa = tcsolve::import_matrix_market(plain, tcsolve::RhsKind::random, 7),
                              sb = tcsolve::import_matrix_market(gz, tcsolve::RhsKind::random, 7);
  CHECK(sa.A == sb.A);
  CHECK(sa.b == sb.b);

  // a compressed file cut short: gzip's reason, with the file's name, never a silent short matrix
  const std::string bytes = read_bytes(gz), cut = dir.path("cut.mtx.gz");
  write_plain(cut, bytes.substr(0, bytes.size() - 12));
  try {
    tcsolve::read_matrix_market(cut);
    FAIL("a truncated .mtx.gz was read");
  } catch (const tcsolve::InvalidInput& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find(cut + ":") == 0);
  }

  // the CLI solves it (Matrix Market input: x = ones, b = A x)
  const tcsolve::test::CommandResult r =
      tcsolve::test::run_tcsolve("solve --input '" + gz + "' --backend cpu --json");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"converged\": true") != std::string::npos);
}
