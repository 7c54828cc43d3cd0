// NCCL (group.hpp) in a build without CUDA or without NCCL: GPU groups cannot be made; every
// call says why. device_count() still answers (0 without CUDA).
#if defined(TCSOLVE_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

#include "group_state.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::runtime {
namespace {
[[noreturn]] void missing() {
  throw Unavailable(
      "several GPUs: this tcsolve was built without NCCL (it needs the CUDA toolkit's NCCL, "
      "nccl.h and libnccl; configure with -DTCSOLVE_NCCL=ON)");
}
}  // namespace

namespace detail {
NcclId nccl_unique_id() { missing(); }
void add_nccl_members(DeviceGroup::State&, const std::vector<int>&) { missing(); }
void add_nccl_rank(DeviceGroup::State&, const NcclId&, int, int, int) { missing(); }
int device_count() {
#if defined(TCSOLVE_HAVE_CUDA)
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
#else
  return 0;
#endif
}
}  // namespace detail

bool have_nccl() { return false; }

}  // namespace tcsolve::runtime
