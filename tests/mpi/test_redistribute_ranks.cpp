// The P x Q grid's pieces moved to the 1 x PQ grid (solver/src/distributed/redistribute.hpp), on
// cpu ranks under mpirun: every grid of the rank count, n not a multiple of nb, rows of a
// process row padded; the result equals scatter() onto the 1 x PQ grid bit for bit.
#include <catch2/catch.hpp>
#include <Eigen/Dense>
#include <string>
#include <vector>

#include "distributed/redistribute.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/block_cyclic.hpp"

using tcsolve::Descriptor;
using tcsolve::Grid;
namespace runtime = tcsolve::runtime;

TEST_CASE("a P x Q grid's pieces move to the 1 x PQ grid bit for bit", "[mpi][block_cyclic]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  runtime::Communicator& comm = *group.host_communicator();
  const int ranks = comm.size(), me = comm.rank();
  for (int n : {1, 37, 100}) {
    Eigen::MatrixXd M(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) M(i, j) = double(i) + 1000.0 * double(j) + 0.25;  // each value its own
    for (int p = 1; p <= ranks; ++p) {
      if (ranks % p != 0) continue;
      const Grid g{p, ranks / p};
      for (int nb : {4, 16}) {
        const Descriptor d = Descriptor::make(n, n, nb, nb, g, g.row_of(me));
        std::vector<double> local(static_cast<std::size_t>(d.lld) * std::max(1, d.local_cols(g, g.col_of(me))), -1.0);
        tcsolve::scatter(M.data(), n, d, g, g.row_of(me), g.col_of(me), local.data());
        const tcsolve::distributed::ColumnPieces moved = tcsolve::distributed::to_column_grid(comm, g, d, local.data());
        const Grid line{1, ranks};
        const Descriptor want = Descriptor::make(n, n, nb, nb, line, 0);
        std::vector<double> expected(static_cast<std::size_t>(n) * std::max(1, want.local_cols(line, me)), 0.0);
        tcsolve::scatter(M.data(), n, want, line, 0, me, expected.data());
        INFO("grid " << p << "x" << ranks / p << ", n " << n << ", nb " << nb << ", rank " << me);
        CHECK(moved.grid.rows == 1);
        CHECK(moved.grid.cols == ranks);
        CHECK(moved.desc.to_array() == want.to_array());
        CHECK(moved.a == expected);
      }
    }
  }
}
