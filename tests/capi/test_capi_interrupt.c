/* tcsolveInterrupt (tcsolve.h) from another thread, in C11 with POSIX threads: a cpu tcsolveDgesv
 * of n = 1500 with the default (emulated) variant and a cpu tcsolveSgemm of an emulated product,
 * each interrupted about 0.3 s after it started, return TCSOLVE_STATUS_INTERRUPTED within 2 s of
 * the interrupt; an interrupt before a call does not stop it (each call clears the flag), and the
 * handle solves again after an interrupt. Prints one line per failed check; exit status 1 when
 * any failed. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tcsolve.h>

#include "capi_check.h"

/* The interrupt comes this long after the call starts; the call must be running by then and
 * return within LATENCY_S of it (the solver polls well under a second apart). */
#define DELAY_S 0.3
#define LATENCY_S 2.0

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  tcsolveHandle_t handle;
  double sent_at; /* when tcsolveInterrupt was called */
  tcsolveStatus_t status;
} Interrupter;

static void* interrupt_later(void* arg) {
  Interrupter* in = (Interrupter*)arg;
  const struct timespec delay = {0, (long)(DELAY_S * 1e9)};
  nanosleep(&delay, NULL);
  in->sent_at = now_s();
  in->status = tcsolveInterrupt(in->handle);
  return NULL;
}

/* Starts the interrupting thread; the caller makes its call, then finish() checks the outcome. */
static int start(pthread_t* thread, Interrupter* in, tcsolveHandle_t h) {
  in->handle = h, in->sent_at = 0, in->status = TCSOLVE_STATUS_INTERNAL_ERROR;
  if (pthread_create(thread, NULL, interrupt_later, in) != 0) {
    CHECK(!"pthread_create");
    return 0;
  }
  return 1;
}

static void finish(pthread_t thread, Interrupter* in, const char* call, tcsolveStatus_t status, double returned_at) {
  pthread_join(thread, NULL);
  CHECK(in->status == TCSOLVE_STATUS_SUCCESS);
  if (status != TCSOLVE_STATUS_INTERRUPTED) {
    ++failures;
    fprintf(stderr, "%s returned %s, expected TCSOLVE_STATUS_INTERRUPTED (%s)\n", call, tcsolveGetStatusString(status),
            returned_at < in->sent_at ? "it finished before the interrupt: make it larger" : "not stopped");
    return;
  }
  const double latency = returned_at - in->sent_at;
  printf("test_capi_interrupt: %s returned %.3f s after the interrupt: %s\n", call, latency,
         tcsolveGetLastErrorMessage(in->handle));
  CHECK(latency >= 0 && latency <= LATENCY_S);
  CHECK(strstr(tcsolveGetLastErrorMessage(in->handle), call) != NULL);
}

/* A well-conditioned random system (diagonal n/4 on U(-1, 1) entries). */
static void make_system(int n, double* A, double* B) {
  uint64_t state = 2024;
  for (int64_t i = 0; i < (int64_t)n * n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    A[i] = (double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  }
  for (int i = 0; i < n; ++i) A[i + (int64_t)i * n] += n / 4.0, B[i] = 1.0;
}

static void test_dgesv(tcsolveHandle_t h) {
  enum { N = 1500 };
  double* A = malloc(sizeof(double) * N * N);
  double* B = malloc(sizeof(double) * N);
  double* X = malloc(sizeof(double) * N);
  if (!A || !B || !X) {
    CHECK(!"out of memory");
    free(A), free(B), free(X);
    return;
  }
  make_system(N, A, B);
  tcsolveSolveInfo_t info;
  pthread_t thread;
  Interrupter in;
  if (start(&thread, &in, h)) {
    const tcsolveStatus_t s = tcsolveDgesv(h, NULL, N, 1, A, N, B, N, X, N, &info);
    finish(thread, &in, "tcsolveDgesv", s, now_s());
    int64_t length = -1;
    CHECK_STATUS(h, tcsolveGetLastSolveHistory(h, NULL, 0, &length), TCSOLVE_STATUS_SUCCESS, NULL);
    CHECK(length == 0); /* the record of an interrupted solve is empty */
  }

  /* An interrupt before a call does not stop it; the handle solves after an interrupt. */
  enum { NS = 40 };
  CHECK(tcsolveInterrupt(h) == TCSOLVE_STATUS_SUCCESS);
  make_system(NS, A, B);
  CHECK_STATUS(h, tcsolveDgesv(h, NULL, NS, 1, A, NS, B, NS, X, NS, &info), TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(info.converged == 1);
  free(A), free(B), free(X);
}

static void test_sgemm(tcsolveHandle_t h) {
  enum { M = 2048 };
  int v = -1;
  CHECK_STATUS(NULL, tcsolveVariantFromName("ec-fp16", &v), TCSOLVE_STATUS_SUCCESS, NULL);
  float* A = calloc((size_t)M * M, sizeof(float));
  float* C = calloc((size_t)M * M, sizeof(float));
  if (!A || !C) {
    CHECK(!"out of memory");
    free(A), free(C);
    return;
  }
  for (int64_t i = 0; i < (int64_t)M * M; ++i) A[i] = (float)((i * 7919) % 1999) / 1000.0f - 1.0f;
  const float one = 1, zero = 0;
  pthread_t thread;
  Interrupter in;
  if (start(&thread, &in, h)) {
    const tcsolveStatus_t s =
        tcsolveSgemm(h, v, TCSOLVE_OP_N, TCSOLVE_OP_T, M, M, M, &one, A, M, A, M, &zero, C, M);
    finish(thread, &in, "tcsolveSgemm", s, now_s());
  }
  /* an interrupt before the call: a small product runs and is right */
  CHECK(tcsolveInterrupt(h) == TCSOLVE_STATUS_SUCCESS);
  const float a[4] = {1, 2, 3, 4};
  float c[4] = {0, 0, 0, 0};
  CHECK_STATUS(h, tcsolveSgemm(h, v, TCSOLVE_OP_N, TCSOLVE_OP_N, 2, 2, 2, &one, a, 2, a, 2, &zero, c, 2),
               TCSOLVE_STATUS_SUCCESS, NULL);
  CHECK(c[0] == 7 && c[1] == 10 && c[2] == 15 && c[3] == 22);
  free(A), free(C);
}

int main(void) {
  tcsolveHandle_t h = NULL;
  CHECK_STATUS(NULL, tcsolveCreate(&h, TCSOLVE_BACKEND_CPU), TCSOLVE_STATUS_SUCCESS, NULL);
  if (!h) return 1;
  CHECK(strstr(tcsolveGetStatusString(TCSOLVE_STATUS_INTERRUPTED), "TCSOLVE_STATUS_INTERRUPTED") != NULL);
  CHECK(tcsolveInterrupt(NULL) == TCSOLVE_STATUS_INVALID_VALUE);
  test_dgesv(h);
  test_sgemm(h);
  CHECK_STATUS(NULL, tcsolveDestroy(h), TCSOLVE_STATUS_SUCCESS, NULL);
  if (failures) {
    fprintf(stderr, "test_capi_interrupt: %d checks failed\n", failures);
    return 1;
  }
  printf("test_capi_interrupt: all checks passed\n");
  return 0;
}
