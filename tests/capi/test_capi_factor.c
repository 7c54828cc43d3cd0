/* Factor once, solve many through the C API (tcsolve.h: tcsolveDgetrf, tcsolveDgetrs,
 * tcsolveFactorizationDestroy) and the versioned tcsolveSolveParams_t, in C11 by the C compiler:
 * one factorization solves two different right-hand sides and a transposed system, each to
 * LAPACK dsgesv's criterion ||r||_inf <= sqrt(n) ||x||_inf ||op(A)||_inf 2^-53 recomputed here,
 * the first bitwise as tcsolveDgesv; row-major; a params struct of the first versioned layout
 * (size through row_major: an older caller) takes the later fields' defaults; a zero or garbage
 * size and bad arguments are INVALID_VALUE naming the argument; the 0.3 layout (through rbt_seed)
 * ignores cuda_plan and gemm_kernels beyond it; a bad plan or kernel choice is named; a program
 * laid out as the earlier 0.3 header (its struct, the function tcsolveSolveParamsDefault) gets
 * nothing written past its struct and bitwise the X of the current defaults. The factor-and-solve checks run
 * again on a cuda handle where one can be made (a GPU present).
 * Prints one line per failed check; exit status 1 when any failed. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tcsolve.h>

#include "capi_check.h"

#define EPS64 (1.0 / 9007199254740992.0) /* 2^-53: dlamch('E') */
#define N 60

static uint64_t rng_state = 2024;
static double urand(void) { /* U(-1, 1), 53 random bits */
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* dsgesv's test for op(A) x = b, A column-major n x n (lda n), x and b n-vectors. */
static int dsgesv_criterion(const double* A, int trans, const double* x, const double* b) {
  double norm_a = 0, norm_r = 0, norm_x = 0;
  for (int i = 0; i < N; ++i) {
    double row = 0, r = b[i];
    for (int j = 0; j < N; ++j) {
      const double a = trans ? A[j + i * N] : A[i + j * N]; /* op(A)(i, j) */
      row += fabs(a);
      r -= a * x[j];
    }
    if (row > norm_a) norm_a = row;
    if (fabs(r) > norm_r) norm_r = fabs(r);
    if (fabs(x[i]) > norm_x) norm_x = fabs(x[i]);
  }
  return norm_r <= sqrt((double)N) * norm_x * norm_a * EPS64;
}

static int variant(const char* name) {
  int v = -1;
  CHECK_STATUS(NULL, tcsolveVariantFromName(name, &v), TCSOLVE_STATUS_SUCCESS, NULL);
  return v;
}

static double A[N * N], B[2 * N], X[2 * N], X1[N], X2[2 * N], Xd[2 * N], Az[N * N];

static void test_factor_and_solve(tcsolveHandle_t h) {
  for (int i = 0; i < N * N; ++i) A[i] = urand();
  for (int i = 0; i < 2 * N; ++i) B[i] = urand();
  tcsolveSolveParams_t p;
  tcsolveSolveParamsDefault(&p);
  CHECK(p.size == sizeof(tcsolveSolveParams_t));
  CHECK(p.estimate_condition == 2 && p.fp64_below == -1 && p.rbt_window == 128 && p.rbt_seed == 1);
  p.estimate_condition = 1; /* always: its value is checked below */
  p.variant = variant("ec-fp16");
  p.block_size = 16;

  tcsolveFactorization_t f = NULL;
  CHECK_STATUS(h, tcsolveDgetrf(h, &p, N, A, N, &f), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(f != NULL);
  tcsolveSolveInfo_t info;
  /* the first right-hand side, then a second one with the same factors */
  for (int k = 0; k < 2; ++k) {
    CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_N, 1, B + k * N, N, X + k * N, N, &info),
                 TCSOLVE_STATUS_SUCCESS, NULL);
    CHECK(info.converged == 1 && info.condition_estimate > 1);
    CHECK(dsgesv_criterion(A, 0, X + k * N, B + k * N));
    tcsolveSolveTimes_t t;
    CHECK_STATUS(h, tcsolveGetLastSolveTimes(h, &t), TCSOLVE_STATUS_SUCCESS, NULL);
    CHECK(t.factorization == 0); /* no LU: the factors reused */
  }
  memcpy(X1, X, sizeof X1);
  /* both at once, bitwise tcsolveDgesv's X */
  CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_N, 2, B, N, X2, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 2, A, N, B, N, Xd, N, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(X2, Xd, sizeof X2) == 0);
  /* A^T x = b */
  CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_T, 1, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.converged == 1);
  CHECK(dsgesv_criterion(A, 1, X, B));

  /* bad arguments: INVALID_VALUE naming them, X untouched */
  X[0] = 42;
  CHECK_STATUS(h, tcsolveDgetrs(h, f, (tcsolveOperation_t)5, 1, B, N, X, N, &info),
               TCSOLVE_STATUS_INVALID_VALUE, "trans");
  CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_N, 1, B, N - 1, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "ldb");
  CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_N, -1, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "nrhs");
  CHECK_STATUS(h, tcsolveDgetrs(h, NULL, TCSOLVE_OP_N, 1, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "factors");
  CHECK(X[0] == 42);
  tcsolveHandle_t other = NULL;
  CHECK_STATUS(NULL, tcsolveCreate(&other, TCSOLVE_BACKEND_CPU), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(other, tcsolveDgetrs(other, f, TCSOLVE_OP_N, 1, B, N, X, N, &info),
               TCSOLVE_STATUS_INVALID_VALUE, "another handle");
  tcsolveDestroy(other);
  CHECK(tcsolveFactorizationDestroy(f) == TCSOLVE_STATUS_SUCCESS);
  CHECK(tcsolveFactorizationDestroy(NULL) == TCSOLVE_STATUS_SUCCESS);

  /* row-major: A^T's storage read row-major is A again */
  double At[N * N];
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) At[i * N + j] = A[i + j * N];
  p.row_major = 1;
  CHECK_STATUS(h, tcsolveDgetrf(h, &p, N, At, N, &f), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_N, 1, B, 1, X, 1, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(X, X1, sizeof X1) == 0); /* the column-major solve of the first column */
  tcsolveFactorizationDestroy(f);

  /* an exactly singular A: INVALID_VALUE, *factors NULL */
  for (int i = 0; i < N; ++i) A[i + 7 * N] = 0;
  f = (tcsolveFactorization_t)&p;
  CHECK_STATUS(h, tcsolveDgetrf(h, NULL, N, A, N, &f), TCSOLVE_STATUS_INVALID_VALUE, "singular");
  CHECK(f == NULL);
  CHECK_STATUS(h, tcsolveDgetrf(h, NULL, N, A, N, NULL), TCSOLVE_STATUS_INVALID_VALUE, "factors");
  /* n = 0: an empty factorization, its solves quick returns */
  CHECK_STATUS(h, tcsolveDgetrf(h, NULL, 0, NULL, 1, &f), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_T, 3, NULL, 1, NULL, 1, &info), TCSOLVE_STATUS_SUCCESS,
               NULL);
  CHECK(info.converged == 1);
  tcsolveFactorizationDestroy(f);
}

/* The params struct of the earlier 0.3 header (fields through rbt_seed), as a program compiled
 * against it holds it, with guard bytes after it. */
typedef struct {
  size_t size;
  int variant, refinement, pivoting, max_iterations, fallback, block_size, row_major;
  int estimate_condition, fp64_below, rbt_window;
  uint64_t rbt_seed;
} params_0_3_t;

/* A program compiled against the earlier header calls the function tcsolveSolveParamsDefault (not
 * this header's macro): it fills that layout and writes nothing past it; the solve reads that
 * layout and takes the later fields' defaults: bitwise the X of this header's defaults. */
static void test_earlier_header_consumer(tcsolveHandle_t h) {
  for (int i = 0; i < N * N; ++i) A[i] = urand();
  for (int i = 0; i < N; ++i) B[i] = urand();
  struct {
    params_0_3_t p;
    unsigned char guard[64];
  } old;
  memset(&old, 0xab, sizeof old);
  (tcsolveSolveParamsDefault)((tcsolveSolveParams_t*)&old.p); /* the function, as the old binary calls it */
  CHECK(old.p.size == sizeof(params_0_3_t));
  CHECK(old.p.max_iterations == 30 && old.p.rbt_window == 128 && old.p.rbt_seed == 1);
  int untouched = 1;
  for (size_t k = 0; k < sizeof old.guard; ++k) untouched &= old.guard[k] == 0xab;
  CHECK(untouched);
  tcsolveSolveParams_t p;
  tcsolveSolveParamsDefault(&p);
  CHECK(p.size == sizeof(tcsolveSolveParams_t) && p.cuda_plan == NULL && p.gemm_kernels == 0);
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, Xd, N, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveDgesv(h, (const tcsolveSolveParams_t*)&old.p, N, 1, A, N, B, N, X, N, NULL),
               TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(X, Xd, N * sizeof(double)) == 0);
  /* tcsolveSolveParamsInit writes only the bytes it is given */
  memset(&old, 0xab, sizeof old);
  tcsolveSolveParamsInit((tcsolveSolveParams_t*)&old.p, sizeof old.p);
  untouched = 1;
  for (size_t k = 0; k < sizeof old.guard; ++k) untouched &= old.guard[k] == 0xab;
  CHECK(untouched && old.p.size == sizeof old.p);
}

/* The size field: an older caller's layout (through row_major) works with the later fields'
 * defaults; zero and garbage sizes are refused; the new fields reach the solver. */
static void test_params_size(tcsolveHandle_t h) {
  for (int i = 0; i < N * N; ++i) A[i] = urand();
  for (int i = 0; i < N; ++i) B[i] = urand();
  tcsolveSolveParams_t p;
  tcsolveSolveParamsDefault(&p);
  p.variant = variant("fp32-simt");
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, Xd, N, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  p.estimate_condition = 1; /* the layouts below that hold the field pass it on */

  tcsolveSolveParams_t old = p; /* as a caller of the first layout would pass it */
  old.size = offsetof(tcsolveSolveParams_t, row_major) + sizeof(int);
  old.estimate_condition = 7; /* beyond its size: not read */
  old.rbt_window = -5;
  tcsolveSolveInfo_t info;
  CHECK_STATUS(h, tcsolveDgesv(h, &old, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(X, Xd, N * sizeof(double)) == 0);
  CHECK(info.condition_estimate == -1); /* estimate_condition took its default, 2 (auto): not
                                         needed on this well-conditioned system */
  tcsolveFactorization_t f = NULL;
  CHECK_STATUS(h, tcsolveDgetrf(h, &old, N, A, N, &f), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_N, 1, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(X, Xd, N * sizeof(double)) == 0);
  tcsolveFactorizationDestroy(f);
  tcsolveSolveParams_t v03 = p; /* the 0.3 layout (through rbt_seed): cuda_plan beyond it, not read */
  v03.size = offsetof(tcsolveSolveParams_t, cuda_plan);
  v03.cuda_plan = "garbage";
  v03.gemm_kernels = 9;
  CHECK_STATUS(h, tcsolveDgesv(h, &v03, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(X, Xd, N * sizeof(double)) == 0);

  tcsolveSolveParams_t bad = p;
  const size_t sizes[] = {0, 4, offsetof(tcsolveSolveParams_t, row_major) + 2,
                          sizeof(tcsolveSolveParams_t) + 8, (size_t)0xdeadbeef};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    bad.size = sizes[k];
    X[0] = 42;
    CHECK_STATUS(h, tcsolveDgesv(h, &bad, N, 1, A, N, B, N, X, N, NULL), TCSOLVE_STATUS_INVALID_VALUE,
                 "params->size");
    CHECK_STATUS(h, tcsolveDgetrf(h, &bad, N, A, N, &f), TCSOLVE_STATUS_INVALID_VALUE, "params->size");
    CHECK(X[0] == 42);
  }

  /* the new fields: no condition estimate; bad values named */
  p.estimate_condition = 0;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.condition_estimate == -1);
  p.estimate_condition = 1;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.condition_estimate > 1);
  p.estimate_condition = 3;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "params->estimate_condition");
  tcsolveSolveParamsDefault(&p);
  p.rbt_window = 300;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "params->rbt_window");
  tcsolveSolveParamsDefault(&p);
  p.fp64_below = -2;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "params->fp64_below");
  p.fp64_below = 100; /* variant auto, n = 60: the FP64 LU */
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.resolved_variant == variant("fp64"));
  CHECK(strstr(tcsolveGetLastSolveNote(h), "fp64_below") != NULL);
  tcsolveSolveParamsDefault(&p); /* the plan (--cuda-plan's text) and the kernels: checked by name */
  p.cuda_plan = "trsv=cublas,lookahead=off";
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  p.cuda_plan = "trsv=nope";
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "params->cuda_plan");
  p.cuda_plan = "lookahead";
  CHECK_STATUS(h, tcsolveDgetrf(h, &p, N, A, N, &f), TCSOLVE_STATUS_INVALID_VALUE, "FIELD=VALUE");
  p.cuda_plan = NULL;
  p.gemm_kernels = 3;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "params->gemm_kernels");
  tcsolveSolveParamsDefault(&p); /* beam (3): the record says which pivoting gave X and its count */
  p.pivoting = 3;
  p.variant = variant("fp32-simt");
  p.block_size = 16;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) Az[i + j * N] = 0; /* a zero diagonal block: modified pivots */
  for (int j = 16; j < N; ++j)
    for (int i = 0; i < N; ++i) Az[i + j * N] = A[i + j * N];
  for (int j = 0; j < 16; ++j)
    for (int i = 16; i < N; ++i) Az[i + j * N] = A[i + j * N];
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, Az, N, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  int pivoting = -1, modifications = -1;
  CHECK_STATUS(h, tcsolveGetLastSolvePivoting(h, &pivoting, &modifications), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK((pivoting == 3 && modifications >= 1) || (pivoting == 0 && strstr(tcsolveGetLastSolveNote(h), "beam")));
  double growth = -1;
  CHECK_STATUS(h, tcsolveGetLastSolveGrowth(h, &growth), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(growth > 0); /* beam's growth test ran (also when it fell back) */
  if (pivoting == 3) CHECK(growth <= 1048576.0); /* beam gave X: within kBeamGrowth (2^20) */
  CHECK_STATUS(h, tcsolveGetLastSolveGrowth(h, NULL), TCSOLVE_STATUS_INVALID_VALUE, "growth");
  CHECK(dsgesv_criterion(Az, 0, X, B));
  p.pivoting = 4;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE,
               "params->pivoting");
  tcsolveSolveParamsDefault(&p); /* rbt pivoting: bitwise tcsolveDgesv's X too */
  p.pivoting = 1;
  p.rbt_seed = 5;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, Xd, N, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveDgetrf(h, &p, N, A, N, &f), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveDgetrs(h, f, TCSOLVE_OP_N, 1, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(X, Xd, N * sizeof(double)) == 0);
  CHECK(strstr(tcsolveGetLastSolveNote(h), "rbt") != NULL);
  tcsolveFactorizationDestroy(f);
}

int main(void) {
  tcsolveHandle_t h = NULL;
  if (tcsolveCreate(&h, TCSOLVE_BACKEND_CPU) != TCSOLVE_STATUS_SUCCESS) {
    fprintf(stderr, "tcsolveCreate(cpu): %s\n", tcsolveGetLastErrorMessage(NULL));
    return 1;
  }
  test_factor_and_solve(h);
  test_params_size(h);
  test_earlier_header_consumer(h);
  tcsolveDestroy(h);
  /* the same on a cuda handle where a GPU is usable (the factors kept on the device) */
  if (tcsolveCreate(&h, TCSOLVE_BACKEND_CUDA) == TCSOLVE_STATUS_SUCCESS) {
    test_factor_and_solve(h);
    tcsolveDestroy(h);
  } else {
    printf("test_capi_factor: no cuda handle here (%s): the cuda part skipped\n", tcsolveGetLastErrorMessage(NULL));
  }
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("test_capi_factor: all checks passed\n");
  return failures != 0;
}
