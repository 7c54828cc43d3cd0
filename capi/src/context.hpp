// The C API's handle (struct tcsolveContext of tcsolve.h), the registry of live handles (which
// entry points consult before touching one) and the one place where C++ exceptions become status
// codes: every entry point runs its body through guarded().
#pragma once

#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "last_solve.hpp"
#include "tcsolve.h"
#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::runtime {
class DeviceGroup;
}

/// What a handle holds: its backend (resolved: cpu or cuda), the device context its cuda work
/// runs in (the stream of tcsolveSetStream, nullptr by default: the legacy default stream; the
/// library's handles and workspaces, made on first use), the message of its last failure and
/// the record of its last solve (last_solve.hpp), and the flag tcsolveInterrupt sets (cleared
/// when a call that polls it starts; passed on as SolveOptions::interrupt and
/// GemmOptions::interrupt). A handle of tcsolveCreateDistributed (tcsolve_mpi.h) also holds its
/// group (the ranks of the caller's communicator, duplicated) and grid; others hold no group.
struct tcsolveContext {
  tcsolve::Backend backend = tcsolve::Backend::cpu;
  tcsolve::cuda::Context context;
  std::string last_error;
  tcsolve::capi::LastSolve last_solve;
  std::atomic<bool> interrupt{false};
  std::shared_ptr<tcsolve::runtime::DeviceGroup> group;
  int nprow = 1, npcol = 1;
};

namespace tcsolve::capi {

/// The registry of live handles (tcsolve_capi.cpp): tcsolveCreate adds a handle, tcsolveDestroy
/// removes it, and every entry point asks handle_live() before it reads *h, so a destroyed handle
/// (or a pointer tcsolveCreate never returned) is refused without its memory being read. Lock-free
/// (atomic pointers in slots that are never freed), so that tcsolveInterrupt may ask from a signal
/// handler.
void register_handle(tcsolveContext* h);
/// Removes `h`; false when it was not live (already destroyed, or never created): then nothing is
/// freed. Of two threads destroying the same handle, exactly one gets true.
bool unregister_handle(tcsolveContext* h) noexcept;
/// Whether `h` is a handle tcsolveCreate returned that tcsolveDestroy has not destroyed since.
/// Never reads *h. An address freed and then reused by a later tcsolveCreate is that new handle.
bool handle_live(const tcsolveContext* h) noexcept;

/// The message for a handle that is not live.
inline constexpr const char* kNotLive =
    "handle: not a live tcsolve handle (destroyed by tcsolveDestroy, or not made by tcsolveCreate)";

/// The message of the last failure on this thread of a call without a handle (tcsolveCreate,
/// tcsolveVariantFromName, a NULL handle): tcsolveGetLastErrorMessage(NULL). Like errno, the
/// only per-thread state of the C API; nothing of CUDA lives here.
std::string& message_without_handle();

/// Records `message` for `handle` (nullptr: message_without_handle()) and returns `status`.
/// Never throws: a message that cannot be stored is dropped.
inline tcsolveStatus_t fail(tcsolveContext* handle, tcsolveStatus_t status, const char* function,
                            const char* message) noexcept {
  try {
    std::string& to = handle ? handle->last_error : message_without_handle();
    to = std::string(function) + ": " + message;
  } catch (...) {
  }
  return status;
}

/// Runs body() (which returns a status or throws) with every exception mapped to a status and
/// its message kept: InvalidInput -> INVALID_VALUE, Unavailable -> NOT_SUPPORTED, Interrupted ->
/// INTERRUPTED, CudaError -> CUDA_ERROR, std::bad_alloc -> ALLOC_FAILED, anything else ->
/// INTERNAL_ERROR. A handle that is not live (handle_live): INVALID_VALUE, body not run, the
/// message kept as for a NULL handle.
template <class Body>
tcsolveStatus_t guarded(tcsolveContext* handle, const char* function, Body&& body) noexcept {
  if (handle && !handle_live(handle)) return fail(nullptr, TCSOLVE_STATUS_INVALID_VALUE, function, kNotLive);
  try {
    return std::forward<Body>(body)();
  } catch (const InvalidInput& e) {
    return fail(handle, TCSOLVE_STATUS_INVALID_VALUE, function, e.what());
  } catch (const Unavailable& e) {
    return fail(handle, TCSOLVE_STATUS_NOT_SUPPORTED, function, e.what());
  } catch (const Interrupted& e) {
    return fail(handle, TCSOLVE_STATUS_INTERRUPTED, function, e.what());
  } catch (const CudaError& e) {
    return fail(handle, TCSOLVE_STATUS_CUDA_ERROR, function, e.what());
  } catch (const std::bad_alloc&) {
    return fail(handle, TCSOLVE_STATUS_ALLOC_FAILED, function, "out of host memory");
  } catch (const std::exception& e) {
    return fail(handle, TCSOLVE_STATUS_INTERNAL_ERROR, function, e.what());
  } catch (...) {
    return fail(handle, TCSOLVE_STATUS_INTERNAL_ERROR, function, "unknown exception");
  }
}

}  // namespace tcsolve::capi
