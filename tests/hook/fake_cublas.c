/* A stand-in for libcublas.so.13 on a machine without a GPU, for the drop-in's CPU tests
   (run-hook-cpu): the handle functions the hook queries, the GEMM entry points it exports
   (cublasSgemm_v2, the batched forms: strided, pointer arrays, Ex, _64) and a small cuBLASLt
   (descriptors, layouts, cublasLtMatmul), all on HOST memory (plain loops), so a test can see
   that a forwarded call arrives with its arguments intact, and that arguments cuBLAS rejects
   reach it (fake_cublas_last_transa) and get cuBLAS's CUBLAS_STATUS_INVALID_VALUE. cuBLASLt's
   epilogues are recorded (fake_cublaslt_last_epilogue), never applied: the products show that the
   call came through, the epilogue value what it asked for. Built as libcublas.so.13 (soname too)
   in its own folder; never installed. The enum values are those of cublas_api.h, cublasLt.h and
   library_types.h (CUDA 13), which this file does not include. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
  kSuccess = 0,         /* CUBLAS_STATUS_SUCCESS */
  kAllocFailed = 3,     /* CUBLAS_STATUS_ALLOC_FAILED */
  kInvalidValue = 7,    /* CUBLAS_STATUS_INVALID_VALUE */
  kNotSupported = 15,   /* CUBLAS_STATUS_NOT_SUPPORTED */
  kR32F = 0,            /* CUDA_R_32F */
  kEpilogueDefault = 1, /* CUBLASLT_EPILOGUE_DEFAULT */
  kLtBiasType = 26      /* CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE */
};

typedef struct {
  int math_mode;
  int pointer_mode;
  void* stream;
} FakeHandle;

static int sgemm_calls = 0;
static int gemm_calls = 0; /* every GEMM entry point, cublasLtMatmul included */
static int last_transa = -1;
static unsigned last_epilogue = 0;

int fake_cublas_sgemm_calls(void) { return sgemm_calls; }
int fake_cublas_calls(void) { return gemm_calls; }
int fake_cublas_last_transa(void) { return last_transa; }
unsigned fake_cublaslt_last_epilogue(void) { return last_epilogue; }

static int64_t at_least_one(int64_t v) { return v > 1 ? v : 1; }

int cublasCreate_v2(FakeHandle** handle) {
  *handle = calloc(1, sizeof(FakeHandle));
  return *handle == NULL ? kAllocFailed : kSuccess;
}
int cublasDestroy_v2(FakeHandle* handle) {
  free(handle);
  return kSuccess;
}
int cublasSetMathMode(FakeHandle* handle, int mode) {
  handle->math_mode = mode;
  return kSuccess;
}
int cublasGetMathMode(FakeHandle* handle, int* mode) {
  *mode = handle->math_mode;
  return kSuccess;
}
int cublasGetPointerMode_v2(FakeHandle* handle, int* mode) {
  *mode = handle->pointer_mode;
  return kSuccess;
}
int cublasGetStream_v2(FakeHandle* handle, void** stream) {
  *stream = handle->stream;
  return kSuccess;
}

/* cuBLAS's checks of a GEMM: CUBLAS_STATUS_INVALID_VALUE for an operation other than 'N'/'T'/'C'
   (0/1/2), a negative size or batch count, a leading dimension below BLAS's bound or a NULL
   alpha or beta. Records transa. */
static int gemm_checks(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* alpha, int64_t lda,
                       int64_t ldb, const float* beta, int64_t ldc, int64_t batch) {
  ++gemm_calls;
  last_transa = ta;
  if (ta < 0 || ta > 2 || tb < 0 || tb > 2 || m < 0 || n < 0 || k < 0 || batch < 0 ||
      lda < at_least_one(ta == 0 ? m : k) || ldb < at_least_one(tb == 0 ? k : n) || ldc < at_least_one(m) ||
      alpha == NULL || beta == NULL)
    return kInvalidValue;
  return kSuccess;
}

/* C = alpha op(A) op(B) + beta C, column-major; beta == 0 does not read C. */
static void gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        const float a = ta == 0 ? A[i + p * lda] : A[p + i * lda];
        const float b = tb == 0 ? B[p + j * ldb] : B[j + p * ldb];
        s += (double)a * b;
      }
      float* c = &C[i + j * ldc];
      *c = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * *c));
    }
}

int cublasSgemm_v2(FakeHandle* handle, int ta, int tb, int m, int n, int k, const float* alpha,
                   const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc) {
  (void)handle;
  ++sgemm_calls;
  const int status = gemm_checks(ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, 1);
  if (status == kSuccess) gemm(ta, tb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
  return status;
}

/* The batched forms, through these two: strided members, or arrays of pointers. */
static int strided_batched(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* alpha,
                           const float* A, int64_t lda, long long sa, const float* B, int64_t ldb,
                           long long sb, const float* beta, float* C, int64_t ldc, long long sc,
                           int64_t batch) {
  const int status = gemm_checks(ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, batch);
  for (int64_t b = 0; status == kSuccess && b < batch; ++b)
    gemm(ta, tb, m, n, k, *alpha, A + b * sa, lda, B + b * sb, ldb, *beta, C + b * sc, ldc);
  return status;
}
static int pointer_batched(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* alpha,
                           const float* const* A, int64_t lda, const float* const* B, int64_t ldb,
                           const float* beta, float* const* C, int64_t ldc, int64_t batch) {
  int status = gemm_checks(ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, batch);
  if (status == kSuccess && batch > 0 && (A == NULL || B == NULL || C == NULL))
    status = kInvalidValue; /* ours */
  for (int64_t b = 0; status == kSuccess && b < batch; ++b)
    gemm(ta, tb, m, n, k, *alpha, A[b], lda, B[b], ldb, *beta, C[b], ldc);
  return status;
}
/* The Ex forms: FP32 types only (others: CUBLAS_STATUS_NOT_SUPPORTED, after the checks). */
static int fp32_only(int status, int atype, int btype, int ctype) {
  return status == kSuccess && (atype != kR32F || btype != kR32F || ctype != kR32F) ? kNotSupported : status;
}

int cublasSgemmStridedBatched(FakeHandle* handle, int ta, int tb, int m, int n, int k, const float* alpha,
                              const float* A, int lda, long long sa, const float* B, int ldb, long long sb,
                              const float* beta, float* C, int ldc, long long sc, int batch) {
  (void)handle;
  return strided_batched(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
int cublasSgemmStridedBatched_64(FakeHandle* handle, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                 const float* alpha, const float* A, int64_t lda, long long sa,
                                 const float* B, int64_t ldb, long long sb, const float* beta, float* C,
                                 int64_t ldc, long long sc, int64_t batch) {
  (void)handle;
  return strided_batched(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
int cublasSgemmBatched(FakeHandle* handle, int ta, int tb, int m, int n, int k, const float* alpha,
                       const float* const A[], int lda, const float* const B[], int ldb, const float* beta,
                       float* const C[], int ldc, int batch) {
  (void)handle;
  return pointer_batched(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);
}
int cublasSgemmBatched_64(FakeHandle* handle, int ta, int tb, int64_t m, int64_t n, int64_t k,
                          const float* alpha, const float* const A[], int64_t lda, const float* const B[],
                          int64_t ldb, const float* beta, float* const C[], int64_t ldc, int64_t batch) {
  (void)handle;
  return pointer_batched(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch);
}
int cublasGemmBatchedEx(FakeHandle* handle, int ta, int tb, int m, int n, int k, const void* alpha,
                        const void* const A[], int atype, int lda, const void* const B[], int btype, int ldb,
                        const void* beta, void* const C[], int ctype, int ldc, int batch, int compute,
                        int algo) {
  (void)handle, (void)compute, (void)algo;
  if (atype != kR32F || btype != kR32F || ctype != kR32F)
    return fp32_only(gemm_checks(ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, batch), atype, btype, ctype);
  return pointer_batched(ta, tb, m, n, k, alpha, (const float* const*)A, lda, (const float* const*)B, ldb,
                         beta, (float* const*)C, ldc, batch);
}
int cublasGemmBatchedEx_64(FakeHandle* handle, int ta, int tb, int64_t m, int64_t n, int64_t k,
                           const void* alpha, const void* const A[], int atype, int64_t lda,
                           const void* const B[], int btype, int64_t ldb, const void* beta, void* const C[],
                           int ctype, int64_t ldc, int64_t batch, int compute, int algo) {
  (void)handle, (void)compute, (void)algo;
  if (atype != kR32F || btype != kR32F || ctype != kR32F)
    return fp32_only(gemm_checks(ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, batch), atype, btype, ctype);
  return pointer_batched(ta, tb, m, n, k, alpha, (const float* const*)A, lda, (const float* const*)B, ldb,
                         beta, (float* const*)C, ldc, batch);
}
int cublasGemmStridedBatchedEx(FakeHandle* handle, int ta, int tb, int m, int n, int k, const void* alpha,
                               const void* A, int atype, int lda, long long sa, const void* B, int btype,
                               int ldb, long long sb, const void* beta, void* C, int ctype, int ldc,
                               long long sc, int batch, int compute, int algo) {
  (void)handle, (void)compute, (void)algo;
  if (atype != kR32F || btype != kR32F || ctype != kR32F)
    return fp32_only(gemm_checks(ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, batch), atype, btype, ctype);
  return strided_batched(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
int cublasGemmStridedBatchedEx_64(FakeHandle* handle, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                  const void* alpha, const void* A, int atype, int64_t lda, long long sa,
                                  const void* B, int btype, int64_t ldb, long long sb, const void* beta,
                                  void* C, int ctype, int64_t ldc, long long sc, int64_t batch, int compute,
                                  int algo) {
  (void)handle, (void)compute, (void)algo;
  if (atype != kR32F || btype != kR32F || ctype != kR32F)
    return fp32_only(gemm_checks(ta, tb, m, n, k, alpha, lda, ldb, beta, ldc, batch), atype, btype, ctype);
  return strided_batched(ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

/* cuBLASLt: a descriptor or layout is a table of attributes by their cublasLt.h number, each
   stored in 8 bytes and read or written with the size cuBLASLt gives it (0: not kept here). */
enum { kDescAttributes = 27, kLayoutAttributes = 8 };
/* COMPUTE_TYPE, SCALE_TYPE, POINTER_MODE, TRANSA, TRANSB, TRANSC (0-5), EPILOGUE (7): 4 bytes;
   BIAS_POINTER (8), BIAS_BATCH_STRIDE (10), the A/B/C/D scale and amax pointers (17-21): 8;
   BIAS_DATA_TYPE (26): 4. */
static const size_t kDescSizes[kDescAttributes] = {
    [0] = 4,  [1] = 4,  [2] = 4,  [3] = 4,  [4] = 4,  [5] = 4,  [7] = 4, [8] = 8,
    [10] = 8, [17] = 8, [18] = 8, [19] = 8, [20] = 8, [21] = 8, [26] = 4};
/* TYPE, ORDER: 4; ROWS, COLS, LD: 8; BATCH_COUNT: 4; STRIDED_BATCH_OFFSET, PLANE_OFFSET: 8. */
static const size_t kLayoutSizes[kLayoutAttributes] = {4, 4, 8, 8, 8, 4, 8, 8};
typedef struct {
  int64_t value[kDescAttributes];
} FakeDesc;
typedef struct {
  int64_t value[kLayoutAttributes];
} FakeLayout;

static int set_attribute(int64_t* values, const size_t* sizes, int count, int attr, const void* buf,
                         size_t size) {
  if (attr < 0 || attr >= count || sizes[attr] == 0 || size != sizes[attr] || buf == NULL)
    return kInvalidValue;
  values[attr] = 0;
  memcpy(&values[attr], buf, size);
  return kSuccess;
}
static int get_attribute(const int64_t* values, const size_t* sizes, int count, int attr, void* buf,
                         size_t size, size_t* written) {
  if (attr < 0 || attr >= count || sizes[attr] == 0 || size < sizes[attr] || buf == NULL)
    return kInvalidValue;
  memcpy(buf, &values[attr], sizes[attr]);
  if (written != NULL) *written = sizes[attr];
  return kSuccess;
}
static int32_t int32_of(int64_t slot) {
  int32_t v;
  memcpy(&v, &slot, sizeof v);
  return v;
}

int cublasLtCreate(void** handle) {
  *handle = calloc(1, 16);
  return *handle == NULL ? kAllocFailed : kSuccess;
}
int cublasLtDestroy(void* handle) {
  free(handle);
  return kSuccess;
}
int cublasLtMatmulDescCreate(FakeDesc** desc, int compute, int scale) {
  *desc = calloc(1, sizeof(FakeDesc));
  if (*desc == NULL) return kAllocFailed;
  const int32_t epilogue = kEpilogueDefault, bias_type = -1; /* cuBLASLt's defaults */
  set_attribute((*desc)->value, kDescSizes, kDescAttributes, 0, &compute, 4);
  set_attribute((*desc)->value, kDescSizes, kDescAttributes, 1, &scale, 4);
  set_attribute((*desc)->value, kDescSizes, kDescAttributes, 7, &epilogue, 4);
  set_attribute((*desc)->value, kDescSizes, kDescAttributes, kLtBiasType, &bias_type, 4);
  return kSuccess;
}
int cublasLtMatmulDescDestroy(FakeDesc* desc) {
  free(desc);
  return kSuccess;
}
int cublasLtMatmulDescSetAttribute(FakeDesc* desc, int attr, const void* buf, size_t size) {
  return set_attribute(desc->value, kDescSizes, kDescAttributes, attr, buf, size);
}
int cublasLtMatmulDescGetAttribute(const FakeDesc* desc, int attr, void* buf, size_t size, size_t* written) {
  return get_attribute(desc->value, kDescSizes, kDescAttributes, attr, buf, size, written);
}
int cublasLtMatrixLayoutCreate(FakeLayout** layout, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  *layout = calloc(1, sizeof(FakeLayout));
  if (*layout == NULL) return kAllocFailed;
  const int32_t batch = 1;
  set_attribute((*layout)->value, kLayoutSizes, kLayoutAttributes, 0, &type, 4);
  set_attribute((*layout)->value, kLayoutSizes, kLayoutAttributes, 2, &rows, 8);
  set_attribute((*layout)->value, kLayoutSizes, kLayoutAttributes, 3, &cols, 8);
  set_attribute((*layout)->value, kLayoutSizes, kLayoutAttributes, 4, &ld, 8);
  set_attribute((*layout)->value, kLayoutSizes, kLayoutAttributes, 5, &batch, 4);
  return kSuccess;
}
int cublasLtMatrixLayoutDestroy(FakeLayout* layout) {
  free(layout);
  return kSuccess;
}
int cublasLtMatrixLayoutSetAttribute(FakeLayout* layout, int attr, const void* buf, size_t size) {
  return set_attribute(layout->value, kLayoutSizes, kLayoutAttributes, attr, buf, size);
}
int cublasLtMatrixLayoutGetAttribute(const FakeLayout* layout, int attr, void* buf, size_t size,
                                     size_t* written) {
  return get_attribute(layout->value, kLayoutSizes, kLayoutAttributes, attr, buf, size, written);
}

/* D = alpha op(A) op(B) + beta C for each member (host pointers, FP32 column-major layouts, C and
   D of the same ld); the epilogue recorded, not applied. */
int cublasLtMatmul(void* handle, const FakeDesc* desc, const float* alpha, const float* A,
                   const FakeLayout* a, const float* B, const FakeLayout* b, const float* beta,
                   const float* C, const FakeLayout* c, float* D, const FakeLayout* d, const void* algo,
                   void* workspace, size_t workspace_size, void* stream) {
  (void)handle, (void)algo, (void)workspace, (void)workspace_size, (void)stream;
  ++gemm_calls;
  const int ta = int32_of(desc->value[3]), tb = int32_of(desc->value[4]);
  last_transa = ta;
  last_epilogue = (unsigned)int32_of(desc->value[7]);
  if (int32_of(a->value[0]) != kR32F || int32_of(d->value[0]) != kR32F || alpha == NULL || beta == NULL)
    return kNotSupported;
  const int64_t m = d->value[2], n = d->value[3], k = ta == 0 ? a->value[3] : a->value[2];
  const int64_t ldc = c->value[4], ldd = d->value[4];
  if (ldc != ldd) return kNotSupported;
  for (int32_t i = 0; i < int32_of(d->value[5]); ++i) {
    float* Di = D + i * d->value[6];
    if (C != D) /* C into D, then the product in place */
      for (int64_t j = 0; j < n; ++j) memcpy(Di + j * ldd, C + i * c->value[6] + j * ldc, sizeof(float) * m);
    gemm(ta, tb, m, n, k, *alpha, A + i * a->value[6], a->value[4], B + i * b->value[6], b->value[4], *beta,
         Di, ldd);
  }
  return kSuccess;
}
