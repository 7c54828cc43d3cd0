// Decide, log, run or forward (serve.hpp).
#include "serve.hpp"

#include <exception>
#include <mutex>
#include <string>

#include "journal.hpp"
#include "state.hpp"

namespace tcsolve::hook {

cublasStatus_t missing(const char* function) {
  Journal::warn(std::string("the caller's cuBLAS has no ") + function +
                "; the call fails with CUBLAS_STATUS_NOT_INITIALIZED");
  return CUBLAS_STATUS_NOT_INITIALIZED;
}

namespace {

/// The original call, marked as inside the hook: should the caller's cuBLAS reach one of our
/// entry points from within (one exported function calling another), that call goes straight
/// through, neither logged nor taken twice.
cublasStatus_t forward_inside(const std::function<cublasStatus_t()>& forward) {
  const InsideHook inside;
  return forward();
}

}  // namespace

cublasStatus_t serve(const void* handle, CUstream_st* stream, const Call& call,
                     const std::function<cublasStatus_t()>& forward) {
  if (InsideHook::active()) return forward();  // our own fallback: straight to cuBLAS
  const Request& r = call.request;
  CallRecord record;
  record.function = entry_name(r.entry, r.is64);
  record.ta = r.ta, record.tb = r.tb;
  record.m = r.m, record.n = r.n, record.k = r.k, record.batch = r.batch;
  record.flops = flops(r);
  record.units = work_units(r);
  try {
    const Decision d = decide(r, config().policy);
    if (!d.intercept) {
      record.reason = d.reason;
      journal().record(record);
      return forward_inside(forward);
    }
    {
      const InsideHook inside;
      HandleState& state = handle_state(handle);
      const std::lock_guard<std::mutex> lock(state.mutex);
      state.context.set_stream(stream);
      record.graph = run_product(state.context, d.variant, call.operands, config().graphs);
    }
    record.intercepted = true;
    record.variant = to_string(d.variant);
    journal().record(record);
    return CUBLAS_STATUS_SUCCESS;
  } catch (const std::exception& e) {
    record.intercepted = false;
    record.reason = std::string("error: ") + e.what();
  } catch (...) {
    record.intercepted = false;
    record.reason = "error: unknown";
  }
  try {
    journal().record(record);
  } catch (...) {
  }
  return forward_inside(forward);
}

}  // namespace tcsolve::hook
