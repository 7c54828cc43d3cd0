// compare's ScaLAPACK baseline on cpu ranks (scalapack_baseline.hpp): pdgesv_ through BLACS, as
// tests/mpi/pdgesv_oracle.cpp calls it. Built only with TCSOLVE_HAVE_SCALAPACK (app/CMakeLists.txt).
#include "scalapack_baseline.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "tcsolve/runtime/error.hpp"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void pdgesv_(const int* n, const int* nrhs, double* a, const int* ia, const int* ja, const int* desca,
             int* ipiv, double* b, const int* ib, const int* jb, const int* descb, int* info);
}

namespace tcsolve::app {

bool have_scalapack() { return true; }

std::string scalapack_absent_reason() { return ""; }

ScalapackSolve scalapack_pdgesv(const Grid& grid, int rank, const Descriptor& desc_a, const double* A,
                                const Descriptor& desc_b, const double* B) {
  const int prow = grid.row_of(rank), pcol = grid.col_of(rank);
  // BLACS's default system context is MPI_COMM_WORLD; "Row": rank r is process (r / Q, r mod Q)
  int ctxt = 0, p = 0, q = 0, myrow = -1, mycol = -1;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", grid.rows, grid.cols);
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
  // every rank learns whether any is misplaced, so that all refuse together (none waits in pdgesv)
  int misplaced = p != grid.rows || q != grid.cols || myrow != prow || mycol != pcol;
  MPI_Allreduce(MPI_IN_PLACE, &misplaced, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (misplaced) {
    Cblacs_gridexit(ctxt);
    throw Error("scalapack-pdgesv: BLACS put rank " + std::to_string(rank) + " at (" + std::to_string(myrow) +
                ", " + std::to_string(mycol) + ") of " + std::to_string(p) + " x " + std::to_string(q) +
                ", tcsolve at (" + std::to_string(prow) + ", " + std::to_string(pcol) + ")");
  }
  std::array<int, 9> da = desc_a.to_array(), db = desc_b.to_array();
  da[1] = ctxt;
  db[1] = ctxt;
  const std::size_t a_size = static_cast<std::size_t>(desc_a.lld) *
                             static_cast<std::size_t>(std::max(1, desc_a.local_cols(grid, pcol)));
  const std::size_t b_size = static_cast<std::size_t>(desc_b.lld) *
                             static_cast<std::size_t>(std::max(1, desc_b.local_cols(grid, pcol)));
  std::vector<double> factors(A, A + a_size);  // pdgesv writes its L and U over A
  ScalapackSolve out;
  out.x.assign(B, B + b_size);  // and X over B
  std::vector<int> ipiv(static_cast<std::size_t>(desc_a.local_rows(grid, prow)) +
                        desc_a.mb);  // LOCr(M_A) + MB_A
  const int n = desc_a.n, nrhs = desc_b.n, one = 1;
  int info = 0;
  MPI_Barrier(MPI_COMM_WORLD);  // every rank starts together, and the time ends with the slowest
  const double start = MPI_Wtime();
  pdgesv_(&n, &nrhs, factors.data(), &one, &one, da.data(), ipiv.data(), out.x.data(), &one, &one, db.data(),
          &info);
  MPI_Barrier(MPI_COMM_WORLD);
  out.seconds = MPI_Wtime() - start;
  Cblacs_gridexit(ctxt);
  if (info < 0)
    throw Error("scalapack-pdgesv: pdgesv refused an argument (INFO = " + std::to_string(info) + ")");
  out.info = info;
  return out;
}

}  // namespace tcsolve::app
