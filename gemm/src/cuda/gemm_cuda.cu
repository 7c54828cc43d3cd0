// cuda backend: tcsolve::cuda::gemm and implements(). The mma.sync / cuBLAS kernels for the
// variants are issue 3; until then no variant is implemented here and gemm() says so.
#include <string>

#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/variant.hpp"

namespace tcsolve::cuda {

bool implements(Variant /*variant*/) { return false; }

GemmInfo gemm(Variant variant, Op ta, Op tb, int m, int n, int k, float /*alpha*/,
              const float* /*A*/, int lda, const float* /*B*/, int ldb, float /*beta*/,
              float* /*C*/, int ldc, const GemmOptions& /*options*/) {
  check_gemm_arguments(ta, tb, m, n, k, lda, ldb, ldc);
  throw Unavailable("variant " + std::string(to_string(variant)) +
                    " is not implemented on the cuda backend yet (issue 3)");
}

}  // namespace tcsolve::cuda
