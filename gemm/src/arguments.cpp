// The GEMM argument checks both backends share (check_gemm_arguments) and the names of the cuda
// kernel families (GemmOptions::cuda_kernels). Apart from dispatch.cpp so that code using only the
// cuda backend (the cuBLAS drop-in) links without the CPU emulation.
#include <string>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/error.hpp"

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

void check_batch(const Batch& batch, int m, int n, int ldc, const char* who) {
  const std::string w(who);
  if (batch.count < 0) throw InvalidInput(w + ": the batch count must be >= 0, got " + std::to_string(batch.count));
  const int given = (batch.a_array != nullptr) + (batch.b_array != nullptr) + (batch.c_array != nullptr);
  if (given != 0 && given != 3) throw InvalidInput(w + ": give all three pointer arrays (A, B, C) or none");
  if (given == 0 && batch.count > 1) {  // members' C must not overlap: each spans (n - 1) ldc + m elements
    const long long span = static_cast<long long>(n - 1) * ldc + m;
    if (batch.stride_c < span && -batch.stride_c < span)
      throw InvalidInput(w + ": stride_c " + std::to_string(batch.stride_c) + " makes the members' C overlap (each spans " +
                         std::to_string(span) + " elements)");
  }
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

}  // namespace tcsolve
