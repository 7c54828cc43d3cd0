// The C API's handle (struct tcsolveContext of tcsolve.h) and the one place where C++ exceptions
// become status codes: every entry point runs its body through guarded().
#pragma once

#include <new>
#include <string>
#include <utility>

#include "last_solve.hpp"
#include "tcsolve.h"
#include "tcsolve/gemm/context.hpp"
#include "tcsolve/gemm/error.hpp"
#include "tcsolve/gemm/variant.hpp"

/// What a handle holds: its backend (resolved: cpu or cuda), the device context its cuda work
/// runs in (the stream of tcsolveSetStream, nullptr by default: the legacy default stream; the
/// library's handles and workspaces, made on first use), the message of its last failure and
/// the record of its last solve (last_solve.hpp).
struct tcsolveContext {
  tcsolve::Backend backend = tcsolve::Backend::cpu;
  tcsolve::cuda::Context context;
  std::string last_error;
  tcsolve::capi::LastSolve last_solve;
};

namespace tcsolve::capi {

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
/// its message kept: InvalidInput -> INVALID_VALUE, Unavailable -> NOT_SUPPORTED, CudaError ->
/// CUDA_ERROR, std::bad_alloc -> ALLOC_FAILED, anything else -> INTERNAL_ERROR.
template <class Body>
tcsolveStatus_t guarded(tcsolveContext* handle, const char* function, Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (const InvalidInput& e) {
    return fail(handle, TCSOLVE_STATUS_INVALID_VALUE, function, e.what());
  } catch (const Unavailable& e) {
    return fail(handle, TCSOLVE_STATUS_NOT_SUPPORTED, function, e.what());
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
