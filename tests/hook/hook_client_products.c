/* The products the drop-in's CPU tests run (run-hook-cpu), linked to libcublas.so.13 (the fake):
   a 3x3x3 product and a 520x520x520 one (below and above the TCSOLVE_HOOK_MIN_FLOPS the test sets), each
   C = 1.5 A B^T + 0.5 C checked against a double loop within FP32 rounding. Prints "ok <calls
   the fake saw>" and returns 0 when both are right. Built twice: hook_client_direct (with
   HOOK_CLIENT_MAIN, a program) and libhook_client_local.so (run_products() for hook_client).
   hook_client_direct invalid: calls cuBLAS rejects (a 520^3 product with transa 7, then with m =
   -1, then with lda = 519), printing "status S transa T" for each: what the fake returned and
   the transa it saw. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cublasCreate_v2(void** handle);
int cublasDestroy_v2(void* handle);
int cublasSgemm_v2(void* handle, int ta, int tb, int m, int n, int k, const float* alpha, const float* A, int lda,
                   const float* B, int ldb, const float* beta, float* C, int ldc);
int fake_cublas_sgemm_calls(void);
int fake_cublas_last_transa(void);

static int product(void* handle, int n) {
  float* A = malloc(sizeof(float) * n * n);
  float* B = malloc(sizeof(float) * n * n);
  float* C = malloc(sizeof(float) * n * n);
  float* C0 = malloc(sizeof(float) * n * n);
  unsigned s = 12345u;
  for (int i = 0; i < n * n; ++i) {
    s = s * 1103515245u + 12345u, A[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
    s = s * 1103515245u + 12345u, B[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
    s = s * 1103515245u + 12345u, C[i] = C0[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
  }
  const float alpha = 1.5f, beta = 0.5f;
  int bad = cublasSgemm_v2(handle, 0, 1, n, n, n, &alpha, A, n, B, n, &beta, C, n) != 0;
  for (int j = 0; j < n && !bad; ++j)
    for (int i = 0; i < n && !bad; ++i) {
      double ref = 0, mag = 0;
      for (int p = 0; p < n; ++p) ref += (double)A[i + p * n] * B[j + p * n], mag += fabs((double)A[i + p * n] * B[j + p * n]);
      ref = alpha * ref + beta * (double)C0[i + j * n];
      mag = alpha * mag + fabs(beta * (double)C0[i + j * n]);
      if (fabs(C[i + j * n] - ref) > 2.0 * (n + 2) * 0x1p-24 * mag) bad = 1;
    }
  free(A), free(B), free(C), free(C0);
  return bad;
}

int run_products(void) {
  void* handle = NULL;
  if (cublasCreate_v2(&handle) != 0) return 2;
  const int bad = product(handle, 3) + product(handle, 520);
  cublasDestroy_v2(handle);
  printf("%s %d\n", bad ? "wrong" : "ok", fake_cublas_sgemm_calls());
  return bad ? 1 : 0;
}

/* Arguments cuBLAS rejects, in a product the hook would otherwise take (520^3, column-major). */
static int invalid_calls(void) {
  enum { N = 520 };
  void* handle = NULL;
  if (cublasCreate_v2(&handle) != 0) return 2;
  float* M = calloc((size_t)N * N, sizeof(float));
  if (M == NULL) return 2;
  const float one = 1.0f, zero = 0.0f;
  int status = cublasSgemm_v2(handle, 7, 0, N, N, N, &one, M, N, M, N, &zero, M, N);
  printf("status %d transa %d\n", status, fake_cublas_last_transa());
  status = cublasSgemm_v2(handle, 1, 0, -1, N, N, &one, M, N, M, N, &zero, M, N);
  printf("status %d transa %d\n", status, fake_cublas_last_transa());
  status = cublasSgemm_v2(handle, 0, 0, N, N, N, &one, M, N - 1, M, N, &zero, M, N);
  printf("status %d transa %d\n", status, fake_cublas_last_transa());
  cublasDestroy_v2(handle);
  free(M);
  return 0;
}

#ifdef HOOK_CLIENT_MAIN
int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "invalid") == 0) return invalid_calls();
  return run_products();
}
#endif
