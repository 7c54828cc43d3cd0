// The story every intercepting entry point tells, once: decide (policy.hpp), log (journal.hpp),
// then run the product on the handle's tcsolve context (product.hpp) or forward the call to the
// caller's cuBLAS unchanged. A product the hook took but could not enqueue (a CUDA error) is
// forwarded too, with the error as its logged reason: no C++ exception leaves an entry point.
#pragma once

#include <cublas_api.h>

#include <functional>

#include "policy.hpp"
#include "product.hpp"

namespace tcsolve::hook {

struct Call {
  Request request;
  Operands operands;
};

/// Serves `call` for `handle` on `stream`; `forward` makes the original call.
cublasStatus_t serve(const void* handle, CUstream_st* stream, const Call& call,
                     const std::function<cublasStatus_t()>& forward);

/// Runs an entry point's body; no C++ exception leaves it: one thrown before serve() (an
/// allocation) fails the call with CUBLAS_STATUS_INTERNAL_ERROR.
template <typename F>
cublasStatus_t guarded(F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return CUBLAS_STATUS_INTERNAL_ERROR;
  }
}

/// The status returned for a function the caller's library lacks, said on stderr.
cublasStatus_t missing(const char* function);

}  // namespace tcsolve::hook
