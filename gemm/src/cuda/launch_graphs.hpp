// GemmOptions::cuda_launch = cached_graphs (launch_graphs.cpp): a context's cache of CUDA graphs of
// the production path's launches, keyed by every argument that reaches a kernel parameter or a
// launch's shape. A call whose key is new runs directly; the second call with that key is
// captured (on a stream of the cache's own, into a graph that is instantiated and launched on the
// caller's stream); from the third on the call is one cudaGraphLaunch. Why: a launch costs the
// calling thread 4-5 us and auto's product makes four; a graph of five launches 1.5-2.2 us
// (docs/BENCHMARKS.md, the drop-in's "Session 33" table). Internal to the gemm library.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <list>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "backend.hpp"

namespace tcsolve::cuda::detail {

/// The bytes of a production product's key: the arguments, the options that shape its launches,
/// the workspace's address and the stream (plain data, zero-filled before it is set, so that
/// padding compares equal).
struct ProductKey {
  int variant, ta, tb, m, n, k, lda, ldb, ldc;
  unsigned alpha_bits, beta_bits;
  const void *A, *B, *C, *alpha_device, *beta_device, *workspace, *auto_tf32_needed;
  long long stride_a, stride_b, stride_c;
  const void *a_array, *b_array, *c_array;
  int count, split_count, split_length, auto_on_device, tf32_chunk, shifts_first, max_blocks, tile_blocks;
  cudaStream_t stream;
};

/// Fills a zeroed ProductKey from the call.
ProductKey product_key(Variant variant, const GemmArgs& g, const void* workspace, int tf32_chunk, bool shifts_first);

class LaunchGraphs : public Context::Attachment {
 public:
  /// Graphs kept per context (the least recently used beyond it are destroyed: an instance still
  /// running is freed when it finishes, per cudaGraphExecDestroy).
  static constexpr std::size_t kCapacity = 4096;

  /// The cache of `ctx`, made on first use.
  static LaunchGraphs& of(Context::Impl& ctx);
  ~LaunchGraphs() override;

  /// Enqueues `launches` (which launch on ctx.stream and must not synchronize) on ctx.stream:
  /// directly, or captured into a graph, or by the cached graph of `key`. Returns true when the
  /// kernels ran from a graph. The caller's stream being captured: directly.
  bool run(Context::Impl& ctx, const ProductKey& key, const std::function<void()>& launches);

 private:
  struct Entry {
    cudaGraphExec_t exec = nullptr;
    std::list<std::string>::iterator age;
  };
  /// Captures `launches` into a graph and instantiates it; nullptr (the error cleared) where
  /// CUDA refuses, and then the caller launches directly.
  cudaGraphExec_t capture(Context::Impl& ctx, const std::function<void()>& launches);

  std::unordered_map<std::string, Entry> graphs_;
  std::list<std::string> ages_;            ///< keys, most recently used first
  std::unordered_set<std::string> seen_;   ///< keys met once (cleared past kCapacity entries)
  cudaStream_t capture_stream_ = nullptr;  ///< on the context's device, made on first capture
};

}  // namespace tcsolve::cuda::detail
