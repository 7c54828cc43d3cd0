// The communicators of a P x Q process grid over a world communicator (distributed.hpp): the
// world, the rank's process row (its Q ranks, ranked by process column) and process column (its
// P ranks, ranked by process row), and the layout's maps. Internal to tcsolve::solver.
#pragma once

#include <memory>

#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/solver/block_cyclic.hpp"

namespace tcsolve::distributed {

struct GridComms {
  runtime::Communicator& world;
  Grid grid;
  int prow = 0, pcol = 0;
  std::unique_ptr<runtime::Communicator> row;  ///< this process row: member q is process (prow, q)
  std::unique_ptr<runtime::Communicator> col;  ///< this process column: member p is process (p, pcol)

  /// A collective over `world` (grid.size() == world.size(), checked by the caller).
  GridComms(runtime::Communicator& world, const Grid& grid)
      : world(world), grid(grid), prow(grid.row_of(world.rank())), pcol(grid.col_of(world.rank())) {
    row = world.split(prow, pcol);
    col = world.split(pcol, prow);
  }
};

}  // namespace tcsolve::distributed
