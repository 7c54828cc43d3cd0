// Green contexts: one GPC-sized partition for cluster kernels, the rest for a persistent kernel.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s line %d\n", #x, cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
#define CU(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* s; cuGetErrorString(e, &s); printf("%s: %s line %d\n", #x, s, __LINE__); exit(1);} } while (0)

__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
__global__ void spinner(unsigned long long ns, unsigned long long* rec) {
  extern __shared__ char sm[];
  unsigned long long t0 = gt();
  if (threadIdx.x == 0) sm[0] = 1;
  while (gt() - t0 < ns) {}
  if (threadIdx.x == 0) { rec[3 * blockIdx.x] = t0; rec[3 * blockIdx.x + 1] = gt(); }
}
__global__ void clusterk(unsigned long long ns, unsigned long long* rec, int idx) {
  extern __shared__ char sm[];
  unsigned long long t0 = gt();
  if (threadIdx.x == 0) sm[0] = 1;
  while (gt() - t0 < ns) {}
  if (threadIdx.x == 0 && blockIdx.x == 0) { rec[3 * idx] = t0; rec[3 * idx + 1] = gt(); }
}
__global__ void small(unsigned long long ns) { unsigned long long t0 = gt(); while (gt() - t0 < ns) {} }

int main() {
  CK(cudaFree(0));
  CUdevice dev; CU(cuDeviceGet(&dev, 0));
  CUdevResource all; CU(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
  printf("all: smCount %u minPartition %u coschedAlign %u\n", all.sm.smCount, all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);
  for (unsigned flags : {0u, (unsigned)CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE}) for (unsigned mc : {8u, 16u, 18u}) {
    unsigned nb = 0; CUresult r = cuDevSmResourceSplitByCount(nullptr, &nb, &all, nullptr, flags, mc);
    printf("split flags %u minCount %u: %d groups (rc %d)\n", flags, mc, nb, (int)r);
  }
  unsigned nb = 1; CUdevResource g1, rem;
  CU(cuDevSmResourceSplitByCount(&g1, &nb, &all, &rem, CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE, 16));
  printf("g1: %u SMs (align %u), remaining %u SMs\n", g1.sm.smCount, g1.sm.smCoscheduledAlignment, rem.sm.smCount);
  CUdevResourceDesc d1, d2; CU(cuDevResourceGenerateDesc(&d1, &g1, 1)); CU(cuDevResourceGenerateDesc(&d2, &rem, 1));
  CUgreenCtx c1, c2; CU(cuGreenCtxCreate(&c1, d1, dev, CU_GREEN_CTX_DEFAULT_STREAM)); CU(cuGreenCtxCreate(&c2, d2, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  CUstream cs1, cs2; CU(cuGreenCtxStreamCreate(&cs1, c1, CU_STREAM_NON_BLOCKING, hi)); CU(cuGreenCtxStreamCreate(&cs2, c2, CU_STREAM_NON_BLOCKING, lo));
  cudaStream_t s1 = (cudaStream_t)cs1, s2 = (cudaStream_t)cs2;
  CK(cudaFuncSetAttribute(spinner, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaFuncSetAttribute(clusterk, cudaFuncAttributeMaxDynamicSharedMemorySize, 150 * 1024));
  CK(cudaFuncSetAttribute(clusterk, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  unsigned long long *rs, *rc; CK(cudaMalloc(&rs, 3 * 256 * 8)); CK(cudaMalloc(&rc, 3 * 64 * 8));
  cudaLaunchAttribute attr[1]; attr[0].id = cudaLaunchAttributeClusterDimension; attr[0].val.clusterDim.x = 16; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(16); cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = 150 * 1024; cfg.attrs = attr; cfg.numAttrs = 1; cfg.stream = s1;
  int ncl = -1; cudaError_t oe = cudaOccupancyMaxActiveClusters(&ncl, clusterk, &cfg); printf("max active 16-clusters via runtime on green stream: %d (%s)\n", ncl, cudaGetErrorString(oe));
  cublasHandle_t h; cublasCreate(&h);
  float *A; CK(cudaMalloc(&A, 3 * 2048 * 2048 * 4)); CK(cudaMemset(A, 0, 3 * 2048 * 2048 * 4));
  const int G = (int)rem.sm.smCount;
  cudaStream_t p1; CK(cudaStreamCreateWithPriority(&p1, cudaStreamNonBlocking, hi));
  for (int scenario = 0; scenario < 4; ++scenario) {
    const int NC = 20;
    CK(cudaDeviceSynchronize());
    CK(cudaMemset(rc, 0, 3 * 64 * 8)); CK(cudaMemset(rs, 0, 3 * 256 * 8));
    cudaStream_t cs = scenario >= 2 ? p1 : s1;  // clusters on the primary context's stream from scenario 2
    cfg.stream = cs;
    spinner<<<G, 256, 200 * 1024, s2>>>(3000000ull, rs);
    int idx = 0;
    for (int i = 0; i < NC; ++i) {
      CK(cudaLaunchKernelEx(&cfg, clusterk, 50000ull, rc, idx++));
      small<<<64, 128, 0, cs>>>(5000ull);
      if (scenario == 1 || scenario == 3) {
        cublasSetStream(h, cs); float one = 1, zero = 0;
        cublasStatus_t st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 512, 512, 256, &one, A, 2048, A + 2048 * 2048, 2048, &zero, A + 2 * 2048 * 2048, 2048);
        if (st != CUBLAS_STATUS_SUCCESS) printf("cublas status %d\n", (int)st);
      }
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> hs(3 * 256), hc(3 * 64);
    CK(cudaMemcpy(hs.data(), rs, hs.size() * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hc.data(), rc, hc.size() * 8, cudaMemcpyDeviceToHost));
    unsigned long long s0 = ~0ull, s1e = 0, smax = 0;
    for (int b = 0; b < G; ++b) { s0 = std::min(s0, hs[3 * b]); smax = std::max(smax, hs[3 * b]); s1e = std::max(s1e, hs[3 * b + 1]); }
    int during = 0; for (int i = 0; i < idx; ++i) if (hc[3 * i] < s1e) ++during;
    printf("scenario %d (clusters on %s stream, cublas %d): spinner %d blocks: start spread %.1f us, span %.1f us | clusters: first start %+.1f us, %d of %d during spinner, mean gap %.1f us\n",
           scenario, scenario >= 2 ? "primary" : "green", scenario % 2, G, (smax - s0) / 1e3, (s1e - s0) / 1e3, ((double)hc[0] - (double)s0) / 1e3, during, idx,
           (double)(hc[3 * (idx - 1)] - hc[0]) / 1e3 / (idx - 1) - 50.0);
  }
  // cuBLAS SGEMM alone: primary stream, green stream (handle from the primary context), green stream with a handle made in the green context
  cublasHandle_t hg; { CUcontext gc; CU(cuCtxFromGreenCtx(&gc, c2)); CUcontext prev; CU(cuCtxGetCurrent(&prev)); CU(cuCtxSetCurrent(gc)); cublasCreate(&hg); CU(cuCtxSetCurrent(prev)); }
  for (int v = 0; v < 3; ++v) {
    cudaStream_t st = v == 0 ? p1 : s2; cublasHandle_t hh = v == 2 ? hg : h;
    cublasSetStream(hh, st); float one = 1, zero = 0;
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int w = 0; w < 2; ++w) {
      CK(cudaEventRecord(e0, st));
      for (int i = 0; i < 20; ++i) cublasSgemm(hh, CUBLAS_OP_N, CUBLAS_OP_N, 2048, 2048, 256, &one, A, 2048, A + 2048 * 2048, 2048, &zero, A + 2 * 2048 * 2048, 2048);
      CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
    }
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); CK(cudaGetLastError());
    printf("cublas sgemm 2048x2048x256 x20 on %s: %.3f ms\n", v == 0 ? "primary stream" : v == 1 ? "green stream, primary handle" : "green stream, green handle", ms);
  }
  printf("done\n");
  return 0;
}
