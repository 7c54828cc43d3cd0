// The C API on a cuda handle (cuda_path.hpp): the only file of capi/ that uses CUDA.
//
// The handle owns a tcsolve::cuda::Context (its stream, the cuBLAS/cuSOLVER handles and the
// workspaces): every product, solve and K-means run of the handle runs in it, ordered on its
// stream. Arguments that may be host or device memory are told apart here (on_device).
#include "cuda_path.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"

namespace tcsolve::capi {
namespace {

/// The attributes of `p`; host memory, registered or not, reads as cudaMemoryTypeHost or
/// cudaMemoryTypeUnregistered.
cudaPointerAttributes attributes_of(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError();  // older runtimes fail for unregistered host memory
    attributes.type = cudaMemoryTypeUnregistered;
  }
  return attributes;
}

/// Whether `p` is device (or managed) memory; host memory, registered or not, is not.
bool on_device(const void* p) {
  const cudaMemoryType type = attributes_of(p).type;
  return type == cudaMemoryTypeDevice || type == cudaMemoryTypeManaged;
}

/// A strided device matrix packed into host memory (ld = inner), in stream order.
std::vector<double> to_host(cudaStream_t stream, const double* d_src, Strided s) {
  std::vector<double> host(static_cast<std::size_t>(s.inner * s.outer));
  const std::size_t width = static_cast<std::size_t>(s.inner) * sizeof(double);
  TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(host.data(), width, d_src, static_cast<std::size_t>(s.ld) * sizeof(double),
                                       width, static_cast<std::size_t>(s.outer), cudaMemcpyDeviceToHost, stream));
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

/// The largest |entry| of a strided host matrix (NaN ignored: the solver's own checks refuse it
/// by name).
double largest(const double* p, Strided s) {
  double all = 0;
  for (std::int64_t o = 0; o < s.outer; ++o) {
    const double* run = p + o * s.ld;
    for (std::int64_t i = 0; i < s.inner; ++i) all = std::max(all, std::fabs(run[i]));
  }
  return all;
}

/// Host A (and host B, X) staged on the device, then solved as a device system (solve_device):
/// the host path's copies into FP64 matrices, its checks and its pageable upload of A cost
/// seconds at n = 16384 (5.4 s around an 81 ms solve, docs/benchmark-history.md, session 21). Only
/// where the device holds the staged copies beside the solve, and where the solve would not
/// prescale (A and every column of b at or above 2^-511, solver.hpp: solve_device takes its
/// system as given): the same device computations as the host path, so the same X bitwise.
/// Returns false (nothing done) otherwise.
bool staged_dgesv(cuda::Context& ctx, const SolveOptions& options, bool row_major, std::int64_t n, std::int64_t nrhs,
                  const double* A, Strided a, const double* B, Strided b, double* X, Strided x, SolveResult& r) {
  constexpr double kPrescaleBelow = 0x1p-511;  // prescale.hpp's threshold
  const bool b_host = !on_device(B), x_host = !on_device(X);
  const std::size_t a_bytes = static_cast<std::size_t>(a.inner * a.outer) * sizeof(double);
  const std::size_t b_bytes = static_cast<std::size_t>(b.inner * b.outer) * sizeof(double);
  const std::size_t x_bytes = static_cast<std::size_t>(x.inner * x.outer) * sizeof(double);
  const runtime::DeviceScope scope(ctx.device());
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  const double need = cuda_solve_bytes(n, nrhs, options) + static_cast<double>(a_bytes) +
                      (b_host ? static_cast<double>(b_bytes) : 0.0) + (x_host ? static_cast<double>(x_bytes) : 0.0);
  if (need + static_cast<double>(std::size_t{1} << 30) > static_cast<double>(free)) return false;
  const double a_max = largest(A, a);
  if (a_max > 0 && a_max < kPrescaleBelow) return false;
  if (b_host) {  // the largest |entry| of each column of B (column-major: its runs; row-major: across them)
    std::vector<double> column(static_cast<std::size_t>(nrhs), 0.0);
    for (std::int64_t o = 0; o < b.outer; ++o)
      for (std::int64_t i = 0; i < b.inner; ++i) {
        double& m = column[static_cast<std::size_t>(row_major ? i : o)];
        m = std::max(m, std::fabs(B[o * b.ld + i]));
      }
    for (double m : column)
      if (m > 0 && m < kPrescaleBelow) return false;
  }
  const cudaStream_t s = ctx.stream();
  auto stage = [&](const double* src, Strided m) {
    cuda::DeviceBuffer<double> d(static_cast<std::size_t>(m.inner * m.outer));
    const std::size_t width = static_cast<std::size_t>(m.inner) * sizeof(double);
    TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(d.data(), width, src, static_cast<std::size_t>(m.ld) * sizeof(double), width,
                                         static_cast<std::size_t>(m.outer), cudaMemcpyHostToDevice, s));
    return d;
  };
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(s));  // host data: earlier work on the stream first
  const cuda::DeviceBuffer<double> a_dev = stage(A, a);
  cuda::DeviceBuffer<double> b_dev = b_host ? stage(B, b) : cuda::DeviceBuffer<double>();
  cuda::DeviceBuffer<double> x_dev(x_host ? static_cast<std::size_t>(x.inner * x.outer) : 0);
  DeviceSystemView view;
  view.n = static_cast<int>(n);
  view.nrhs = static_cast<int>(nrhs);
  view.A = a_dev.data();
  view.lda = static_cast<int>(a.inner);
  view.B = b_host ? b_dev.data() : B;
  view.ldb = static_cast<int>(b_host ? b.inner : b.ld);
  view.row_major = row_major;
  double* xd = x_host ? x_dev.data() : X;
  const int ldx = static_cast<int>(x_host ? x.inner : x.ld);
  r = solve_device(view, xd, ldx, options);
  if (x_host) {
    const std::size_t width = static_cast<std::size_t>(x.inner) * sizeof(double);
    TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(X, static_cast<std::size_t>(x.ld) * sizeof(double), xd, width, width,
                                         static_cast<std::size_t>(x.outer), cudaMemcpyDeviceToHost, s));
    TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  return true;
}

}  // namespace

void cuda_gemm(cuda::Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha,
               const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  const DeviceAuto on_device;  // auto: the choice stays on the device (no wait for the stream)
  cuda::gemm(ctx, variant, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, GemmOptions{},
             variant == Variant::auto_ ? &on_device : nullptr);
}

void cuda_scale(cuda::Context& ctx, int m, int n, float beta, float* C, int ldc) {
  cuda::scale_matrix(ctx, m, n, beta, C, ldc);
}

SolveResult cuda_dgesv(cuda::Context& ctx, HostDgesv solve_host, const SolveOptions& options, bool row_major,
                       std::int64_t n, std::int64_t nrhs, const double* A, Strided a, const double* B, Strided b,
                       double* X, Strided x) {
  const cudaStream_t s = ctx.stream();
  if (on_device(A) && on_device(B) && on_device(X)) {  // the system stays on the device
    DeviceSystemView view;
    view.n = static_cast<int>(n);
    view.nrhs = static_cast<int>(nrhs);
    view.A = A;
    view.lda = static_cast<int>(a.ld);
    view.B = B;
    view.ldb = static_cast<int>(b.ld);
    view.row_major = row_major;
    return solve_device(view, X, static_cast<int>(x.ld), options);
  }
  // Host A: staged on the device where it fits and needs no prescaling (staged_dgesv).
  if (!on_device(A)) {
    SolveResult r;
    if (staged_dgesv(ctx, options, row_major, n, nrhs, A, a, B, b, X, x, r)) return r;
  }
  // Host and device pointers mixed: the device ones are copied to the host (and X back), and
  // the solver runs on the host copies with Backend::cuda in the handle's context.
  std::vector<double> a_host, b_host;
  if (on_device(A)) {
    a_host = to_host(s, A, a);
    A = a_host.data();
    a.ld = a.inner;
  } else {
    TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(s));  // host data: earlier work on the stream first
  }
  if (on_device(B)) {
    b_host = to_host(s, B, b);
    B = b_host.data();
    b.ld = b.inner;
  }
  if (!on_device(X)) return solve_host(options, row_major, n, nrhs, A, a.ld, B, b.ld, X, x.ld);

  std::vector<double> x_host(static_cast<std::size_t>(x.inner * x.outer));
  SolveResult r = solve_host(options, row_major, n, nrhs, A, a.ld, B, b.ld, x_host.data(), x.inner);
  const std::size_t width = static_cast<std::size_t>(x.inner) * sizeof(double);
  TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(X, static_cast<std::size_t>(x.ld) * sizeof(double), x_host.data(), width,
                                       width, static_cast<std::size_t>(x.outer), cudaMemcpyHostToDevice, s));
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(s));
  return r;
}

bool on_device(const char* name, const void* p, int device) {
  const cudaPointerAttributes a = attributes_of(p);
  if (a.type == cudaMemoryTypeManaged) return true;  // readable from every device
  if (a.type != cudaMemoryTypeDevice) return false;
  if (a.device != device)
    throw InvalidInput(std::string(name) + ": device memory of device " + std::to_string(a.device) +
                       ", but the handle is bound to device " + std::to_string(device) +
                       " (create the handle with that device current)");
  return true;
}

void copy_rows(cuda::Context& ctx, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t rows) {
  if (rows == 0 || width == 0) return;
  TCSOLVE_CUDA_CHECK(
      cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDefault, ctx.stream()));
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
}

}  // namespace tcsolve::capi
