// ScaLAPACK's pdgesv (Debian's libscalapack-openmpi) as the oracle of the distributed solve
// (issue 33): under mpirun -np 1, 2, 4, on every grid P x Q of the ranks (1x1; 1x2, 2x1; 1x4,
// 2x2, 4x1), the same local pieces of a generated A (n = 100, nb = 16: not a multiple) and B
// (nrhs = 3) go to pdgesv_ (through BLACS: Cblacs_get / Cblacs_gridinit, row-major grid, as
// tcsolve's) and to tcsolvePdgesv (tcsolve_mpi.h). Both are backward stable, so their X agree
// within the derived bound
//   |x - x_ref|_inf <= ||A^-1||_inf (|r|_inf + |r_ref|_inf + rounding)
// (x - x_ref = A^-1 (r_ref - r) for the true residuals; the computed ones are within n eps (|A||x|
// + |b|) of them; ||A^-1|| from tcsolveDgesv on the identity, +10% for its own error), and within
// 2 kappa_inf(A) n eps64 relative (the rule of thumb); tcsolve's X meets dsgesv's criterion.
// Built only when CMake finds the library (tests/CMakeLists.txt). A plain executable: its own
// MPI_Init / MPI_Finalize (the C API's contract: the caller owns MPI).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tcsolve_mpi.h"

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);
void pdgesv_(const int* n, const int* nrhs, double* a, const int* ia, const int* ja, const int* desca, int* ipiv,
             double* b, const int* ib, const int* jb, const int* descb, int* info);
}

namespace {

constexpr int N = 100, NB = 16, NRHS = 3;
constexpr double kEps = 0x1p-53;
int rank_ = 0, size_ = 1, failures = 0;

void check(bool ok, const char* what, int P, int Q) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d grid %dx%d: check failed: %s\n", rank_, P, Q, what);
}

int numroc(int n, int nb, int iproc, int nprocs) {
  const int blocks = n / nb, extra = blocks % nprocs;
  int count = (blocks / nprocs) * nb;
  if (iproc < extra) count += nb;
  else if (iproc == extra) count += n % nb;
  return count;
}
int global_of(int l, int p, int nprocs) { return (l / NB) * nprocs * NB + p * NB + l % NB; }

/// The local piece (leading dimension lld) of the global m x cols column-major g.
std::vector<double> piece(const std::vector<double>& g, int m, int cols, int P, int Q, int pr, int pc, int lld) {
  const int mloc = numroc(m, NB, pr, P), nloc = numroc(cols, NB, pc, Q);
  std::vector<double> local(static_cast<std::size_t>(lld) * std::max(1, nloc), 0.0);
  for (int j = 0; j < nloc; ++j)
    for (int i = 0; i < mloc; ++i)
      local[static_cast<std::size_t>(j) * lld + i] =
          g[static_cast<std::size_t>(global_of(j, pc, Q)) * m + global_of(i, pr, P)];
  return local;
}

/// The global m x cols matrix on every rank from every rank's piece.
std::vector<double> gather(const std::vector<double>& local, int lld, int m, int cols, int P, int Q, int pr, int pc) {
  std::vector<double> g(static_cast<std::size_t>(m) * cols, 0.0);
  const int mloc = numroc(m, NB, pr, P), nloc = numroc(cols, NB, pc, Q);
  for (int j = 0; j < nloc; ++j)
    for (int i = 0; i < mloc; ++i)
      g[static_cast<std::size_t>(global_of(j, pc, Q)) * m + global_of(i, pr, P)] =
          local[static_cast<std::size_t>(j) * lld + i];
  MPI_Allreduce(MPI_IN_PLACE, g.data(), m * cols, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return g;
}

double norm_inf(const double* M, int m, int cols) {
  double worst = 0.0;
  for (int i = 0; i < m; ++i) {
    double s = 0.0;
    for (int j = 0; j < cols; ++j) s += std::fabs(M[static_cast<std::size_t>(j) * m + i]);
    worst = std::max(worst, s);
  }
  return worst;
}

double residual_inf(const std::vector<double>& A, const double* b, const double* x) {
  double worst = 0.0;
  for (int i = 0; i < N; ++i) {
    double r = b[i];
    for (int k = 0; k < N; ++k) r -= A[static_cast<std::size_t>(k) * N + i] * x[k];
    worst = std::max(worst, std::fabs(r));
  }
  return worst;
}

void on_grid(int P, int Q, const std::vector<double>& A, const std::vector<double>& B, double ainv) {
  const int pr = rank_ / Q, pc = rank_ % Q;
  const int lld = std::max(1, numroc(N, NB, pr, P));
  const std::vector<double> Aloc = piece(A, N, N, P, Q, pr, pc, lld);
  const std::vector<double> Bloc = piece(B, N, NRHS, P, Q, pr, pc, lld);

  // ScaLAPACK: BLACS's row-major grid over MPI_COMM_WORLD, as tcsolve's
  int ctxt = 0, p = 0, q = 0, myrow = -1, mycol = -1;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", P, Q);
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
  check(p == P && q == Q && myrow == pr && mycol == pc, "BLACS's grid is tcsolve's (row-major rank order)", P, Q);
  const int desca[9] = {1, ctxt, N, N, NB, NB, 0, 0, lld}, descb[9] = {1, ctxt, N, NRHS, NB, NB, 0, 0, lld};
  std::vector<double> As = Aloc, Xs = Bloc;
  std::vector<int> ipiv(static_cast<std::size_t>(lld) + NB);
  const int n = N, nrhs = NRHS, one = 1;
  int info = -1;
  pdgesv_(&n, &nrhs, As.data(), &one, &one, desca, ipiv.data(), Xs.data(), &one, &one, descb, &info);
  check(info == 0, "pdgesv info == 0", P, Q);
  Cblacs_gridexit(ctxt);

  // tcsolve on the same pieces and descriptors
  tcsolveHandle_t h = nullptr;
  check(tcsolveCreateDistributed(&h, TCSOLVE_BACKEND_CPU, MPI_COMM_WORLD, P, Q) == TCSOLVE_STATUS_SUCCESS,
        "tcsolveCreateDistributed", P, Q);
  std::vector<double> Xt = Bloc;
  tcsolveSolveInfo_t ti{};
  const tcsolveStatus_t s = tcsolvePdgesv(h, nullptr, N, NRHS, Aloc.data(), 1, 1, desca, Xt.data(), 1, 1, descb, &ti);
  if (s != TCSOLVE_STATUS_SUCCESS)
    std::fprintf(stderr, "rank %d: tcsolvePdgesv: %s\n", rank_, tcsolveGetLastErrorMessage(h));
  check(s == TCSOLVE_STATUS_SUCCESS && ti.converged == 1, "tcsolvePdgesv converged", P, Q);
  tcsolveDestroy(h);

  const std::vector<double> xs = gather(Xs, lld, N, NRHS, P, Q, pr, pc);
  const std::vector<double> xt = gather(Xt, lld, N, NRHS, P, Q, pr, pc);
  const double a = norm_inf(A.data(), N, N), kappa = a * ainv;
  double worst = 0.0;
  for (int c = 0; c < NRHS; ++c) {
    const double* b = &B[static_cast<std::size_t>(c) * N];
    const double* x = &xt[static_cast<std::size_t>(c) * N];
    const double* y = &xs[static_cast<std::size_t>(c) * N];
    double diff = 0.0;
    for (int i = 0; i < N; ++i) diff = std::max(diff, std::fabs(x[i] - y[i]));
    const double nx = norm_inf(x, N, 1), ny = norm_inf(y, N, 1), nb = norm_inf(b, N, 1);
    const double rt = residual_inf(A, b, x), rs = residual_inf(A, b, y);
    check(rt <= std::sqrt(double(N)) * nx * a * kEps, "tcsolve's X meets dsgesv's criterion", P, Q);
    const double rounding = N * kEps * (a * (nx + ny) + 2.0 * nb);
    const double bound = 1.1 * ainv * (rt + rs + rounding);
    check(diff <= bound, "|x_tcsolve - x_pdgesv| within ||A^-1|| (|r| + |r_ref| + rounding)", P, Q);
    check(diff <= 2.0 * kappa * N * kEps * ny, "|x_tcsolve - x_pdgesv| / |x_pdgesv| within 2 kappa n eps", P, Q);
    worst = std::max(worst, diff / ny);
  }
  if (rank_ == 0)
    std::printf("grid %dx%d: tcsolve %d iterations, max |x - x_pdgesv| / |x_pdgesv| = %.3g (2 kappa n eps = %.3g)\n",
                P, Q, ti.iterations, worst, 2.0 * kappa * N * kEps);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  std::vector<double> A(static_cast<std::size_t>(N) * N), B(static_cast<std::size_t>(N) * NRHS);
  unsigned long long state = 2026;
  auto uniform = [&] {  // U(-1, 1), the same on every rank
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1p-53 * 2.0 - 1.0;
  };
  for (double& v : A) v = uniform();
  for (double& v : B) v = uniform();
  // ||A^-1||_inf from tcsolveDgesv on the identity (single process)
  std::vector<double> I(static_cast<std::size_t>(N) * N, 0.0), Ainv(I.size());
  for (int i = 0; i < N; ++i) I[static_cast<std::size_t>(i) * N + i] = 1.0;
  tcsolveHandle_t h = nullptr;
  tcsolveCreate(&h, TCSOLVE_BACKEND_CPU);
  check(tcsolveDgesv(h, nullptr, N, N, A.data(), N, I.data(), N, Ainv.data(), N, nullptr) == TCSOLVE_STATUS_SUCCESS,
        "tcsolveDgesv(A, I)", 1, 1);
  tcsolveDestroy(h);
  const double ainv = norm_inf(Ainv.data(), N, N);
  for (int P = 1; P <= size_; ++P)
    if (size_ % P == 0) on_grid(P, size_ / P, A, B, ainv);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) std::printf("pdgesv_oracle on %d ranks: %d failed checks\n", size_, total);
  Cblacs_exit(1);  // BLACS leaves MPI to us
  MPI_Finalize();
  return total != 0;
}
