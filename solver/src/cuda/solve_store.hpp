// The small systems' store (SolveStore): device and pinned host memory that the FP64 path of
// small systems (fp64_solve.cpp) takes once per solve from the caller's context instead of a
// cudaMalloc per array (each costs microseconds and each cudaFree waits for the device: at n =
// 200 they were a third of the solve's time beyond dgetrf + dgetrs). Kept by the context,
// grown on demand, released with it; a store past kSolveStoreKeepBytes is freed at the end of
// the solve that needed it. Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <cstddef>

#include "tcsolve/runtime/context.hpp"

namespace tcsolve::cuda {

/// Bytes of device store a context keeps between solves (80 MiB: the FP64 path below n =
/// kFp64BelowCuda = 3072 needs about 8 n^2 bytes, 72 MiB at 3071).
inline constexpr std::size_t kSolveStoreKeepBytes = std::size_t{80} << 20;

/// The store of one context. One solve uses it at a time (a context serves one thread), and a
/// solve returns with its stream idle, so the next solve may reuse the memory at once.
class SolveStore : public Context::Attachment {
 public:
  /// The context's store, made on the first call (nothing allocated yet).
  static SolveStore& of(Context& ctx);
  ~SolveStore() override;

  /// `bytes` of device memory (256-byte aligned) on the context's device, valid until the next
  /// call or release_large(); grown by cudaMalloc only when a solve needs more than before.
  void* device(std::size_t bytes);
  /// `bytes` of pinned host memory for the read-backs (cudaMallocHost, grown likewise).
  void* host(std::size_t bytes);
  /// Frees the device memory if it is past kSolveStoreKeepBytes (the end of a large solve; the
  /// stream must be idle).
  void release_large() noexcept;

 private:
  int device_ = 0;
  void* device_data_ = nullptr;
  std::size_t device_bytes_ = 0;
  void* host_data_ = nullptr;
  std::size_t host_bytes_ = 0;
};

/// The store's lease for one solve: device(), host(), then release_large() at the end (also
/// when the solve throws).
class SolveStoreLease {
 public:
  explicit SolveStoreLease(Context& ctx) : store_(SolveStore::of(ctx)) {}
  ~SolveStoreLease() { store_.release_large(); }
  SolveStoreLease(const SolveStoreLease&) = delete;
  SolveStoreLease& operator=(const SolveStoreLease&) = delete;
  SolveStore& operator*() const { return store_; }
  SolveStore* operator->() const { return &store_; }

 private:
  SolveStore& store_;
};

/// Carves typed arrays out of one block of memory in order, each aligned to 256 bytes.
class Carver {
 public:
  explicit Carver(void* base = nullptr) : base_(static_cast<char*>(base)) {}
  /// The next `count` elements of T (with a null base: only counts the bytes).
  template <typename T>
  T* take(std::size_t count) {
    T* p = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + used_);
    used_ += (count * sizeof(T) + 255) / 256 * 256;
    return p;
  }
  std::size_t bytes() const { return used_; }

 private:
  char* base_;
  std::size_t used_ = 0;
};

}  // namespace tcsolve::cuda
