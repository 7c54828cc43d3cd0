// This rank's part of a system file under mpirun (rank_system.hpp).
#include "rank_system.hpp"

#include <algorithm>
#include <functional>

#include "input.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::app {

std::string grid_text(const Grid& g) { return std::to_string(g.rows) + "x" + std::to_string(g.cols); }

void read_rank_system(runtime::Communicator& world, const std::string& input, Layout layout, const Grid& grid,
                      int nb, const SystemShape& shape, double bytes_per_entry, double vector_bytes,
                      RankSystem& out, const std::function<void()>& progress_step) {
  const int n = static_cast<int>(shape.n), nrhs = static_cast<int>(shape.nrhs);
  const int prow = grid.row_of(world.rank()), pcol = grid.col_of(world.rank());
  const CyclicMap rows{n, nb, grid.rows}, cols{n, nb, grid.cols};
  runtime::agreed(&world, [&] {
    const double local = static_cast<double>(rows.count(prow)) * cols.count(pcol);
    require_host_memory(input + ": this rank's piece of A (" + std::to_string(rows.count(prow)) + " x " +
                            std::to_string(cols.count(pcol)) + " of " + std::to_string(n) + " x " +
                            std::to_string(n) + " on a " + grid_text(grid) + " grid)",
                        bytes_per_entry * local + vector_bytes);
    if (progress_step) progress_step();
    out.piece = read_system_piece(input, layout, rows, prow, cols, pcol);
  });
  DistributedSystem& sys = out.system;
  sys.grid = grid;
  sys.desc_a = Descriptor::make(n, n, nb, nb, grid, prow);
  sys.desc_a.lld = out.piece.ld;
  sys.A = out.piece.a.data();
  sys.desc_b = Descriptor::make(n, nrhs, nb, nb, grid, prow);
  out.b.assign(static_cast<std::size_t>(sys.desc_b.lld) *
                   static_cast<std::size_t>(std::max(1, sys.desc_b.local_cols(grid, pcol))),
               0.0);
  scatter(out.piece.b.data(), n, sys.desc_b, grid, prow, pcol, out.b.data());
  sys.B = out.b.data();
}

}  // namespace tcsolve::app
