// The explicit device context (tcsolve/runtime/context.hpp) on the GPU: work on a caller's
// non-blocking stream gives bitwise the results of the default stream; two contexts on two
// threads at once give bitwise the results of running one after the other; the GEMM returns
// without waiting for its stream; stream-ordered workspaces and device scalars (what the cuBLAS
// drop-in uses) give bitwise the products of cached workspaces and host scalars, also replayed
// from a captured CUDA graph. [gpu]: skipped with a warning without a device. [multi_gpu]: every
// device of the process gives device 0's products and solves, reports its own facts, and frees a
// DeviceBuffer on the device it was allocated on (two GPUs to say more than that).
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "cuda_test_util.hpp"
#include "gemm_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve;

using test::Stream;

/// C = A B (m = n = k = size) through `v` in `ctx`, on the host afterwards. The buffers are the
/// caller's, so they are made on the context's device: a fresh thread's current device is 0,
/// whatever device the context (or --devices) names.
std::vector<float> product(cuda::Context& ctx, Variant v, const test::Problem& p) {
  const runtime::DeviceScope on(ctx.device());
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

TEST_CASE("stream-ordered workspaces and device scalars give bitwise the cached, host-scalar products, "
          "also from a captured CUDA graph", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the stream-ordered workspaces");
  const int m = 1000, n = 777, k = 613;  // not multiples of any tile
  const test::Problem p = test::make_problem(m, n, k, "urand", "exp_rand:-8:8", 21);
  std::vector<float> C0(static_cast<std::size_t>(m) * n);
  for (std::size_t i = 0; i < C0.size(); ++i) C0[i] = static_cast<float>((i * 7919) % 1000) / 500.0f - 1.0f;
  Stream stream;
  const cudaStream_t s = stream.get();
  cuda::DeviceBuffer<float> A(p.A), B(p.B), C(C0), scalars(std::vector<float>{1.5f, -0.75f});
  const DeviceAuto on_device;
  for (Variant v : {Variant::ec_fp16, Variant::ec_tf32, Variant::auto_}) {
    INFO(to_string(v));
    const DeviceAuto* gated = v == Variant::auto_ ? &on_device : nullptr;
    auto run = [&](cuda::Context& ctx, bool device_scalars) {
      C.upload(C0, s);
      if (device_scalars)
        cuda::gemm(ctx, v, Op::t, Op::n, m, n, k, cuda::DeviceScalars{scalars.data(), scalars.data() + 1}, A.data(),
                   k, B.data(), k, C.data(), m, {}, gated);
      else
        cuda::gemm(ctx, v, Op::t, Op::n, m, n, k, 1.5f, A.data(), k, B.data(), k, -0.75f, C.data(), m, {}, gated);
      return C.download(s);
    };
    cuda::Context cached(s);
    const std::vector<float> want = run(cached, false);
    cuda::Context ordered(s);
    ordered.set_workspaces(cuda::Context::Workspaces::stream_ordered);
    CHECK(run(ordered, false) == want);
    CHECK(run(ordered, true) == want);
    cudaMemPool_t pool = nullptr;
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    REQUIRE(cudaGetDevice(&props.location.id) == cudaSuccess);
    REQUIRE(cudaMemPoolCreate(&pool, &props) == cudaSuccess);
    ordered.set_memory_pool(pool);
    CHECK(run(ordered, true) == want);
    // captured (the workspaces become the graph's own allocations), replayed three times
    C.upload(C0, s);
    cudaGraph_t graph = nullptr;
    REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
    cuda::gemm(ordered, v, Op::t, Op::n, m, n, k, cuda::DeviceScalars{scalars.data(), scalars.data() + 1}, A.data(),
               k, B.data(), k, C.data(), m, {}, gated);
    REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    for (int replay = 0; replay < 3; ++replay) {
      C.upload(C0, s);
      REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
      CHECK(C.download(s) == want);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    ordered.synchronize();
    cudaMemPoolDestroy(pool);
  }
}

TEST_CASE("cached graphs (GemmOptions::cuda_launch) give bitwise the direct launches' products, from a graph "
          "from the second call with the same arguments, never inside the caller's capture",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the cached graphs");
  Stream stream;
  const cudaStream_t s = stream.get();
  const DeviceAuto on_device;
  GemmOptions graphs;
  graphs.cuda_launch = CudaLaunch::cached_graphs;
  // k = 613 (fused scaling), k = 3000 (the ranges found first), and a batch split along k
  struct Shape {
    int m, n, k, batch;
  };
  for (const Shape& sh : {Shape{1000, 777, 613, 1}, Shape{300, 200, 3000, 1}, Shape{128, 64, 2048, 6}}) {
    const int m = sh.m, n = sh.n, k = sh.k, batch = sh.batch;
    CAPTURE(m, n, k, batch);
    const test::Problem p = test::make_problem(m, n * batch, k, "urand", "exp_rand:-8:8", 23);
    std::vector<float> C0(static_cast<std::size_t>(m) * n * batch);
    for (std::size_t i = 0; i < C0.size(); ++i) C0[i] = static_cast<float>((i * 7919) % 1000) / 500.0f - 1.0f;
    cuda::DeviceBuffer<float> A(p.A), B(p.B), C(C0), C2(C0);
    Batch members;
    members.count = batch;
    members.stride_a = 0, members.stride_b = static_cast<long long>(k) * n, members.stride_c = static_cast<long long>(m) * n;
    for (Variant v : {Variant::ec_fp16, Variant::auto_}) {
      INFO(to_string(v));
      const DeviceAuto* gated = v == Variant::auto_ ? &on_device : nullptr;
      auto run = [&](cuda::Context& ctx, const GemmOptions& o, float* c) {
        cuda::DeviceBuffer<float>& buffer = c == C.data() ? C : C2;
        buffer.upload(C0, s);
        const GemmInfo info = cuda::gemm_batched(ctx, v, Op::t, Op::n, m, n, k, 1.5f, A.data(), k, B.data(), k,
                                                 -0.75f, c, m, members, o, gated);
        return std::make_pair(buffer.download(s), info.from_graph);
      };
      cuda::Context direct(s);
      const std::vector<float> want = run(direct, {}, C.data()).first;
      cuda::Context cached(s);  // workspaces at one address: the key repeats
      const auto first = run(cached, graphs, C.data()), second = run(cached, graphs, C.data()),
                 third = run(cached, graphs, C.data());
      CHECK(first.first == want);
      CHECK(second.first == want);
      CHECK(third.first == want);
      CHECK_FALSE(first.second);
      CHECK(second.second);
      CHECK(third.second);
      const auto elsewhere = run(cached, graphs, C2.data());  // another C: a new key
      CHECK(elsewhere.first == want);
      CHECK_FALSE(elsewhere.second);
      cuda::Context ordered(s);  // stream-ordered workspaces, as the drop-in's
      ordered.set_workspaces(cuda::Context::Workspaces::stream_ordered);
      for (int call = 0; call < 4; ++call) CHECK(run(ordered, graphs, C.data()).first == want);
      // inside the caller's capture the call's launches go into the caller's graph
      C.upload(C0, s);
      cudaGraph_t graph = nullptr;
      REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
      const GemmInfo captured = cuda::gemm_batched(cached, v, Op::t, Op::n, m, n, k, 1.5f, A.data(), k, B.data(), k,
                                                   -0.75f, C.data(), m, members, graphs, gated);
      REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
      CHECK_FALSE(captured.from_graph);
      cudaGraphExec_t exec = nullptr;
      REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
      REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
      CHECK(C.download(s) == want);
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    }
  }
}

TEST_CASE("scale_matrix with a device beta is bitwise the host beta's, and beta = 0 does not read C", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("scale_matrix with a device beta");
  const int m = 300, n = 7, ldc = 301;
  std::vector<float> C0(static_cast<std::size_t>(ldc) * n);
  for (std::size_t i = 0; i < C0.size(); ++i) C0[i] = static_cast<float>(i % 97) * 0.37f - 11.0f;
  C0[5] = std::numeric_limits<float>::quiet_NaN();
  cuda::Context ctx;
  cuda::DeviceBuffer<float> C(C0), beta(std::vector<float>{0.3f, 0.0f});
  for (int which : {0, 1}) {
    const float host_beta = which == 0 ? 0.3f : 0.0f;
    C.upload(C0);
    cuda::scale_matrix(ctx, m, n, host_beta, C.data(), ldc);
    const std::vector<float> want = C.download();
    C.upload(C0);
    cuda::scale_matrix(ctx, m, n, beta.data() + which, C.data(), ldc);
    const std::vector<float> got = C.download();
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);  // NaN compares bitwise
    if (which == 1) CHECK(got[5] == 0.0f);
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

/// Makes device d current for its scope, then the one current before (also on an exception, so
/// that a failing check leaves the later tests on their device).
class OnDevice {
 public:
  explicit OnDevice(int d) {
    REQUIRE(cudaGetDevice(&before_) == cudaSuccess);
    REQUIRE(cudaSetDevice(d) == cudaSuccess);
  }
  ~OnDevice() { cudaSetDevice(before_); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int before_ = 0;
};

int device_count() {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  if (count < 2) WARN("one CUDA device: only device 0 is checked (the [multi_gpu] claims need two)");
  return count;
}

// [multi_gpu]: on a 2-GPU H200 machine (2026-11-27, docs/benchmark-history.md, session 17) the solves with
// look-ahead threw on device 1 (cudaMemsetAsync: invalid argument; cuBLAS internal error): the
// LU's update thread started on device 0, the runtime's default for a new thread, and made its
// workspaces and handles there (fixed: it takes the caller's device). Device 0 runs first, so
// that state set up once per process on it would be missing on the others.

TEST_CASE("multi_gpu: every device of the process gives bitwise device 0's products", "[multi_gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the per-device products");
  const int count = device_count();
  const test::Problem p = test::make_problem(300, 200, 260, "urand", "urand", 7);
  for (Variant v : {Variant::ec_fp16, Variant::ec_tf32, Variant::auto_, Variant::fp32_simt}) {
    std::vector<float> first;
    for (int d = 0; d < count; ++d) {
      INFO(to_string(v) << " on device " << d);
      OnDevice on(d);
      cuda::Context ctx;  // on device d: its handles and workspaces are made there
      std::vector<float> c;
      try {
        c = product(ctx, v, p);
      } catch (const std::exception& e) {
        FAIL_CHECK("threw: " << e.what());
        continue;
      }
      if (d == 0) first = c;
      else CHECK(c == first);
    }
  }
}

TEST_CASE("multi_gpu: every device of the process gives bitwise device 0's solves, with and without look-ahead",
          "[multi_gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the per-device solves");
  const int count = device_count();
  // n = 2048, nb = 512: the trsm kernel and the row moves through shared memory (their kernel
  // attributes are set per device: per_device.hpp), with and without the look-ahead streams.
  const LinearSystem sys = generate_system(2048, 1e3, SpectrumMode::geometric, 43);
  for (const bool lookahead : {false, true}) {
    for (Variant v : {Variant::fp32_simt, Variant::auto_}) {
      SolveResult first;
      for (int d = 0; d < count; ++d) {
        INFO(to_string(v) << (lookahead ? ", look-ahead" : ", one stream") << " on device " << d);
        OnDevice on(d);
        cuda::Context ctx;
        SolveOptions o = cuda_options(v, &ctx);
        o.block_size = 512;
        o.cuda_plan.lookahead = lookahead;
        SolveResult r;
        try {
          r = solve(sys, o);
        } catch (const std::exception& e) {
          FAIL_CHECK("threw: " << e.what());
          continue;
        }
        CHECK(r.converged);
        if (d == 0) first = r;
        else CHECK(r.x == first.x);
      }
    }
  }
}

TEST_CASE("multi_gpu: a context bound to device d serves a caller on device 0 (the device guard): device 0's "
          "products and solves, the caller's device kept",
          "[multi_gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the device guard");
  const int count = device_count();
  const test::Problem p = test::make_problem(300, 200, 260, "urand", "urand", 9);
  const LinearSystem sys = generate_system(1500, 1e3, SpectrumMode::geometric, 47);
  std::vector<std::vector<float>> first_products;
  SolveResult first;
  for (int d = 0; d < count; ++d) {
    INFO("context on device " << d);
    OnDevice on_d(d);
    cuda::Context ctx;  // bound to device d
    CHECK(ctx.device() == d);
    const cuda::DeviceBuffer<float> A(p.A), B(p.B);
    cuda::DeviceBuffer<float> C(static_cast<std::size_t>(p.m) * p.n);
    std::vector<std::vector<float>> products;
    SolveResult r;
    {
      OnDevice caller(0);  // the caller's current device is 0 whatever d is
      for (Variant v : {Variant::ec_fp16, Variant::auto_, Variant::fp32_simt}) {
        cuda::gemm(ctx, v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, A.data(), p.m, B.data(), p.k, 0.0f, C.data(), p.m);
        ctx.synchronize();
        products.push_back(C.download());
      }
      SolveOptions o = cuda_options(Variant::auto_, &ctx);
      o.block_size = 512;
      r = solve(sys, o);
      int now = -1;
      REQUIRE(cudaGetDevice(&now) == cudaSuccess);
      CHECK(now == 0);  // the guard restored the caller's device
    }
    CHECK(r.converged);
    if (d == 0) {
      first_products = products;
      first = r;
    } else {
      CHECK(products == first_products);
      CHECK(r.x == first.x);
    }
  }
}

TEST_CASE("multi_gpu: the device facts are the current device's, and a DeviceBuffer frees on the device it was "
          "allocated on while the caller is on device 0",
          "[multi_gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the per-device facts");
  const int count = device_count();
  for (int d = count - 1; d >= 0; --d) {  // device 0 last: its facts (cached earlier) must not show
    INFO("device " << d);
    OnDevice on(d);
    cudaDeviceProp prop{};
    REQUIRE(cudaGetDeviceProperties(&prop, d) == cudaSuccess);
    CHECK(cuda::current_device() == d);
    CHECK(cuda::compute_capability() == 10 * prop.major + prop.minor);
    CHECK(cuda::device_name().rfind(prop.name, 0) == 0);
    CHECK(cuda::l2_cache_bytes() == static_cast<std::size_t>(prop.l2CacheSize));
    cuda::DeviceBuffer<int> buffer(std::vector<int>(1000, d));
    CHECK(buffer.device() == d);
    {
      OnDevice caller(0);
      CHECK(buffer.download() == std::vector<int>(1000, d));
      buffer = cuda::DeviceBuffer<int>();  // freed on device d
      CHECK(cudaGetLastError() == cudaSuccess);
      CHECK(cuda::current_device() == 0);  // the caller's device kept
    }
  }
}

#else  // a build without CUDA: the tests run with a GPU only

TEST_CASE("the explicit device context tests (built without CUDA)", "[gpu]") { WARN("tcsolve was built without CUDA: skipping the explicit device context tests"); }

#endif  // TCSOLVE_HAVE_CUDA
