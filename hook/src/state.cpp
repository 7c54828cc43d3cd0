// The drop-in's process-wide state (state.hpp).
#include "state.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::hook {
namespace {

thread_local int inside_depth = 0;

/// The device's pool for workspaces: keeps what it has (release threshold unlimited), so a
/// repeated product reuses its memory instead of mapping it again after each synchronisation.
cudaMemPool_t device_pool(int device) {
  static std::mutex mutex;
  static auto* pools = new std::map<int, cudaMemPool_t>;  // never freed: see state.hpp
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = pools->find(device);
  if (it != pools->end()) return it->second;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  TCSOLVE_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  std::uint64_t keep = UINT64_MAX;
  TCSOLVE_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  pools->emplace(device, pool);
  return pool;
}

struct States {
  std::mutex mutex;
  std::map<std::pair<const void*, int>, std::unique_ptr<HandleState>> by_handle;
};
States& states() {
  static auto* s = new States;  // never destroyed: contexts are not torn down at exit
  return *s;
}

}  // namespace

const Config& config() {
  static const Config c = parse_config([](const char* name) -> const char* { return std::getenv(name); });
  return c;
}

Journal& journal() {
  static Journal j(config());
  return j;
}

HandleState& handle_state(const void* handle) {
  int device = 0;
  TCSOLVE_CUDA_CHECK(cudaGetDevice(&device));
  States& s = states();
  const std::lock_guard<std::mutex> lock(s.mutex);
  auto& slot = s.by_handle[{handle, device}];
  if (!slot) {
    auto state = std::make_unique<HandleState>();
    state->context.set_workspaces(cuda::Context::Workspaces::stream_ordered);
    state->context.set_memory_pool(device_pool(device));
    slot = std::move(state);
  }
  return *slot;
}

void forget_handle(const void* handle) {
  States& s = states();
  const std::lock_guard<std::mutex> lock(s.mutex);
  for (auto it = s.by_handle.begin(); it != s.by_handle.end();)
    it = it->first.first == handle ? s.by_handle.erase(it) : std::next(it);
}

InsideHook::InsideHook() { ++inside_depth; }
InsideHook::~InsideHook() { --inside_depth; }
bool InsideHook::active() { return inside_depth > 0; }

}  // namespace tcsolve::hook
