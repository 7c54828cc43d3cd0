// cusolverDnSgetrf on m x w panels: time per column (experiment for the solver's panel cost)
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include <cusolverDn.h>
int main() {
  cusolverDnHandle_t h; cusolverDnCreate(&h);
  const int m = 16384;
  float* A; cudaMalloc(&A, sizeof(float) * (size_t)m * 1024);
  int* ipiv; cudaMalloc(&ipiv, sizeof(int) * 1024);
  int* info; cudaMalloc(&info, sizeof(int));
  std::vector<float> host((size_t)m * 1024);
  unsigned long long x = 1;
  for (auto& v : host) { x = x * 6364136223846793005ULL + 1442695040888963407ULL; v = (float)((x >> 40) & 0xffffff) / 16777216.0f - 0.5f; }
  for (int w : {16, 32, 64, 128, 256, 512, 1024}) {
    int lw = 0; cusolverDnSgetrf_bufferSize(h, m, w, A, m, &lw);
    float* work; cudaMalloc(&work, sizeof(float) * lw);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    float best = 1e30f;
    for (int r = 0; r < 4; ++r) {
      cudaMemcpy(A, host.data(), sizeof(float) * (size_t)m * w, cudaMemcpyHostToDevice);
      cudaEventRecord(e0);
      cusolverDnSgetrf(h, m, w, A, m, work, ipiv, info);
      cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); if (r > 0 && ms < best) best = ms;
    }
    std::printf("m %d w %4d: %8.3f ms, %6.2f us per column\n", m, w, best, best * 1e3 / w);
    cudaFree(work);
  }
  return 0;
}
