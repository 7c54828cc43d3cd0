// The explicit device context (tcsolve/gemm/context.hpp) on the GPU: work on a caller's
// non-blocking stream gives bitwise the results of the default stream; two contexts on two
// threads at once give bitwise the results of running one after the other; the GEMM returns
// without waiting for its stream. [gpu]: skipped with a warning without a device.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "cuda_test_util.hpp"
#include "gemm_test_util.hpp"
#include "tcsolve/gemm/context.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve;

using test::Stream;

/// C = A B (m = n = k = size) through `v` in `ctx`, on the host afterwards.
std::vector<float> product(cuda::Context& ctx, Variant v, const test::Problem& p) {
  const cudaStream_t s = ctx.stream();
  cuda::DeviceBuffer<float> A(p.A.size()), B(p.B.size()), C(static_cast<std::size_t>(p.m) * p.n);
  A.upload(p.A, s);
  B.upload(p.B, s);
  cuda::gemm(ctx, v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, A.data(), p.m, B.data(), p.k, 0.0f, C.data(), p.m);
  return C.download(s);
}

SolveOptions cuda_options(Variant v, cuda::Context* ctx) {
  SolveOptions o;
  o.backend = Backend::cuda;
  o.variant = v;
  o.cuda_context = ctx;
  return o;
}

}  // namespace

TEST_CASE("two GEMM contexts on two threads and streams give bitwise the products of one after the other",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the concurrent GEMM contexts");
  const test::Problem p1 = test::make_problem(1000, 1000, 1000, "urand", "urand", 11);
  const test::Problem p2 = test::make_problem(1000, 1000, 1000, "exp_rand:-30:14", "urand", 12);
  for (Variant v : {Variant::ec_fp16, Variant::auto_, Variant::ec_tf32, Variant::fp32_simt}) {
    INFO(to_string(v));
    std::vector<float> alone1, alone2;
    {
      cuda::Context ctx;  // the default stream
      alone1 = product(ctx, v, p1);
      alone2 = product(ctx, v, p2);
    }
    Stream s1, s2;
    cuda::Context c1(s1.get()), c2(s2.get());
    for (int round = 0; round < 3; ++round) {
      std::vector<float> got1, got2;
      std::thread t1([&] { got1 = product(c1, v, p1); });
      std::thread t2([&] { got2 = product(c2, v, p2); });
      t1.join();
      t2.join();
      CHECK(got1 == alone1);
      CHECK(got2 == alone2);
    }
  }
}

TEST_CASE("cuda::gemm returns without waiting for its stream (ec-fp16, and auto with DeviceAuto)", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the non-synchronizing GEMM");
  // A host function holds the stream for up to 3 s (until released): a GEMM that waited for
  // the stream would return only after it.
  const test::Problem p = test::make_problem(512, 512, 512, "urand", "urand", 13);
  Stream stream;
  cuda::Context ctx(stream.get());
  cuda::DeviceBuffer<float> A(p.A), B(p.B), C(static_cast<std::size_t>(p.m) * p.n);
  DeviceAuto on_device;
  for (Variant v : {Variant::ec_fp16, Variant::auto_}) {
    INFO(to_string(v));
    const DeviceAuto* gated = v == Variant::auto_ ? &on_device : nullptr;
    cuda::gemm(ctx, v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, A.data(), p.m, B.data(), p.k, 0.0f, C.data(), p.m,
               {}, gated);  // grows the workspaces (cudaFree waits for the device)
    ctx.synchronize();
    static std::atomic<bool> released{false};
    released = false;
    auto hold = [](void*) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      while (!released && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    };
    REQUIRE(cudaLaunchHostFunc(stream.get(), hold, nullptr) == cudaSuccess);
    const auto start = std::chrono::steady_clock::now();
    const GemmInfo info = cuda::gemm(ctx, v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, A.data(), p.m, B.data(), p.k,
                                     0.0f, C.data(), p.m, {}, gated);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool busy = cudaStreamQuery(stream.get()) == cudaErrorNotReady;
    released = true;
    ctx.synchronize();
    CHECK(seconds < 1.5);
    CHECK(busy);
    if (v == Variant::auto_) CHECK(info.resolved == Variant::auto_);  // the choice stayed on the device
  }
}

TEST_CASE("a solve in a context on a non-blocking stream, and two solves on two threads at once, give "
          "bitwise the x of solves one after the other on the default stream",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the concurrent solver contexts");
  // n = 1800 with nb = 512: look-ahead on four blocks, a ragged last one.
  const LinearSystem sys1 = generate_system(1800, 1e3, SpectrumMode::geometric, 41);
  const LinearSystem sys2 = generate_system(1800, 1e5, SpectrumMode::arithmetic, 42, 2);
  for (Variant v : {Variant::auto_, Variant::ec_fp16}) {
    INFO(to_string(v));
    const SolveResult alone1 = solve(sys1, cuda_options(v, nullptr));
    const SolveResult alone2 = solve(sys2, cuda_options(v, nullptr));
    REQUIRE(alone1.converged);
    REQUIRE(alone2.converged);
    Stream s1, s2;
    cuda::Context c1(s1.get()), c2(s2.get());
    const SolveResult on_stream = solve(sys1, cuda_options(v, &c1));
    CHECK(on_stream.x == alone1.x);
    CHECK(on_stream.iterations == alone1.iterations);
    for (int round = 0; round < 2; ++round) {
      SolveResult r1, r2;
      std::thread t1([&] { r1 = solve(sys1, cuda_options(v, &c1)); });
      std::thread t2([&] { r2 = solve(sys2, cuda_options(v, &c2)); });
      t1.join();
      t2.join();
      CHECK(r1.x == alone1.x);
      CHECK(r2.x == alone2.x);
      CHECK(r1.history == alone1.history);
      CHECK(r2.history == alone2.history);
    }
  }
}

#else  // a build without CUDA: the tests run with a GPU only

TEST_CASE("the explicit device context tests (built without CUDA)", "[gpu]") { WARN("tcsolve was built without CUDA: skipping the explicit device context tests"); }

#endif  // TCSOLVE_HAVE_CUDA
