// The FFN demo's cuda part in a build without CUDA: links, and throws tcsolve::Unavailable.
#include "ffn_cuda.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::demos::detail {
namespace {
[[noreturn]] void not_built() { throw Unavailable("tcsolve was built without CUDA"); }
}  // namespace

void bias_activation(float*, const float*, int, int, bool) { not_built(); }
void bias_activation(double*, const float*, int, int, bool) { not_built(); }
void product_fp32_fp64(int, int, int, const float*, const double*, double*) { not_built(); }

}  // namespace tcsolve::demos::detail
