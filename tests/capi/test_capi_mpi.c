/* The distributed C API (tcsolve_mpi.h) from C under mpirun -np 1, 2, 4: on every grid P x Q of
 * the ranks (1x1; 1x2, 2x1; 1x4, 2x2, 4x1), the local pieces of a generated A (n = 100, not a
 * multiple of nb = 16) and B (nrhs = 2) with ScaLAPACK descriptors, tcsolvePdgesv; X gathered
 * and checked against the single-process tcsolveDgesv solution within a derived bound, both
 * meeting LAPACK dsgesv's criterion, A's pieces untouched. Errors: tcsolveCreateDistributed
 * before MPI_Init, with a grid that does not match the ranks, on CUDA where a rank has no GPU
 * (NOT_SUPPORTED naming why; where every rank has one, the same solve and checks on a 1 x size
 * grid of GPU ranks, from host pieces and, in a CUDA build, from pieces in device memory);
 * tcsolvePdgesv with a bad
 * descriptor on one rank (INVALID_VALUE on every rank, the same message), ia != 1 and an
 * exactly singular A (the status of tcsolveDgesv for it). Each rank returns its failure count;
 * mpirun fails when any rank does. */
#if defined(TEST_CAPI_MPI_CUDA)
#include <cuda_runtime.h>
#endif
#include <math.h>
#include <stdlib.h>

#include <tcsolve_mpi.h>

#include "capi_check.h"

enum { N = 100, NB = 16, NRHS = 2 };

static int rank_, size_;

/* ScaLAPACK's numroc, source 0. */
static int numroc(int n, int nb, int iproc, int nprocs) {
  int blocks = n / nb, count = (blocks / nprocs) * nb, extra = blocks % nprocs;
  if (iproc < extra) count += nb;
  else if (iproc == extra) count += n % nb;
  return count;
}
/* The global index of local index l on process p (blocks of nb over nprocs). */
static int global_of(int l, int nb, int p, int nprocs) { return (l / nb) * nprocs * nb + p * nb + l % nb; }

/* The local piece (ld lld) of the global column-major g (ld m) on process (pr, pc). */
static void piece(const double* g, int m, int cols, int P, int Q, int pr, int pc, double* local, int lld) {
  int mloc = numroc(m, NB, pr, P), nloc = numroc(cols, NB, pc, Q);
  for (int j = 0; j < nloc; ++j)
    for (int i = 0; i < mloc; ++i)
      local[(size_t)j * lld + i] = g[(size_t)global_of(j, NB, pc, Q) * m + global_of(i, NB, pr, P)];
}

/* The global matrix (m x cols, ld m) on every rank from every rank's piece. */
static void gather(const double* local, int lld, int m, int cols, int P, int Q, int pr, int pc, double* g) {
  int mloc = numroc(m, NB, pr, P), nloc = numroc(cols, NB, pc, Q);
  for (int k = 0; k < m * cols; ++k) g[k] = 0.0;
  for (int j = 0; j < nloc; ++j)
    for (int i = 0; i < mloc; ++i)
      g[(size_t)global_of(j, NB, pc, Q) * m + global_of(i, NB, pr, P)] = local[(size_t)j * lld + i];
  MPI_Allreduce(MPI_IN_PLACE, g, m * cols, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static double norm_inf(const double* M, int m, int cols) {
  double worst = 0.0;
  for (int i = 0; i < m; ++i) {
    double s = 0.0;
    for (int j = 0; j < cols; ++j) s += fabs(M[(size_t)j * m + i]);
    if (s > worst) worst = s;
  }
  return worst;
}

/* ||B - A X||_inf over the columns (the largest). */
static double residual_inf(const double* A, const double* B, const double* X, int n, int nrhs) {
  double worst = 0.0;
  for (int c = 0; c < nrhs; ++c)
    for (int i = 0; i < n; ++i) {
      double r = B[(size_t)c * n + i];
      for (int k = 0; k < n; ++k) r -= A[(size_t)k * n + i] * X[(size_t)c * n + k];
      if (fabs(r) > worst) worst = fabs(r);
    }
  return worst;
}

/* LAPACK dsgesv's criterion, column by column: ||r||_inf <= sqrt(n) ||x||_inf ||A||_inf eps. */
static int dsgesv_criterion(const double* A, const double* B, const double* X, int n, int nrhs) {
  const double eps = 0x1p-53, a = norm_inf(A, n, n);
  for (int c = 0; c < nrhs; ++c) {
    double x = norm_inf(X + (size_t)c * n, n, 1);
    if (residual_inf(A, B + (size_t)c * n, X + (size_t)c * n, n, 1) > sqrt((double)n) * x * a * eps) return 0;
  }
  return 1;
}

static unsigned long long state_ = 12345;
static double uniform(void) { /* U(-1, 1), the same sequence on every rank */
  state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(state_ >> 11) * 0x1p-53 * 2.0 - 1.0;
}

/* Every rank's message is rank 0's. */
static int same_everywhere(const char* message) {
  char mine[512] = {0}, root[512] = {0};
  strncpy(mine, message, sizeof mine - 1);
  memcpy(root, mine, sizeof root);
  MPI_Bcast(root, sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = strcmp(mine, root) == 0, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

/* The pieces handed to tcsolvePdgesv: host memory, or (device = 1, a CUDA build's cuda ranks)
   copies in the rank's device memory, X copied back into the host piece afterwards. */
static int device_pieces_ = 0;

static int fp64_variant(void) {
  int v = -1;
  CHECK_STATUS(NULL, tcsolveVariantFromName("fp64", &v), TCSOLVE_STATUS_SUCCESS, NULL);
  return v;
}

static void solve_on_grid(tcsolveBackend_t backend, int P, int Q, const double* A, const double* B, const double* Xref,
                          const double* Ainv) {
  const int pr = rank_ / Q, pc = rank_ % Q;
  const int mloc = numroc(N, NB, pr, P), lld = mloc > 1 ? mloc : 1;
  const int na = numroc(N, NB, pc, Q), nb = numroc(NRHS, NB, pc, Q);
  double* Aloc = calloc((size_t)lld * (na ? na : 1), sizeof(double));
  double* Acopy = calloc((size_t)lld * (na ? na : 1), sizeof(double));
  double* Bloc = calloc((size_t)lld * (nb ? nb : 1), sizeof(double));
  double* X = malloc(sizeof(double) * N * NRHS);
  piece(A, N, N, P, Q, pr, pc, Aloc, lld);
  piece(B, N, NRHS, P, Q, pr, pc, Bloc, lld);
  memcpy(Acopy, Aloc, sizeof(double) * (size_t)lld * (na ? na : 1));
  int desca[9] = {1, 0, N, N, NB, NB, 0, 0, lld}, descb[9] = {1, 0, N, NRHS, NB, NB, 0, 0, lld};

  tcsolveHandle_t h = NULL;
  CHECK_STATUS(NULL, tcsolveCreateDistributed(&h, backend, MPI_COMM_WORLD, P, Q), TCSOLVE_STATUS_SUCCESS, NULL);
  tcsolveSolveInfo_t info;
  memset(&info, 0, sizeof info);
  /* fp64_below 0: the mixed LU on every backend, the path under test (cuda's default solves
     n = 100 by the FP64 LU; that path is checked below). */
  tcsolveSolveParams_t params;
  tcsolveSolveParamsDefault(&params);
  params.fp64_below = 0;
  const size_t a_bytes = sizeof(double) * (size_t)lld * (na ? na : 1), b_bytes = sizeof(double) * (size_t)lld * (nb ? nb : 1);
#if defined(TEST_CAPI_MPI_CUDA)
  if (device_pieces_) {
    double *dA = NULL, *dB = NULL;
    CHECK(cudaMalloc((void**)&dA, a_bytes) == cudaSuccess && cudaMalloc((void**)&dB, b_bytes) == cudaSuccess);
    CHECK(cudaMemcpy(dA, Aloc, a_bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(dB, Bloc, b_bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK_STATUS(h, tcsolvePdgesv(h, &params, N, NRHS, dA, 1, 1, desca, dB, 1, 1, descb, &info),
                 TCSOLVE_STATUS_SUCCESS, NULL);
    CHECK(cudaMemcpy(Bloc, dB, b_bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(cudaMemcpy(Aloc, dA, a_bytes, cudaMemcpyDeviceToHost) == cudaSuccess); /* untouched? below */
    cudaFree(dA);
    cudaFree(dB);
  } else
#endif
    CHECK_STATUS(h, tcsolvePdgesv(h, &params, N, NRHS, Aloc, 1, 1, desca, Bloc, 1, 1, descb, &info),
                 TCSOLVE_STATUS_SUCCESS, NULL);
  (void)b_bytes;
  CHECK(info.converged == 1);
  CHECK(info.iterations >= 1 && info.iterations <= 30);
  CHECK(info.resolved_variant != fp64_variant());
  CHECK(memcmp(Aloc, Acopy, a_bytes) == 0); /* A left untouched */
  gather(Bloc, lld, N, NRHS, P, Q, pr, pc, X);
  CHECK(dsgesv_criterion(A, B, X, N, NRHS));
  if (backend == TCSOLVE_BACKEND_CUDA && !device_pieces_) {
    /* The defaults (params NULL): n = 100 is below cuda's fp64_below, so the members' FP64 LU
       solves it, refined in FP64 (0 or more steps). */
    double* Bd = calloc((size_t)lld * (nb ? nb : 1), sizeof(double));
    double* Xd = malloc(sizeof(double) * N * NRHS);
    piece(B, N, NRHS, P, Q, pr, pc, Bd, lld);
    tcsolveSolveInfo_t id;
    memset(&id, 0, sizeof id);
    CHECK_STATUS(h, tcsolvePdgesv(h, NULL, N, NRHS, Aloc, 1, 1, desca, Bd, 1, 1, descb, &id), TCSOLVE_STATUS_SUCCESS,
                 NULL);
    CHECK(id.converged == 1 && id.iterations >= 0 && id.iterations <= 30);
    CHECK(id.resolved_variant == fp64_variant());
    gather(Bd, lld, N, NRHS, P, Q, pr, pc, Xd);
    CHECK(dsgesv_criterion(A, B, Xd, N, NRHS));
    free(Bd);
    free(Xd);
  }

  /* x - xref = A^-1 (r - rref) with r, rref the true residuals; the computed ones are within
     n eps (|A| |x| + |b|) of them: the bound from the computed A^-1 (10% for its own error). */
  const double eps = 0x1p-53, a = norm_inf(A, N, N), ainv = norm_inf(Ainv, N, N);
  for (int c = 0; c < NRHS; ++c) {
    const double* x = X + (size_t)c * N;
    const double* xr = Xref + (size_t)c * N;
    const double* b = B + (size_t)c * N;
    double diff = 0.0;
    for (int i = 0; i < N; ++i) diff = fmax(diff, fabs(x[i] - xr[i]));
    const double rounding = N * eps * (a * (norm_inf(x, N, 1) + norm_inf(xr, N, 1)) + 2.0 * norm_inf(b, N, 1));
    const double bound = 1.1 * ainv * (residual_inf(A, b, x, N, 1) + residual_inf(A, b, xr, N, 1) + rounding);
    if (!(diff <= bound)) {
      ++failures;
      fprintf(stderr, "rank %d grid %dx%d column %d: |x - xref|_inf = %.3g > bound %.3g\n", rank_, P, Q, c, diff, bound);
    }
  }

  /* A bad descriptor on the last rank only: every rank INVALID_VALUE, the same message. */
  int bad[9];
  memcpy(bad, desca, sizeof bad);
  if (rank_ == size_ - 1) bad[8] = 0;
  CHECK_STATUS(h, tcsolvePdgesv(h, NULL, N, NRHS, Aloc, 1, 1, bad, Bloc, 1, 1, descb, &info),
               TCSOLVE_STATUS_INVALID_VALUE, "desca: descriptor field LLD = 0");
  CHECK(same_everywhere(tcsolveGetLastErrorMessage(h)));
  CHECK_STATUS(h, tcsolvePdgesv(h, NULL, N, NRHS, Aloc, 2, 1, desca, Bloc, 1, 1, descb, &info),
               TCSOLVE_STATUS_INVALID_VALUE, "ia: 2");
  CHECK(same_everywhere(tcsolveGetLastErrorMessage(h)));
  CHECK(tcsolveDestroy(h) == TCSOLVE_STATUS_SUCCESS);
  free(Aloc);
  free(Acopy);
  free(Bloc);
  free(X);
}

/* An exactly singular A (a zero column): the status tcsolveDgesv gives it, on every rank. */
static void singular(int P, int Q, double* A, const double* B) {
  for (int i = 0; i < N; ++i) A[(size_t)37 * N + i] = 0.0;
  tcsolveHandle_t one = NULL, h = NULL;
  double* X = malloc(sizeof(double) * N * NRHS);
  CHECK(tcsolveCreate(&one, TCSOLVE_BACKEND_CPU) == TCSOLVE_STATUS_SUCCESS);
  const tcsolveStatus_t expected = tcsolveDgesv(one, NULL, N, NRHS, A, N, B, N, X, N, NULL);
  CHECK(expected == TCSOLVE_STATUS_INVALID_VALUE);
  const int pr = rank_ / Q, pc = rank_ % Q, mloc = numroc(N, NB, pr, P), lld = mloc > 1 ? mloc : 1;
  const int na = numroc(N, NB, pc, Q), nb = numroc(NRHS, NB, pc, Q);
  double* Aloc = calloc((size_t)lld * (na ? na : 1), sizeof(double));
  double* Bloc = calloc((size_t)lld * (nb ? nb : 1), sizeof(double));
  piece(A, N, N, P, Q, pr, pc, Aloc, lld);
  piece(B, N, NRHS, P, Q, pr, pc, Bloc, lld);
  int desca[9] = {1, 0, N, N, NB, NB, 0, 0, lld}, descb[9] = {1, 0, N, NRHS, NB, NB, 0, 0, lld};
  CHECK(tcsolveCreateDistributed(&h, TCSOLVE_BACKEND_CPU, MPI_COMM_WORLD, P, Q) == TCSOLVE_STATUS_SUCCESS);
  CHECK_STATUS(h, tcsolvePdgesv(h, NULL, N, NRHS, Aloc, 1, 1, desca, Bloc, 1, 1, descb, NULL), expected, "singular");
  CHECK(same_everywhere(tcsolveGetLastErrorMessage(h)));
  tcsolveDestroy(h);
  tcsolveDestroy(one);
  free(Aloc);
  free(Bloc);
  free(X);
}

int main(int argc, char** argv) {
  tcsolveHandle_t h = NULL;
  CHECK_STATUS(NULL, tcsolveCreateDistributed(&h, TCSOLVE_BACKEND_CPU, MPI_COMM_WORLD, 1, 1),
               TCSOLVE_STATUS_INVALID_VALUE, "not initialized");
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);

  CHECK_STATUS(NULL, tcsolveCreateDistributed(&h, TCSOLVE_BACKEND_CPU, MPI_COMM_WORLD, size_ + 1, 1),
               TCSOLVE_STATUS_INVALID_VALUE, "ranks");
  CHECK(h == NULL);
  /* cuda ranks: where every rank sees a GPU (and the build has NCCL) the handle solves below;
     elsewhere (CI) every rank gets NOT_SUPPORTED naming why */
  const tcsolveStatus_t cuda = tcsolveCreateDistributed(&h, TCSOLVE_BACKEND_CUDA, MPI_COMM_WORLD, 1, size_);
  if (cuda == TCSOLVE_STATUS_SUCCESS) {
    tcsolveDestroy(h);
    h = NULL;
  } else {
    CHECK(cuda == TCSOLVE_STATUS_NOT_SUPPORTED);
    if (rank_ == 0) fprintf(stderr, "cuda ranks: %s\n", tcsolveGetLastErrorMessage(NULL));
    CHECK(strstr(tcsolveGetLastErrorMessage(NULL), "CUDA device") != NULL ||
          strstr(tcsolveGetLastErrorMessage(NULL), "NCCL") != NULL);
  }

  double* A = malloc(sizeof(double) * N * N);
  double* B = malloc(sizeof(double) * N * NRHS);
  double* Xref = malloc(sizeof(double) * N * NRHS);
  double* I = calloc((size_t)N * N, sizeof(double));
  double* Ainv = malloc(sizeof(double) * N * N);
  for (int k = 0; k < N * N; ++k) A[k] = uniform();
  for (int k = 0; k < N * NRHS; ++k) B[k] = uniform();
  for (int i = 0; i < N; ++i) I[(size_t)i * N + i] = 1.0;
  tcsolveHandle_t one = NULL;
  CHECK(tcsolveCreate(&one, TCSOLVE_BACKEND_CPU) == TCSOLVE_STATUS_SUCCESS);
  CHECK_STATUS(one, tcsolveDgesv(one, NULL, N, NRHS, A, N, B, N, Xref, N, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(one, tcsolveDgesv(one, NULL, N, N, A, N, I, N, Ainv, N, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(dsgesv_criterion(A, B, Xref, N, NRHS));
  tcsolveDestroy(one);

  for (int P = 1; P <= size_; ++P)
    if (size_ % P == 0) solve_on_grid(TCSOLVE_BACKEND_CPU, P, size_ / P, A, B, Xref, Ainv);
  if (cuda == TCSOLVE_STATUS_SUCCESS) { /* GPU ranks: every grid (P > 1: the pieces move to 1 x PQ) */
    for (int P = 1; P <= size_; ++P)
      if (size_ % P == 0) {
        solve_on_grid(TCSOLVE_BACKEND_CUDA, P, size_ / P, A, B, Xref, Ainv);
        if (rank_ == 0) printf("test_capi_mpi: the cuda ranks solved on a %d x %d grid\n", P, size_ / P);
      }
#if defined(TEST_CAPI_MPI_CUDA)
    device_pieces_ = 1;
    solve_on_grid(TCSOLVE_BACKEND_CUDA, 1, size_, A, B, Xref, Ainv);
    if (size_ > 1) solve_on_grid(TCSOLVE_BACKEND_CUDA, size_, 1, A, B, Xref, Ainv); /* moved through the host */
    device_pieces_ = 0;
    if (rank_ == 0) printf("test_capi_mpi: the cuda ranks solved from device pieces\n");
#endif
  }
  singular(1, size_, A, B);

  free(A);
  free(B);
  free(Xref);
  free(I);
  free(Ainv);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("test_capi_mpi on %d ranks: %d failed checks\n", size_, total);
  MPI_Finalize();
  return failures != 0;
}
