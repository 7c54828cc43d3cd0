// The C API (tcsolve.h) on a cuda handle with device pointers and a non-blocking stream gives
// bitwise what the C++ API gives: tcsolveSgemm against tcsolve::cuda::gemm, tcsolveDgesv against
// tcsolve::solve; tcsolveKmeans and tcsolveKmeansPlusPlus on device points give bitwise what
// host points give on the same handle (issue 32 item 5: the points read where they are).
// [gpu]: skipped with a warning without a device. [multi_gpu]: a handle's K-means runs on its
// own device whatever device is current (skipped below two devices).
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cuda_test_util.hpp"
#include "gemm_test_util.hpp"
#include "tcsolve.h"
#include "tcsolve/cluster/kmeans.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/group.hpp"
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

int variant_named(const char* name) {
  int v = -1;
  REQUIRE(tcsolveVariantFromName(name, &v) == TCSOLVE_STATUS_SUCCESS);
  return v;
}

/// The outputs of one tcsolveKmeans call, on the host.
struct KmeansOut {
  std::vector<float> centers;        ///< k x d, packed
  std::vector<std::int32_t> labels;  ///< n
  tcsolveKmeansInfo_t info{};
};

/// tcsolveKmeans with host outputs (X host or device, rows ldx apart); REQUIREs SUCCESS.
KmeansOut kmeans_host_out(tcsolveHandle_t h, const tcsolveKmeansParams_t& p, int n, int d, const float* X, int ldx,
                          int k) {
  KmeansOut out;
  out.centers.resize(static_cast<std::size_t>(k) * d);
  out.labels.resize(static_cast<std::size_t>(n));
  INFO(tcsolveGetLastErrorMessage(h));
  REQUIRE(tcsolveKmeans(h, &p, n, d, X, ldx, k, out.centers.data(), d, out.labels.data(), &out.info) ==
          TCSOLVE_STATUS_SUCCESS);
  return out;
}

/// tcsolveKmeans with the centers and labels in device memory (read back after); REQUIREs SUCCESS.
/// centers (init = 0): the start, uploaded first.
KmeansOut kmeans_device_out(tcsolveHandle_t h, cudaStream_t stream, const tcsolveKmeansParams_t& p, int n, int d,
                            const float* X, int ldx, int k, const std::vector<float>& start = {}) {
  cuda::DeviceBuffer<float> dC(static_cast<std::size_t>(k) * d);
  if (!start.empty()) dC.upload(start, stream);
  cuda::DeviceBuffer<std::int32_t> dL(static_cast<std::size_t>(n));
  KmeansOut out;
  INFO(tcsolveGetLastErrorMessage(h));
  REQUIRE(tcsolveKmeans(h, &p, n, d, X, ldx, k, dC.data(), d, dL.data(), &out.info) == TCSOLVE_STATUS_SUCCESS);
  out.centers = dC.download(stream);
  out.labels = dL.download(stream);
  return out;
}

/// The same labels and centroids (bitwise), iterations and stop; the inertia to its last bits
/// (an FP64 sum on the device whose order may vary: 1e-12 relative is ~4500 units of 2^-53).
void check_same_run(const KmeansOut& got, const KmeansOut& want) {
  CHECK(got.centers == want.centers);
  CHECK(got.labels == want.labels);
  CHECK(got.info.iterations == want.info.iterations);
  CHECK(got.info.stop == want.info.stop);
  CHECK(got.info.resolved_variant == want.info.resolved_variant);
  CHECK(got.info.empty_clusters == want.info.empty_clusters);
  CHECK(std::fabs(got.info.inertia - want.info.inertia) <= 1e-12 * want.info.inertia);
}

/// Gaussian blobs (cluster::make_blobs) as row-major n x d points -- make_blobs' dim x N
/// column-major -- on the host and on the current device.
struct BlobPoints {
  BlobPoints(int n, int d, int k, std::uint64_t seed) : X(cluster::make_blobs(n, d, k, seed).X), dX(X) {}
  std::vector<float> X;
  cuda::DeviceBuffer<float> dX;
};

/// Row-major n x d points with rows ldx >= d apart, NaN in the padding (never read).
std::vector<float> padded_rows(const std::vector<float>& X, int n, int d, int ldx) {
  std::vector<float> out(static_cast<std::size_t>(n) * ldx, std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j)
      out[static_cast<std::size_t>(i) * ldx + j] = X[static_cast<std::size_t>(i) * d + j];
  return out;
}

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

TEST_CASE("the C API's tcsolveKmeans on device points (non-blocking stream) gives bitwise the labels and centroids "
          "of host points on the same handle, with device or host outputs, packed or padded rows",
          "[gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the C API's cuda K-means on device points");
  const int n = 20011, d = 37, k = 61;  // no multiples of any tile
  const BlobPoints points(n, d, k, 81);
  const std::vector<float>& X = points.X;
  const cuda::DeviceBuffer<float>& dX = points.dX;
  CudaHandle handle;
  const int ldp = d + 3;
  const std::vector<float> Xp = padded_rows(X, n, d, ldp);
  const cuda::DeviceBuffer<float> dXp(Xp);
  for (const char* name : {"auto", "ec-fp16", "fp32-simt"}) {
    INFO(name);
    tcsolveKmeansParams_t p;
    tcsolveKmeansParamsDefault(&p);
    p.variant = variant_named(name);
    p.max_iterations = 15;
    p.seed = 5;  // k-means++ on the device, from the points where they are
    const KmeansOut host = kmeans_host_out(handle.h, p, n, d, X.data(), d, k);
    CHECK(host.info.iterations >= 2);
    {
      INFO("device X, device centers and labels");
      check_same_run(kmeans_device_out(handle.h, handle.stream, p, n, d, dX.data(), d, k), host);
    }
    {
      INFO("device X, host centers and labels");
      check_same_run(kmeans_host_out(handle.h, p, n, d, dX.data(), d, k), host);
    }
    {
      INFO("rows ldx > d apart: device X (packed on the device) and host X");
      check_same_run(kmeans_device_out(handle.h, handle.stream, p, n, d, dXp.data(), ldp, k), host);
      check_same_run(kmeans_host_out(handle.h, p, n, d, Xp.data(), ldp, k), host);
    }
    {
      INFO("tol > 0");
      tcsolveKmeansParams_t q = p;
      q.tol = 1e-4;
      check_same_run(kmeans_device_out(handle.h, handle.stream, q, n, d, dX.data(), d, k),
                     kmeans_host_out(handle.h, q, n, d, X.data(), d, k));
    }
  }
}

TEST_CASE("the C API's tcsolveKmeansPlusPlus on device points is bitwise the host's draw, and its centroids passed "
          "back in device memory with init = 0 give the run of init = 1",
          "[gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the C API's cuda k-means++ on device points");
  const int n = 9001, d = 19, k = 33;
  const BlobPoints points(n, d, k, 82);
  const std::vector<float>& X = points.X;
  CudaHandle handle;
  const std::uint64_t seed = 11;
  const std::vector<float> want = cluster::kmeans_plus_plus(X.data(), n, d, k, seed);  // the host's, in FP64
  std::vector<float> from_host(want.size());
  REQUIRE(tcsolveKmeansPlusPlus(handle.h, n, d, X.data(), d, k, seed, from_host.data(), d) ==
          TCSOLVE_STATUS_SUCCESS);
  CHECK(from_host == want);
  cuda::DeviceBuffer<float> dC(want.size());
  REQUIRE(tcsolveKmeansPlusPlus(handle.h, n, d, points.dX.data(), d, k, seed, dC.data(), d) ==
          TCSOLVE_STATUS_SUCCESS);
  const std::vector<float> from_device = dC.download(handle.stream);
  CHECK(from_device == want);
  std::vector<float> host_centers(want.size());  // device X, host centers
  REQUIRE(tcsolveKmeansPlusPlus(handle.h, n, d, points.dX.data(), d, k, seed, host_centers.data(), d) ==
          TCSOLVE_STATUS_SUCCESS);
  CHECK(host_centers == want);

  tcsolveKmeansParams_t p;
  tcsolveKmeansParamsDefault(&p);
  p.max_iterations = 10;
  p.seed = seed;
  const KmeansOut drawn = kmeans_host_out(handle.h, p, n, d, X.data(), d, k);
  p.init = 0;
  check_same_run(kmeans_device_out(handle.h, handle.stream, p, n, d, points.dX.data(), d, k, from_device), drawn);
}

TEST_CASE("the C API's tcsolveKmeans refuses a non-finite value in device points (INVALID_VALUE, nothing written)",
          "[gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the C API's cuda K-means on device points");
  const int n = 3000, d = 8, k = 5;
  std::vector<float> X = cluster::make_blobs(n, d, k, 83).X;
  X[static_cast<std::size_t>(1234) * d + 6] = std::numeric_limits<float>::infinity();
  CudaHandle handle;
  const cuda::DeviceBuffer<float> dX(X);
  const std::vector<float> sevens(static_cast<std::size_t>(k) * d, 7.0f);
  cuda::DeviceBuffer<float> dC(sevens);
  cuda::DeviceBuffer<std::int32_t> dL(std::vector<std::int32_t>(static_cast<std::size_t>(n), 7));
  tcsolveKmeansParams_t p;
  tcsolveKmeansParamsDefault(&p);
  for (const int init : {1, 0}) {
    INFO("init " << init);
    p.init = init;
    CHECK(tcsolveKmeans(handle.h, &p, n, d, dX.data(), d, k, dC.data(), d, dL.data(), nullptr) ==
          TCSOLVE_STATUS_INVALID_VALUE);
    const std::string message = tcsolveGetLastErrorMessage(handle.h);
    CHECK(message.find("non-finite value at (1234, 6)") != std::string::npos);
    CHECK(dC.download(handle.stream) == sevens);
    CHECK(dL.download(handle.stream) == std::vector<std::int32_t>(static_cast<std::size_t>(n), 7));
  }
}

TEST_CASE("multi_gpu: a cuda handle's tcsolveKmeans runs on the handle's device whatever device is current (the "
          "caller's kept), bitwise device 0's run; another device's memory is refused naming it",
          "[multi_gpu][kmeans]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the C API's K-means per device");
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2) {
    WARN("one CUDA device: skipping the C API's K-means across devices (needs two)");
    return;
  }
  const int n = 12007, d = 24, k = 40;
  const std::vector<float> X = cluster::make_blobs(n, d, k, 84).X;
  tcsolveKmeansParams_t p;
  tcsolveKmeansParamsDefault(&p);
  p.max_iterations = 12;
  KmeansOut first;
  {
    runtime::DeviceScope on0(0);
    CudaHandle handle0;
    first = kmeans_host_out(handle0.h, p, n, d, X.data(), d, k);
  }
  for (int dev = 1; dev < count; ++dev) {
    INFO("handle on device " << dev);
    runtime::DeviceScope on_dev(dev);
    CudaHandle handle;  // bound to device dev, its stream made there
    const cuda::DeviceBuffer<float> dX(X);
    KmeansOut got;
    {
      runtime::DeviceScope caller(0);  // the caller's current device is 0
      got = kmeans_host_out(handle.h, p, n, d, dX.data(), d, k);
      int current = -1;
      REQUIRE(cudaGetDevice(&current) == cudaSuccess);
      CHECK(current == 0);
    }
    check_same_run(got, first);
    // X in device 0's memory given to device dev's handle: refused, nothing written.
    std::vector<float> untouched(static_cast<std::size_t>(k) * d, 7.0f);
    runtime::DeviceScope on0(0);
    const cuda::DeviceBuffer<float> dX0(X);
    CHECK(tcsolveKmeans(handle.h, &p, n, d, dX0.data(), d, k, untouched.data(), d, nullptr, nullptr) ==
          TCSOLVE_STATUS_INVALID_VALUE);
    CHECK(std::string(tcsolveGetLastErrorMessage(handle.h)).find("X: device memory of device 0") != std::string::npos);
    CHECK(untouched == std::vector<float>(untouched.size(), 7.0f));
  }
}

#else  // a build without CUDA: the tests run with a GPU only

TEST_CASE("the C API cuda tests (built without CUDA)", "[gpu]") { WARN("tcsolve was built without CUDA: skipping the C API cuda tests"); }

#endif  // TCSOLVE_HAVE_CUDA
