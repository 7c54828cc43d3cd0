// k-means++ across the GPUs of a group (kmeans_cuda.hpp) in a build without CUDA: links, and
// throws tcsolve::Unavailable.
#include "kmeans_cuda.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster::detail {

std::vector<float> kmeans_plus_plus_members(const std::vector<const float*>&, std::int64_t, int, int, std::uint64_t,
                                            runtime::DeviceGroup&) {
  throw Unavailable("tcsolve was built without CUDA");
}

}  // namespace tcsolve::cluster::detail
