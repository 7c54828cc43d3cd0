// LaunchGraphs (launch_graphs.hpp): the production path's launches replayed from CUDA graphs.
#include "launch_graphs.hpp"

#include <cstring>

#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda::detail {

ProductKey product_key(Variant variant, const GemmArgs& g, const void* workspace, int tf32_chunk, bool shifts_first) {
  ProductKey key;
  std::memset(&key, 0, sizeof key);
  key.variant = static_cast<int>(variant);
  key.ta = static_cast<int>(g.ta), key.tb = static_cast<int>(g.tb);
  key.m = g.m, key.n = g.n, key.k = g.k, key.lda = g.lda, key.ldb = g.ldb, key.ldc = g.ldc;
  std::memcpy(&key.alpha_bits, &g.alpha, sizeof key.alpha_bits);
  std::memcpy(&key.beta_bits, &g.beta, sizeof key.beta_bits);
  key.A = g.A, key.B = g.B, key.C = g.C, key.alpha_device = g.alpha_device, key.beta_device = g.beta_device;
  key.workspace = workspace, key.auto_tf32_needed = g.auto_tf32_needed;
  key.stride_a = g.batch.stride_a, key.stride_b = g.batch.stride_b, key.stride_c = g.batch.stride_c;
  key.a_array = g.batch.a_array, key.b_array = g.batch.b_array, key.c_array = g.batch.c_array;
  key.count = g.batch.count, key.split_count = g.split.count, key.split_length = g.split.length;
  key.auto_on_device = g.auto_on_device ? 1 : 0, key.tf32_chunk = tf32_chunk, key.shifts_first = shifts_first ? 1 : 0;
  key.max_blocks = g.ctx->max_blocks, key.tile_blocks = g.ctx->tile_blocks ? 1 : 0;
  key.stream = g.ctx->stream;
  return key;
}

LaunchGraphs& LaunchGraphs::of(Context::Impl& ctx) {
  static const char key = 0;
  if (Context::Attachment* a = ctx.attachments.find(&key)) return static_cast<LaunchGraphs&>(*a);
  return static_cast<LaunchGraphs&>(ctx.attachments.put(&key, std::make_unique<LaunchGraphs>()));
}

LaunchGraphs::~LaunchGraphs() {
  for (auto& [k, e] : graphs_) cudaGraphExecDestroy(e.exec);  // errors dropped: a destructor
  if (capture_stream_ != nullptr) cudaStreamDestroy(capture_stream_);
}

cudaGraphExec_t LaunchGraphs::capture(Context::Impl& ctx, const std::function<void()>& launches) {
  if (capture_stream_ == nullptr &&
      cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    capture_stream_ = nullptr;
    return nullptr;
  }
  if (cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  const cudaStream_t caller = ctx.stream;
  ctx.stream = capture_stream_;
  cudaGraph_t graph = nullptr;
  try {
    launches();
  } catch (...) {  // CUDA refused something under capture: the caller launches directly (and
                   // meets a real error there again)
    ctx.stream = caller;
    if (cudaStreamEndCapture(capture_stream_, &graph) == cudaSuccess && graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
    return nullptr;
  }
  ctx.stream = caller;
  if (cudaStreamEndCapture(capture_stream_, &graph) != cudaSuccess || graph == nullptr) {
    cudaGetLastError();
    return nullptr;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (made != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return exec;
}

bool LaunchGraphs::run(Context::Impl& ctx, const ProductKey& product, const std::function<void()>& launches) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TCSOLVE_CUDA_CHECK(cudaStreamIsCapturing(ctx.stream, &status));
  if (status != cudaStreamCaptureStatusNone) {  // the caller's own graph takes the launches
    launches();
    return false;
  }
  std::string key(reinterpret_cast<const char*>(&product), sizeof product);
  if (auto it = graphs_.find(key); it != graphs_.end()) {
    ages_.splice(ages_.begin(), ages_, it->second.age);
    TCSOLVE_CUDA_CHECK(cudaGraphLaunch(it->second.exec, ctx.stream));
    return true;
  }
  if (seen_.size() >= kCapacity) seen_.clear();
  if (seen_.insert(key).second) {  // the first time: directly
    launches();
    return false;
  }
  cudaGraphExec_t exec = capture(ctx, launches);
  if (exec == nullptr) {
    launches();
    return false;
  }
  seen_.erase(key);
  if (graphs_.size() >= kCapacity) {
    auto last = graphs_.find(ages_.back());
    cudaGraphExecDestroy(last->second.exec);
    graphs_.erase(last);
    ages_.pop_back();
  }
  ages_.push_front(key);
  graphs_.emplace(std::move(key), Entry{exec, ages_.begin()});
  TCSOLVE_CUDA_CHECK(cudaGraphLaunch(exec, ctx.stream));
  return true;
}

}  // namespace tcsolve::cuda::detail
