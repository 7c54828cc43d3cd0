// read_system_piece ([io]): one process' piece of a system file's A in ScaLAPACK's 2D
// block-cyclic layout, read by an HDF5 hyperslab selection of exactly its elements. For orders
// that are and are not multiples of the block, several grids, both file layouts: every process'
// local column-major piece holds bitwise A(rows.global(i, prow), cols.global(j, pcol)) (so the
// pieces of all processes together are A, each element once), b and x whole; a NaN is named by
// its file index on the process that holds it alone; a layout for another order is refused.
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/block_cyclic.hpp"
#include "temp_dir.hpp"

namespace {

using tcsolve::CyclicMap;
using tcsolve::Layout;
using tcsolve::LinearSystem;
using tcsolve::test::TempDir;

LinearSystem system_of(int n, int nrhs) {
  LinearSystem s;
  s.A.resize(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) s.A(i, j) = 1000.0 * i + j + 0.25;  // not symmetric: a transpose shows
  s.x_true = Eigen::MatrixXd::Constant(n, nrhs, 1.0);
  s.b = s.A * *s.x_true;
  s.b_is_vector = nrhs == 1;
  s.description = "piece test";
  return s;
}

}  // namespace

TEST_CASE("read_system_piece reads each process' block-cyclic piece of A and nothing else", "[io]") {
  TempDir dir("piece");
  for (int n : {37, 64, 100})
    for (Layout layout : {Layout::row_major, Layout::column_major}) {
      // 3 right-hand sides in a row-major file (a column-major one would hold b transposed too)
      const LinearSystem s = system_of(n, n == 37 && layout == Layout::row_major ? 3 : 1);
      LinearSystem file = s;
      if (layout == Layout::column_major) file.A = s.A.transpose();  // as MATLAB writes A
      const std::string path = dir.path("sys" + std::to_string(n) + std::string(to_string(layout)) + ".h5");
      tcsolve::write_system(path, file, true);
      for (int nb : {8, 16})
        for (const auto& [P, Q] : std::vector<std::pair<int, int>>{{1, 1}, {1, 3}, {2, 2}, {3, 1}, {2, 3}}) {
          const CyclicMap rows{n, nb, P}, cols{n, nb, Q};
          int held = 0;
          for (int prow = 0; prow < P; ++prow)
            for (int pcol = 0; pcol < Q; ++pcol) {
              INFO("n " << n << " " << to_string(layout) << " nb " << nb << " grid " << P << "x" << Q << " process ("
                        << prow << ", " << pcol << ")");
              const tcsolve::SystemPiece p = tcsolve::read_system_piece(path, layout, rows, prow, cols, pcol);
              REQUIRE(p.local_rows == rows.count(prow));
              REQUIRE(p.local_cols == cols.count(pcol));
              REQUIRE(p.ld == std::max(1, p.local_rows));
              bool same = true;
              for (int j = 0; j < p.local_cols; ++j)
                for (int i = 0; i < p.local_rows; ++i)
                  same = same && p.a[static_cast<std::size_t>(j) * p.ld + i] ==
                                     s.A(rows.global(i, prow), cols.global(j, pcol));
              CHECK(same);
              held += p.local_rows * p.local_cols;
              CHECK(p.b == s.b);
              REQUIRE(p.x_true.has_value());
              CHECK(*p.x_true == *s.x_true);
              CHECK(p.b_is_vector == s.b_is_vector);
              CHECK(p.description == "piece test");
            }
          CHECK(held == n * n);
        }
    }
}

TEST_CASE("read_system_piece names a NaN by its file index on the process holding it only", "[io]") {
  TempDir dir("piece");
  LinearSystem s = system_of(40, 1);
  s.A(33, 17) = std::nan("");
  const std::string path = dir.path("nan.h5");
  tcsolve::write_system(path, s, true);
  const CyclicMap rows{40, 8, 2}, cols{40, 8, 2};
  // (33, 17): row block 4 -> process row 0, column block 2 -> process column 0
  CHECK_THROWS_WITH(tcsolve::read_system_piece(path, Layout::row_major, rows, 0, cols, 0),
                    path + ": A: contains NaN at (33, 17)");
  CHECK_NOTHROW(tcsolve::read_system_piece(path, Layout::row_major, rows, 1, cols, 0));
  CHECK_NOTHROW(tcsolve::read_system_piece(path, Layout::row_major, rows, 0, cols, 1));
  CHECK_THROWS_WITH(tcsolve::read_system_piece(path, Layout::row_major, CyclicMap{41, 8, 2}, 0, cols, 0),
                    path + ": A: order 40, but the layout is for 41 x 40");
}
