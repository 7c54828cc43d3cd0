// The C API's cuda path in a build without CUDA (cuda_path.hpp): unreachable in practice (no
// cuda handle can be created), every function throws Unavailable.
#include "cuda_path.hpp"

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::capi {
namespace {

[[noreturn]] void unavailable() { throw Unavailable("this build of tcsolve has no CUDA backend"); }

}  // namespace

void cuda_gemm(cuda::Context&, Variant, Op, Op, int, int, int, float, const float*, int, const float*, int, float, float*,
               int) {
  unavailable();
}

void cuda_scale(cuda::Context&, int, int, float, float*, int) { unavailable(); }

SolveResult cuda_dgesv(cuda::Context&, HostDgesv, const SolveOptions&, bool, std::int64_t, std::int64_t, const double*,
                       Strided, const double*, Strided, double*, Strided) {
  unavailable();
}

bool on_device(const char*, const void*, int) { unavailable(); }

void copy_rows(cuda::Context&, void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t) {
  unavailable();
}

}  // namespace tcsolve::capi
