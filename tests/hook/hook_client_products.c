/* The products the drop-in's CPU tests run (run-hook-cpu), linked to libcublas.so.13 (the fake):
   a 3x3x3 product and a 520x520x520 one (below and above the TCSOLVE_HOOK_MIN_FLOPS the test sets), each
   C = 1.5 A B^T + 0.5 C checked against a double loop within FP32 rounding. Prints "ok <calls
   the fake saw>" and returns 0 when both are right. Built twice: hook_client_direct (with
   HOOK_CLIENT_MAIN, a program) and libhook_client_local.so (run_products() for hook_client).
   hook_client_direct invalid: calls cuBLAS rejects (a 520^3 product with transa 7, then with m =
   -1, then with lda = 519), printing "status S transa T" for each: what the fake returned and
   the transa it saw.
   hook_client_direct batched: the batched entry points (cublasSgemmStridedBatched,
   cublasSgemmBatched, cublasGemmBatchedEx, cublasGemmStridedBatchedEx and their _64 forms), each
   with a batch of 2 of 3 x 3 x 3 (NN) and a batch of 3 of 72 x 80 x 64 (TN), C = 1.5 op(A) op(B)
   + 0.5 C checked member by member; prints "ok <calls the fake saw>", then the calls that must
   pass through: an FP16 cublasGemmBatchedEx ("data type: status S"), a cublasSgemmBatched with
   transa 7 ("transa 7: status S transa T"), a cublasGemmStridedBatchedEx with batch count -1
   ("batch -1: status S") and a cublasSgemmBatched_64 with a NULL A array ("null array: status
   S"; the fake answers CUBLAS_STATUS_INVALID_VALUE).
   hook_client_direct lt: cublasLtMatmul (TN, D apart from C) with one epilogue a call: DEFAULT on
   3 x 3 x 3, then on 72 x 80 x 64 RELU, RELU_BIAS, GELU, GELU_BIAS (which the hook serves) and
   RELU_AUX, DRELU, GELU_AUX_BIAS, DGELU_BGRAD, BGRADB (which it passes through); prints "lt E
   status S seen E' ok|wrong" for each: E the epilogue asked for, E' the one the fake saw, ok when
   D is the fake's product (the fake records epilogues, never applies them). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cublasCreate_v2(void** handle);
int cublasDestroy_v2(void* handle);
int cublasSgemm_v2(void* handle, int ta, int tb, int m, int n, int k, const float* alpha, const float* A,
                   int lda, const float* B, int ldb, const float* beta, float* C, int ldc);
int fake_cublas_sgemm_calls(void);
int fake_cublas_calls(void);
int fake_cublas_last_transa(void);
unsigned fake_cublaslt_last_epilogue(void);

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
      for (int p = 0; p < n; ++p)
        ref += (double)A[i + p * n] * B[j + p * n], mag += fabs((double)A[i + p * n] * B[j + p * n]);
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

#ifdef HOOK_CLIENT_MAIN /* the program's modes only (hook_client_direct) */

/* ----- batched entry points ----- */

int cublasSgemmStridedBatched(void* h, int ta, int tb, int m, int n, int k, const float* alpha,
                              const float* A, int lda, long long sa, const float* B, int ldb, long long sb,
                              const float* beta, float* C, int ldc, long long sc, int batch);
int cublasSgemmStridedBatched_64(void* h, int ta, int tb, int64_t m, int64_t n, int64_t k, const float* alpha,
                                 const float* A, int64_t lda, long long sa, const float* B, int64_t ldb,
                                 long long sb, const float* beta, float* C, int64_t ldc, long long sc,
                                 int64_t batch);
int cublasSgemmBatched(void* h, int ta, int tb, int m, int n, int k, const float* alpha,
                       const float* const A[], int lda, const float* const B[], int ldb, const float* beta,
                       float* const C[], int ldc, int batch);
int cublasSgemmBatched_64(void* h, int ta, int tb, int64_t m, int64_t n, int64_t k, const float* alpha,
                          const float* const A[], int64_t lda, const float* const B[], int64_t ldb,
                          const float* beta, float* const C[], int64_t ldc, int64_t batch);
int cublasGemmBatchedEx(void* h, int ta, int tb, int m, int n, int k, const void* alpha,
                        const void* const A[], int atype, int lda, const void* const B[], int btype, int ldb,
                        const void* beta, void* const C[], int ctype, int ldc, int batch, int compute,
                        int algo);
int cublasGemmBatchedEx_64(void* h, int ta, int tb, int64_t m, int64_t n, int64_t k, const void* alpha,
                           const void* const A[], int atype, int64_t lda, const void* const B[], int btype,
                           int64_t ldb, const void* beta, void* const C[], int ctype, int64_t ldc,
                           int64_t batch, int compute, int algo);
int cublasGemmStridedBatchedEx(void* h, int ta, int tb, int m, int n, int k, const void* alpha, const void* A,
                               int atype, int lda, long long sa, const void* B, int btype, int ldb,
                               long long sb, const void* beta, void* C, int ctype, int ldc, long long sc,
                               int batch, int compute, int algo);
int cublasGemmStridedBatchedEx_64(void* h, int ta, int tb, int64_t m, int64_t n, int64_t k, const void* alpha,
                                  const void* A, int atype, int64_t lda, long long sa, const void* B,
                                  int btype, int64_t ldb, long long sb, const void* beta, void* C, int ctype,
                                  int64_t ldc, long long sc, int64_t batch, int compute, int algo);

enum { kR32F = 0, kR16F = 2, kCompute32F = 68, kAlgoDefault = -1 }; /* library_types.h, cublas_api.h */

/* A batch of `batch` m x n x k products, op(A) op(B) as ta, tb say (0 N, 1 T), the members
   stored one after the other (the strides), with the pointer arrays to them. */
typedef struct {
  int batch, m, n, k, ta, tb;
  int lda, ldb, ldc;
  long long sa, sb, sc;
  float *A, *B, *C, *C0;
  const float** a_array;
  const float** b_array;
  float** c_array;
} Batch;

static Batch make_batch(int batch, int m, int n, int k, int ta, int tb) {
  Batch b = {batch, m, n, k, ta, tb, ta == 0 ? m : k, tb == 0 ? k : n, m, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  b.sa = (long long)b.lda * (ta == 0 ? k : m);
  b.sb = (long long)b.ldb * (tb == 0 ? n : k);
  b.sc = (long long)b.ldc * n;
  b.A = malloc(sizeof(float) * b.sa * batch);
  b.B = malloc(sizeof(float) * b.sb * batch);
  b.C = malloc(sizeof(float) * b.sc * batch);
  b.C0 = malloc(sizeof(float) * b.sc * batch);
  b.a_array = malloc(sizeof(float*) * batch);
  b.b_array = malloc(sizeof(float*) * batch);
  b.c_array = malloc(sizeof(float*) * batch);
  unsigned s = 2024u + (unsigned)(m * 7 + n * 5 + k * 3 + batch);
  for (long long i = 0; i < b.sa * batch; ++i)
    s = s * 1103515245u + 12345u, b.A[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
  for (long long i = 0; i < b.sb * batch; ++i)
    s = s * 1103515245u + 12345u, b.B[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
  for (long long i = 0; i < b.sc * batch; ++i)
    s = s * 1103515245u + 12345u, b.C[i] = b.C0[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
  for (int i = 0; i < batch; ++i)
    b.a_array[i] = b.A + i * b.sa, b.b_array[i] = b.B + i * b.sb, b.c_array[i] = b.C + i * b.sc;
  return b;
}

static void free_batch(Batch* b) {
  free(b->A), free(b->B), free(b->C), free(b->C0), free(b->a_array), free(b->b_array), free(b->c_array);
}

/* Whether every member's C is alpha op(A) op(B) + beta C0 within FP32's bound 2 (k + 2) u
   (alpha |op(A)||op(B)| + |beta C0|), and C is reset to C0 for the next call. */
static int batch_right(Batch* b, float alpha, float beta) {
  int bad = 0;
  for (int q = 0; q < b->batch; ++q)
    for (int j = 0; j < b->n; ++j)
      for (int i = 0; i < b->m; ++i) {
        double ref = 0, mag = 0;
        for (int p = 0; p < b->k; ++p) {
          const double a = b->ta == 0 ? b->A[q * b->sa + i + (long long)p * b->lda]
                                      : b->A[q * b->sa + p + (long long)i * b->lda];
          const double x = b->tb == 0 ? b->B[q * b->sb + p + (long long)j * b->ldb]
                                      : b->B[q * b->sb + j + (long long)p * b->ldb];
          ref += a * x, mag += fabs(a * x);
        }
        const long long at = q * b->sc + i + (long long)j * b->ldc;
        ref = alpha * ref + beta * (double)b->C0[at];
        mag = fabs(alpha) * mag + fabs(beta * (double)b->C0[at]);
        if (!(fabs(b->C[at] - ref) <= 2.0 * (b->k + 2) * 0x1p-24 * mag)) bad = 1;
      }
  memcpy(b->C, b->C0, sizeof(float) * b->sc * b->batch);
  return !bad;
}

static const char* const kBatchedForms[] = {"cublasSgemmStridedBatched",  "cublasSgemmStridedBatched_64",
                                            "cublasSgemmBatched",         "cublasSgemmBatched_64",
                                            "cublasGemmBatchedEx",        "cublasGemmBatchedEx_64",
                                            "cublasGemmStridedBatchedEx", "cublasGemmStridedBatchedEx_64"};
enum { kBatchedFormCount = sizeof kBatchedForms / sizeof kBatchedForms[0] };

/* The batch through form `form` (an index of kBatchedForms), FP32 types. */
static int batched_call(void* h, int form, Batch* b, const float* alpha, const float* beta) {
  const void* const* av = (const void* const*)b->a_array;
  const void* const* bv = (const void* const*)b->b_array;
  void* const* cv = (void* const*)b->c_array;
  switch (form) {
    case 0:
      return cublasSgemmStridedBatched(h, b->ta, b->tb, b->m, b->n, b->k, alpha, b->A, b->lda, b->sa, b->B,
                                       b->ldb, b->sb, beta, b->C, b->ldc, b->sc, b->batch);
    case 1:
      return cublasSgemmStridedBatched_64(h, b->ta, b->tb, b->m, b->n, b->k, alpha, b->A, b->lda, b->sa, b->B,
                                          b->ldb, b->sb, beta, b->C, b->ldc, b->sc, b->batch);
    case 2:
      return cublasSgemmBatched(h, b->ta, b->tb, b->m, b->n, b->k, alpha, b->a_array, b->lda, b->b_array,
                                b->ldb, beta, b->c_array, b->ldc, b->batch);
    case 3:
      return cublasSgemmBatched_64(h, b->ta, b->tb, b->m, b->n, b->k, alpha, b->a_array, b->lda, b->b_array,
                                   b->ldb, beta, b->c_array, b->ldc, b->batch);
    case 4:
      return cublasGemmBatchedEx(h, b->ta, b->tb, b->m, b->n, b->k, alpha, av, kR32F, b->lda, bv, kR32F,
                                 b->ldb, beta, cv, kR32F, b->ldc, b->batch, kCompute32F, kAlgoDefault);
    case 5:
      return cublasGemmBatchedEx_64(h, b->ta, b->tb, b->m, b->n, b->k, alpha, av, kR32F, b->lda, bv, kR32F,
                                    b->ldb, beta, cv, kR32F, b->ldc, b->batch, kCompute32F, kAlgoDefault);
    case 6:
      return cublasGemmStridedBatchedEx(h, b->ta, b->tb, b->m, b->n, b->k, alpha, b->A, kR32F, b->lda, b->sa,
                                        b->B, kR32F, b->ldb, b->sb, beta, b->C, kR32F, b->ldc, b->sc,
                                        b->batch, kCompute32F, kAlgoDefault);
    default:
      return cublasGemmStridedBatchedEx_64(h, b->ta, b->tb, b->m, b->n, b->k, alpha, b->A, kR32F, b->lda,
                                           b->sa, b->B, kR32F, b->ldb, b->sb, beta, b->C, kR32F, b->ldc,
                                           b->sc, b->batch, kCompute32F, kAlgoDefault);
  }
}

static int batched_calls(void) {
  void* h = NULL;
  if (cublasCreate_v2(&h) != 0) return 2;
  /* the small batch is below any threshold; the large one is 2.2e6 flops in all, 7.4e5 a member */
  Batch small = make_batch(2, 3, 3, 3, 0, 0), large = make_batch(3, 72, 80, 64, 1, 0);
  const float alpha = 1.5f, beta = 0.5f;
  int bad = 0;
  for (int form = 0; form < kBatchedFormCount; ++form)
    for (Batch* b = &small; b != NULL; b = b == &small ? &large : NULL)
      if (batched_call(h, form, b, &alpha, &beta) != 0 || !batch_right(b, alpha, beta)) {
        printf("wrong %s %d x %d x %d\n", kBatchedForms[form], b->m, b->n, b->k);
        bad = 1;
      }
  if (!bad) printf("ok %d\n", fake_cublas_calls());
  const void* const* av = (const void* const*)large.a_array;
  const void* const* bv = (const void* const*)large.b_array;
  int status = cublasGemmBatchedEx(h, 1, 0, 72, 80, 64, &alpha, av, kR16F, 64, bv, kR16F, 64, &beta,
                                   (void* const*)large.c_array, kR16F, 72, 3, kCompute32F, kAlgoDefault);
  printf("data type: status %d\n", status);
  status = cublasSgemmBatched(h, 7, 0, 72, 80, 64, &alpha, large.a_array, 64, large.b_array, 64, &beta,
                              large.c_array, 72, 3);
  printf("transa 7: status %d transa %d\n", status, fake_cublas_last_transa());
  status = cublasGemmStridedBatchedEx(h, 1, 0, 72, 80, 64, &alpha, large.A, kR32F, 64, large.sa, large.B,
                                      kR32F, 64, large.sb, &beta, large.C, kR32F, 72, large.sc, -1,
                                      kCompute32F, kAlgoDefault);
  printf("batch -1: status %d\n", status);
  status = cublasSgemmBatched_64(h, 1, 0, 72, 80, 64, &alpha, NULL, 64, large.b_array, 64, &beta,
                                 large.c_array, 72, 3);
  printf("null array: status %d\n", status);
  free_batch(&small), free_batch(&large);
  cublasDestroy_v2(h);
  return bad;
}

/* ----- cuBLASLt ----- */

int cublasLtCreate(void** handle);
int cublasLtDestroy(void* handle);
int cublasLtMatmulDescCreate(void** desc, int compute, int scale);
int cublasLtMatmulDescDestroy(void* desc);
int cublasLtMatmulDescSetAttribute(void* desc, int attr, const void* buf, size_t size);
int cublasLtMatrixLayoutCreate(void** layout, int type, uint64_t rows, uint64_t cols, int64_t ld);
int cublasLtMatrixLayoutDestroy(void* layout);
int cublasLtMatmul(void* handle, void* desc, const void* alpha, const void* A, void* a, const void* B,
                   void* b, const void* beta, const void* C, void* c, void* D, void* d, const void* algo,
                   void* workspace, size_t workspace_size, void* stream);

/* cublasLt.h: CUBLASLT_MATMUL_DESC_TRANSA, _TRANSB, _EPILOGUE, _BIAS_POINTER */
enum { kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8 };

/* D = 1.5 op(A) op(B) + 0.5 C through cublasLtMatmul with `epilogue` (TN; D apart from C, of the
   same layout; a bias given when the epilogue's BIAS bit (4) is set); prints what came back. */
static int lt_call(void* lt, unsigned epilogue, int m, int n, int k) {
  Batch b = make_batch(1, m, n, k, 1, 0);
  float* D = malloc(sizeof(float) * b.sc);
  float* bias = calloc((size_t)m, sizeof(float));
  void *desc = NULL, *la = NULL, *lb = NULL, *lc = NULL;
  const float alpha = 1.5f, beta = 0.5f;
  const int32_t ta = 1, tb = 0, epi = (int32_t)epilogue;
  int status = cublasLtMatmulDescCreate(&desc, kCompute32F, kR32F);
  status |= cublasLtMatmulDescSetAttribute(desc, kDescTransA, &ta, sizeof ta);
  status |= cublasLtMatmulDescSetAttribute(desc, kDescTransB, &tb, sizeof tb);
  status |= cublasLtMatmulDescSetAttribute(desc, kDescEpilogue, &epi, sizeof epi);
  if (epilogue & 4) status |= cublasLtMatmulDescSetAttribute(desc, kDescBiasPointer, &bias, sizeof bias);
  status |= cublasLtMatrixLayoutCreate(&la, kR32F, (uint64_t)k, (uint64_t)m, b.lda);
  status |= cublasLtMatrixLayoutCreate(&lb, kR32F, (uint64_t)k, (uint64_t)n, b.ldb);
  status |= cublasLtMatrixLayoutCreate(&lc, kR32F, (uint64_t)m, (uint64_t)n, b.ldc);
  if (status != 0) return 2;
  status = cublasLtMatmul(lt, desc, &alpha, b.A, la, b.B, lb, &beta, b.C, lc, D, lc, NULL, NULL, 0, NULL);
  memcpy(b.C, D, sizeof(float) * b.sc); /* D checked as the product */
  const int right = status == 0 && batch_right(&b, alpha, beta);
  printf("lt %u status %d seen %u %s\n", epilogue, status, fake_cublaslt_last_epilogue(),
         right ? "ok" : "wrong");
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  free(D), free(bias), free_batch(&b);
  return right ? 0 : 1;
}

static int lt_calls(void) {
  /* RELU 2, RELU_BIAS 6, GELU 32, GELU_BIAS 36; RELU_AUX 130, DRELU 136, GELU_AUX_BIAS 164,
     DGELU_BGRAD 208, BGRADB 512 (cublasLt.h's cublasLtEpilogue_t) */
  static const unsigned kLarge[] = {2, 6, 32, 36, 130, 136, 164, 208, 512};
  void* lt = NULL;
  if (cublasLtCreate(&lt) != 0) return 2;
  int bad = lt_call(lt, 1, 3, 3, 3);
  for (size_t i = 0; i < sizeof kLarge / sizeof kLarge[0]; ++i) bad |= lt_call(lt, kLarge[i], 72, 80, 64);
  cublasLtDestroy(lt);
  return bad;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "invalid") == 0) return invalid_calls();
  if (argc > 1 && strcmp(argv[1], "batched") == 0) return batched_calls();
  if (argc > 1 && strcmp(argv[1], "lt") == 0) return lt_calls();
  return run_products();
}
#endif
