// The drop-in's process-wide state (a preloaded library has no other place for it; the libraries
// it links keep none): the configuration read once from the environment, the journal, the
// per-(handle, device) tcsolve contexts and the per-device memory pools their workspaces come
// from, and the per-thread re-entrancy mark.
//
// Lifetimes: a handle's context is made on its first intercepted call and destroyed when the
// caller destroys the handle (cublasDestroy_v2 / cublasLtDestroy). Nothing CUDA is released at
// process exit (the runtime may already be gone then); the pools live as long as the process.
#pragma once

#include <mutex>

#include "journal.hpp"
#include "settings.hpp"
#include "tcsolve/runtime/context.hpp"

namespace tcsolve::hook {

/// TCSOLVE_HOOK_* parsed on first use.
const Config& config();
/// The log and report (made on first use; reports at exit).
Journal& journal();

/// A cuBLAS or cuBLASLt handle's state on one device: a tcsolve context whose workspaces are
/// stream-ordered allocations from the device's pool, used under `mutex` (cuBLAS allows one
/// handle on several threads at once; a Context is for one thread at a time).
struct HandleState {
  std::mutex mutex;
  cuda::Context context;
};
/// The state of (handle, the current device), made on first use.
HandleState& handle_state(const void* handle);
/// Destroys every state of `handle` (the caller destroys it); waits for nothing.
void forget_handle(const void* handle);

/// Marks the calling thread as inside the hook while it lives: an entry point reached from
/// inside (a fallback calling cuBLAS) forwards at once.
class InsideHook {
 public:
  InsideHook();
  ~InsideHook();
  InsideHook(const InsideHook&) = delete;
  InsideHook& operator=(const InsideHook&) = delete;
  static bool active();
};

}  // namespace tcsolve::hook
