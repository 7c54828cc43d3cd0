// The settings and attachments of a tcsolve::cuda::Context (context.hpp), the same in builds with
// and without CUDA; the CUDA build's handles and workspaces are in cuda/context.cpp.
#if defined(TCSOLVE_HAVE_CUDA)
#include "tcsolve/runtime/context_impl.hpp"
#else
#include "cuda_stub/context_impl.hpp"
#endif

#include <memory>
#include <utility>

namespace tcsolve::cuda {

CUstream_st* Context::stream() const { return impl_->stream; }
int Context::device() const { return impl_->device; }
void Context::set_stream(CUstream_st* stream) { impl_->stream = stream; }
int Context::max_blocks() const { return impl_->max_blocks; }
void Context::set_max_blocks(int blocks) { impl_->max_blocks = blocks < 0 ? 0 : blocks; }
bool Context::tile_blocks() const { return impl_->tile_blocks; }
void Context::set_tile_blocks(bool on) { impl_->tile_blocks = on; }
bool Context::time_phases() const { return impl_->time_phases; }
void Context::set_time_phases(bool on) { impl_->time_phases = on; }
Context::Workspaces Context::workspaces() const { return impl_->workspaces; }
void Context::set_workspaces(Workspaces mode) { impl_->workspaces = mode; }
CUmemPoolHandle_st* Context::memory_pool() const { return impl_->pool; }
void Context::set_memory_pool(CUmemPoolHandle_st* pool) { impl_->pool = pool; }

Context::Attachment* Context::attachment(const void* key) const { return impl_->attachments.find(key); }
Context::Attachment& Context::attach(const void* key, std::unique_ptr<Attachment> value) {
  return impl_->attachments.put(key, std::move(value));
}

}  // namespace tcsolve::cuda
