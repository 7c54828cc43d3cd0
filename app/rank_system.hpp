// This rank's part of a system file for the distributed solver under mpirun (solve_ranks.cpp,
// compare_ranks.cpp): the memory check, the read of its 2D block-cyclic piece of A (io
// read_system_piece; b and x whole), and the DistributedSystem over them, all agreed over the
// ranks so that one rank's failure ends every rank with the same error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve::app {

/// "2x2".
std::string grid_text(const Grid& g);

/// This rank's piece and the system over it. Not copyable: `system` points into `piece` and `b`.
struct RankSystem {
  SystemPiece piece;
  std::vector<double> b;  ///< this rank's piece of b (desc_b's layout)
  DistributedSystem system;
  RankSystem() = default;
  RankSystem(const RankSystem&) = delete;
  RankSystem& operator=(const RankSystem&) = delete;
};

/// Checks the host memory this rank needs -- `bytes_per_entry` for each entry of its piece of A
/// and `vector_bytes` besides -- then reads its piece of `input` (n x n, nrhs right-hand sides)
/// on `grid` in nb x nb blocks; agreed over `world`. `progress_step` (may be empty) is said
/// before the read.
void read_rank_system(runtime::Communicator& world, const std::string& input, Layout layout, const Grid& grid,
                      int nb, const SystemShape& shape, double bytes_per_entry, double vector_bytes,
                      RankSystem& out, const std::function<void()>& progress_step = {});

}  // namespace tcsolve::app
