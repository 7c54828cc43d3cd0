// The one switch between backends (tcsolve::gemm with a Backend, resolve_backend, available);
// the argument checks both share are in arguments.cpp.
#include <string>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve {

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

GemmInfo gemm(const runtime::Where& where, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha,
              const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc,
              const GemmOptions& options) {
  switch (where.kind()) {
    case runtime::Where::Kind::host:
      return cpu::gemm(variant, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, options);
    case runtime::Where::Kind::context:
      return cuda::gemm(*where.context(), variant, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, options);
    case runtime::Where::Kind::group:
      break;
  }
  throw InvalidInput("gemm: a product runs on one device: pass Where() or Where(context), not a group");
}

}  // namespace tcsolve
