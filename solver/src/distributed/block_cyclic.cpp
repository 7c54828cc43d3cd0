// ScaLAPACK's 2D block-cyclic layout (block_cyclic.hpp): numroc, the grid and descriptor checks,
// and the scatter / gather of a global column-major matrix to and from the local pieces.
#include "tcsolve/solver/block_cyclic.hpp"

#include <algorithm>
#include <cstddef>

#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve {

Grid parse_grid(const std::string& text) {
  const std::size_t x = text.find('x');
  Grid g{0, 0};
  try {
    if (x == std::string::npos) throw InvalidInput("");
    std::size_t used = 0;
    g.rows = std::stoi(text.substr(0, x), &used);
    if (used != x) throw InvalidInput("");
    g.cols = std::stoi(text.substr(x + 1), &used);
    if (used != text.size() - x - 1) throw InvalidInput("");
  } catch (const std::exception&) {
    throw InvalidInput("grid '" + text + "': expected PxQ, e.g. 2x2");
  }
  if (g.rows < 1 || g.cols < 1) throw InvalidInput("grid '" + text + "': P and Q must be >= 1");
  return g;
}

void check_grid(const Grid& grid, int ranks) {
  if (grid.rows < 1 || grid.cols < 1)
    throw InvalidInput("grid " + std::to_string(grid.rows) + "x" + std::to_string(grid.cols) +
                       ": P and Q must be >= 1");
  if (grid.size() != ranks)
    throw InvalidInput("grid " + std::to_string(grid.rows) + "x" + std::to_string(grid.cols) + " has " +
                       std::to_string(grid.size()) + " processes, but there are " + std::to_string(ranks) +
                       " ranks");
}

int numroc(int n, int nb, int iproc, int nprocs, int src) {
  const int mydist = (nprocs + iproc - src) % nprocs;
  const int nblocks = n / nb;
  int count = (nblocks / nprocs) * nb;
  const int extra = nblocks % nprocs;
  if (mydist < extra)
    count += nb;
  else if (mydist == extra)
    count += n % nb;
  return count;
}

Descriptor Descriptor::make(int m, int n, int mb, int nb, const Grid& grid, int prow) {
  Descriptor d;
  d.m = m;
  d.n = n;
  d.mb = mb;
  d.nb = nb;
  d.lld = std::max(1, numroc(m, mb, prow, grid.rows));
  return d;
}

Descriptor Descriptor::from_array(const int* a) { return {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]}; }

std::array<int, 9> Descriptor::to_array() const { return {dtype, ctxt, m, n, mb, nb, rsrc, csrc, lld}; }

void validate(const Descriptor& d, const Grid& grid, int prow, const std::string& what) {
  auto bad = [&](const char* field, int value, const std::string& rule) {
    throw InvalidInput(what + ": descriptor field " + field + " = " + std::to_string(value) + " (" + rule + ")");
  };
  if (d.dtype != 1) bad("DTYPE", d.dtype, "must be 1, a dense matrix");
  if (d.m < 0) bad("M", d.m, "must be >= 0");
  if (d.n < 0) bad("N", d.n, "must be >= 0");
  if (d.mb < 1) bad("MB", d.mb, "must be >= 1");
  if (d.nb < 1) bad("NB", d.nb, "must be >= 1");
  if (d.rsrc != 0) bad("RSRC", d.rsrc, "only source process row 0 is supported");
  if (d.csrc != 0) bad("CSRC", d.csrc, "only source process column 0 is supported");
  const int need = std::max(1, d.local_rows(grid, prow));
  if (d.lld < need) bad("LLD", d.lld, "must be >= " + std::to_string(need) + ", the local rows");
}

template <class T>
void scatter(const T* global, int ldg, const Descriptor& d, const Grid& grid, int prow, int pcol, T* local) {
  const CyclicMap rows = d.rows(grid), cols = d.cols(grid);
  const int mloc = rows.count(prow), nloc = cols.count(pcol);
  for (int jl = 0; jl < nloc; ++jl) {
    const T* src = global + static_cast<std::ptrdiff_t>(cols.global(jl, pcol)) * ldg;
    T* dst = local + static_cast<std::ptrdiff_t>(jl) * d.lld;
    for (int il = 0; il < mloc; ++il) dst[il] = src[rows.global(il, prow)];
  }
}

template <class T>
void scatter_from(runtime::Communicator& comm, int root, const T* global, int ldg, const Descriptor& d,
                  const Grid& grid, T* local) {
  std::vector<T> all(static_cast<std::size_t>(d.m) * static_cast<std::size_t>(d.n));
  if (comm.rank() == root)
    for (int j = 0; j < d.n; ++j)
      std::copy(global + static_cast<std::ptrdiff_t>(j) * ldg, global + static_cast<std::ptrdiff_t>(j) * ldg + d.m,
                all.begin() + static_cast<std::ptrdiff_t>(j) * d.m);
  comm.broadcast(all.data(), all.size() * sizeof(T), root, nullptr);
  scatter(all.data(), std::max(1, d.m), d, grid, grid.row_of(comm.rank()), grid.col_of(comm.rank()), local);
}

template <class T>
std::vector<T> gather(runtime::Communicator& comm, const T* local, const Descriptor& d, const Grid& grid) {
  const CyclicMap rows = d.rows(grid), cols = d.cols(grid);
  // Process (0, 0) holds the most rows and columns.
  const std::size_t piece = static_cast<std::size_t>(rows.count(0)) * static_cast<std::size_t>(cols.count(0));
  const int me = comm.rank();
  const int mloc = rows.count(grid.row_of(me)), nloc = cols.count(grid.col_of(me));
  std::vector<T> mine(std::max<std::size_t>(piece, 1));
  for (int jl = 0; jl < nloc; ++jl)
    for (int il = 0; il < mloc; ++il)
      mine[static_cast<std::size_t>(jl) * mloc + il] = local[static_cast<std::ptrdiff_t>(jl) * d.lld + il];
  std::vector<T> pieces(mine.size() * static_cast<std::size_t>(comm.size()));
  comm.allgather(mine.data(), pieces.data(), mine.size() * sizeof(T), nullptr);
  std::vector<T> global(static_cast<std::size_t>(d.m) * static_cast<std::size_t>(d.n));
  for (int r = 0; r < comm.size(); ++r) {
    const int pr = grid.row_of(r), pc = grid.col_of(r);
    const int rm = rows.count(pr), rn = cols.count(pc);
    const T* p = pieces.data() + static_cast<std::size_t>(r) * mine.size();
    for (int jl = 0; jl < rn; ++jl)
      for (int il = 0; il < rm; ++il)
        global[static_cast<std::size_t>(cols.global(jl, pc)) * d.m + rows.global(il, pr)] =
            p[static_cast<std::size_t>(jl) * rm + il];
  }
  return global;
}

template void scatter<double>(const double*, int, const Descriptor&, const Grid&, int, int, double*);
template void scatter<float>(const float*, int, const Descriptor&, const Grid&, int, int, float*);
template void scatter_from<double>(runtime::Communicator&, int, const double*, int, const Descriptor&, const Grid&,
                                   double*);
template void scatter_from<float>(runtime::Communicator&, int, const float*, int, const Descriptor&, const Grid&,
                                  float*);
template std::vector<double> gather<double>(runtime::Communicator&, const double*, const Descriptor&, const Grid&);
template std::vector<float> gather<float>(runtime::Communicator&, const float*, const Descriptor&, const Grid&);

}  // namespace tcsolve
