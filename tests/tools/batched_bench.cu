// A tool for the GPU runs, not a test: the per-shape table of issue 34 (docs/BENCHMARKS.md).
// For each product shape (batch, m, n, k, op(A), op(B)) it times, in one process and on one
// stream, cuBLAS SGEMM (cublasSgemmStridedBatched; plain FP32, the default math mode) and
// tcsolve's cuda::gemm_batched for each given variant (split_k automatic, and with --unsplit
// also split_k 1), and measures each result's error against an FP64 product of the same inputs
// (cublasDgemmStridedBatched on FP64 copies): max |C - C64| / max |C64| over the batch.
//
//   tcsolve_batched_bench [--variants ec-fp16,auto] [--reps N] [--unsplit] [--host] [--json FILE]
//                         [--scaling automatic|fused|separate]   (GemmOptions::ec_scaling)
//                         [--graphs]       tcsolve's calls with GemmOptions::cuda_launch =
//                                          cached_graphs (a call's kernels replayed as one graph
//                                          from its second call with the same arguments)
//                         [SHAPE ...]      SHAPE: BATCHxMxNxK[:TT] (TT: op letters, default NN)
//
// Times: median of 5 timings of N repetitions (CUDA events), after 3 warm-up calls. The host's
// cost of a call (us): the wall time of enqueueing 20 calls on an idle stream, divided, median
// of 5 (so the launch queue never fills and the figure is the caller's thread alone); --host
// also times the pieces: one cuTensorMapEncodeTiled (a product on the wgmma path needs one per
// operand tile map), one empty kernel launch, one cudaStreamIsCapturing, one stream-ordered
// allocation and free, a launch with 1 KB of parameters against five of them as one graph
// (launched as captured, or with every node's parameters replaced first); and it gives
// tcsolve's calls workspaces as the drop-in does (Context::Workspaces::stream_ordered, from a
// pool that keeps its memory). With no SHAPE, the default list: BERT-base's attention products (batch 384 = 32 x 12 heads), the
// TransformerEncoder's (128 = 8 x 16 heads of 2048 tokens), CuPy's 64 x 512^3, few output tiles
// with a long k (the split-k cases), and the layers' products (M tokens x N x K).
#include <cublas_v2.h>
#include <cuda.h>  // CUtensorMap (types only; the encoder comes through the runtime)
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tcsolve/gemm/batch.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"

namespace {

using namespace tcsolve;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "batched_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "batched_bench: %s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

struct Shape {
  long long batch;
  int m, n, k;
  char ta = 'N', tb = 'N';
  std::string label;
};

Shape parse(const std::string& text) {
  Shape s{};
  std::string body = text, ops = "NN";
  if (const auto colon = text.find(':'); colon != std::string::npos)
    body = text.substr(0, colon), ops = text.substr(colon + 1);
  char x;
  std::istringstream in(body);
  if (!(in >> s.batch >> x >> s.m >> x >> s.n >> x >> s.k) || ops.size() != 2) {
    std::fprintf(stderr, "batched_bench: bad shape '%s' (BATCHxMxNxK[:TT])\n", text.c_str());
    std::exit(2);
  }
  s.ta = ops[0], s.tb = ops[1], s.label = text;
  return s;
}

std::vector<Shape> default_shapes() {
  std::vector<Shape> v;
  for (const char* t :
       {"384x128x128x64:TN", "384x64x128x128:NN",      // BERT-base attention (32 x 12 heads)
        "128x2048x2048x64:TN", "128x64x2048x2048:NN",  // TransformerEncoder attention
        "64x512x512x512:NN",                           // CuPy's batched matmul
        "1x1024x1024x16384:NN", "1x2048x128x16384:NN", "1x256x256x65536:NN",  // few tiles, long k
        "1x16384x128x16384:NN", "1x4096x1024x4096:NN", "1x4096x768x768:NN", "1x4096x3072x768:NN",
        "1x4096x768x3072:NN",  // BERT's layers
        "1x16384x4096x1024:NN", "1x16384x1024x4096:NN", "1x16384x1024x1024:NN", "1x8192x8192x8192:NN"})
    v.push_back(parse(t));
  return v;
}

template <typename F>
double time_ms(F&& call, int reps, cudaStream_t stream) {
  for (int i = 0; i < 3; ++i) call();
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    check(cudaEventRecord(a, stream), "record");
    for (int i = 0; i < reps; ++i) call();
    check(cudaEventRecord(b, stream), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms / reps);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[2];
}

/// The caller's thread's microseconds per call: 20 calls enqueued on an idle stream (after 3
/// warm-up calls), the wall time divided; median of 5.
template <typename F>
double host_us(F&& call, cudaStream_t stream) {
  for (int i = 0; i < 3; ++i) call();
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    check(cudaStreamSynchronize(stream), "sync");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) call();
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 20);
  }
  check(cudaStreamSynchronize(stream), "sync");
  std::sort(t.begin(), t.end());
  return t[2];
}

__global__ void empty_kernel() {}

/// A launch with a parameter block the size of the main kernel's (four tensor maps and its
/// parameters: about 1 KB), for the launch and graph timings of --host.
struct BigParams {
  const void* pointers[4];
  unsigned char rest[992];
};
__global__ void big_params_kernel(const __grid_constant__ BigParams q) {
  if (threadIdx.x == 1024 && q.rest[0] == 1) __trap();  // never: blocks of 32 threads
}

/// Burst timing as host_us: 20 calls on an idle stream, the wall time divided; median of 25.
template <typename F>
double burst_us(F&& call, cudaStream_t stream) {
  std::vector<double> t;
  for (int r = 0; r < 25; ++r) {
    check(cudaStreamSynchronize(stream), "sync");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) call(i);
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 20);
  }
  check(cudaStreamSynchronize(stream), "sync");
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// --host: what a product's five launches would cost as one graph (docs/design.md, session 32):
/// a graph of five big_params_kernel nodes captured once, launched; and one kernel node's
/// parameters replaced in the executable graph (a call's pointers), then launched.
void graph_pieces(cudaStream_t stream) {
  cudaStream_t side = nullptr;
  check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "cudaStreamCreate");
  BigParams q{};
  check(cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  for (int i = 0; i < 5; ++i) big_params_kernel<<<1, 32, 0, side>>>(q);
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(side, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  std::size_t count = 0;
  check(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes");
  std::vector<cudaGraphNode_t> nodes(count);
  check(cudaGraphGetNodes(graph, nodes.data(), &count), "cudaGraphGetNodes");
  cudaKernelNodeParams kp{};
  check(cudaGraphKernelNodeGetParams(nodes[0], &kp), "cudaGraphKernelNodeGetParams");
  const double t_big = burst_us([&](int) { big_params_kernel<<<1, 32, 0, stream>>>(q); }, stream);
  const double t_graph = burst_us([&](int) { check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); }, stream);
  const double t_update = burst_us(
      [&](int i) {
        for (std::size_t n = 0; n < count; ++n) {  // every node: each would get the call's pointers
          q.pointers[0] = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(i + 1) << 8);
          void* args[] = {&q};
          kp.kernelParams = args;
          check(cudaGraphExecKernelNodeSetParams(exec, nodes[n], &kp), "cudaGraphExecKernelNodeSetParams");
        }
        check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
      },
      stream);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(side);
  std::printf(
      "host: a launch with 1 KB of parameters %.3f us; five such launches as one graph: launched %.3f us, with "
      "every node's parameters replaced first %.3f us\n\n",
      t_big, t_graph, t_update);
}

/// --host: the pieces of a call's host cost, each timed over 2000 calls.
void host_pieces(cudaStream_t stream, cudaMemPool_t pool) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult status{};
  check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &status),
        "cuTensorMapEncodeTiled entry point");
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  void* base = nullptr;
  check(cudaMalloc(&base, 1 << 24), "cudaMalloc");
  const int reps = 2000;
  auto per_call = [&](auto&& call) {
    for (int i = 0; i < 10; ++i) call(i);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) call(i);
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
  };
  const double t_encode = per_call([&](int i) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {768, static_cast<cuuint64_t>(4096 + 128 * (i % 4))};
    const cuuint64_t strides[1] = {768 * 2};
    const cuuint32_t box[2] = {64, 128};
    const cuuint32_t elem[2] = {1, 1};
    if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, base, dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
      std::fprintf(stderr, "batched_bench: cuTensorMapEncodeTiled failed\n");
      std::exit(1);
    }
  });
  // launches: in bursts of 20 on an idle stream, as host_us
  double t_launch = 0;
  {
    std::vector<double> t;
    for (int r = 0; r < 25; ++r) {
      check(cudaStreamSynchronize(stream), "sync");
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 20; ++i) empty_kernel<<<1, 32, 0, stream>>>();
      const auto t1 = std::chrono::steady_clock::now();
      t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 20);
    }
    std::sort(t.begin(), t.end());
    t_launch = t[t.size() / 2];
  }
  check(cudaStreamSynchronize(stream), "sync");
  const double t_capturing = per_call([&](int) {
    cudaStreamCaptureStatus c{};
    check(cudaStreamIsCapturing(stream, &c), "cudaStreamIsCapturing");
  });
  const double t_alloc = per_call([&](int) {
    void* p = nullptr;
    check(cudaMallocFromPoolAsync(&p, 8 << 20, pool, stream), "cudaMallocFromPoolAsync");
    check(cudaFreeAsync(p, stream), "cudaFreeAsync");
  });
  check(cudaStreamSynchronize(stream), "sync");
  cudaFree(base);
  std::printf(
      "host: cuTensorMapEncodeTiled %.3f us a call; an empty kernel launch %.3f us; cudaStreamIsCapturing %.3f "
      "us; cudaMallocFromPoolAsync + cudaFreeAsync (8 MiB) %.3f us\n\n",
      t_encode, t_launch, t_capturing, t_alloc);
}

__global__ void widen(const float* x, double* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    y[i] = x[i];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> variants{"ec-fp16", "auto"};
  int reps = 0;
  bool unsplit = false, host = false, graphs = false;
  EcScaling scaling = EcScaling::automatic;
  std::string json;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::puts(
          "usage: tcsolve_batched_bench [--variants V,V] [--reps N] [--unsplit] [--scaling "
          "automatic|fused|separate] [--host] [--graphs] [--json FILE] [BATCHxMxNxK[:TT] ...]");
      return 0;
    } else if (a == "--variants" && i + 1 < argc) {
      variants.clear();
      std::stringstream list(argv[++i]);
      for (std::string v; std::getline(list, v, ',');) variants.push_back(v);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--scaling" && i + 1 < argc) {
      const std::string v = argv[++i];
      scaling = v == "fused"      ? EcScaling::fused
                : v == "separate" ? EcScaling::separate
                                  : EcScaling::automatic;
    } else if (a == "--unsplit") {
      unsplit = true;
    } else if (a == "--host") {
      host = true;
    } else if (a == "--graphs") {
      graphs = true;
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else {
      shapes.push_back(parse(a));
    }
  }
  if (shapes.empty()) shapes = default_shapes();
  cuda::Context ctx;
  cudaStream_t stream = ctx.stream();
  cublasHandle_t blas;
  check(cublasCreate(&blas), "cublasCreate");
  check(cublasSetStream(blas, stream), "cublasSetStream");
  std::printf("device: %s\n\n", cuda::device_name().c_str());
  cudaMemPool_t pool = nullptr;
  if (host) {  // the drop-in's workspaces (hook/src/state.cpp)
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = ctx.device();
    check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
    unsigned long long keep = ~0ULL;
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
    ctx.set_workspaces(cuda::Context::Workspaces::stream_ordered);
    ctx.set_memory_pool(pool);
    host_pieces(stream, pool);
    graph_pieces(stream);
  }
  std::printf(
      "| shape (batch x m x n x k, ops) | GFLOP | cuBLAS SGEMM ms | variant | split | tcsolve ms | speedup | "
      "error cuBLAS | error tcsolve | host us a call, cuBLAS / tcsolve | device ms of one call (phases) "
      "|\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n");
  std::ostringstream js;
  js << "[";
  bool first = true;
  for (const Shape& s : shapes) {
    const Op ta = s.ta == 'N' ? Op::n : Op::t, tb = s.tb == 'N' ? Op::n : Op::t;
    const int lda = ta == Op::n ? s.m : s.k, ldb = tb == Op::n ? s.k : s.n, ldc = s.m;
    const long long sa = static_cast<long long>(s.m) * s.k, sb = static_cast<long long>(s.k) * s.n,
                    sc = static_cast<long long>(s.m) * s.n;
    const std::size_t na = sa * s.batch, nb = sb * s.batch, nc = sc * s.batch;
    std::vector<float> hA(na), hB(nb);
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : hA) x = u(gen);
    for (float& x : hB) x = u(gen);
    cuda::DeviceBuffer<float> A(hA), B(hB), C(nc);
    cuda::device_synchronize();  // the uploads (default stream) before ctx's stream reads them
    const double gflop = 2.0 * s.m * s.n * static_cast<double>(s.k) * s.batch / 1e9;
    const int r =
        reps > 0 ? reps : std::max(3, std::min(200, static_cast<int>(200.0 / std::max(gflop, 1e-3))));
    // FP64 reference
    std::vector<double> ref;
    {
      cuda::DeviceBuffer<double> A64(na), B64(nb), C64(nc);
      widen<<<1024, 256, 0, stream>>>(A.data(), A64.data(), na);
      widen<<<1024, 256, 0, stream>>>(B.data(), B64.data(), nb);
      const double one = 1, zero = 0;
      check(cublasDgemmStridedBatched(blas, ta == Op::n ? CUBLAS_OP_N : CUBLAS_OP_T,
                                      tb == Op::n ? CUBLAS_OP_N : CUBLAS_OP_T, s.m, s.n, s.k, &one,
                                      A64.data(), lda, sa, B64.data(), ldb, sb, &zero, C64.data(), ldc, sc,
                                      static_cast<int>(s.batch)),
            "DGEMM reference");
      ref = C64.download(stream);
    }
    double ref_max = 0;
    for (double x : ref) ref_max = std::max(ref_max, std::fabs(x));
    auto error = [&]() {
      const std::vector<float> c = C.download(stream);
      double e = 0;
      for (std::size_t i = 0; i < nc; ++i) e = std::max(e, std::fabs(c[i] - ref[i]));
      return e / ref_max;
    };
    const float one = 1, zero = 0;
    auto sgemm = [&] {
      check(cublasSgemmStridedBatched(blas, ta == Op::n ? CUBLAS_OP_N : CUBLAS_OP_T,
                                      tb == Op::n ? CUBLAS_OP_N : CUBLAS_OP_T, s.m, s.n, s.k, &one, A.data(),
                                      lda, sa, B.data(), ldb, sb, &zero, C.data(), ldc, sc,
                                      static_cast<int>(s.batch)),
            "SGEMM");
    };
    const double t_blas = time_ms(sgemm, r, stream);
    const double e_blas = error();
    const double host_blas = host_us(sgemm, stream);
    for (const std::string& name : variants) {
      const Variant v = parse_variant(name);
      for (int split : unsplit ? std::vector<int>{0, 1} : std::vector<int>{0}) {
        GemmOptions o;
        o.split_k = split;
        o.ec_scaling = scaling;
        o.cuda_launch = graphs ? CudaLaunch::cached_graphs : CudaLaunch::direct;
        Batch batch;
        batch.count = static_cast<int>(s.batch), batch.stride_a = sa, batch.stride_b = sb,
        batch.stride_c = sc;
        const DeviceAuto on_device;  // as the drop-in runs it: auto's choice stays on the device
        GemmInfo info;
        auto ours = [&] {
          info = cuda::gemm_batched(ctx, v, ta, tb, s.m, s.n, s.k, 1.0f, A.data(), lda, B.data(), ldb, 0.0f,
                                    C.data(), ldc, batch, o, &on_device);
        };
        const double t = time_ms(ours, r, stream);
        const double e = error();
        const double host_ours = host_us(ours, stream);
        // the device time of one call's phases (synchronising after each: shows whether the
        // calls above were bound by the host's launches)
        ctx.set_time_phases(true);
        ours();
        ctx.set_time_phases(false);
        double device_ms = 0;
        std::string phases;
        for (const auto& [name, seconds] : info.phases) {
          device_ms += 1e3 * seconds;
          char text[96];
          std::snprintf(text, sizeof text, "%s%s %.4f", phases.empty() ? "" : ", ", name.c_str(),
                        1e3 * seconds);
          phases += text;
        }
        std::printf("| %s | %.1f | %.4f | %s | %d | %.4f | %.2fx | %.2e | %.2e | %.1f / %.1f | %.4f (%s) |\n",
                    s.label.c_str(), gflop, t_blas, name.c_str(), info.split_k, t, t_blas / t, e_blas, e,
                    host_blas, host_ours, device_ms, phases.c_str());
        std::fflush(stdout);
        js << (first ? "" : ",") << "\n  {\"shape\": \"" << s.label << "\", \"batch\": " << s.batch
           << ", \"m\": " << s.m << ", \"n\": " << s.n << ", \"k\": " << s.k << ", \"gflop\": " << gflop
           << ", \"cublas_ms\": " << t_blas << ", \"variant\": \"" << name
           << "\", \"split_k\": " << info.split_k << ", \"tcsolve_ms\": " << t
           << ", \"speedup\": " << t_blas / t << ", \"error_cublas\": " << e_blas
           << ", \"error_tcsolve\": " << e << ", \"host_us_cublas\": " << host_blas
           << ", \"host_us_tcsolve\": " << host_ours << ", \"device_ms\": " << device_ms << ", \"phases\": \"" << phases
           << "\"}";
        first = false;
      }
    }
  }
  js << "\n]\n";
  if (!json.empty()) std::ofstream(json) << js.str();
  cublasDestroy(blas);
  return 0;
}
