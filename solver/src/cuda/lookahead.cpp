// The look-ahead streams (lookahead.hpp). The green-context functions come from the driver
// through cudaGetDriverEntryPointByVersion, so the library does not link libcuda (CI machines
// have no driver).
#include "lookahead.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

namespace tcsolve::cuda {
namespace {

template <typename F>
F driver_function(const char* name, std::string& missing) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(name, &f, CUDA_VERSION, cudaEnableDefault, &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess || f == nullptr) {
    cudaGetLastError();
    if (missing.empty()) missing = std::string("the driver has no ") + name;
    return nullptr;
  }
  return reinterpret_cast<F>(f);
}

LookaheadStreams make_streams(unsigned kPanelSms) {
  LookaheadStreams s;
  int device = 0, major = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    s.unavailable = "no usable CUDA device";
    return s;
  }
  if (major != 9) {
    s.unavailable = "the panel's cluster kernel needs compute capability 9.0";
    return s;
  }
  std::string missing;
  auto device_get = driver_function<CUresult (*)(CUdevice*, int)>("cuDeviceGet", missing);
  auto get_resource = driver_function<CUresult (*)(CUdevice, CUdevResource*, CUdevResourceType)>(
      "cuDeviceGetDevResource", missing);
  auto split = driver_function<CUresult (*)(CUdevResource*, unsigned*, const CUdevResource*, CUdevResource*,
                                            unsigned, unsigned)>("cuDevSmResourceSplitByCount", missing);
  auto describe = driver_function<CUresult (*)(CUdevResourceDesc*, CUdevResource*, unsigned)>(
      "cuDevResourceGenerateDesc", missing);
  auto create = driver_function<CUresult (*)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned)>(
      "cuGreenCtxCreate", missing);
  auto stream_create =
      driver_function<CUresult (*)(CUstream*, CUgreenCtx, unsigned, int)>("cuGreenCtxStreamCreate", missing);
  if (!missing.empty()) {
    s.unavailable = missing;
    return s;
  }
  // 16: one 16-CTA cluster of the leaf kernel; 32, 48, 64 leave more (the joins' SGEMMs use them)
  CUdevice dev = 0;
  CUdevResource all{}, panel{}, rest{};
  unsigned groups = 1;
  CUdevResourceDesc desc = nullptr;
  CUgreenCtx green = nullptr;
  CUstream update = nullptr;
  if (device_get(&dev, device) != CUDA_SUCCESS ||
      get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS ||
      split(&panel, &groups, &all, &rest, CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE, kPanelSms) !=
          CUDA_SUCCESS ||
      groups != 1 || panel.sm.smCount < kPanelSms || rest.sm.smCount < kPanelSms) {
    s.unavailable =
        "the device's SMs could not be split into a group of " + std::to_string(kPanelSms) + " and the rest";
    return s;
  }
  int least = 0, greatest = 0;
  if (describe(&desc, &rest, 1) != CUDA_SUCCESS ||
      create(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS ||
      cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess ||
      stream_create(&update, green, CU_STREAM_NON_BLOCKING, least) != CUDA_SUCCESS ||
      cudaStreamCreateWithPriority(&s.panel, cudaStreamNonBlocking, greatest) != cudaSuccess) {
    cudaGetLastError();
    s = LookaheadStreams{};
    s.unavailable = "the green context of the trailing update could not be made";
    return s;
  }
  s.update = reinterpret_cast<cudaStream_t>(update);
  s.green = green;
  s.update_sms = static_cast<int>(rest.sm.smCount);
  s.panel_sms = sms - s.update_sms;
  return s;
}

}  // namespace

LookaheadStreams make_lookahead_streams(unsigned panel_sms) { return make_streams(panel_sms); }

void destroy_lookahead_streams(LookaheadStreams& s) noexcept {
  std::string missing;
  if (s.update != nullptr) {
    if (auto destroy = driver_function<CUresult (*)(CUstream)>("cuStreamDestroy", missing))
      destroy(reinterpret_cast<CUstream>(s.update));
  }
  if (s.panel != nullptr) cudaStreamDestroy(s.panel);
  if (s.green != nullptr) {
    if (auto destroy = driver_function<CUresult (*)(CUgreenCtx)>("cuGreenCtxDestroy", missing))
      destroy(static_cast<CUgreenCtx>(s.green));
  }
  s = LookaheadStreams{};
}

}  // namespace tcsolve::cuda
