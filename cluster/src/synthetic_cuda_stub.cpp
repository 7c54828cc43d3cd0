// Synthetic blobs on the device (synthetic.hpp, blob_rows_device) in a build without CUDA: links,
// and throws tcsolve::Unavailable.
#include <cstdint>

#include "tcsolve/cluster/synthetic.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cluster {

void blob_rows_device(const BlobsSpec&, std::int64_t, std::int64_t, float*, int*, CUstream_st*) {
  throw Unavailable("blob_rows_device: tcsolve was built without CUDA");
}

}  // namespace tcsolve::cluster
