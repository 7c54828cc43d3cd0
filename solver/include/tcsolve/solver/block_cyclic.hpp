// ScaLAPACK's 2D block-cyclic layout (docs/architecture.md, "Several GPUs and nodes"): a P x Q process
// grid in row-major rank order (BLACS's default: rank r is process (r / Q, r mod Q)), square or
// rectangular mb x nb blocks dealt round the grid, source process (0, 0). Global block (I, J)
// lives on process (I mod P, J mod Q); a process holds its blocks packed column-major in a local
// array of numroc(m, mb, prow, P) rows (leading dimension lld >= that) and numroc(n, nb, pcol, Q)
// columns. Indices are zero-based here (ScaLAPACK's are one-based; the descriptor's fields are
// the same numbers).
//
// Descriptor is ScaLAPACK's array descriptor `int desc[9]` = {DTYPE = 1, CTXT, M, N, MB, NB,
// RSRC, CSRC, LLD}; validate() checks it against a grid (InvalidInput naming the bad field).
// scatter()/gather() move a global column-major matrix to and from the local pieces.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tcsolve::runtime {
class Communicator;
}

namespace tcsolve {

/// A P x Q process grid; ranks in row-major order, as BLACS's default grid.
struct Grid {
  int rows = 1;  ///< P
  int cols = 1;  ///< Q
  int size() const { return rows * cols; }
  int row_of(int rank) const { return rank / cols; }  ///< the process row of `rank`
  int col_of(int rank) const { return rank % cols; }  ///< the process column of `rank`
  int rank_of(int prow, int pcol) const { return prow * cols + pcol; }
};

/// "PxQ" (e.g. "2x3"): InvalidInput unless both are >= 1.
Grid parse_grid(const std::string& text);
/// InvalidInput unless grid.rows, grid.cols >= 1 and rows x cols == ranks (naming both).
void check_grid(const Grid& grid, int ranks);

/// ScaLAPACK's numroc: how many of the n rows (or columns) dealt in blocks of nb round nprocs
/// processes, starting at process src, process iproc holds.
int numroc(int n, int nb, int iproc, int nprocs, int src = 0);

/// One dimension of the layout (rows over P, or columns over Q), source 0.
struct CyclicMap {
  int n = 0, nb = 1, procs = 1;
  int owner(int global) const { return (global / nb) % procs; }
  /// The local index of `global` on its owner.
  int local(int global) const { return (global / (nb * procs)) * nb + global % nb; }
  /// The global index of local index `local` on process `proc`.
  int global(int local, int proc) const { return ((local / nb) * procs + proc) * nb + local % nb; }
  /// How many indices process `proc` holds.
  int count(int proc) const { return numroc(n, nb, proc, procs); }
  /// The first local index of `proc` whose global index is >= `global` (count(proc) when none):
  /// the local indices below it are those of the globals below `global`.
  int first_at_or_after(int global, int proc) const { return numroc(global, nb, proc, procs); }
};

/// ScaLAPACK's array descriptor (DTYPE 1, dense), field for field.
struct Descriptor {
  int dtype = 1;  ///< DTYPE_: 1 (dense)
  int ctxt = 0;   ///< CTXT_: the BLACS context (carried, not interpreted)
  int m = 0;      ///< M_: global rows
  int n = 0;      ///< N_: global columns
  int mb = 1;     ///< MB_: block rows
  int nb = 1;     ///< NB_: block columns
  int rsrc = 0;   ///< RSRC_: the process row of the first block (0 only)
  int csrc = 0;   ///< CSRC_: the process column of the first block (0 only)
  int lld = 1;    ///< LLD_: the local leading dimension, >= max(1, local rows)

  /// The descriptor of an m x n matrix in mb x nb blocks on `grid`, for the process row `prow`
  /// (lld = max(1, its local rows)); ctxt 0.
  static Descriptor make(int m, int n, int mb, int nb, const Grid& grid, int prow);
  static Descriptor from_array(const int* desc9);
  std::array<int, 9> to_array() const;

  CyclicMap rows(const Grid& g) const { return {m, mb, g.rows}; }
  CyclicMap cols(const Grid& g) const { return {n, nb, g.cols}; }
  int local_rows(const Grid& g, int prow) const { return numroc(m, mb, prow, g.rows); }
  int local_cols(const Grid& g, int pcol) const { return numroc(n, nb, pcol, g.cols); }
};

/// Throws InvalidInput naming `what` (e.g. "desca") and the bad field (DTYPE, M, N, MB, NB, RSRC,
/// CSRC, LLD) with its value: DTYPE != 1, M or N < 0, MB or NB < 1, RSRC / CSRC != 0 (other
/// sources are not supported), LLD < max(1, the local rows of process row `prow`).
void validate(const Descriptor& d, const Grid& grid, int prow, const std::string& what);

/// The local piece of process (prow, pcol): local(i, j) of global(I, J), column-major with
/// leading dimension d.lld (the rows between the local rows and lld are left as they are),
/// from the global column-major matrix `global` (leading dimension ldg >= d.m). T: double or
/// float.
template <class T>
void scatter(const T* global, int ldg, const Descriptor& d, const Grid& grid, int prow, int pcol, T* local);

/// The same from a global matrix that only `root` (a rank of comm, comm.size() == grid.size())
/// holds: it is broadcast to every rank first (m n values each: for moderate sizes), then each
/// takes its piece. `global` is read on root only.
template <class T>
void scatter_from(runtime::Communicator& comm, int root, const T* global, int ldg, const Descriptor& d,
                  const Grid& grid, T* local);

/// The global column-major matrix (ld d.m) from every rank's local piece, on every rank: an
/// allgather of the pieces (each padded to the largest), unpacked in place. Every rank of comm
/// (rank r the process grid.row_of(r), grid.col_of(r)) calls it.
template <class T>
std::vector<T> gather(runtime::Communicator& comm, const T* local, const Descriptor& d, const Grid& grid);

}  // namespace tcsolve
