// A P x Q grid's pieces moved to the 1 x PQ grid of the same ranks (whole columns in nb-column
// blocks dealt round all ranks): the layout GPU members factor on (cuda/distributed_lu_cuda.cpp),
// so that a ScaLAPACK caller's P x Q pieces run there unchanged.
//
// Block column J = k Q + c (k the block's local index on process column c) lands on rank
// (k mod P) Q + c of the row-major grid, a rank of the same process column. So the move is an
// allgather within each process column (Communicator::split), one local block column at a time:
// each rank contributes its rows of the block (padded to process row 0's count), and the rank
// that takes it keeps the whole column block. Traffic: every rank receives n x (its process
// column's columns) values, P times the piece it ends with; memory beside the two pieces: P x
// (local rows) x nb values.
#pragma once

#include <vector>

#include "tcsolve/solver/block_cyclic.hpp"

namespace tcsolve::runtime {
class Communicator;
}

namespace tcsolve::distributed {

/// One rank's piece of the 1 x PQ grid: desc (lld = m) and its columns, column-major.
struct ColumnPieces {
  Grid grid;
  Descriptor desc;
  std::vector<double> a;
};

/// The 1 x grid.size() pieces of the matrix whose P x Q pieces the ranks of `comm` hold (`local`
/// with descriptor d; rank r is process (grid.row_of(r), grid.col_of(r))). Every rank calls it
/// (collectives over comm, which must have grid.size() ranks and an MPI engine for split). The
/// values are moved, not computed: the result is the bits of scatter() onto the 1 x PQ grid.
ColumnPieces to_column_grid(runtime::Communicator& comm, const Grid& grid, const Descriptor& d, const double* local);

}  // namespace tcsolve::distributed
