// The cuda backend of a build without CUDA (ginkgo-style stub): every tcsolve::cuda entry
// point links, reports no device, and throws tcsolve::Unavailable when asked to run.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "../context_attachments.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/probe.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/gemm.hpp"

namespace tcsolve::cuda {

namespace {
[[noreturn]] void not_built() { throw Unavailable("tcsolve was built without CUDA"); }
}  // namespace

bool device_available() { return false; }

std::string device_name() { return "none (built without CUDA)"; }

RuntimeVersions runtime_versions() { return {}; }

DeviceMemory device_memory() { return {}; }

bool implements(Variant /*variant*/) { return false; }

GemmInfo gemm(Context&, Variant, Op, Op, int, int, int, float, const float*, int, const float*, int,
              float, float*, int, const GemmOptions&, const DeviceAuto*) {
  not_built();
}

// A Context without CUDA: its settings and attachments, nothing on a device.
struct Context::Impl {
  CUstream_st* stream = nullptr;
  int max_blocks = 0;
  bool time_phases = false;
  detail::Attachments attachments;
};

Context::Context(CUstream_st* stream) : impl_(std::make_unique<Impl>()) { impl_->stream = stream; }
Context::~Context() = default;
CUstream_st* Context::stream() const { return impl_->stream; }
void Context::set_stream(CUstream_st* stream) { impl_->stream = stream; }
int Context::max_blocks() const { return impl_->max_blocks; }
void Context::set_max_blocks(int blocks) { impl_->max_blocks = blocks < 0 ? 0 : blocks; }
bool Context::time_phases() const { return impl_->time_phases; }
void Context::set_time_phases(bool on) { impl_->time_phases = on; }
void Context::synchronize() const { not_built(); }
Context::Attachment* Context::attachment(const void* key) const { return impl_->attachments.find(key); }
Context::Attachment& Context::attach(const void* key, std::unique_ptr<Attachment> value) {
  return impl_->attachments.put(key, std::move(value));
}

void split(SplitKind, const float*, float*, float*, std::size_t, CUstream_st*) { not_built(); }

void fp32_to_fp16(const float*, std::uint16_t*, std::size_t, Fp16Mode, CUstream_st*) { not_built(); }

void fp16_to_fp32(const std::uint16_t*, float*, std::size_t, CUstream_st*) { not_built(); }

ConversionCheck compare_with_hardware() { not_built(); }

void* device_alloc(std::size_t) { not_built(); }

// Nothing can have been allocated without CUDA: freeing (nullptr, from a DeviceBuffer's
// destructor) is a no-op, as cudaFree(nullptr) is.
void device_free(void*) noexcept {}

void copy_to_device(void*, const void*, std::size_t, CUstream_st*) { not_built(); }

void copy_to_host(void*, const void*, std::size_t, CUstream_st*) { not_built(); }

void copy_device_to_device(void*, const void*, std::size_t, CUstream_st*) { not_built(); }

void device_memset(void*, int, std::size_t, CUstream_st*) { not_built(); }

void device_synchronize() { not_built(); }

void scale_matrix(Context&, int, int, float, float*, int) { not_built(); }

int compute_capability() { return 0; }

std::size_t l2_cache_bytes() { not_built(); }

struct EventTimer::Impl {};

EventTimer::EventTimer(CUstream_st*) { not_built(); }
EventTimer::~EventTimer() = default;
EventTimer::EventTimer(EventTimer&&) noexcept = default;
EventTimer& EventTimer::operator=(EventTimer&&) noexcept = default;
void EventTimer::start() { not_built(); }
float EventTimer::stop_ms() { not_built(); }

void reference_product_device(Context&, Op, Op, int, int, int, const float*, int, const float*, int,
                              double*, double, const float*, double) {
  not_built();
}

ErrorMetrics error_metrics_device(const float*, int, const double*, int, int, CUstream_st*) { not_built(); }

std::vector<ProbeResult> probe(int) { not_built(); }

}  // namespace tcsolve::cuda
