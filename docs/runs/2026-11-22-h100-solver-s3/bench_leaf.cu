// Scratch microbenchmark of docs/BENCHMARKS.md (session 3): the leaf kernel, the row-pair kernel
// and the cost of cluster.sync(). Built from a checkout, in a directory beside solver/:
//   nvcc -std=c++17 -O3 -arch=sm_90a -Isolver/src -Igemm/include -Ibuild/gemm/include
//        -DTCSOLVE_HAVE_CUDA --expt-relaxed-constexpr bench_leaf.cu -o bench_leaf
#include "../solver/src/cuda/panel.cu"
#include "../solver/src/cuda/row_swap.cu"
#include <cstdio>
#include <vector>
#include <random>
namespace cg = cooperative_groups;
__global__ void barrier_kernel(int steps, int remote, float* sink) {
  __shared__ float slot[2][16][32];
  cg::cluster_group cluster = cg::this_cluster();
  int S = cluster.num_blocks(), rank = cluster.block_rank();
  float acc = 0;
  for (int i = 0; i < steps; ++i) {
    if (remote && threadIdx.x < 32) for (int d = 0; d < S; ++d) *cluster.map_shared_rank(&slot[i&1][rank][threadIdx.x], d) = i;
    cluster.sync();
    acc += slot[i&1][(rank+1)%S][threadIdx.x%32];
  }
  if (acc == -1) sink[0] = acc;
}
int main() {
  using namespace tcsolve::cuda::kernels;
  const int n = 16384;
  std::vector<float> h((size_t)n * n);
  std::mt19937 g(1); std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : h) x = u(g);
  float *a, *a0; int *pairs, *info, *perm;
  cudaMalloc(&a, h.size() * 4); cudaMalloc(&a0, h.size() * 4);
  cudaMemcpy(a0, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(a, a0, h.size() * 4, cudaMemcpyDeviceToDevice);
  cudaMalloc(&pairs, 4 * 200); cudaMalloc(&info, 4); cudaMalloc(&perm, 4 * n);
  cudaMemset(info, 0, 4);
  printf("leaf width %d\n", leaf_width(n));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int m : {16384, 12288, 8192, 4096, 2048, 1024, 512, 64}) {
    int c0 = n - m;
    factor_leaf(a, n, n, c0, 32, pairs, info);
    cudaDeviceSynchronize();
    const int reps = 20;
    cudaEventRecord(e0);
    for (int r = 0; r < reps; ++r) factor_leaf(a, n, n, c0, 32, pairs, info);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    cudaEventRecord(e0);
    for (int r = 0; r < reps; ++r) apply_row_pairs(a, n, n, c0, 32, pairs, perm);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms2; cudaEventElapsedTime(&ms2, e0, e1);
    printf("m=%5d leaf %.1f us (%.2f us/col)  swap %.1f us  err=%s\n", m, 1e3 * ms / reps, 1e3 * ms / reps / 32, 1e3 * ms2 / reps,
           cudaGetErrorString(cudaGetLastError()));
  }
  float* sink; cudaMalloc(&sink, 4);
  cudaFuncSetAttribute(barrier_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (int S : {1, 2, 4, 8, 16}) for (int remote : {0, 1}) {
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(S); cfg.blockDim = dim3(512);
    cudaLaunchAttribute at; at.id = cudaLaunchAttributeClusterDimension; at.val.clusterDim.x = S; at.val.clusterDim.y = 1; at.val.clusterDim.z = 1;
    cfg.attrs = &at; cfg.numAttrs = 1;
    cudaLaunchKernelEx(&cfg, barrier_kernel, 1000, remote, sink); cudaDeviceSynchronize();
    cudaEventRecord(e0);
    cudaLaunchKernelEx(&cfg, barrier_kernel, 10000, remote, sink);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    cudaEventRecord(e0);
    for (int r = 0; r < 100; ++r) cudaLaunchKernelEx(&cfg, barrier_kernel, 1, remote, sink);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms2; cudaEventElapsedTime(&ms2, e0, e1);
    printf("cluster %2d remote %d: %.3f us per barrier step; launch+1 step %.2f us  %s\n", S, remote, 1e3 * ms / 10000, 1e3 * ms2 / 100, cudaGetErrorString(cudaGetLastError()));
  }
}
