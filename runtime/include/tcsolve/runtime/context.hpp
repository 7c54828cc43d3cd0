// The device-bound context of tcsolve::runtime: everything CUDA work needs, owned by the caller.
//
// A Context holds the stream all its work is enqueued on (the caller's; nullptr is the legacy
// default stream), the device it is bound to, the library handles (cuBLAS, created on first
// use), the workspace policy (cached and grown on demand, or stream-ordered per call:
// Workspaces), the SM budget of the persistent GEMM kernels, and state other tcsolve libraries
// attach to it (gemm's device workspaces, the solver's cuSOLVER handle and look-ahead streams).
// The GEMM phase timings (set_time_phases) are the one gemm-specific setting kept here. Nothing
// of this is global: two contexts on two threads run at the same time and give bitwise the
// results of running one after the other.
//
// Rules (as for a cuBLAS handle):
//   - one thread uses a context at a time; give each thread its own;
//   - work is ordered on stream(); a function that returns a host result (a GemmInfo's resolved
//     auto choice, a download) waits for that stream only, never for the whole device;
//   - set_stream() does not wait for the old stream: order the two yourself if they share data;
//   - destroy a context only when its stream has finished the work it enqueued (the destructor
//     frees the workspaces; cudaFree waits for the device).
// Without CUDA in the build a Context can be made (its stream is nullptr) and every CUDA entry
// point taking it throws Unavailable.
#pragma once

#include <memory>

struct CUstream_st;           // cudaStream_t is CUstream_st*
struct CUmemPoolHandle_st;   // cudaMemPool_t is CUmemPoolHandle_st*

namespace tcsolve::cuda {

class Context {
 public:
  /// A context on `stream` of the current device (nullptr: the legacy default stream). Makes
  /// nothing on the device until it is used, so it never throws for a missing device here.
  explicit Context(CUstream_st* stream = nullptr);

  /// The CUDA device the context is bound to: the one current when it was made (0 without a
  /// device). cuda::gemm, nearest_columns, scale_matrix and the cuda solver make it current for
  /// their duration and restore the caller's after, so a context serves any caller thread
  /// whatever device is current there. Its stream must belong to this device.
  int device() const;
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// The stream this context enqueues on.
  CUstream_st* stream() const;
  /// Enqueues later work on `stream`; the handles are rebound on their next use.
  void set_stream(CUstream_st* stream);

  /// SM budget: at most this many blocks of the persistent (Hopper) GEMM kernels, so that work
  /// on another stream finds free SMs (the solver's panels). 0, the default: one block per SM.
  int max_blocks() const;
  void set_max_blocks(int blocks);
  /// A block per output tile instead (set: max_blocks is ignored): the hardware hands the tiles
  /// out as SMs come free, so that a product beside another stream's long kernels runs on the
  /// SMs that stream leaves, and on all of them once it is done, where a persistent grid's
  /// blocks each wait, with their tiles, for an SM of their own. Off by default.
  bool tile_blocks() const;
  void set_tile_blocks(bool on);

  /// Diagnostics for benchmarks: the production GEMM times its phases (scaling, split, main
  /// kernel) with events, waiting after each, into GemmInfo::phases. Off by default.
  bool time_phases() const;
  void set_time_phases(bool on);

  /// Where the GEMM workspaces (split operands, scaling exponents, FP64 copies) come from.
  enum class Workspaces {
    /// The default: device arrays kept by the context and grown with cudaMalloc when a call
    /// needs more (cudaFree of the smaller one waits for the device). Fastest for a program
    /// that owns the device.
    cached,
    /// Per call, stream-ordered: cudaMallocAsync on stream() before the call's kernels and
    /// cudaFreeAsync after them. No cudaMalloc, cudaFree or host wait, so calls may be captured
    /// into a CUDA graph (the allocations become the graph's own) and run beside another
    /// program's allocations (the cuBLAS drop-in). Outside a capture they come from
    /// memory_pool() when one is set, else from the device's current pool.
    stream_ordered,
  };
  Workspaces workspaces() const;
  void set_workspaces(Workspaces mode);
  /// The pool stream-ordered workspaces come from outside a capture (nullptr, the default: the
  /// device's current pool). Not owned: it must outlive the context's work.
  CUmemPoolHandle_st* memory_pool() const;
  void set_memory_pool(CUmemPoolHandle_st* pool);

  /// Waits for the work enqueued on stream() so far; throws CudaError if some of it failed.
  void synchronize() const;

  /// State another library keeps per context, made on its first use and destroyed with the
  /// context (before the context's own handles and workspaces). `key` is the address of
  /// something the owner defines once.
  struct Attachment {
    virtual ~Attachment() = default;
  };
  /// The attachment under `key`, or nullptr.
  Attachment* attachment(const void* key) const;
  /// Stores `value` under `key` (replacing any) and returns it.
  Attachment& attach(const void* key, std::unique_ptr<Attachment> value);

  /// The backend's own state (handles, workspaces): tcsolve/runtime/context_impl.hpp (build tree
  /// only) in a CUDA build, runtime/src/cuda_stub/context_impl.hpp without CUDA.
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tcsolve::cuda
