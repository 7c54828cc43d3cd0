// A P x Q grid's pieces moved to the 1 x PQ grid of the same ranks (redistribute.hpp).
#include "redistribute.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>

#include "tcsolve/runtime/communicator.hpp"

namespace tcsolve::distributed {

ColumnPieces to_column_grid(runtime::Communicator& comm, const Grid& grid, const Descriptor& d, const double* local) {
  const int me = comm.rank(), prow = grid.row_of(me), pcol = grid.col_of(me), p = grid.rows;
  ColumnPieces out;
  out.grid = Grid{1, grid.size()};
  out.desc = Descriptor::make(d.m, d.n, d.mb, d.nb, out.grid, 0);
  const CyclicMap rows = d.rows(grid), cols = d.cols(grid), target = out.desc.cols(out.grid);
  const int m = d.m, nloc = cols.count(pcol), most_rows = rows.count(0);
  out.a.assign(static_cast<std::size_t>(m) * static_cast<std::size_t>(std::max(1, target.count(me))), 0.0);
  // The process column's ranks, ranked by process row.
  const std::unique_ptr<runtime::Communicator> column = comm.split(pcol, prow);
  const int mloc = rows.count(prow);
  const std::size_t slot = static_cast<std::size_t>(std::max(1, most_rows)) * static_cast<std::size_t>(d.nb);
  std::vector<double> send(slot), recv(slot * static_cast<std::size_t>(p));
  for (int k = 0; k * d.nb < nloc; ++k) {  // the process column's local block columns, alike on its ranks
    const int first = k * d.nb, w = std::min(d.nb, nloc - first);
    std::fill(send.begin(), send.end(), 0.0);
    for (int j = 0; j < w; ++j)
      std::copy_n(local + static_cast<std::ptrdiff_t>(first + j) * d.lld, mloc,
                  send.begin() + static_cast<std::ptrdiff_t>(j) * most_rows);
    column->allgather(send.data(), recv.data(), slot * sizeof(double), nullptr);
    if (k % p != prow) continue;  // block column k Q + pcol lands on rank (k mod P) Q + pcol
    for (int j = 0; j < w; ++j) {
      const int g = cols.global(first + j, pcol);
      double* dst = out.a.data() + static_cast<std::size_t>(target.local(g)) * static_cast<std::size_t>(m);
      for (int r = 0; r < p; ++r) {
        const double* src = recv.data() + static_cast<std::size_t>(r) * slot + static_cast<std::size_t>(j) * most_rows;
        const int rm = rows.count(r);
        for (int il = 0; il < rm; ++il) dst[rows.global(il, r)] = src[il];
      }
    }
  }
  return out;
}

}  // namespace tcsolve::distributed
