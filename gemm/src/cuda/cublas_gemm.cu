// cuda backend: the variants cuBLAS computes (fp64, fp32-simt, cublas-tf32, cublas-fp16) with the
// context's cuBLAS handle, and the FP64 reference product of gemm-bench.
//
//   fp64         A, B (and C when beta != 0) widened to FP64 device copies, cublasDgemm, the
//                result rounded back to FP32 (RN): the FP64 reference of the FP32 inputs.
//   fp32-simt    cublasSgemm with CUBLAS_DEFAULT_MATH: plain FP32 on the CUDA cores (no TF32).
//   cublas-tf32  cublasGemmEx, FP32 in and out, CUBLAS_COMPUTE_32F_FAST_TF32.
//   cublas-fp16  cublasGemmEx, FP32 in and out, CUBLAS_COMPUTE_32F_FAST_16F.
//
// The FP64 copies live in the context's fp64 workspace, which only grows, so steady-state calls
// (the timed runs of gemm-bench) allocate nothing. Everything runs on the context's stream.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "backend.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

namespace detail {
namespace {

constexpr int kBlock = 256;       ///< threads per block of the conversion kernels
constexpr int kMaxGridY = 65535;  ///< gridDim.y limit; the kernels loop over the rest

// ---------------------------------------------------------------------------------------------
// FP32 <-> FP64 copies of column-major matrices
// ---------------------------------------------------------------------------------------------

/// dst(i, j) = double(src(i, j)) for a rows x cols matrix: src has leading dimension ld_src,
/// dst is packed (leading dimension rows). Grid: x over rows, y (looping) over columns.
__global__ void __launch_bounds__(kBlock)
    widen_kernel(const float* __restrict__ src, int ld_src, double* __restrict__ dst, int rows,
                 int cols) {
  const int i = blockIdx.x * kBlock + threadIdx.x;
  if (i >= rows) return;
  for (int j = blockIdx.y; j < cols; j += gridDim.y)
    dst[i + static_cast<std::size_t>(j) * rows] =
        static_cast<double>(src[i + static_cast<std::size_t>(j) * ld_src]);
}

/// dst(i, j) = fp32_rn(src(i, j)): src packed (leading dimension rows), dst with ld_dst.
__global__ void __launch_bounds__(kBlock)
    narrow_kernel(const double* __restrict__ src, int rows, int cols, float* __restrict__ dst,
                  int ld_dst) {
  const int i = blockIdx.x * kBlock + threadIdx.x;
  if (i >= rows) return;
  for (int j = blockIdx.y; j < cols; j += gridDim.y)
    dst[i + static_cast<std::size_t>(j) * ld_dst] =
        __double2float_rn(src[i + static_cast<std::size_t>(j) * rows]);
}

dim3 conversion_grid(int rows, int cols) {
  return dim3(static_cast<unsigned int>(ceil_div(rows, kBlock)),
              static_cast<unsigned int>(std::min(cols, kMaxGridY)));
}

void widen(cudaStream_t stream, const float* src, int ld_src, double* dst, int rows, int cols) {
  widen_kernel<<<conversion_grid(rows, cols), kBlock, 0, stream>>>(src, ld_src, dst, rows, cols);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

void narrow(cudaStream_t stream, const double* src, int rows, int cols, float* dst, int ld_dst) {
  narrow_kernel<<<conversion_grid(rows, cols), kBlock, 0, stream>>>(src, rows, cols, dst, ld_dst);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

/// Doubles in a slice of the workspace, rounded up so each slice starts 256-byte aligned.
std::size_t slice(std::size_t count) { return ceil_div<std::size_t>(count, 32) * 32; }


cublasOperation_t to_cublas(Op op) { return op == Op::n ? CUBLAS_OP_N : CUBLAS_OP_T; }

/// Rows and columns of the stored A and B of `a` (before op).
int stored_rows_a(const GemmArgs& a) { return a.ta == Op::n ? a.m : a.k; }
int stored_cols_a(const GemmArgs& a) { return a.ta == Op::n ? a.k : a.m; }
int stored_rows_b(const GemmArgs& a) { return a.tb == Op::n ? a.k : a.n; }
int stored_cols_b(const GemmArgs& a) { return a.tb == Op::n ? a.n : a.k; }

/// FP64 copies of the stored A and B of one call, and an optional extra slice, all in the
/// context's fp64 workspace (each slice 256-byte aligned). Valid until its next use.
struct Fp64Copies {
  double* a64;    ///< stored_rows_a x stored_cols_a, leading dimension stored_rows_a
  double* b64;    ///< stored_rows_b x stored_cols_b, leading dimension stored_rows_b
  double* extra;  ///< `extra` doubles for the caller; nullptr when none were asked for
};

/// Widens a.A and a.B into the context's workspace.
Fp64Copies fp64_copies(const GemmArgs& a, std::size_t extra) {
  const int ra = stored_rows_a(a), ca = stored_cols_a(a);
  const int rb = stored_rows_b(a), cb = stored_cols_b(a);
  const std::size_t size_a = slice(static_cast<std::size_t>(ra) * ca);
  const std::size_t size_b = slice(static_cast<std::size_t>(rb) * cb);
  double* base = static_cast<double*>(
      a.ctx->take(GemmWorkspaces::of(*a.ctx).fp64, (size_a + size_b + slice(extra)) * sizeof(double)));
  const Fp64Copies c{base, base + size_a, extra == 0 ? nullptr : base + size_a + size_b};
  widen(a.stream(), a.A, a.lda, c.a64, ra, ca);
  widen(a.stream(), a.B, a.ldb, c.b64, rb, cb);
  return c;
}

/// c64 (m x n, leading dimension m) = alpha * op(A64) * op(B64) + beta * c64 in FP64
/// (cublasDgemm); c64 is not read when beta == 0.
void dgemm(const GemmArgs& a, const Fp64Copies& c, double alpha, double beta, double* c64) {
  cublasHandle_t h = a.ctx->blas();
  TCSOLVE_CUBLAS_CHECK(cublasDgemm(h, to_cublas(a.ta), to_cublas(a.tb), a.m, a.n, a.k, &alpha,
                                   c.a64, stored_rows_a(a), c.b64, stored_rows_b(a), &beta, c64,
                                   a.m));
}

void fp64_gemm(const GemmArgs& a) {
  const Fp64Copies c = fp64_copies(a, static_cast<std::size_t>(a.m) * a.n);
  if (a.beta != 0.0f) widen(a.stream(), a.C, a.ldc, c.extra, a.m, a.n);  // beta == 0: C is not read
  dgemm(a, c, static_cast<double>(a.alpha), static_cast<double>(a.beta), c.extra);
  narrow(a.stream(), c.extra, a.m, a.n, a.C, a.ldc);
}

void sgemm(const GemmArgs& a) {
  // The default math mode (set by Context::Impl::blas()) never uses TF32 (only
  // CUBLAS_TF32_TENSOR_OP_MATH or a FAST_TF32 compute type would).
  cublasHandle_t h = a.ctx->blas();
  TCSOLVE_CUBLAS_CHECK(cublasSgemm(h, to_cublas(a.ta), to_cublas(a.tb), a.m, a.n, a.k, &a.alpha,
                                   a.A, a.lda, a.B, a.ldb, &a.beta, a.C, a.ldc));
}

void gemm_ex(const GemmArgs& a, cublasComputeType_t compute) {
  cublasHandle_t h = a.ctx->blas();
  TCSOLVE_CUBLAS_CHECK(cublasGemmEx(h, to_cublas(a.ta), to_cublas(a.tb), a.m, a.n, a.k, &a.alpha,
                                    a.A, CUDA_R_32F, a.lda, a.B, CUDA_R_32F, a.ldb, &a.beta, a.C,
                                    CUDA_R_32F, a.ldc, compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

GemmInfo cublas_gemm(Variant variant, const GemmArgs& args) {
  switch (variant) {
    case Variant::fp64: fp64_gemm(args); break;
    case Variant::fp32_simt: sgemm(args); break;
    case Variant::cublas_tf32: gemm_ex(args, CUBLAS_COMPUTE_32F_FAST_TF32); break;
    case Variant::cublas_fp16: gemm_ex(args, CUBLAS_COMPUTE_32F_FAST_16F); break;
    default:
      throw Error("cublas_gemm: variant " + std::string(to_string(variant)) +
                  " is not a cuBLAS variant");
  }
  return GemmInfo{variant, variant, Backend::cuda, ""};
}

}  // namespace detail

void reference_product_device(Context& ctx, Op ta, Op tb, int m, int n, int k, const float* d_A, int lda,
                              const float* d_B, int ldb, double* d_C64, double alpha, const float* d_C0,
                              double beta) {
  check_gemm_arguments(ta, tb, m, n, k, lda, ldb, m);
  detail::GemmArgs args{ta, tb, m, n, k, 1.0f, d_A, lda, d_B, ldb, 0.0f, nullptr, m};
  args.ctx = &ctx.impl();
  const CallWorkspaces workspaces(ctx.impl());
  const detail::Fp64Copies c = detail::fp64_copies(args, 0);
  const bool with_c = d_C0 != nullptr && beta != 0.0;
  if (with_c) detail::widen(args.stream(), d_C0, m, d_C64, m, n);
  detail::dgemm(args, c, alpha, with_c ? beta : 0.0, d_C64);
}

}  // namespace tcsolve::cuda
