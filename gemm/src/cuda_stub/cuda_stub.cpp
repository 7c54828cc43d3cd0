// gemm's cuda backend in a build without CUDA (ginkgo-style stub): every tcsolve::cuda entry
// point of gemm links, implements nothing, and throws tcsolve::Unavailable when asked to run
// (the runtime's devices and Context: runtime/src/cuda_stub/runtime_stub.cpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/probe.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

namespace {
[[noreturn]] void not_built() { throw Unavailable("tcsolve was built without CUDA"); }
}  // namespace

bool implements(Variant /*variant*/) { return false; }

GemmInfo gemm(Context&, Variant, Op, Op, int, int, int, float, const float*, int, const float*, int,
              float, float*, int, const GemmOptions&, const DeviceAuto*) {
  not_built();
}

GemmInfo gemm(Context&, Variant, Op, Op, int, int, int, const DeviceScalars&, const float*, int, const float*,
              int, float*, int, const GemmOptions&, const DeviceAuto*) {
  not_built();
}

GemmInfo gemm_batched(Context&, Variant, Op, Op, int, int, int, float, const float*, int, const float*, int, float,
                      float*, int, const Batch&, const GemmOptions&, const DeviceAuto*) {
  not_built();
}

GemmInfo gemm_batched(Context&, Variant, Op, Op, int, int, int, const DeviceScalars&, const float*, int,
                      const float*, int, float*, int, const Batch&, const GemmOptions&, const DeviceAuto*) {
  not_built();
}

GemmInfo nearest_columns(Context&, Variant, int, int, int, const float*, int, const float*, int, const double*,
                         int*, unsigned long long*, const GemmOptions&) {
  not_built();
}

bool nearest_columns_available(Variant, const GemmOptions&) { return false; }

bool NearestPoints::available(const GemmOptions&) { return false; }
std::size_t NearestPoints::bytes(int, int) { return 0; }
NearestPoints::NearestPoints(Context&, int, int, const float*, int, const GemmOptions&, Variant variant)
    : m_(0), k_(0), variant_(variant), a_(nullptr), lda_(0) {
  not_built();
}
GemmInfo nearest_columns(Context&, const NearestPoints&, int, const float*, int, const double*, int*,
                         unsigned long long*, const GemmOptions&) {
  not_built();
}

void split(SplitKind, const float*, float*, float*, std::size_t, CUstream_st*) { not_built(); }

void fp32_to_fp16(const float*, std::uint16_t*, std::size_t, Fp16Mode, CUstream_st*) { not_built(); }

void fp16_to_fp32(const std::uint16_t*, float*, std::size_t, CUstream_st*) { not_built(); }

ConversionCheck compare_with_hardware() { not_built(); }

void scale_matrix(Context&, int, int, float, float*, int) { not_built(); }

void scale_matrix(Context&, int, int, const float*, float*, int) { not_built(); }

struct EventTimer::Impl {};

EventTimer::EventTimer(CUstream_st*) { not_built(); }
EventTimer::~EventTimer() = default;
EventTimer::EventTimer(EventTimer&&) noexcept = default;
EventTimer& EventTimer::operator=(EventTimer&&) noexcept = default;
void EventTimer::start() { not_built(); }
float EventTimer::stop_ms() { not_built(); }
void EventTimer::stop() { not_built(); }
float EventTimer::elapsed_ms() { not_built(); }

void reference_product_device(Context&, Op, Op, int, int, int, const float*, int, const float*, int,
                              double*, double, const float*, double) {
  not_built();
}

ErrorMetrics error_metrics_device(const float*, int, const double*, int, int, CUstream_st*) { not_built(); }

std::vector<ProbeResult> probe(int) { not_built(); }

}  // namespace tcsolve::cuda
