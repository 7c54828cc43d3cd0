/* The C API's extensions for the Python package (tcsolve.h), in C11 compiled by the C compiler:
 * the variant table (count, names, descriptions, input formats, unit roundoffs, availability),
 * the last solve's record (history, times, phases, block size, note, warnings: empty before a
 * solve and after a failed one, kept after SUCCESS and NOT_CONVERGED, copied no further than the
 * capacity given) and K-means (tcsolveKmeans: labels and centroids of separated blobs, the
 * k-means++ start reproducible for a seed and the same as tcsolveKmeansPlusPlus's, padded rows, every bad argument INVALID_VALUE naming
 * it with nothing written, an unavailable variant NOT_SUPPORTED; tcsolveKmeansWeighted: NULL
 * weights and weights of 1 are tcsolveKmeans bitwise, integer weights are the points repeated,
 * a bad weight INVALID_VALUE naming it). Prints one line per failed check; exit status 1 when any
 * failed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <tcsolve.h>

#include "capi_check.h"

static int variant(const char* name) {
  int v = -1;
  CHECK_STATUS(NULL, tcsolveVariantFromName(name, &v), TCSOLVE_STATUS_SUCCESS, NULL);
  return v;
}

/* U(-1, 1) from a 64-bit LCG (Knuth's MMIX constants). */
static uint64_t rng_state = 777;
static double urand(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void test_variant_table(void) {
  const int count = tcsolveVariantCount();
  CHECK(count == 16); /* docs/architecture.md's table: 13 variants, auto and two vendor baselines */
  for (int v = 0; v < count; ++v) {
    const char* name = tcsolveVariantName(v);
    CHECK(name != NULL && variant(name) == v);
    CHECK(tcsolveVariantDescription(v) != NULL && strlen(tcsolveVariantDescription(v)) > 10);
    CHECK(tcsolveVariantInputFormat(v) != NULL && strlen(tcsolveVariantInputFormat(v)) > 0);
    CHECK(tcsolveVariantUnitRoundoff(v) > 0 && tcsolveVariantUnitRoundoff(v) < 1e-3);
    int on_cpu = -1, on_cuda = -1, on_auto = -1;
    CHECK_STATUS(NULL, tcsolveVariantAvailable(v, TCSOLVE_BACKEND_CPU, &on_cpu), TCSOLVE_STATUS_SUCCESS, NULL);
    CHECK_STATUS(NULL, tcsolveVariantAvailable(v, TCSOLVE_BACKEND_CUDA, &on_cuda), TCSOLVE_STATUS_SUCCESS, NULL);
    CHECK_STATUS(NULL, tcsolveVariantAvailable(v, TCSOLVE_BACKEND_AUTO, &on_auto), TCSOLVE_STATUS_SUCCESS, NULL);
    CHECK((on_cpu == 0 || on_cpu == 1) && (on_cuda == 0 || on_cuda == 1));
    CHECK(on_auto == on_cpu || on_auto == on_cuda);
  }
  CHECK(tcsolveVariantDescription(-1) == NULL && tcsolveVariantDescription(count) == NULL);
  CHECK(tcsolveVariantInputFormat(count) == NULL && tcsolveVariantUnitRoundoff(count) == -1.0);
  CHECK(tcsolveVariantUnitRoundoff(variant("fp32-simt")) == ldexp(1.0, -24));
  CHECK(tcsolveVariantUnitRoundoff(variant("fp64")) == ldexp(1.0, -53));
  CHECK(strcmp(tcsolveVariantInputFormat(variant("ec-fp16")), "fp16x2") == 0);
  int flag = -1;
  CHECK_STATUS(NULL, tcsolveVariantAvailable(variant("ec-fp16"), TCSOLVE_BACKEND_CPU, &flag), TCSOLVE_STATUS_SUCCESS,
               NULL);
  CHECK(flag == 1);
  CHECK_STATUS(NULL, tcsolveVariantAvailable(variant("cublas-tf32"), TCSOLVE_BACKEND_CPU, &flag),
               TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(flag == 0); /* a vendor baseline: cuda only */
  CHECK_STATUS(NULL, tcsolveVariantAvailable(count, TCSOLVE_BACKEND_CPU, &flag), TCSOLVE_STATUS_INVALID_VALUE,
               "variant");
  CHECK_STATUS(NULL, tcsolveVariantAvailable(0, (tcsolveBackend_t)9, &flag), TCSOLVE_STATUS_INVALID_VALUE, "backend");
  CHECK_STATUS(NULL, tcsolveVariantAvailable(0, TCSOLVE_BACKEND_CPU, NULL), TCSOLVE_STATUS_INVALID_VALUE, "available");
}

/* The record is empty: no history, times 0, no phases or warnings, note "". */
static void check_empty_record(tcsolveHandle_t h) {
  int64_t length = -1, count = -1;
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, NULL, 0, &length), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(length == 0);
  tcsolveSolveTimes_t t = {-1, -1, -1};
  CHECK_STATUS(h, tcsolveGetLastSolveTimes(h, &t), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(t.factorization == 0 && t.refinement == 0 && t.total == 0);
  CHECK_STATUS(h, tcsolveGetLastSolvePhaseCount(h, &count), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(count == 0);
  CHECK_STATUS(h, tcsolveGetLastSolveWarningCount(h, &count), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(count == 0);
  CHECK(strcmp(tcsolveGetLastSolveNote(h), "") == 0);
  int nb = -1;
  CHECK_STATUS(h, tcsolveGetLastSolveBlockSize(h, &nb), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(nb == 0);
}

static void test_last_solve(tcsolveHandle_t h) {
  enum { N = 40 };
  static double A[N * N], B[N], X[N];
  for (int i = 0; i < N * N; ++i) A[i] = urand();
  for (int i = 0; i < N; ++i) A[i + i * N] += 6, B[i] = urand();
  check_empty_record(h); /* no solve yet */

  tcsolveSolveParams_t p;
  tcsolveSolveParamsDefault(&p);
  p.block_size = 16;
  p.variant = variant("ec-fp16");
  tcsolveSolveInfo_t info;
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.converged == 1 && info.iterations >= 1);
  double history[64];
  for (int i = 0; i < 64; ++i) history[i] = -7;
  int64_t length = -1;
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, NULL, 0, &length), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(length == info.iterations + 1); /* entry 0: the LU solve; one per correction */
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, history, 64, &length), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(length == info.iterations + 1 && length < 64);
  CHECK(history[length - 1] == info.backward_error && history[0] > info.backward_error);
  CHECK(history[length] == -7); /* nothing past the entries */
  for (int i = 0; i < 64; ++i) history[i] = -7;
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, history, 1, &length), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(length == info.iterations + 1 && history[0] > 0 && history[1] == -7); /* capacity 1: one copied */
  tcsolveSolveTimes_t t;
  CHECK_STATUS(h, tcsolveGetLastSolveTimes(h, &t), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(t.factorization > 0 && t.refinement >= 0 && t.total >= t.factorization);
  int nb = 0;
  CHECK_STATUS(h, tcsolveGetLastSolveBlockSize(h, &nb), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(nb == 16);
  CHECK(strstr(tcsolveGetLastSolveNote(h), "converged") != NULL);
  int64_t count = -1;
  CHECK_STATUS(h, tcsolveGetLastSolvePhaseCount(h, &count), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(count >= 0); /* cpu: none; cuda: the device phases */
  for (int64_t i = 0; i < count; ++i) {
    const char* name = NULL;
    double seconds = -1;
    CHECK_STATUS(h, tcsolveGetLastSolvePhase(h, i, &name, &seconds), TCSOLVE_STATUS_SUCCESS, NULL);
    CHECK(name != NULL && strlen(name) > 0 && seconds >= 0);
  }
  CHECK(tcsolveGetLastSolveWarning(h, -1) == NULL && tcsolveGetLastSolveWarning(NULL, 0) == NULL);

  /* Bad arguments to the getters: INVALID_VALUE naming them, the record unchanged. */
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, history, 4, NULL), TCSOLVE_STATUS_INVALID_VALUE, "length");
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, NULL, 4, &length), TCSOLVE_STATUS_INVALID_VALUE, "backward_errors");
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, history, -1, &length), TCSOLVE_STATUS_INVALID_VALUE, "capacity");
  CHECK_STATUS(h, tcsolveGetLastSolveTimes(h, NULL), TCSOLVE_STATUS_INVALID_VALUE, "times");
  const char* name = NULL;
  double seconds = 0;
  CHECK_STATUS(h, tcsolveGetLastSolvePhase(h, count, &name, &seconds), TCSOLVE_STATUS_INVALID_VALUE, "index");
  CHECK_STATUS(NULL, tcsolveGetLastSolveHistory(NULL, NULL, 0, &length), TCSOLVE_STATUS_INVALID_VALUE, "handle");
  CHECK(strcmp(tcsolveGetLastSolveNote(NULL), "") == 0);
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, NULL, 0, &length), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(length == info.iterations + 1);

  /* NOT_CONVERGED is a result: its record is kept (the LU solve alone, one entry). */
  tcsolveSolveParams_t q = p;
  q.max_iterations = 0;
  q.fallback = 0;
  CHECK_STATUS(h, tcsolveDgesv(h, &q, N, 1, A, N, B, N, X, N, &info), TCSOLVE_STATUS_NOT_CONVERGED, "converge");
  CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, history, 64, &length), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(length == 1 && history[0] == info.backward_error);
  CHECK(strlen(tcsolveGetLastSolveNote(h)) > 0);

  /* A failed solve (a bad leading dimension) empties the record; its message stays readable. */
  CHECK_STATUS(h, tcsolveDgesv(h, &p, N, 1, A, N - 1, B, N, X, N, &info), TCSOLVE_STATUS_INVALID_VALUE, "lda");
  check_empty_record(h);
  CHECK(strstr(tcsolveGetLastErrorMessage(h), "lda") != NULL); /* reading the record kept the message */
}

/* Two blobs in 3-d around (+-5, 0, 0): k = 2 separates them. */
enum { KN = 40, KD = 3, KK = 2, KLD = 5 };
static float KX[KN * KLD];

static void make_blobs(void) {
  for (int i = 0; i < KN; ++i) {
    KX[i * KLD + 0] = (float)((i % 2 ? 5.0 : -5.0) + 0.5 * urand());
    KX[i * KLD + 1] = (float)(0.5 * urand());
    KX[i * KLD + 2] = (float)(0.5 * urand());
    KX[i * KLD + 3] = KX[i * KLD + 4] = NAN; /* padding: never read with ldx = KLD */
  }
}

static void test_kmeans(tcsolveHandle_t h) {
  make_blobs();
  static float packed[KN * KD];
  for (int i = 0; i < KN; ++i)
    for (int d = 0; d < KD; ++d) packed[i * KD + d] = KX[i * KLD + d];
  tcsolveKmeansParams_t p;
  tcsolveKmeansParamsDefault(&p);
  CHECK(p.variant == variant("auto") && p.max_iterations == 300 && p.tol == 0 && p.init == 1 && p.seed == 1);

  /* Start from points 0 and 2 (both in the left blob): fp64 separates the blobs. */
  p.variant = variant("fp64");
  p.init = 0;
  float centers[KK * KD];
  for (int d = 0; d < KD; ++d) centers[d] = packed[0 * KD + d], centers[KD + d] = packed[2 * KD + d];
  int32_t labels[KN];
  tcsolveKmeansInfo_t info;
  CHECK_STATUS(h, tcsolveKmeans(h, &p, KN, KD, KX, KLD, KK, centers, KD, labels, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.stop == 0 && info.iterations >= 2 && info.empty_clusters == 0 && info.resolved_variant == p.variant);
  CHECK(info.seeding_time_s == 0 && info.time_s >= 0);
  double inertia = 0;
  for (int i = 0; i < KN; ++i) {
    CHECK(labels[i] == labels[i % 2]); /* odd points in one cluster, even ones in the other */
    for (int d = 0; d < KD; ++d) {
      const double diff = (double)packed[i * KD + d] - (double)centers[labels[i] * KD + d];
      inertia += diff * diff;
    }
  }
  CHECK(labels[0] != labels[1]);
  CHECK(fabs(centers[labels[1] * KD] - 5.0f) < 0.5f && fabs(centers[labels[0] * KD] + 5.0f) < 0.5f);
  CHECK(fabs(inertia - info.inertia) <= 1e-12 * inertia);

  /* k-means++ with a seed: the same run twice, and packed rows give the padded rows' result. */
  tcsolveKmeansParams_t s;
  tcsolveKmeansParamsDefault(&s);
  s.seed = 42;
  float c1[KK * KD], c2[KK * KD];
  int32_t l1[KN], l2[KN];
  tcsolveKmeansInfo_t i1, i2;
  CHECK_STATUS(h, tcsolveKmeans(h, &s, KN, KD, KX, KLD, KK, c1, KD, l1, &i1), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveKmeans(h, &s, KN, KD, packed, KD, KK, c2, KD, l2, &i2), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(c1, c2, sizeof c1) == 0 && memcmp(l1, l2, sizeof l1) == 0 && i1.inertia == i2.inertia);
  CHECK(i1.iterations == i2.iterations && l1[0] != l1[1]);
  /* The k-means++ start on its own, passed back with init = 0: the run of init = 1. */
  float start[KK * KLD];
  for (int i = 0; i < KK * KLD; ++i) start[i] = -1;
  CHECK_STATUS(h, tcsolveKmeansPlusPlus(h, KN, KD, KX, KLD, KK, 42, start, KLD), TCSOLVE_STATUS_SUCCESS, NULL);
  for (int j = 0; j < KK; ++j) {
    int found = 0; /* each centroid is a copy of a point */
    for (int i = 0; i < KN; ++i) found |= memcmp(&start[j * KLD], &KX[i * KLD], KD * sizeof(float)) == 0;
    CHECK(found && start[j * KLD + KD] == -1); /* and ldc's padding is untouched */
  }
  tcsolveKmeansParams_t given = s;
  given.init = 0;
  CHECK_STATUS(h, tcsolveKmeans(h, &given, KN, KD, KX, KLD, KK, start, KLD, l2, &i2), TCSOLVE_STATUS_SUCCESS, NULL);
  for (int j = 0; j < KK; ++j) CHECK(memcmp(&start[j * KLD], &c1[j * KD], KD * sizeof(float)) == 0);
  CHECK(memcmp(l1, l2, sizeof l1) == 0 && i1.inertia == i2.inertia && i1.iterations == i2.iterations);
  CHECK(i2.seeding_time_s == 0);
  CHECK_STATUS(h, tcsolveKmeansPlusPlus(h, KN, KD, KX, KLD, KN + 1, 42, start, KLD), TCSOLVE_STATUS_INVALID_VALUE,
               "exceeds");
  CHECK_STATUS(h, tcsolveKmeansPlusPlus(h, KN, KD, KX, KLD, KK, 42, NULL, KLD), TCSOLVE_STATUS_INVALID_VALUE,
               "centers");
  /* labels may be NULL; the centers are still written. */
  CHECK_STATUS(h, tcsolveKmeans(h, &s, KN, KD, packed, KD, KK, c2, KD, NULL, NULL), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(c1, c2, sizeof c1) == 0);

  /* Bad arguments: INVALID_VALUE naming them, nothing written. */
  float untouched[KK * KLD];
  int32_t untouched_labels[KN];
#define KMEANS_FAILS(status, word, params, ...)                                                      \
  do {                                                                                               \
    for (int i_ = 0; i_ < KK * KLD; ++i_) untouched[i_] = 7;                                         \
    for (int i_ = 0; i_ < KN; ++i_) untouched_labels[i_] = 7;                                        \
    CHECK_STATUS(h, tcsolveKmeans(h, params, __VA_ARGS__), status, word);                           \
    for (int i_ = 0; i_ < KK * KLD; ++i_) CHECK(untouched[i_] == 7);                                 \
    for (int i_ = 0; i_ < KN; ++i_) CHECK(untouched_labels[i_] == 7);                                \
  } while (0)
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "n:", &s, 0, KD, KX, KLD, KK, untouched, KD, untouched_labels, NULL);
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "d:", &s, KN, 0, KX, KLD, KK, untouched, KD, untouched_labels, NULL);
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "k:", &s, KN, KD, KX, KLD, 0, untouched, KD, untouched_labels, NULL);
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "exceeds", &s, KN, KD, KX, KLD, KN + 1, untouched, KD, untouched_labels,
               NULL);
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "ldx", &s, KN, KD, KX, KD - 1, KK, untouched, KD, untouched_labels, NULL);
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "ldc", &s, KN, KD, KX, KLD, KK, untouched, 1, untouched_labels, NULL);
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "X:", &s, KN, KD, NULL, KLD, KK, untouched, KD, untouched_labels, NULL);
  CHECK_STATUS(h, tcsolveKmeans(h, &s, KN, KD, KX, KLD, KK, NULL, KD, NULL, NULL), TCSOLVE_STATUS_INVALID_VALUE,
               "centers");
  tcsolveKmeansParams_t q = s;
  q.max_iterations = 0;
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "max_iterations", &q, KN, KD, KX, KLD, KK, untouched, KD,
               untouched_labels, NULL);
  q = s;
  q.tol = -1;
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "tol", &q, KN, KD, KX, KLD, KK, untouched, KD, untouched_labels, NULL);
  q = s;
  q.init = 2;
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "init", &q, KN, KD, KX, KLD, KK, untouched, KD, untouched_labels, NULL);
  q = s;
  q.variant = 99;
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "variant", &q, KN, KD, KX, KLD, KK, untouched, KD, untouched_labels,
               NULL);
  /* A NaN among the points read (the padding is never read, above): INVALID_VALUE. */
  KMEANS_FAILS(TCSOLVE_STATUS_INVALID_VALUE, "non-finite", &s, KN, KD + 1, KX, KLD, KK, untouched, KD + 1,
               untouched_labels, NULL);
  q = s;
  q.variant = variant("cublas-tf32");
  tcsolveBackend_t backend = TCSOLVE_BACKEND_CPU;
  CHECK_STATUS(h, tcsolveGetBackend(h, &backend), TCSOLVE_STATUS_SUCCESS, NULL);
  if (backend == TCSOLVE_BACKEND_CPU)
    KMEANS_FAILS(TCSOLVE_STATUS_NOT_SUPPORTED, "cublas-tf32", &q, KN, KD, KX, KLD, KK, untouched, KD,
                 untouched_labels, NULL);
  CHECK_STATUS(NULL, tcsolveKmeans(NULL, &s, KN, KD, KX, KLD, KK, c1, KD, l1, NULL), TCSOLVE_STATUS_INVALID_VALUE,
               "handle");
#undef KMEANS_FAILS
}

/* tcsolveKmeansWeighted against its oracles: NULL weights and weights of 1 (w x = x and sum w = n
 * exactly) give tcsolveKmeans's run bitwise, k-means++ start included; weights w_i in {1, 2, 3}
 * give the run on the points repeated w_i times, bitwise: the values are multiples of 1/8 below
 * 2^4, so every FP64 sum of w x and of repeated x is exact, hence the same means. */
#define WN 24
#define WD 2
#define WK 3
static void test_kmeans_weighted(tcsolveHandle_t h) {
  static float X[WN * WD], R[3 * WN * WD];
  static double w[WN], ones[WN];
  int r = 0;
  for (int i = 0; i < WN; ++i) {
    X[i * WD + 0] = (float)((i % 3) * 4 + (i % 5) * 0.125);
    X[i * WD + 1] = (float)((i % 3 == 1 ? 6 : 0) + (i % 7) * 0.25);
    w[i] = (double)(1 + (i / 3) % 3);
    ones[i] = 1.0;
    for (int c = 0; c < (int)w[i]; ++c, ++r)
      for (int d = 0; d < WD; ++d) R[r * WD + d] = X[i * WD + d];
  }
  const int rn = r;
  tcsolveKmeansParams_t s;
  tcsolveKmeansParamsDefault(&s);
  s.variant = variant("fp64");
  s.seed = 5;
  float c1[WK * WD], c2[WK * WD];
  int32_t l1[WN], l2[WN];
  tcsolveKmeansInfo_t i1, i2;
  CHECK_STATUS(h, tcsolveKmeans(h, &s, WN, WD, X, WD, WK, c1, WD, l1, &i1), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK_STATUS(h, tcsolveKmeansWeighted(h, &s, WN, WD, X, WD, WK, c2, WD, l2, NULL, &i2), TCSOLVE_STATUS_SUCCESS,
               NULL);
  CHECK(memcmp(c1, c2, sizeof c1) == 0 && memcmp(l1, l2, sizeof l1) == 0 && i1.inertia == i2.inertia);
  CHECK_STATUS(h, tcsolveKmeansWeighted(h, &s, WN, WD, X, WD, WK, c2, WD, l2, ones, &i2), TCSOLVE_STATUS_SUCCESS,
               NULL);
  CHECK(memcmp(c1, c2, sizeof c1) == 0 && memcmp(l1, l2, sizeof l1) == 0 && i1.inertia == i2.inertia);
  CHECK(i1.iterations == i2.iterations);

  /* integer weights against the repeated points, from the same start (points 0, 1, 2) */
  tcsolveKmeansParams_t given = s;
  given.init = 0;
  float start[WK * WD];
  memcpy(start, X, sizeof start);
  memcpy(c1, start, sizeof start);
  memcpy(c2, start, sizeof start);
  static int32_t lr[3 * WN];
  CHECK_STATUS(h, tcsolveKmeansWeighted(h, &given, WN, WD, X, WD, WK, c1, WD, l1, w, &i1), TCSOLVE_STATUS_SUCCESS,
               NULL);
  CHECK_STATUS(h, tcsolveKmeans(h, &given, rn, WD, R, WD, WK, c2, WD, lr, &i2), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(memcmp(c1, c2, sizeof c1) == 0 && i1.iterations == i2.iterations && i1.stop == i2.stop);
  /* the inertias: n products w d^2 and r sums against r sums, each within r u64 relative */
  CHECK(fabs(i1.inertia - i2.inertia) <= 3.0 * rn * ldexp(1.0, -53) * i2.inertia);
  for (int i = 0, row = 0; i < WN; row += (int)w[i], ++i) CHECK(l1[i] == lr[row]);

  /* bad weights: INVALID_VALUE naming the first bad one, nothing written */
  double bad[WN];
  float untouched[WK * WD];
  int32_t untouched_labels[WN];
  const double values[3] = {-1.0, NAN, INFINITY};
  for (int b = 0; b < 4; ++b) {
    for (int i = 0; i < WN; ++i) bad[i] = b == 3 ? 0.0 : 1.0;
    if (b < 3) bad[7] = values[b];
    for (int i = 0; i < WK * WD; ++i) untouched[i] = 7;
    for (int i = 0; i < WN; ++i) untouched_labels[i] = 7;
    CHECK_STATUS(h, tcsolveKmeansWeighted(h, &s, WN, WD, X, WD, WK, untouched, WD, untouched_labels, bad, NULL),
                 TCSOLVE_STATUS_INVALID_VALUE, b == 3 ? "every sample weight is 0" : "weight 7 is");
    for (int i = 0; i < WK * WD; ++i) CHECK(untouched[i] == 7);
    for (int i = 0; i < WN; ++i) CHECK(untouched_labels[i] == 7);
  }
  CHECK_STATUS(NULL, tcsolveKmeansWeighted(NULL, &s, WN, WD, X, WD, WK, c1, WD, l1, w, NULL),
               TCSOLVE_STATUS_INVALID_VALUE, "handle");
}

int main(void) {
  test_variant_table();
  tcsolveHandle_t h = NULL;
  CHECK_STATUS(NULL, tcsolveCreate(&h, TCSOLVE_BACKEND_CPU), TCSOLVE_STATUS_SUCCESS, NULL);
  if (!h) return 1;
  test_last_solve(h);
  test_kmeans(h);
  test_kmeans_weighted(h);
  CHECK_STATUS(NULL, tcsolveDestroy(h), TCSOLVE_STATUS_SUCCESS, NULL);
  if (failures) {
    fprintf(stderr, "test_capi_extensions: %d checks failed\n", failures);
    return 1;
  }
  printf("test_capi_extensions: all checks passed\n");
  return 0;
}
