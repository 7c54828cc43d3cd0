// The meeting of a process' GPU members before each collective (runtime/src/nccl.cpp): a
// spinning barrier of `count` threads that abort() opens with an Error.
//
// Why: a member's queued collective must wait only for work already queued on the other
// devices, never for another member's host. Without the meeting, one member can queue a
// broadcast that waits for the other member's host to queue its side, while that host waits
// for a lock. CUDA blocks a host that loads a kernel's module lazily (its first launch, or
// cudaFuncSetAttribute) until its device's queue drains, and the lock can be a process-wide one
// that the loading thread holds (PerDeviceOnce's mutex before session 28, or one in a
// library): the two members then wait for each other. Session 28's suspected cause of the
// two-GPU hangs (docs/benchmark-history.md).
//
// Members are busy threads, each on its own GPU: the waiters spin (yielding after a while),
// which costs far less than a futex wake-up per collective. Header-only, without CUDA, so that
// the cpu tests check it (tests/test_rendezvous.cpp).
#pragma once

#include <atomic>
#include <thread>

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::runtime::detail {

class Rendezvous {
 public:
  explicit Rendezvous(int count) : count_(count < 1 ? 1 : count) {}
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  /// Returns once all `count` threads have called it for this round; throws Error once abort()
  /// was called (also to a thread already waiting).
  void arrive_and_wait() {
    if (aborted_.load(std::memory_order_acquire)) throw Error("the group's members were stopped (aborted)");
    const unsigned round = round_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
      // the last one: reset before opening, so that no thread of the next round counts early
      arrived_.store(0, std::memory_order_relaxed);
      round_.fetch_add(1, std::memory_order_release);
      return;
    }
    for (long spins = 0; round_.load(std::memory_order_acquire) == round; ++spins) {
      if (aborted_.load(std::memory_order_acquire)) throw Error("the group's members were stopped (aborted)");
      if (spins > 2000) std::this_thread::yield();
    }
  }

  /// Releases every waiting thread and every later call with an Error.
  void abort() { aborted_.store(true, std::memory_order_release); }

 private:
  const int count_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> round_{0};
  std::atomic<bool> aborted_{false};
};

}  // namespace tcsolve::runtime::detail
