// The one switch between backends, argument checks shared by both, and the names of the cuda
// kernel families.
#include <string>

#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/gemm.hpp"

namespace tcsolve {

void check_gemm_arguments(Op ta, Op tb, int m, int n, int k, int lda, int ldb, int ldc) {
  auto positive = [](int v, const char* what) {
    if (v < 1) throw InvalidInput(std::string("gemm: ") + what + " must be >= 1, got " + std::to_string(v));
  };
  positive(m, "m");
  positive(n, "n");
  positive(k, "k");
  const int a_rows = ta == Op::n ? m : k;  // rows of the stored A
  const int b_rows = tb == Op::n ? k : n;
  if (lda < a_rows) throw InvalidInput("gemm: lda " + std::to_string(lda) + " < rows of A " + std::to_string(a_rows));
  if (ldb < b_rows) throw InvalidInput("gemm: ldb " + std::to_string(ldb) + " < rows of B " + std::to_string(b_rows));
  if (ldc < m) throw InvalidInput("gemm: ldc " + std::to_string(ldc) + " < m " + std::to_string(m));
}

std::string_view to_string(CudaKernels k) {
  switch (k) {
    case CudaKernels::automatic: return "automatic";
    case CudaKernels::wgmma: return "wgmma";
    case CudaKernels::mma: return "mma";
  }
  return "?";
}

CudaKernels parse_cuda_kernels(std::string_view name) {
  for (CudaKernels k : {CudaKernels::automatic, CudaKernels::wgmma, CudaKernels::mma})
    if (name == to_string(k)) return k;
  throw InvalidInput("unknown GEMM kernel family '" + std::string(name) + "' (automatic, wgmma, mma)");
}

Backend resolve_backend(Backend requested) {
  if (requested != Backend::automatic) return requested;
  return cuda::device_available() ? Backend::cuda : Backend::cpu;
}

bool available(Variant variant, Backend backend) {
  switch (resolve_backend(backend)) {
    case Backend::cpu: return info(variant).on_cpu;
    case Backend::cuda: return cuda::device_available() && cuda::implements(variant);
    default: return false;
  }
}

GemmInfo gemm(Backend backend, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha,
              const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
              const GemmOptions& options) {
  switch (resolve_backend(backend)) {
    case Backend::cuda: {
      cuda::Context ctx;  // for this call only: its workspaces are freed once the work is done
      GemmInfo info = cuda::gemm(ctx, variant, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, options);
      ctx.synchronize();
      return info;
    }
    case Backend::cpu:
    default:
      return cpu::gemm(variant, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, options);
  }
}

}  // namespace tcsolve
