// The look-ahead schedule's tools (blocked_lu.cpp, BlockedLu::run): Handover, the per-block
// hand-over between the LU's two host threads (the panel thread and the update thread);
// StreamEvent, the CUDA event that orders the panel and update streams (lookahead.hpp makes the
// streams). Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <exception>
#include <mutex>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

/// The look-ahead's two host threads hand over per block (the column j where it starts): the
/// panel thread posts `trsm` (U12 of the next block's columns enqueued), the update thread
/// `next` (their update enqueued) and `done` (the whole update enqueued); each waits for the
/// other's post before enqueueing a wait on the matching CUDA event. fail() wakes both for good.
class Handover {
 public:
  enum Kind { trsm, done, kinds };
  void post(Kind k, int j) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      posted_[k] = j;
    }
    changed_.notify_all();
  }
  /// Waits until `k` is posted for block j; false when fail() was called.
  bool wait(Kind k, int j) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return failed_ || posted_[k] >= j; });
    return !failed_;
  }
  /// wait(), rethrowing the other thread's exception (or throwing) if it failed.
  void wait_or_throw(Kind k, int j) {
    if (!wait(k, j)) {
      rethrow();
      throw CudaError("the LU's update thread stopped");
    }
  }
  void fail(std::exception_ptr e) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      failed_ = true;
      if (e && !error_) error_ = e;
    }
    changed_.notify_all();
  }
  void rethrow() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int posted_[kinds] = {-1, -1};
  bool failed_ = false;
  std::exception_ptr error_;
};

/// A CUDA event without timing, for ordering two streams.
class StreamEvent {
 public:
  StreamEvent() { TCSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~StreamEvent() { cudaEventDestroy(e_); }
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  /// Marks the work enqueued on `on` so far.
  void record(cudaStream_t on) { TCSOLVE_CUDA_CHECK(cudaEventRecord(e_, on)); }
  /// `waiter`'s later work waits for the marked work.
  void wait(cudaStream_t waiter) { TCSOLVE_CUDA_CHECK(cudaStreamWaitEvent(waiter, e_, 0)); }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace tcsolve::cuda
