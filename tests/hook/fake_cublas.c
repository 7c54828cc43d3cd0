/* A stand-in for libcublas.so.13 on a machine without a GPU, for the drop-in's CPU tests
   (run-hook-cpu): the handle functions the hook queries and cublasSgemm_v2 on HOST memory (a
   plain triple loop), so a test can see that a forwarded call arrives with its arguments intact,
   and that arguments cuBLAS rejects reach it (fake_cublas_last_transa) and get cuBLAS's
   CUBLAS_STATUS_INVALID_VALUE. Built as libcublas.so.13 (soname too) in its own folder; never
   installed. */
#include <stdint.h>
#include <stdlib.h>

typedef struct {
  int math_mode;
  int pointer_mode;
  void* stream;
} FakeHandle;

static int sgemm_calls = 0;
static int last_transa = -1;

int fake_cublas_sgemm_calls(void) { return sgemm_calls; }
int fake_cublas_last_transa(void) { return last_transa; }

static int at_least_one(int v) { return v > 1 ? v : 1; }

int cublasCreate_v2(FakeHandle** handle) {
  *handle = calloc(1, sizeof(FakeHandle));
  return *handle == NULL ? 3 : 0; /* CUBLAS_STATUS_ALLOC_FAILED : SUCCESS */
}
int cublasDestroy_v2(FakeHandle* handle) {
  free(handle);
  return 0;
}
int cublasSetMathMode(FakeHandle* handle, int mode) {
  handle->math_mode = mode;
  return 0;
}
int cublasGetMathMode(FakeHandle* handle, int* mode) {
  *mode = handle->math_mode;
  return 0;
}
int cublasGetPointerMode_v2(FakeHandle* handle, int* mode) {
  *mode = handle->pointer_mode;
  return 0;
}
int cublasGetStream_v2(FakeHandle* handle, void** stream) {
  *stream = handle->stream;
  return 0;
}

/* C = alpha op(A) op(B) + beta C, column-major, 'N'/'T'/'C' (0/1/2); beta == 0 does not read C.
   cuBLAS's checks first: CUBLAS_STATUS_INVALID_VALUE (7) for another operation, a negative size,
   a leading dimension below BLAS's bound or a NULL alpha or beta. */
int cublasSgemm_v2(FakeHandle* handle, int ta, int tb, int m, int n, int k, const float* alpha, const float* A,
                   int lda, const float* B, int ldb, const float* beta, float* C, int ldc) {
  (void)handle;
  ++sgemm_calls;
  last_transa = ta;
  if (ta < 0 || ta > 2 || tb < 0 || tb > 2 || m < 0 || n < 0 || k < 0 || lda < at_least_one(ta == 0 ? m : k) ||
      ldb < at_least_one(tb == 0 ? k : n) || ldc < at_least_one(m) || alpha == NULL || beta == NULL)
    return 7;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int p = 0; p < k; ++p) {
        const float a = ta == 0 ? A[i + (int64_t)p * lda] : A[p + (int64_t)i * lda];
        const float b = tb == 0 ? B[p + (int64_t)j * ldb] : B[j + (int64_t)p * ldb];
        s += (double)a * b;
      }
      float* c = &C[i + (int64_t)j * ldc];
      *c = (float)(*alpha * s + (*beta == 0.0f ? 0.0 : (double)*beta * *c));
    }
  return 0;
}
