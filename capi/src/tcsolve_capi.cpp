// The C API (tcsolve.h, docs/architecture.md "C API") over tcsolve::gemm and tcsolve::solver: the
// handle and the registry of live handles, tcsolveInterrupt, status strings, variant names,
// tcsolveSgemm, tcsolveDgesv, and factor once / solve many (tcsolveDgetrf, tcsolveDgetrs: cpu
// handles for now); argument checks in BLAS's manner (arguments.hpp: the message names the
// argument; nothing is touched), the cpu path on host pointers, the cuda path through
// cuda_path.hpp. Every entry point returns a status; no exception leaves this file (context.hpp,
// guarded). The extensions live beside it: the last solve's record (last_solve.cpp), the variant
// table (variant_table.cpp), K-means (kmeans.cpp).
#include "tcsolve.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cstring>
#include <cstddef>
#include <iterator>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "arguments.hpp"
#include "context.hpp"
#include "cuda_path.hpp"
#include "solve_params.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/version.h"

namespace tcsolve::capi {

std::string& message_without_handle() {
  thread_local std::string message;
  return message;
}

namespace {

/// The registry of live handles: slots holding the live handles' addresses (nullptr: free), in
/// chunks linked once and never freed, so that a lookup is atomic loads only (async-signal-safe)
/// and a slot can be filled or emptied by compare-and-swap while others read.
struct HandleChunk {
  static constexpr int kSlots = 64;
  std::atomic<tcsolveContext*> slots[kSlots] = {};
  std::atomic<HandleChunk*> next{nullptr};
};
HandleChunk first_chunk;  // zero-initialized before any code runs: no initialization order to mind

}  // namespace

void register_handle(tcsolveContext* h) {
  for (HandleChunk* chunk = &first_chunk;;) {
    for (auto& slot : chunk->slots) {
      tcsolveContext* empty = nullptr;
      if (slot.load(std::memory_order_relaxed) == nullptr && slot.compare_exchange_strong(empty, h)) return;
    }
    HandleChunk* next = chunk->next.load();
    if (!next) {
      auto* fresh = new HandleChunk;  // kept for the life of the process (lookups may be reading)
      if (chunk->next.compare_exchange_strong(next, fresh))
        next = fresh;
      else
        delete fresh;  // another thread linked one first: `next` is that one
    }
    chunk = next;
  }
}

bool unregister_handle(tcsolveContext* h) noexcept {
  for (HandleChunk* chunk = &first_chunk; chunk; chunk = chunk->next.load())
    for (auto& slot : chunk->slots) {
      tcsolveContext* expected = h;
      if (slot.load(std::memory_order_relaxed) == h && slot.compare_exchange_strong(expected, nullptr)) return true;
    }
  return false;
}

bool handle_live(const tcsolveContext* h) noexcept {
  if (!h) return false;
  for (const HandleChunk* chunk = &first_chunk; chunk; chunk = chunk->next.load())
    for (const auto& slot : chunk->slots)
      if (slot.load() == h) return true;
  return false;
}

namespace {

// The int variant values of the C API are tcsolve::Variant's: the table lists them in order.
constexpr bool variants_in_order() {
  for (std::size_t i = 0; i < kVariants.size(); ++i)
    if (static_cast<std::size_t>(kVariants[i].variant) != i) return false;
  return true;
}
static_assert(variants_in_order(), "kVariants must list tcsolve::Variant in enum order");

Op operation_argument(const char* name, tcsolveOperation_t op) {
  if (op == TCSOLVE_OP_N) return Op::n;
  if (op == TCSOLVE_OP_T) return Op::t;
  throw InvalidInput(std::string(name) + ": " + std::to_string(static_cast<int>(op)) +
                     " is not TCSOLVE_OP_N or TCSOLVE_OP_T");
}

/// C = beta C on the host (beta == 0: C set to 0, not read; beta == 1: untouched).
void host_scale(int m, int n, float beta, float* C, int ldc) {
  if (beta == 1.0f) return;
  for (int j = 0; j < n; ++j) {
    float* c = C + static_cast<std::ptrdiff_t>(j) * ldc;
    for (int i = 0; i < m; ++i) c[i] = beta == 0.0f ? 0.0f : beta * c[i];
  }
}

/// The rows x cols matrix at p (column-major, or row-major: (i, j) at p[i ld + j]) into m:
/// column by column, or, row-major, by 64 x 64 tiles, so that both the reads along p's rows and
/// the writes along m's columns stay in cache (an element-by-element transposing loop took
/// seconds at n = 16384, one cache miss per element).
void read_matrix(const double* p, std::int64_t rows, std::int64_t cols, std::int64_t ld, bool row_major,
                 Eigen::MatrixXd& m) {
  m.resize(rows, cols);
  if (!row_major) {
    for (std::int64_t j = 0; j < cols; ++j)
      std::copy(p + j * ld, p + j * ld + rows, m.data() + j * rows);
    return;
  }
  constexpr std::int64_t kTile = 64;
  for (std::int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (std::int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (std::int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
        for (std::int64_t j = j0; j < std::min(cols, j0 + kTile); ++j) m(i, j) = p[i * ld + j];
}

/// m into the matrix at p (laid out as read_matrix reads it), by the same tiles.
void write_matrix(const Eigen::MatrixXd& m, std::int64_t ld, bool row_major, double* p) {
  const std::int64_t rows = m.rows(), cols = m.cols();
  if (!row_major) {
    for (std::int64_t j = 0; j < cols; ++j) std::copy(m.data() + j * rows, m.data() + (j + 1) * rows, p + j * ld);
    return;
  }
  constexpr std::int64_t kTile = 64;
  for (std::int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (std::int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (std::int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
        for (std::int64_t j = j0; j < std::min(cols, j0 + kTile); ++j) p[i * ld + j] = m(i, j);
}

/// tcsolveDgesv on host pointers: the system copied into FP64 column-major matrices, solved by
/// tcsolve::solve (as `tcsolve solve` does), X written back.
SolveResult solve_host(const SolveOptions& options, bool row_major, std::int64_t n, std::int64_t nrhs,
                       const double* A, std::int64_t lda, const double* B, std::int64_t ldb, double* X,
                       std::int64_t ldx) {
  LinearSystem sys;
  read_matrix(A, n, n, lda, row_major, sys.A);
  read_matrix(B, n, nrhs, ldb, row_major, sys.b);
  sys.b_is_vector = nrhs == 1;
  SolveResult r = solve(sys, options);
  write_matrix(r.x, ldx, row_major, X);
  return r;
}

}  // namespace

tcsolveSolveParams_t read_params(const tcsolveSolveParams_t* params) {
  tcsolveSolveParams_t p;
  tcsolveSolveParamsDefault(&p);
  if (!params) return p;
  // The ends of the fields a caller may know (tcsolve.h, the layouts): from the first versioned
  // layout (through row_major) to this library's; a later field is copied only when it lies
  // within size, else it keeps its default.
  const std::size_t size = params->size;
  constexpr std::size_t kEnds[] = {offsetof(tcsolveSolveParams_t, row_major) + sizeof(int),
                                   offsetof(tcsolveSolveParams_t, estimate_condition) + sizeof(int),
                                   offsetof(tcsolveSolveParams_t, fp64_below) + sizeof(int),
                                   offsetof(tcsolveSolveParams_t, rbt_window) + sizeof(int),
                                   offsetof(tcsolveSolveParams_t, rbt_seed) + sizeof(std::uint64_t),
                                   sizeof(tcsolveSolveParams_t)};  // then cuda_plan, gemm_kernels
  if (std::find(std::begin(kEnds), std::end(kEnds), size) == std::end(kEnds))
    throw InvalidInput("params->size: " + std::to_string(size) + " is not the size of a tcsolveSolveParams_t layout (" +
                       std::to_string(kEnds[0]) + " to " + std::to_string(sizeof(tcsolveSolveParams_t)) +
                       " bytes; set it with tcsolveSolveParamsDefault before setting fields)");
  auto copy = [&](auto member) {
    if (reinterpret_cast<const char*>(&(params->*member)) + sizeof(params->*member) <=
        reinterpret_cast<const char*>(params) + size)
      p.*member = params->*member;
  };
  copy(&tcsolveSolveParams_t::variant);
  copy(&tcsolveSolveParams_t::refinement);
  copy(&tcsolveSolveParams_t::pivoting);
  copy(&tcsolveSolveParams_t::max_iterations);
  copy(&tcsolveSolveParams_t::fallback);
  copy(&tcsolveSolveParams_t::block_size);
  copy(&tcsolveSolveParams_t::row_major);
  copy(&tcsolveSolveParams_t::estimate_condition);
  copy(&tcsolveSolveParams_t::fp64_below);
  copy(&tcsolveSolveParams_t::rbt_window);
  copy(&tcsolveSolveParams_t::rbt_seed);
  copy(&tcsolveSolveParams_t::cuda_plan);
  copy(&tcsolveSolveParams_t::gemm_kernels);
  return p;
}

/// The solver's options from the C parameters.
SolveOptions solve_options(const tcsolveSolveParams_t& p, Backend backend) {
  SolveOptions o;
  o.backend = backend;
  o.variant = variant_argument("params->variant", p.variant);
  switch (p.refinement) {
    case 0: o.refinement = Refinement::classical; break;
    case 1: o.refinement = Refinement::gmres; break;
    case 2: o.refinement = Refinement::auto_; break;
    default:
      throw InvalidInput("params->refinement: " + std::to_string(p.refinement) +
                         " is not 0 (classical), 1 (gmres) or 2 (auto)");
  }
  if (p.pivoting == 1) o.pivoting = Pivoting::rbt;
  if (p.pivoting == 2) o.pivoting = Pivoting::auto_;
  if (p.pivoting == 3) o.pivoting = Pivoting::beam;
  if (p.pivoting < 0 || p.pivoting > 3)
    throw InvalidInput("params->pivoting: " + std::to_string(p.pivoting) +
                       " is not 0 (partial), 1 (rbt), 2 (auto) or 3 (beam)");
  nonnegative("params->max_iterations", p.max_iterations);
  o.max_iterations = p.max_iterations;
  if (p.fallback != 0 && p.fallback != 1)
    throw InvalidInput("params->fallback: " + std::to_string(p.fallback) + " is not 0 or 1");
  o.fallback = p.fallback == 1;
  nonnegative("params->block_size", p.block_size);
  o.block_size = p.block_size;
  if (p.row_major != 0 && p.row_major != 1)
    throw InvalidInput("params->row_major: " + std::to_string(p.row_major) + " is not 0 or 1");
  if (p.estimate_condition < 0 || p.estimate_condition > 2)
    throw InvalidInput("params->estimate_condition: " + std::to_string(p.estimate_condition) +
                       " is not 0 (never), 1 (always) or 2 (auto)");
  o.condition_estimate = p.estimate_condition == 0   ? ConditionEstimate::never
                         : p.estimate_condition == 1 ? ConditionEstimate::always
                                                     : ConditionEstimate::automatic;
  if (p.fp64_below < kFp64BelowDefault)
    throw InvalidInput("params->fp64_below: " + std::to_string(p.fp64_below) +
                       " is not -1 (the backend's default), 0 (never) or an order n");
  o.fp64_below = p.fp64_below;
  if (p.rbt_window != 0 && (p.rbt_window < 64 || p.rbt_window > 256))
    throw InvalidInput("params->rbt_window: " + std::to_string(p.rbt_window) + " is not 0 or in 64..256");
  o.rbt_window = p.rbt_window;
  o.rbt_seed = p.rbt_seed;
  if (p.cuda_plan != nullptr) {
    try {
      set_plan_fields(o.cuda_plan, p.cuda_plan);
    } catch (const InvalidInput& e) {
      throw InvalidInput("params->cuda_plan: " + std::string(e.what()));
    }
  }
  if (p.gemm_kernels < 0 || p.gemm_kernels > 2)
    throw InvalidInput("params->gemm_kernels: " + std::to_string(p.gemm_kernels) +
                       " is not 0 (automatic), 1 (wgmma) or 2 (mma)");
  o.gemm.cuda_kernels = static_cast<CudaKernels>(p.gemm_kernels);
  return o;
}

void fill_info(const SolveResult& r, tcsolveSolveInfo_t* info) {
  if (!info) return;
  info->converged = r.converged ? 1 : 0;
  info->iterations = r.iterations;
  info->fallback_used = r.fallback_used ? 1 : 0;
  info->resolved_variant = static_cast<int>(r.resolved_variant);
  info->backward_error = r.backward_error;
  info->condition_estimate = r.condition_estimate.value_or(-1.0);
}

tcsolveStatus_t solve_status(tcsolveContext* h, const char* function, const SolveResult& r) {
  if (r.converged) return TCSOLVE_STATUS_SUCCESS;
  const std::string why = "did not converge (backward error " + number(r.backward_error) + ")" +
                          (r.note.empty() ? "" : ": " + r.note);
  return fail(h, TCSOLVE_STATUS_NOT_CONVERGED, function, why.c_str());
}

}  // namespace tcsolve::capi

/// What tcsolveDgetrf returns (tcsolve.h): the factorization (none when n = 0), the handle that
/// made it (whose interrupt flag the factorization's options point to), the order, the layout of
/// B and X, and the variant asked for (a quick return's info).
struct tcsolveFactorization {
  tcsolveContext* handle = nullptr;
  std::int64_t n = 0;
  bool row_major = false;
  int variant = 0;
  std::optional<tcsolve::Factorization> factors;
};

using namespace tcsolve;
using namespace tcsolve::capi;

namespace {

/// The rows x cols matrix at p (host or device memory on a cuda handle; column-major, or
/// row-major: its transpose stored column-major) into the host matrix m, by copy_rows.
void host_copy(tcsolveContext* h, const double* p, std::int64_t rows, std::int64_t cols, std::int64_t ld,
               bool row_major, Eigen::MatrixXd& m) {
  const std::int64_t inner = row_major ? cols : rows, outer = row_major ? rows : cols;
  Eigen::MatrixXd packed(inner, outer);
  const std::size_t width = static_cast<std::size_t>(inner) * sizeof(double);
  copy_rows(h->context, packed.data(), width, p, static_cast<std::size_t>(ld) * sizeof(double), width,
            static_cast<std::size_t>(outer));
  if (row_major)
    read_matrix(packed.data(), rows, cols, inner, true, m);
  else
    m = std::move(packed);
}

/// The host matrix m to X (host or device memory), laid out as host_copy reads.
void write_back(tcsolveContext* h, const Eigen::MatrixXd& m, std::int64_t ld, bool row_major, double* X) {
  Eigen::MatrixXd packed(row_major ? m.cols() : m.rows(), row_major ? m.rows() : m.cols());
  write_matrix(m, packed.rows(), row_major, packed.data());
  const std::size_t width = static_cast<std::size_t>(packed.rows()) * sizeof(double);
  copy_rows(h->context, X, static_cast<std::size_t>(ld) * sizeof(double), packed.data(), width, width,
            static_cast<std::size_t>(packed.cols()));
}

}  // namespace

extern "C" {

tcsolveStatus_t tcsolveCreate(tcsolveHandle_t* handle, tcsolveBackend_t backend) {
  return guarded(nullptr, "tcsolveCreate", [&] {
    not_null("handle", handle);
    *handle = nullptr;
    Backend b = Backend::automatic;
    switch (backend) {
      case TCSOLVE_BACKEND_AUTO: b = resolve_backend(Backend::automatic); break;
      case TCSOLVE_BACKEND_CPU: b = Backend::cpu; break;
      case TCSOLVE_BACKEND_CUDA: b = Backend::cuda; break;
      default:
        throw InvalidInput("backend: " + std::to_string(static_cast<int>(backend)) +
                           " is not TCSOLVE_BACKEND_AUTO, _CPU or _CUDA");
    }
    if (b == Backend::cuda && !cuda::device_available()) {
#if defined(TCSOLVE_HAVE_CUDA)
      throw Unavailable("backend cuda: no usable CUDA device (compute capability 7.0 or newer) is present");
#else
      throw Unavailable("backend cuda: this build of tcsolve has no CUDA backend");
#endif
    }
    auto h = std::make_unique<tcsolveContext>();
    h->backend = b;
    register_handle(h.get());
    *handle = h.release();
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolveDestroy(tcsolveHandle_t handle) {
  if (!handle) return TCSOLVE_STATUS_SUCCESS;
  if (!unregister_handle(handle)) return fail(nullptr, TCSOLVE_STATUS_INVALID_VALUE, "tcsolveDestroy", kNotLive);
  delete handle;
  return TCSOLVE_STATUS_SUCCESS;
}

tcsolveStatus_t tcsolveInterrupt(tcsolveHandle_t handle) {
  // atomic loads and one store: nothing that allocates or locks (a signal handler may call it),
  // so no message is kept
  if (!handle_live(handle)) return TCSOLVE_STATUS_INVALID_VALUE;
  handle->interrupt.store(true);
  return TCSOLVE_STATUS_SUCCESS;
}

tcsolveStatus_t tcsolveSetStream(tcsolveHandle_t handle, void* cuda_stream) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveSetStream")) return s;
  handle->context.set_stream(static_cast<CUstream_st*>(cuda_stream));
  return TCSOLVE_STATUS_SUCCESS;
}

tcsolveStatus_t tcsolveGetStream(tcsolveHandle_t handle, void** cuda_stream) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetStream")) return s;
  if (!cuda_stream) return fail(handle, TCSOLVE_STATUS_INVALID_VALUE, "tcsolveGetStream", "cuda_stream: NULL pointer");
  *cuda_stream = handle->context.stream();
  return TCSOLVE_STATUS_SUCCESS;
}

tcsolveStatus_t tcsolveGetBackend(tcsolveHandle_t handle, tcsolveBackend_t* backend) {
  if (const tcsolveStatus_t s = check_handle(handle, "tcsolveGetBackend")) return s;
  if (!backend) return fail(handle, TCSOLVE_STATUS_INVALID_VALUE, "tcsolveGetBackend", "backend: NULL pointer");
  *backend = handle->backend == Backend::cuda ? TCSOLVE_BACKEND_CUDA : TCSOLVE_BACKEND_CPU;
  return TCSOLVE_STATUS_SUCCESS;
}

const char* tcsolveGetStatusString(tcsolveStatus_t status) {
  switch (status) {
    case TCSOLVE_STATUS_SUCCESS: return "TCSOLVE_STATUS_SUCCESS: success";
    case TCSOLVE_STATUS_INTERNAL_ERROR: return "TCSOLVE_STATUS_INTERNAL_ERROR: internal error";
    case TCSOLVE_STATUS_INVALID_VALUE: return "TCSOLVE_STATUS_INVALID_VALUE: invalid argument or input";
    case TCSOLVE_STATUS_NOT_CONVERGED: return "TCSOLVE_STATUS_NOT_CONVERGED: the solve did not converge";
    case TCSOLVE_STATUS_NOT_SUPPORTED: return "TCSOLVE_STATUS_NOT_SUPPORTED: not available in this build or on this machine";
    case TCSOLVE_STATUS_ALLOC_FAILED: return "TCSOLVE_STATUS_ALLOC_FAILED: memory allocation failed";
    case TCSOLVE_STATUS_CUDA_ERROR: return "TCSOLVE_STATUS_CUDA_ERROR: a CUDA call failed";
    case TCSOLVE_STATUS_INTERRUPTED: return "TCSOLVE_STATUS_INTERRUPTED: the call was interrupted (tcsolveInterrupt)";
  }
  return "unknown tcsolveStatus_t value";
}

const char* tcsolveGetLastErrorMessage(tcsolveHandle_t handle) {
  return handle_live(handle) ? handle->last_error.c_str() : message_without_handle().c_str();
}

const char* tcsolveGetVersion(void) { return TCSOLVE_VERSION_STRING; }

tcsolveStatus_t tcsolveVariantFromName(const char* name, int* variant) {
  return guarded(nullptr, "tcsolveVariantFromName", [&] {
    not_null("name", name);
    not_null("variant", variant);
    *variant = static_cast<int>(parse_variant(name));
    return TCSOLVE_STATUS_SUCCESS;
  });
}

const char* tcsolveVariantName(int variant) {
  if (variant < 0 || static_cast<std::size_t>(variant) >= kVariants.size()) return nullptr;
  return kVariants[static_cast<std::size_t>(variant)].name.data();  // string literals: NUL-terminated
}

tcsolveStatus_t tcsolveSgemm(tcsolveHandle_t h, int variant, tcsolveOperation_t transa, tcsolveOperation_t transb,
                             int64_t m, int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda,
                             const float* B, int64_t ldb, const float* beta, float* C, int64_t ldc) {
  if (const tcsolveStatus_t s = check_handle(h, "tcsolveSgemm")) return s;
  h->interrupt.store(false);  // an interrupt before this call does not stop it
  return guarded(h, "tcsolveSgemm", [&] {
    const Variant v = variant_argument("variant", variant);
    const Op ta = operation_argument("transa", transa), tb = operation_argument("transb", transb);
    nonnegative("m", m);
    nonnegative("n", n);
    nonnegative("k", k);
    leading_dimension("lda", lda, ta == Op::n ? m : k, ta == Op::n ? "m" : "k");
    leading_dimension("ldb", ldb, tb == Op::n ? k : n, tb == Op::n ? "k" : "n");
    leading_dimension("ldc", ldc, m, "m");
    not_null("alpha", alpha);
    not_null("beta", beta);
    if (m == 0 || n == 0) return TCSOLVE_STATUS_SUCCESS;
    if (*beta != 1.0f || (k > 0 && *alpha != 0.0f)) not_null("C", C);
    const bool product = k > 0 && *alpha != 0.0f;
    if (product) {
      not_null("A", A);
      not_null("B", B);
    }
    const int mi = as_int("m", m), ni = as_int("n", n), ki = as_int("k", k);
    const int ldai = as_int("lda", lda), ldbi = as_int("ldb", ldb), ldci = as_int("ldc", ldc);
    const bool on_cuda = h->backend == Backend::cuda;
    if (!product) {
      if (on_cuda) {
        if (*beta != 1.0f) cuda_scale(h->context, mi, ni, *beta, C, ldci);
      } else {
        host_scale(mi, ni, *beta, C, ldci);
      }
      return TCSOLVE_STATUS_SUCCESS;
    }
    if (!available(v, h->backend))
      throw Unavailable("variant " + std::string(to_string(v)) + " is not implemented on the " +
                        std::string(to_string(h->backend)) + " backend");
    if (on_cuda)
      cuda_gemm(h->context, v, ta, tb, mi, ni, ki, *alpha, A, ldai, B, ldbi, *beta, C, ldci);
    else {
      GemmOptions options;
      options.interrupt = &h->interrupt;
      cpu::gemm(v, ta, tb, mi, ni, ki, *alpha, A, ldai, B, ldbi, *beta, C, ldci, options);
    }
    return TCSOLVE_STATUS_SUCCESS;
  });
}

void tcsolveSolveParamsInit(tcsolveSolveParams_t* params, size_t size) {
  if (!params) return;
  const SolveOptions defaults;
  tcsolveSolveParams_t p;
  std::memset(&p, 0, sizeof p);
  p.size = std::min(size, sizeof(tcsolveSolveParams_t));
  p.variant = static_cast<int>(Variant::auto_);
  p.refinement = 0;
  p.pivoting = 0;
  p.max_iterations = 30;
  p.fallback = 1;
  p.block_size = 0;
  p.row_major = 0;
  p.estimate_condition = defaults.condition_estimate == ConditionEstimate::never    ? 0
                         : defaults.condition_estimate == ConditionEstimate::always ? 1
                                                                                    : 2;
  p.fp64_below = defaults.fp64_below;
  p.rbt_window = defaults.rbt_window;
  p.rbt_seed = defaults.rbt_seed;
  p.cuda_plan = nullptr;
  p.gemm_kernels = static_cast<int>(defaults.gemm.cuda_kernels);
  // The caller's struct is `size` bytes (a size that is no layout's end is refused by the solve).
  std::memcpy(params, &p, std::min(size, sizeof p));
}

void(tcsolveSolveParamsDefault)(tcsolveSolveParams_t* params) {
  tcsolveSolveParamsInit(params, offsetof(tcsolveSolveParams_t, rbt_seed) + sizeof(std::uint64_t));
}

tcsolveStatus_t tcsolveDgesv(tcsolveHandle_t h, const tcsolveSolveParams_t* params, int64_t n, int64_t nrhs,
                             const double* A, int64_t lda, const double* B, int64_t ldb, double* X, int64_t ldx,
                             tcsolveSolveInfo_t* info) {
  if (const tcsolveStatus_t s = check_handle(h, "tcsolveDgesv")) return s;
  h->interrupt.store(false);    // an interrupt before this call does not stop it
  h->last_solve = LastSolve{};  // a failure below leaves the record empty
  return guarded(h, "tcsolveDgesv", [&] {
    const tcsolveSolveParams_t p = read_params(params);
    SolveOptions options = solve_options(p, h->backend);
    options.cuda_context = &h->context;
    options.interrupt = &h->interrupt;
    const bool row_major = p.row_major == 1;
    nonnegative("n", n);
    nonnegative("nrhs", nrhs);
    leading_dimension("lda", lda, n, "n");
    leading_dimension("ldb", ldb, row_major ? nrhs : n, row_major ? "nrhs" : "n");
    leading_dimension("ldx", ldx, row_major ? nrhs : n, row_major ? "nrhs" : "n");
    if (n == 0 || nrhs == 0) {
      if (info) *info = tcsolveSolveInfo_t{1, 0, 0, p.variant, 0.0, -1.0};
      return TCSOLVE_STATUS_SUCCESS;
    }
    not_null("A", A);
    not_null("B", B);
    not_null("X", X);
    as_int("n", n);
    as_int("nrhs", nrhs);
    as_int("lda", lda);  // the device path keeps leading dimensions as int (DeviceSystemView)
    as_int("ldb", ldb);
    as_int("ldx", ldx);

    SolveResult r;
    if (h->backend == Backend::cuda) {
      const Strided a{n, n, lda};
      const Strided b = row_major ? Strided{nrhs, n, ldb} : Strided{n, nrhs, ldb};
      const Strided x = row_major ? Strided{nrhs, n, ldx} : Strided{n, nrhs, ldx};
      r = cuda_dgesv(h->context, solve_host, options, row_major, n, nrhs, A, a, B, b, X, x);
    } else {
      r = solve_host(options, row_major, n, nrhs, A, lda, B, ldb, X, ldx);
    }
    h->last_solve = record_solve(r);
    fill_info(r, info);
    return solve_status(h, "tcsolveDgesv", r);
  });
}

tcsolveStatus_t tcsolveDgetrf(tcsolveHandle_t h, const tcsolveSolveParams_t* params, int64_t n, const double* A,
                              int64_t lda, tcsolveFactorization_t* factors) {
  if (const tcsolveStatus_t s = check_handle(h, "tcsolveDgetrf")) return s;
  h->interrupt.store(false);  // an interrupt before this call does not stop it
  return guarded(h, "tcsolveDgetrf", [&] {
    not_null("factors", factors);
    *factors = nullptr;
    const tcsolveSolveParams_t p = read_params(params);
    SolveOptions options = solve_options(p, h->backend);
    options.interrupt = &h->interrupt;
    const bool row_major = p.row_major == 1;
    nonnegative("n", n);
    leading_dimension("lda", lda, n, "n");
    if (h->backend == Backend::cuda) options.cuda_context = &h->context;
    auto f = std::make_unique<tcsolveFactorization>();
    f->handle = h;
    f->n = n;
    f->row_major = row_major;
    f->variant = p.variant;
    if (n > 0) {
      not_null("A", A);
      as_int("n", n);
      as_int("lda", lda);
      Eigen::MatrixXd a;
      if (h->backend == Backend::cuda)  // host or device A: a host copy (the factors are made on the device)
        host_copy(h, A, n, n, lda, row_major, a);
      else
        read_matrix(A, n, n, lda, row_major, a);
      f->factors.emplace(factorize(a, options));
    }
    *factors = f.release();
    return TCSOLVE_STATUS_SUCCESS;
  });
}

tcsolveStatus_t tcsolveDgetrs(tcsolveHandle_t h, tcsolveFactorization_t factors, tcsolveOperation_t trans,
                              int64_t nrhs, const double* B, int64_t ldb, double* X, int64_t ldx,
                              tcsolveSolveInfo_t* info) {
  if (const tcsolveStatus_t s = check_handle(h, "tcsolveDgetrs")) return s;
  h->interrupt.store(false);    // an interrupt before this call does not stop it
  h->last_solve = LastSolve{};  // a failure below leaves the record empty
  return guarded(h, "tcsolveDgetrs", [&] {
    not_null("factors", factors);
    if (factors->handle != h)
      throw InvalidInput("factors: made by tcsolveDgetrf on another handle (solve on that handle)");
    const Transpose t = operation_argument("trans", trans) == Op::t ? Transpose::yes : Transpose::no;
    const std::int64_t n = factors->n;
    const bool row_major = factors->row_major;
    nonnegative("nrhs", nrhs);
    leading_dimension("ldb", ldb, row_major ? nrhs : n, row_major ? "nrhs" : "n");
    leading_dimension("ldx", ldx, row_major ? nrhs : n, row_major ? "nrhs" : "n");
    if (n == 0 || nrhs == 0) {
      if (info) *info = tcsolveSolveInfo_t{1, 0, 0, factors->variant, 0.0, -1.0};
      return TCSOLVE_STATUS_SUCCESS;
    }
    not_null("B", B);
    not_null("X", X);
    as_int("nrhs", nrhs);
    as_int("ldb", ldb);
    as_int("ldx", ldx);
    Eigen::MatrixXd b;
    const bool cuda = h->backend == Backend::cuda;
    if (cuda)
      host_copy(h, B, n, nrhs, ldb, row_major, b);
    else
      read_matrix(B, n, nrhs, ldb, row_major, b);
    const SolveResult r = solve(*factors->factors, b, t);
    if (cuda)
      write_back(h, r.x, ldx, row_major, X);
    else
      write_matrix(r.x, ldx, row_major, X);
    h->last_solve = record_solve(r);
    fill_info(r, info);
    return solve_status(h, "tcsolveDgetrs", r);
  });
}

tcsolveStatus_t tcsolveFactorizationDestroy(tcsolveFactorization_t factors) {
  delete factors;
  return TCSOLVE_STATUS_SUCCESS;
}

}  // extern "C"
