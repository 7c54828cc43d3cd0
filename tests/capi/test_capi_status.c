/* Every status path of the C API (tcsolve.h), in C11 compiled by the C compiler: a NULL handle,
 * bad backends, a cuda handle without a device, unknown variants, negative sizes, NULL pointers
 * and bad leading dimensions (each INVALID_VALUE naming the argument and touching nothing),
 * BLAS's quick returns and beta scaling for m, n, k = 0, the unimplemented solver options
 * (NOT_SUPPORTED), NOT_CONVERGED and its message, destroyed and foreign handles; and small cpu
 * products and solves checked numerically.
 * Prints one line per failed check; exit status 1 when any failed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tcsolve.h>

#include "capi_check.h"

#define U32 (1.0 / 16777216.0) /* 2^-24: FP32's unit roundoff */
#define EPS64 (1.0 / 9007199254740992.0) /* 2^-53: dlamch('E') */

/* U(-1, 1) from a 64-bit LCG (Knuth's MMIX constants): the top 24 bits, so every value is a
 * float with non-zero low bits. */
static uint64_t rng_state = 12345;
static float urand(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((double)(rng_state >> 40) / 16777216.0 * 2.0 - 1.0);
}

static int variant(const char* name) {
  int v = -1;
  CHECK_STATUS(NULL, tcsolveVariantFromName(name, &v), TCSOLVE_STATUS_SUCCESS, NULL);
  return v;
}

/* No handle: version, status strings, creation, variant names, a NULL handle everywhere. */
static void test_without_handle(void) {
  CHECK(strcmp(tcsolveGetVersion(), TCSOLVE_VERSION_STRING) == 0);
  for (int s = 0; s <= 7; ++s) CHECK(strstr(tcsolveGetStatusString((tcsolveStatus_t)s), "TCSOLVE_STATUS_") != NULL);
  CHECK(tcsolveGetStatusString((tcsolveStatus_t)99) != NULL);

  CHECK_STATUS(NULL, tcsolveCreate(NULL, TCSOLVE_BACKEND_CPU), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  tcsolveHandle_t h = NULL;
  CHECK_STATUS(NULL, tcsolveCreate(&h, (tcsolveBackend_t)7), TCSOLVE_STATUS_INVALID_VALUE, "backend");
  CHECK(h == NULL);

  int v = -1;
  CHECK_STATUS(NULL, tcsolveVariantFromName("ec-fp17", &v), TCSOLVE_STATUS_INVALID_VALUE, "ec-fp17");
  CHECK(v == -1);
  CHECK_STATUS(NULL, tcsolveVariantFromName(NULL, &v), TCSOLVE_STATUS_INVALID_VALUE, "name");
  CHECK_STATUS(NULL, tcsolveVariantFromName("auto", NULL), TCSOLVE_STATUS_INVALID_VALUE, "variant");
  CHECK(strcmp(tcsolveVariantName(variant("ec-fp16")), "ec-fp16") == 0);
  CHECK(tcsolveVariantName(-1) == NULL && tcsolveVariantName(1000) == NULL);

  float one = 1, c = 5;
  CHECK_STATUS(NULL, tcsolveSgemm(NULL, 0, TCSOLVE_OP_N, TCSOLVE_OP_N, 1, 1, 1, &one, &one, 1, &one, 1, &one, &c, 1),
               TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK(c == 5);
  double d = 0;
  CHECK_STATUS(NULL, tcsolveDgesv(NULL, NULL, 1, 1, &d, 1, &d, 1, &d, 1, NULL), TCSOLVE_STATUS_INVALID_VALUE,
               "handle");
  CHECK_STATUS(NULL, tcsolveSetStream(NULL, NULL), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK_STATUS(NULL, tcsolveDestroy(NULL), TCSOLVE_STATUS_SUCCESS, NULL);
}

/* A cuda handle where no GPU is usable: NOT_SUPPORTED, no handle, a message. */
static void test_cuda_without_device(void) {
  tcsolveHandle_t h = NULL;
  CHECK_STATUS(NULL, tcsolveCreate(&h, TCSOLVE_BACKEND_AUTO), TCSOLVE_STATUS_SUCCESS, NULL);
  tcsolveBackend_t resolved = TCSOLVE_BACKEND_AUTO;
  CHECK_STATUS(h, tcsolveGetBackend(h, &resolved), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(resolved == TCSOLVE_BACKEND_CPU || resolved == TCSOLVE_BACKEND_CUDA);
  tcsolveDestroy(h);
  if (resolved == TCSOLVE_BACKEND_CUDA) {
    printf("test_capi_status: a GPU is present: the no-device path is not checked\n");
    return;
  }
  tcsolveHandle_t cuda = (tcsolveHandle_t)&h; /* must be reset to NULL */
  CHECK_STATUS(NULL, tcsolveCreate(&cuda, TCSOLVE_BACKEND_CUDA), TCSOLVE_STATUS_NOT_SUPPORTED, "cuda");
  CHECK(cuda == NULL);
}

/* Sgemm's argument checks on a cpu handle: each bad argument named, C untouched. */
static void test_sgemm_arguments(tcsolveHandle_t h) {
  const int v = variant("fp32-simt");
  float A[12], B[12], C[12], one = 1, zero = 0;
  for (int i = 0; i < 12; ++i) A[i] = B[i] = 1, C[i] = 7;
  const tcsolveOperation_t N = TCSOLVE_OP_N, T = TCSOLVE_OP_T;
#define SGEMM_FAILS(word, ...)                                                                   \
  do {                                                                                           \
    CHECK_STATUS(h, tcsolveSgemm(h, __VA_ARGS__), TCSOLVE_STATUS_INVALID_VALUE, word);           \
    for (int i_ = 0; i_ < 12; ++i_) CHECK(C[i_] == 7);                                           \
  } while (0)
  SGEMM_FAILS("variant", 99, N, N, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("variant", -1, N, N, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("transa", v, (tcsolveOperation_t)2, N, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("transb", v, N, (tcsolveOperation_t)-1, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("m:", v, N, N, -1, 2, 2, &one, A, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("n:", v, N, N, 2, -3, 2, &one, A, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("k:", v, N, N, 2, 2, -2, &one, A, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("lda", v, N, N, 3, 2, 2, &one, A, 2, B, 2, &zero, C, 3);  /* lda < m */
  SGEMM_FAILS("lda", v, T, N, 2, 2, 3, &one, A, 2, B, 3, &zero, C, 2);  /* op T: lda < k */
  SGEMM_FAILS("lda", v, N, N, 0, 2, 2, &one, A, 0, B, 2, &zero, C, 1);  /* lda < max(1, 0) */
  SGEMM_FAILS("ldb", v, N, N, 2, 2, 3, &one, A, 2, B, 2, &zero, C, 2);  /* ldb < k */
  SGEMM_FAILS("ldb", v, N, T, 2, 3, 2, &one, A, 2, B, 2, &zero, C, 2);  /* op T: ldb < n */
  SGEMM_FAILS("ldc", v, N, N, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 1);
  SGEMM_FAILS("alpha", v, N, N, 2, 2, 2, NULL, A, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("beta", v, N, N, 2, 2, 2, &one, A, 2, B, 2, NULL, C, 2);
  SGEMM_FAILS("A:", v, N, N, 2, 2, 2, &one, NULL, 2, B, 2, &zero, C, 2);
  SGEMM_FAILS("B:", v, N, N, 2, 2, 2, &one, A, 2, NULL, 2, &zero, C, 2);
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 2, 2, 2, &one, A, 2, B, 2, &zero, NULL, 2), TCSOLVE_STATUS_INVALID_VALUE,
               "C:");
  /* cublas-* has no cpu implementation: NOT_SUPPORTED, C untouched. */
  CHECK_STATUS(h, tcsolveSgemm(h, variant("cublas-tf32"), N, N, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 2),
               TCSOLVE_STATUS_NOT_SUPPORTED, "cublas-tf32");
  for (int i = 0; i < 12; ++i) CHECK(C[i] == 7);
  /* Sizes the 32-bit library cannot index: NOT_SUPPORTED. */
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 3000000000LL, 1, 1, &one, A, 3000000000LL, B, 1, &zero, C, 3000000000LL),
               TCSOLVE_STATUS_NOT_SUPPORTED, "m:");
#undef SGEMM_FAILS
}

/* BLAS's degenerate cases: m or n = 0 return at once (C may be NULL); k = 0 or alpha = 0 give
 * C = beta C, C set to 0 without being read when beta = 0, A and B never read. */
static void test_sgemm_quick_returns(tcsolveHandle_t h) {
  const int v = variant("ec-fp16");
  const tcsolveOperation_t N = TCSOLVE_OP_N;
  float one = 1, zero = 0, two = 2, C[6];
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 0, 3, 2, &one, NULL, 1, NULL, 2, &zero, NULL, 1), TCSOLVE_STATUS_SUCCESS,
               NULL);
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 3, 0, 2, &one, NULL, 3, NULL, 2, &zero, NULL, 3), TCSOLVE_STATUS_SUCCESS,
               NULL);
  for (int i = 0; i < 6; ++i) C[i] = (float)(i + 1);
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 0, 2, 2, &one, NULL, 1, NULL, 2, &zero, C, 1), TCSOLVE_STATUS_SUCCESS,
               NULL);
  for (int i = 0; i < 6; ++i) CHECK(C[i] == (float)(i + 1));

  /* k = 0, beta = 2 on the 2 x 2 block of a C with ldc 3: doubled, the padding row untouched. */
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 2, 2, 0, &one, NULL, 2, NULL, 1, &two, C, 3), TCSOLVE_STATUS_SUCCESS,
               NULL);
  const float doubled[6] = {2, 4, 3, 8, 10, 6};
  for (int i = 0; i < 6; ++i) CHECK(C[i] == doubled[i]);
  /* k = 0, beta = 1: untouched (C may then be NULL). */
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 2, 2, 0, &one, NULL, 2, NULL, 1, &one, NULL, 3), TCSOLVE_STATUS_SUCCESS,
               NULL);
  /* k = 0, beta = 0: zeros, even over NaN (C is not read). */
  C[0] = NAN;
  C[4] = INFINITY;
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 2, 2, 0, &one, NULL, 2, NULL, 1, &zero, C, 3), TCSOLVE_STATUS_SUCCESS,
               NULL);
  const float zeroed[6] = {0, 0, 3, 0, 0, 6};
  for (int i = 0; i < 6; ++i) CHECK(C[i] == zeroed[i] && !signbit(C[i]));
  /* alpha = 0 with k > 0: the same scaling, A and B not read (NULL). */
  for (int i = 0; i < 6; ++i) C[i] = (float)(i + 1);
  CHECK_STATUS(h, tcsolveSgemm(h, v, N, N, 2, 2, 5, &zero, NULL, 2, NULL, 5, &two, C, 3), TCSOLVE_STATUS_SUCCESS,
               NULL);
  for (int i = 0; i < 6; ++i) CHECK(C[i] == doubled[i]);
}

/* C = alpha op(A) op(B) + beta C on the cpu against the FP64 product of the same FP32 inputs:
 * |C - C64| <= (k + 2) u_variant (|alpha| |op(A)| |op(B)| + |beta| |C0|) element by element,
 * the classical bound of a length-k dot product plus the two scalings (Higham, ASNA 3.1), with
 * u_variant the variant's unit roundoff (2^-24 for the FP32-accurate ones). Padding rows of C
 * (ldc > m) stay untouched. */
static void check_product(tcsolveHandle_t h, const char* name, double u, tcsolveOperation_t ta,
                          tcsolveOperation_t tb) {
  enum { M = 13, NN = 9, K = 37, LDA = 40, LDB = 40, LDC = 15 };
  static float A[LDA * 40], B[LDB * 40], C[LDC * NN], C0[LDC * NN];
  for (int i = 0; i < LDA * 40; ++i) A[i] = urand();
  for (int i = 0; i < LDB * 40; ++i) B[i] = urand();
  for (int i = 0; i < LDC * NN; ++i) C[i] = C0[i] = urand();
  const float alpha = 0.75f, beta = -1.5f;
  CHECK_STATUS(h, tcsolveSgemm(h, variant(name), ta, tb, M, NN, K, &alpha, A, LDA, B, LDB, &beta, C, LDC),
               TCSOLVE_STATUS_SUCCESS, NULL);
  for (int j = 0; j < NN; ++j) {
    for (int i = 0; i < LDC; ++i) {
      if (i >= M) {
        CHECK(C[i + j * LDC] == C0[i + j * LDC]);
        continue;
      }
      double exact = 0, magnitude = 0;
      for (int l = 0; l < K; ++l) {
        const double a = ta == TCSOLVE_OP_N ? A[i + l * LDA] : A[l + i * LDA];
        const double b = tb == TCSOLVE_OP_N ? B[l + j * LDB] : B[j + l * LDB];
        exact += a * b;
        magnitude += fabs(a * b);
      }
      const double c0 = C0[i + j * LDC];
      const double c64 = alpha * exact + beta * c0;
      const double bound = (K + 2) * u * (fabs(alpha) * magnitude + fabs(beta) * fabs(c0));
      if (!(fabs(C[i + j * LDC] - c64) <= bound)) {
        ++failures;
        fprintf(stderr, "%s op %d%d: C(%d, %d) = %.9g, FP64 %.9g, error %.3g > bound %.3g\n", name, (int)ta, (int)tb,
                i, j, C[i + j * LDC], c64, fabs(C[i + j * LDC] - c64), bound);
      }
    }
  }
}

static void test_sgemm_products(tcsolveHandle_t h) {
  const struct {
    const char* name;
    double u;
  } variants[] = {{"fp32-simt", U32}, {"ec-fp16", U32}, {"ec-tf32", U32},
                  {"auto", U32},      {"fp64", U32},    {"fp16-tc", 1.0 / 2048}};
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        check_product(h, variants[v].name, variants[v].u, (tcsolveOperation_t)ta, (tcsolveOperation_t)tb);
}

/* ||b - A x||_inf <= sqrt(n) ||x||_inf ||A||_inf eps64 for each column: LAPACK dsgesv's test,
 * the solver's convergence criterion (eps64 = 2^-53), with a factor 2 for evaluating it here in
 * FP64 without the solver's compensated residual. */
static void check_solution(int n, int nrhs, const double* A, const double* B, const double* X, int ld) {
  double a_norm = 0;
  for (int i = 0; i < n; ++i) {
    double row = 0;
    for (int j = 0; j < n; ++j) row += fabs(A[i + j * ld]);
    if (row > a_norm) a_norm = row;
  }
  for (int c = 0; c < nrhs; ++c) {
    double r_norm = 0, x_norm = 0;
    for (int i = 0; i < n; ++i) {
      double r = B[i + c * ld];
      for (int j = 0; j < n; ++j) r -= A[i + j * ld] * X[j + c * ld];
      if (fabs(r) > r_norm) r_norm = fabs(r);
      if (fabs(X[i + c * ld]) > x_norm) x_norm = fabs(X[i + c * ld]);
    }
    CHECK(r_norm <= 2 * sqrt((double)n) * x_norm * a_norm * EPS64);
  }
}

static void test_dgesv(tcsolveHandle_t h) {
  enum { NS = 24, R = 2, LD = 26 };
  static double A[LD * NS], At[NS * LD], B[LD * R], Bt[NS * LD], X[LD * R], Xt[NS * LD];
  for (int i = 0; i < LD * NS; ++i) A[i] = urand();
  for (int i = 0; i < NS; ++i) A[i + i * LD] += 4; /* well conditioned */
  for (int i = 0; i < LD * R; ++i) B[i] = urand(), X[i] = 99;
  for (int i = 0; i < NS; ++i) {
    for (int j = 0; j < NS; ++j) At[i * LD + j] = A[i + j * LD]; /* row-major copies, ld LD */
    for (int j = 0; j < R; ++j) Bt[i * LD + j] = B[i + j * LD];
  }
  tcsolveSolveParams_t p;
  tcsolveSolveParamsDefault(&p);
  CHECK(p.variant == variant("auto") && p.refinement == 0 && p.pivoting == 0 && p.max_iterations == 30 &&
        p.fallback == 1 && p.block_size == 0 && p.row_major == 0);
  tcsolveSolveInfo_t info;
  memset(&info, 0, sizeof info);

  /* Bad arguments: named, X untouched. */
#define DGESV_FAILS(status, word, params, ...)                                          \
  do {                                                                                  \
    CHECK_STATUS(h, tcsolveDgesv(h, params, __VA_ARGS__), status, word);                \
    for (int i_ = 0; i_ < LD * R; ++i_) CHECK(X[i_] == 99);                             \
  } while (0)
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "n:", &p, -1, R, A, LD, B, LD, X, LD, &info);
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "nrhs", &p, NS, -2, A, LD, B, LD, X, LD, &info);
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "lda", &p, NS, R, A, NS - 1, B, LD, X, LD, &info);
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "ldb", &p, NS, R, A, LD, B, 3, X, LD, &info);
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "ldx", &p, NS, R, A, LD, B, LD, X, 0, &info);
  /* leading dimensions past INT_MAX: NOT_SUPPORTED, by name, before anything is read */
  DGESV_FAILS(TCSOLVE_STATUS_NOT_SUPPORTED, "lda", &p, NS, R, A, (int64_t)1 << 31, B, LD, X, LD, &info);
  DGESV_FAILS(TCSOLVE_STATUS_NOT_SUPPORTED, "ldb", &p, NS, R, A, LD, B, (int64_t)1 << 32, X, LD, &info);
  DGESV_FAILS(TCSOLVE_STATUS_NOT_SUPPORTED, "ldx", &p, NS, R, A, LD, B, LD, X, (int64_t)1 << 31, &info);
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "A:", &p, NS, R, NULL, LD, B, LD, X, LD, &info);
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "B:", &p, NS, R, A, LD, NULL, LD, X, LD, &info);
  CHECK_STATUS(h, tcsolveDgesv(h, &p, NS, R, A, LD, B, LD, NULL, LD, &info), TCSOLVE_STATUS_INVALID_VALUE, "X:");
  tcsolveSolveParams_t q = p;
  q.variant = 42;
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "params->variant", &q, NS, R, A, LD, B, LD, X, LD, &info);
  q = p;
  q.max_iterations = -1;
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "max_iterations", &q, NS, R, A, LD, B, LD, X, LD, &info);
  q = p;
  q.pivoting = 7;
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "pivoting", &q, NS, R, A, LD, B, LD, X, LD, &info);
  q = p;
  q.refinement = 3;
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "refinement", &q, NS, R, A, LD, B, LD, X, LD, &info);
  /* An exactly singular matrix (a zero column) and a NaN: INVALID_VALUE, X untouched. */
  static double S[LD * NS];
  memcpy(S, A, sizeof S);
  for (int i = 0; i < NS; ++i) S[i + 5 * LD] = 0;
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "singular", &p, NS, R, S, LD, B, LD, X, LD, &info);
  memcpy(S, A, sizeof S);
  S[3] = NAN;
  DGESV_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "NaN", &p, NS, R, S, LD, B, LD, X, LD, &info);
#undef DGESV_FAILS

  /* n = 0, nrhs = 0: quick returns, nothing read (NULL pointers). */
  CHECK_STATUS(h, tcsolveDgesv(h, &p, 0, R, NULL, 1, NULL, 1, NULL, 1, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.converged == 1 && info.iterations == 0);
  CHECK_STATUS(h, tcsolveDgesv(h, NULL, NS, 0, NULL, LD, NULL, LD, NULL, LD, NULL), TCSOLVE_STATUS_SUCCESS, NULL);

  /* A solve, column-major with padding: converged to dsgesv's test (with the estimate asked for). */
  p.estimate_condition = 1;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, NS, R, A, LD, B, LD, X, LD, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.converged == 1 && info.fallback_used == 0 && info.iterations >= 1 && info.iterations <= 30);
  CHECK(info.backward_error < 1e-15 && info.condition_estimate >= 1);
  CHECK(info.resolved_variant == variant("auto")); /* n <= nb: one block, no trailing update */
  check_solution(NS, R, A, B, X, LD);
  for (int j = 0; j < R; ++j)
    for (int i = NS; i < LD; ++i) CHECK(X[i + j * LD] == 99); /* padding untouched */

  /* Blocks of 8: trailing updates, auto resolved to an ec-* variant. */
  static double X8[LD * R];
  q = p;
  q.block_size = 8;
  CHECK_STATUS(h, tcsolveDgesv(h, &q, NS, R, A, LD, B, LD, X8, LD, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.converged == 1);
  CHECK(info.resolved_variant == variant("ec-fp16") || info.resolved_variant == variant("ec-tf32"));
  check_solution(NS, R, A, B, X8, LD);

  /* pivoting 2 (auto) resolves to partial pivoting: bitwise the same X; 1 (rbt) converges. */
  static double Xp[LD * R];
  q = p;
  q.pivoting = 2;
  CHECK_STATUS(h, tcsolveDgesv(h, &q, NS, R, A, LD, B, LD, Xp, LD, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  for (int j = 0; j < R; ++j)
    for (int i = 0; i < NS; ++i) CHECK(memcmp(&Xp[i + j * LD], &X[i + j * LD], sizeof(double)) == 0);
  q.pivoting = 1;
  CHECK_STATUS(h, tcsolveDgesv(h, &q, NS, R, A, LD, B, LD, Xp, LD, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.converged == 1);
  check_solution(NS, R, A, B, Xp, LD);

  /* The same system row-major: bitwise the same X. */
  q = p;
  q.row_major = 1;
  for (int i = 0; i < NS * LD; ++i) Xt[i] = 0;
  CHECK_STATUS(h, tcsolveDgesv(h, &q, NS, R, At, LD, Bt, LD, Xt, LD, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  for (int i = 0; i < NS; ++i)
    for (int j = 0; j < R; ++j) CHECK(memcmp(&Xt[i * LD + j], &X[i + j * LD], sizeof(double)) == 0);

  /* No refinement and no fallback: the FP32 LU's solution misses the FP64 test: NOT_CONVERGED,
   * X written (finite), info filled, a message. */
  q = p;
  q.max_iterations = 0;
  q.fallback = 0;
  for (int i = 0; i < LD * R; ++i) X[i] = 99;
  memset(&info, 0, sizeof info);
  info.converged = 1;
  CHECK_STATUS(h, tcsolveDgesv(h, &q, NS, R, A, LD, B, LD, X, LD, &info), TCSOLVE_STATUS_NOT_CONVERGED, "converge");
  CHECK(info.converged == 0 && info.iterations == 0 && info.fallback_used == 0);
  CHECK(info.backward_error > 0 && info.backward_error < 1e-5);
  for (int j = 0; j < R; ++j)
    for (int i = 0; i < NS; ++i) CHECK(isfinite(X[i + j * LD]) && X[i + j * LD] != 99);
  /* The message gives that backward error to three digits in e-notation ("8.2e-08"), not in
   * fixed notation with six decimals ("0.000000"). */
  const char* shown = strstr(tcsolveGetLastErrorMessage(h), "backward error ");
  CHECK(shown != NULL);
  if (shown != NULL) {
    shown += strlen("backward error ");
    char expected[32];
    snprintf(expected, sizeof expected, "%.3g", info.backward_error);
    CHECK(strchr(expected, 'e') != NULL);
    CHECK(strncmp(shown, expected, strlen(expected)) == 0 && shown[strlen(expected)] == ')');
    if (strncmp(shown, expected, strlen(expected)) != 0)
      fprintf(stderr, "message: %s; expected the backward error %s\n", tcsolveGetLastErrorMessage(h), expected);
    CHECK(fabs(strtod(shown, NULL) - info.backward_error) <= 5e-3 * info.backward_error);
  }
}

/* Handles that are not live -- destroyed (a second tcsolveDestroy included) or never made by
 * tcsolveCreate -- are refused by every function with INVALID_VALUE, the message kept as for a
 * NULL handle, nothing run or written; the registry holds more handles than one chunk of it. */
static void test_dead_handles(void) {
  tcsolveHandle_t h = NULL;
  CHECK_STATUS(NULL, tcsolveCreate(&h, TCSOLVE_BACKEND_CPU), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(NULL, tcsolveDestroy(h), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(NULL, tcsolveDestroy(h), TCSOLVE_STATUS_INVALID_VALUE, "destroyed");
  CHECK(strstr(tcsolveGetLastErrorMessage(NULL), "tcsolveDestroy: handle:") != NULL);

  float one = 1, c = 5;
  CHECK_STATUS(h, tcsolveSgemm(h, 0, TCSOLVE_OP_N, TCSOLVE_OP_N, 1, 1, 1, &one, &one, 1, &one, 1, &one, &c, 1),
               TCSOLVE_STATUS_INVALID_VALUE, "not a live tcsolve handle");
  CHECK(c == 5);
  double a = 2, x = 99;
  CHECK_STATUS(h, tcsolveDgesv(h, NULL, 1, 1, &a, 1, &a, 1, &x, 1, NULL), TCSOLVE_STATUS_INVALID_VALUE,
               "tcsolveDgesv: handle");
  CHECK(x == 99);
  void* stream = NULL;
  tcsolveBackend_t backend = TCSOLVE_BACKEND_AUTO;
  int64_t count = -1;
  tcsolveSolveTimes_t times;
  const char* name = NULL;
  double seconds = 0;
  int block = -1;
  CHECK_STATUS(h, tcsolveSetStream(h, NULL), TCSOLVE_STATUS_INVALID_VALUE, "tcsolveSetStream: handle");
  CHECK_STATUS(h, tcsolveGetStream(h, &stream), TCSOLVE_STATUS_INVALID_VALUE, "tcsolveGetStream: handle");
  CHECK_STATUS(h, tcsolveGetBackend(h, &backend), TCSOLVE_STATUS_INVALID_VALUE, "tcsolveGetBackend: handle");
  CHECK(backend == TCSOLVE_BACKEND_AUTO);
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, NULL, 0, &count), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK_STATUS(h, tcsolveGetLastSolveTimes(h, &times), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK_STATUS(h, tcsolveGetLastSolvePhaseCount(h, &count), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK_STATUS(h, tcsolveGetLastSolvePhase(h, 0, &name, &seconds), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK_STATUS(h, tcsolveGetLastSolveBlockSize(h, &block), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK_STATUS(h, tcsolveGetLastSolveWarningCount(h, &count), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK(count == -1 && block == -1 && name == NULL);
  CHECK(strcmp(tcsolveGetLastSolveNote(h), "") == 0);
  CHECK(tcsolveGetLastSolveWarning(h, 0) == NULL);
  float point = 1, center = 7;
  int32_t label = 9;
  CHECK_STATUS(h, tcsolveKmeans(h, NULL, 1, 1, &point, 1, 1, &center, 1, &label, NULL), TCSOLVE_STATUS_INVALID_VALUE,
               "tcsolveKmeans: handle");
  CHECK_STATUS(h, tcsolveKmeansPlusPlus(h, 1, 1, &point, 1, 1, 1, &center, 1), TCSOLVE_STATUS_INVALID_VALUE,
               "tcsolveKmeansPlusPlus: handle");
  CHECK(center == 7 && label == 9);
  CHECK(tcsolveInterrupt(h) == TCSOLVE_STATUS_INVALID_VALUE);
  CHECK(tcsolveInterrupt(NULL) == TCSOLVE_STATUS_INVALID_VALUE);

  /* a pointer tcsolveCreate never returned */
  static double not_a_handle[64];
  tcsolveHandle_t stranger = (tcsolveHandle_t)(void*)not_a_handle;
  CHECK_STATUS(stranger, tcsolveGetBackend(stranger, &backend), TCSOLVE_STATUS_INVALID_VALUE, "tcsolveCreate");
  CHECK_STATUS(NULL, tcsolveDestroy(stranger), TCSOLVE_STATUS_INVALID_VALUE, "handle");

  /* 100 handles (more than a chunk of the registry's slots): each live until destroyed, once */
  enum { MANY = 100 };
  tcsolveHandle_t many[MANY];
  for (int i = 0; i < MANY; ++i) CHECK_STATUS(NULL, tcsolveCreate(&many[i], TCSOLVE_BACKEND_CPU), TCSOLVE_STATUS_SUCCESS, NULL);
  for (int i = 0; i < MANY; i += 2) CHECK_STATUS(NULL, tcsolveDestroy(many[i]), TCSOLVE_STATUS_SUCCESS, NULL);
  for (int i = 0; i < MANY; ++i) {
    const tcsolveStatus_t expected = i % 2 ? TCSOLVE_STATUS_SUCCESS : TCSOLVE_STATUS_INVALID_VALUE;
    CHECK_STATUS(many[i], tcsolveGetBackend(many[i], &backend), expected, NULL);
    CHECK_STATUS(NULL, tcsolveInterrupt(many[i]), expected, NULL);
  }
  for (int i = 1; i < MANY; i += 2) CHECK_STATUS(NULL, tcsolveDestroy(many[i]), TCSOLVE_STATUS_SUCCESS, NULL);
  for (int i = 0; i < MANY; ++i) CHECK_STATUS(NULL, tcsolveDestroy(many[i]), TCSOLVE_STATUS_INVALID_VALUE, "handle");
}

int main(void) {
  test_without_handle();
  test_cuda_without_device();
  test_dead_handles();
  tcsolveHandle_t h = NULL;
  CHECK_STATUS(NULL, tcsolveCreate(&h, TCSOLVE_BACKEND_CPU), TCSOLVE_STATUS_SUCCESS, NULL);
  if (!h) return 1;
  CHECK(strcmp(tcsolveGetLastErrorMessage(h), "") == 0);
  void* stream = (void*)&h;
  CHECK_STATUS(h, tcsolveSetStream(h, stream), TCSOLVE_STATUS_SUCCESS, NULL);
  void* got = NULL;
  CHECK_STATUS(h, tcsolveGetStream(h, &got), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(got == stream);
  CHECK_STATUS(h, tcsolveSetStream(h, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  test_sgemm_arguments(h);
  test_sgemm_quick_returns(h);
  test_sgemm_products(h);
  test_dgesv(h);
  CHECK_STATUS(NULL, tcsolveDestroy(h), TCSOLVE_STATUS_SUCCESS, NULL);
  if (failures) {
    fprintf(stderr, "test_capi_status: %d checks failed\n", failures);
    return 1;
  }
  printf("test_capi_status: all checks passed\n");
  return 0;
}
