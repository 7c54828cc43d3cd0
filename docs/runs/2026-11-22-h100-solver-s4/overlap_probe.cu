// Can a 16-CTA cluster kernel (and small kernels) run while a persistent kernel holds G SMs?
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <unistd.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s line %d\n", #x, cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %smid;" : "=r"(s)); return s; }

__global__ void spinner(unsigned long long ns, unsigned long long* rec) {
  extern __shared__ char sm[];
  unsigned long long t0 = gt();
  if (threadIdx.x == 0) sm[0] = 1;
  while (gt() - t0 < ns) {}
  if (threadIdx.x == 0) { rec[3 * blockIdx.x] = t0; rec[3 * blockIdx.x + 1] = gt(); rec[3 * blockIdx.x + 2] = smid(); }
}
__global__ void __cluster_dims__(1,1,1) dummy() {}
__global__ void clusterk(unsigned long long ns, unsigned long long* rec, int idx) {
  extern __shared__ char sm[];
  unsigned long long t0 = gt();
  if (threadIdx.x == 0) sm[0] = 1;
  while (gt() - t0 < ns) {}
  if (threadIdx.x == 0 && blockIdx.x == 0) { rec[3 * idx] = t0; rec[3 * idx + 1] = gt(); rec[3 * idx + 2] = smid(); }
}
__global__ void small(unsigned long long ns, unsigned long long* rec, int idx) {
  unsigned long long t0 = gt();
  while (gt() - t0 < ns) {}
  if (threadIdx.x == 0 && blockIdx.x == 0) { rec[2 * idx] = t0; rec[2 * idx + 1] = gt(); }
}

int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(spinner, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaFuncSetAttribute(clusterk, cudaFuncAttributeMaxDynamicSharedMemorySize, 150 * 1024));
  CK(cudaFuncSetAttribute(clusterk, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t s1, s2; CK(cudaStreamCreateWithPriority(&s1, cudaStreamNonBlocking, hi)); CK(cudaStreamCreateWithPriority(&s2, cudaStreamNonBlocking, lo));
  unsigned long long *rs, *rc, *rsm; CK(cudaMalloc(&rs, 3 * 256 * 8)); CK(cudaMalloc(&rc, 3 * 64 * 8)); CK(cudaMalloc(&rsm, 2 * 64 * 8));
  cudaLaunchAttribute attr[1]; attr[0].id = cudaLaunchAttributeClusterDimension; attr[0].val.clusterDim.x = 16; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(16); cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = 150 * 1024; cfg.attrs = attr; cfg.numAttrs = 1; cfg.stream = s1;
  int ncl = 0; CK(cudaOccupancyMaxActiveClusters(&ncl, clusterk, &cfg)); printf("SMs %d, max active 16-clusters (150KB) %d, prio lo %d hi %d\n", sms, ncl, lo, hi);
  for (int c : {8, 4}) { attr[0].val.clusterDim.x = c; cfg.gridDim = dim3(c); CK(cudaOccupancyMaxActiveClusters(&ncl, clusterk, &cfg)); printf("max active %d-clusters %d\n", c, ncl); }
  attr[0].val.clusterDim.x = 16; cfg.gridDim = dim3(16);
  const int NC = 20;
  for (int scenario = 0; scenario < 8; ++scenario) {
    int G = std::vector<int>{132, 116, 116, 100, 116, 116, 124, 108}[scenario];
    G = std::min(G, sms);
    bool cluster_first = scenario == 2 || scenario == 5;
    bool with_small = scenario >= 4;
    CK(cudaDeviceSynchronize());
    CK(cudaMemset(rc, 0, 3 * 64 * 8)); CK(cudaMemset(rs, 0, 3 * 256 * 8));
    int idx = 0;
    if (cluster_first) CK(cudaLaunchKernelEx(&cfg, clusterk, 200000ull, rc, idx++));
    spinner<<<G, 256, 200 * 1024, s2>>>(3000000ull, rs);
    for (int i = 0; i < NC; ++i) {
      CK(cudaLaunchKernelEx(&cfg, clusterk, 50000ull, rc, idx++));
      if (with_small) small<<<64, 128, 0, s1>>>(5000ull, rsm, i);
    }
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> hs(3 * 256), hc(3 * 64), hsm(2 * 64);
    CK(cudaMemcpy(hs.data(), rs, hs.size() * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hc.data(), rc, hc.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hsm.data(), rsm, hsm.size() * 8, cudaMemcpyDeviceToHost));
    unsigned long long s0 = ~0ull, s1e = 0, smax = 0;
    for (int b = 0; b < G; ++b) { s0 = std::min(s0, hs[3 * b]); smax = std::max(smax, hs[3 * b]); s1e = std::max(s1e, hs[3 * b + 1]); }
    unsigned long long c0 = hc[0], cend = hc[3 * (idx - 1) + 1];
    int during = 0; for (int i = 0; i < idx; ++i) if (hc[3 * i] < s1e) ++during;
    printf("scenario %d: G=%d cluster_first=%d small=%d | spinner start spread %.1f us, spinner span %.1f us | clusters: first start %+.1f us rel spinner start, last end %+.1f us rel spinner end, %d of %d started while spinner ran, mean cluster gap %.1f us\n",
           scenario, G, cluster_first, with_small, (smax - s0) / 1e3, (s1e - s0) / 1e3, ((double)c0 - (double)s0) / 1e3, ((double)cend - (double)s1e) / 1e3, during, idx,
           idx > 1 ? ((double)(hc[3 * (idx - 1)] - hc[0]) / 1e3 / (idx - 1) - 50.0) : 0.0);
  }
  return 0;
}
