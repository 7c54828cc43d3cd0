/* The installed C API in use (C11): `consumer_c OUT_DIR` with the files consumer_cpp wrote:
 *   1. a CPU tcsolveSgemm (ec-fp16) against the FP64 product, within (k + 2) u32 |A| |B|;
 *   2. tcsolveDgesv with the default parameters on a cpu handle of the system in
 *      OUT_DIR/system.bin, X compared bit for bit with the CLI's x in OUT_DIR/x.bin.
 * Exit status 0 when both hold. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tcsolve.h>

static double* read_doubles(const char* path, size_t offset_bytes, size_t count) {
  FILE* f = fopen(path, "rb");
  double* data = malloc(count * sizeof(double));
  if (!f || !data || fseek(f, (long)offset_bytes, SEEK_SET) != 0 || fread(data, sizeof(double), count, f) != count) {
    fprintf(stderr, "consumer_c: %s: cannot read %zu values\n", path, count);
    exit(1);
  }
  fclose(f);
  return data;
}

static int gemm_check(tcsolveHandle_t h) {
  enum { M = 40, N = 30, K = 70 };
  static float A[M * K], B[K * N], C[M * N];
  uint64_t state = 7;
  for (int i = 0; i < M * K + K * N; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const float v = (float)((double)(state >> 40) / 16777216.0 * 2.0 - 1.0);
    if (i < M * K) A[i] = v; else B[i - M * K] = v;
  }
  int variant = 0;
  const float one = 1, zero = 0;
  if (tcsolveVariantFromName("ec-fp16", &variant) != TCSOLVE_STATUS_SUCCESS ||
      tcsolveSgemm(h, variant, TCSOLVE_OP_N, TCSOLVE_OP_N, M, N, K, &one, A, M, B, K, &zero, C, M) !=
          TCSOLVE_STATUS_SUCCESS) {
    fprintf(stderr, "consumer_c: sgemm: %s\n", tcsolveGetLastErrorMessage(h));
    return 0;
  }
  const double u32 = 1.0 / 16777216.0;
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i) {
      double exact = 0, magnitude = 0;
      for (int l = 0; l < K; ++l) {
        exact += (double)A[i + l * M] * B[l + j * K];
        magnitude += fabs((double)A[i + l * M] * B[l + j * K]);
      }
      if (fabs(C[i + j * M] - exact) > (K + 2) * u32 * magnitude) {
        fprintf(stderr, "consumer_c: sgemm: C(%d, %d) = %.9g, FP64 %.9g\n", i, j, C[i + j * M], exact);
        return 0;
      }
    }
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer_c OUT_DIR\n");
    return 2;
  }
  printf("consumer_c: tcsolve %s (header %s)\n", tcsolveGetVersion(), TCSOLVE_VERSION_STRING);
  char system_path[4096], x_path[4096];
  snprintf(system_path, sizeof system_path, "%s/system.bin", argv[1]);
  snprintf(x_path, sizeof x_path, "%s/x.bin", argv[1]);

  tcsolveHandle_t h = NULL;
  if (tcsolveCreate(&h, TCSOLVE_BACKEND_CPU) != TCSOLVE_STATUS_SUCCESS) {
    fprintf(stderr, "consumer_c: %s\n", tcsolveGetLastErrorMessage(NULL));
    return 1;
  }
  if (!gemm_check(h)) return 1;

  int64_t dims[2];
  FILE* f = fopen(system_path, "rb");
  if (!f || fread(dims, sizeof dims[0], 2, f) != 2) {
    fprintf(stderr, "consumer_c: %s: cannot read n and nrhs\n", system_path);
    return 1;
  }
  fclose(f);
  const int64_t n = dims[0], nrhs = dims[1];
  const size_t nn = (size_t)(n * n), nb = (size_t)(n * nrhs);
  double* A = read_doubles(system_path, sizeof dims, nn);
  double* B = read_doubles(system_path, sizeof dims + nn * sizeof(double), nb);
  double* x_cli = read_doubles(x_path, 0, nb);
  double* X = calloc(nb, sizeof(double));

  tcsolveSolveParams_t params;
  tcsolveSolveParamsDefault(&params);
  tcsolveSolveInfo_t info;
  const tcsolveStatus_t status = tcsolveDgesv(h, &params, n, nrhs, A, n, B, n, X, n, &info);
  if (status != TCSOLVE_STATUS_SUCCESS) {
    fprintf(stderr, "consumer_c: dgesv: %s: %s\n", tcsolveGetStatusString(status), tcsolveGetLastErrorMessage(h));
    return 1;
  }
  size_t differ = 0;
  for (size_t i = 0; i < nb; ++i) differ += memcmp(&X[i], &x_cli[i], sizeof(double)) != 0;
  if (differ) {
    fprintf(stderr, "consumer_c: %zu of %zu elements of X differ from the CLI's x\n", differ, nb);
    return 1;
  }
  printf("consumer_c: sgemm within its bound; n = %lld dgesv bitwise the CLI's (%d iterations, backward error %.3g)\n",
         (long long)n, info.iterations, info.backward_error);
  tcsolveDestroy(h);
  free(A);
  free(B);
  free(x_cli);
  free(X);
  return 0;
}
