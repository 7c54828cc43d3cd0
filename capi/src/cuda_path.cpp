// The C API on a cuda handle (cuda_path.hpp): the only file of capi/ that uses CUDA.
//
// TODO(context): tcsolve::cuda::Context (owning the stream, the cuBLAS/cuSOLVER handles and the
// workspaces) is replacing the library's per-thread launch stream. Once it lands, the handle
// owns one, cuda_gemm passes it instead of a LaunchStream, and cuda_dgesv solves device
// pointers on the device without the host copies below.
#include "cuda_path.hpp"

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/cuda_check.hpp"

namespace tcsolve::capi {
namespace {

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

/// Whether `p` is device (or managed) memory; host memory, registered or not, is not.
bool on_device(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError();  // older runtimes fail for unregistered host memory
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
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

}  // namespace

void cuda_gemm(void* stream, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha, const float* A,
               int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  const cuda::LaunchStream on(as_stream(stream));
  cuda::gemm(variant, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void cuda_scale(void* stream, int m, int n, float beta, float* C, int ldc) {
  const std::size_t pitch = static_cast<std::size_t>(ldc) * sizeof(float);
  const std::size_t width = static_cast<std::size_t>(m) * sizeof(float);
  if (beta == 0.0f) {  // all-zero bits are +0.0f; C is not read
    TCSOLVE_CUDA_CHECK(cudaMemset2DAsync(C, pitch, 0, width, static_cast<std::size_t>(n), as_stream(stream)));
    return;
  }
  // TODO(context): a scaling kernel on the context's stream instead of this round trip (k = 0
  // or alpha = 0 only).
  std::vector<float> host(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
  TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(host.data(), width, C, pitch, width, static_cast<std::size_t>(n),
                                       cudaMemcpyDeviceToHost, as_stream(stream)));
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
  for (float& c : host) c *= beta;
  TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(C, pitch, host.data(), width, width, static_cast<std::size_t>(n),
                                       cudaMemcpyHostToDevice, as_stream(stream)));
  TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
}

SolveResult cuda_dgesv(void* stream, HostDgesv solve_host, const SolveOptions& options, bool row_major,
                       std::int64_t n, std::int64_t nrhs, const double* A, Strided a, const double* B, Strided b,
                       double* X, Strided x) {
  const cudaStream_t s = as_stream(stream);
  // TODO(context): device pointers are copied to the host and X back, and the solver runs on
  // the host copies with Backend::cuda (which copies them to the device again); with the
  // context the device path will take A, B and X where they are, without host copies.
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

}  // namespace tcsolve::capi
