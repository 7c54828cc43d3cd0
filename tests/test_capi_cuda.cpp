// The C API (tcsolve.h) on a cuda handle with device pointers and a non-blocking stream gives
// bitwise what the C++ API gives: tcsolveSgemm against tcsolve::cuda::gemm, tcsolveDgesv against
// tcsolve::solve. [gpu]: skipped with a warning without a device.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda_test_util.hpp"
#include "gemm_test_util.hpp"
#include "tcsolve.h"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve;

/// A cuda handle on a non-blocking stream of its own.
struct CudaHandle {
  CudaHandle() : stream(own.get()) {
    REQUIRE(tcsolveCreate(&h, TCSOLVE_BACKEND_CUDA) == TCSOLVE_STATUS_SUCCESS);
    REQUIRE(tcsolveSetStream(h, stream) == TCSOLVE_STATUS_SUCCESS);
  }
  ~CudaHandle() { tcsolveDestroy(h); }
  test::Stream own;  ///< destroyed after the handle
  cudaStream_t stream;
  tcsolveHandle_t h = nullptr;
};

}  // namespace

TEST_CASE("the C API's tcsolveSgemm on device pointers and a non-blocking stream is bitwise cuda::gemm",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the C API's cuda Sgemm");
  const test::Problem p = test::make_problem(300, 200, 260, "exp_rand:-8:8", "urand", 71);
  CudaHandle handle;
  const cuda::DeviceBuffer<float> A(p.A), B(p.B);
  cuda::DeviceBuffer<float> C(static_cast<std::size_t>(p.m) * p.n);
  for (const char* name : {"ec-fp16", "ec-tf32", "auto", "fp32-simt", "ootomo-fp16"}) {
    INFO(name);
    int variant = -1;
    REQUIRE(tcsolveVariantFromName(name, &variant) == TCSOLVE_STATUS_SUCCESS);
    const float alpha = 0.75f, beta = 0.0f;
    REQUIRE(tcsolveSgemm(handle.h, variant, TCSOLVE_OP_N, TCSOLVE_OP_N, p.m, p.n, p.k, &alpha, A.data(), p.m,
                         B.data(), p.k, &beta, C.data(), p.m) == TCSOLVE_STATUS_SUCCESS);
    const std::vector<float> from_c = C.download(handle.stream);
    cuda::Context ctx;
    cuda::DeviceBuffer<float> C2(C.size());
    cuda::gemm(ctx, static_cast<Variant>(variant), Op::n, Op::n, p.m, p.n, p.k, alpha, A.data(), p.m, B.data(),
               p.k, beta, C2.data(), p.m);
    CHECK(from_c == C2.download());
  }
  // k = 0: C = beta C on the device (BLAS), in stream order.
  std::vector<float> ones(C.size(), 1.5f);
  C.upload(ones, handle.stream);
  const float alpha = 1.0f, beta = -2.0f;
  REQUIRE(tcsolveSgemm(handle.h, 0, TCSOLVE_OP_N, TCSOLVE_OP_N, p.m, p.n, 0, &alpha, nullptr, p.m, nullptr, 1,
                       &beta, C.data(), p.m) == TCSOLVE_STATUS_SUCCESS);
  CHECK(C.download(handle.stream) == std::vector<float>(C.size(), -3.0f));
}

TEST_CASE("the C API's tcsolveDgesv on device pointers (column- and row-major) and a non-blocking stream is "
          "bitwise tcsolve::solve, and refuses a zero column as it does",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the C API's cuda Dgesv");
  const int n = 1500, nrhs = 2;
  const LinearSystem sys = generate_system(n, 1e4, SpectrumMode::geometric, 72, nrhs);
  SolveOptions o;
  o.backend = Backend::cuda;
  const SolveResult want = solve(sys, o);
  REQUIRE(want.converged);

  CudaHandle handle;
  const std::vector<double> a(sys.A.data(), sys.A.data() + sys.A.size()), b(sys.b.data(), sys.b.data() + sys.b.size());
  const cuda::DeviceBuffer<double> dA(a), dB(b);
  cuda::DeviceBuffer<double> dX(b.size());
  tcsolveSolveParams_t params;
  tcsolveSolveParamsDefault(&params);
  tcsolveSolveInfo_t info{};
  REQUIRE(tcsolveDgesv(handle.h, &params, n, nrhs, dA.data(), n, dB.data(), n, dX.data(), n, &info) ==
          TCSOLVE_STATUS_SUCCESS);
  const std::vector<double> x = dX.download(handle.stream);
  CHECK(x == std::vector<double>(want.x.data(), want.x.data() + want.x.size()));
  CHECK(info.converged == 1);
  CHECK(info.iterations == want.iterations);
  CHECK(info.backward_error == want.backward_error);
  // Host pointers on the same handle: the same x.
  std::vector<double> x_host(b.size());
  REQUIRE(tcsolveDgesv(handle.h, &params, n, nrhs, a.data(), n, b.data(), n, x_host.data(), n, &info) ==
          TCSOLVE_STATUS_SUCCESS);
  CHECK(x_host == x);
  // Row-major device data (A^T stored, B and X row-major): the same x.
  std::vector<double> at(a.size()), bt(b.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) at[static_cast<std::size_t>(i) * n + j] = sys.A(i, j);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < nrhs; ++j) bt[static_cast<std::size_t>(i) * nrhs + j] = sys.b(i, j);
  const cuda::DeviceBuffer<double> dAt(at), dBt(bt);
  cuda::DeviceBuffer<double> dXt(bt.size());
  params.row_major = 1;
  REQUIRE(tcsolveDgesv(handle.h, &params, n, nrhs, dAt.data(), n, dBt.data(), nrhs, dXt.data(), nrhs, &info) ==
          TCSOLVE_STATUS_SUCCESS);
  const std::vector<double> xt = dXt.download(handle.stream);
  std::size_t differing = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < nrhs; ++j) differing += xt[static_cast<std::size_t>(i) * nrhs + j] != want.x(i, j);
  CHECK(differing == 0);
  // A zero column on the device: refused before any LU, with the host path's message.
  std::vector<double> singular = a;
  for (int i = 0; i < n; ++i) singular[static_cast<std::size_t>(7) * n + i] = 0.0;
  const cuda::DeviceBuffer<double> dS(singular);
  params.row_major = 0;
  CHECK(tcsolveDgesv(handle.h, &params, n, nrhs, dS.data(), n, dB.data(), n, dX.data(), n, &info) ==
        TCSOLVE_STATUS_INVALID_VALUE);
  CHECK(std::string(tcsolveGetLastErrorMessage(handle.h)).find("column 8 (1-based) is zero") != std::string::npos);
}

#else  // a build without CUDA: the tests run with a GPU only

TEST_CASE("the C API cuda tests (built without CUDA)", "[gpu]") { WARN("tcsolve was built without CUDA: skipping the C API cuda tests"); }

#endif  // TCSOLVE_HAVE_CUDA
