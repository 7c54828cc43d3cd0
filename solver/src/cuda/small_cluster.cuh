// One-cluster launches for the small systems' one-pass kernels (equilibrate.cu's FP64 path
// equilibration, small_residual.cu): a grid of one thread-block cluster per column (at most
// kSmallClusterBlocks blocks of kSmallClusterThreads threads) whose phases are parted by the
// cluster's barrier. A cooperative launch's grid barriers cost tens of microseconds at these
// sizes (the n = 200 equilibration took 26 us in one cooperative launch, session 34), a cluster's
// barrier under one (panel.cu measured 0.7 us). The blocks pass their partial results through
// global memory, read after the barrier with __ldcg (from L2, past the reader's L1).
// Whether the current device runs such a cluster (compute capability 9 or later, schedulable) is
// remembered per (device, kernel) (per_device.hpp); elsewhere the grid is one block per column,
// which runs the same phases in the same order (the same bits, slower). Internal to the
// solver's .cu files.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/per_device.hpp"

namespace tcsolve::cuda::kernels {

/// Threads of a block of the one-cluster kernels.
inline constexpr int kSmallClusterThreads = 1024;
/// Blocks of their cluster (the portable cluster size).
inline constexpr int kSmallClusterBlocks = 8;

/// The barrier between a one-cluster kernel's phases: the cluster's (its arrive releases and its
/// wait acquires at cluster scope), or the block's where the grid has one block along x.
__device__ __forceinline__ void small_cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (gridDim.x > 1) {
    cooperative_groups::this_cluster().sync();
    return;
  }
#endif
  __syncthreads();
}

/// The launch configuration of clusters of `blocks` blocks along x, `columns` along y (the
/// configuration points to `attribute`, which must outlive it; no attribute for one block).
inline cudaLaunchConfig_t small_cluster_config(cudaStream_t stream, int blocks, int columns,
                                               cudaLaunchAttribute& attribute) {
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(blocks);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(columns));
  config.blockDim = dim3(kSmallClusterThreads);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = blocks > 1 ? 1 : 0;
  return config;
}

/// The blocks of the cluster that runs `kernel` on the current device: kSmallClusterBlocks where
/// the device runs such a cluster of it, else 1. Remembered per (device, kernel).
inline int small_cluster_blocks(const void* kernel) {
  static tcsolve::detail::PerDeviceMap<const void*, int> found;
  return found.get(kernel, [&] {
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();
      return 1;
    }
    if (major < 9) return 1;
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config = small_cluster_config(nullptr, kSmallClusterBlocks, 1, attribute);
    int active = 0;
    if (cudaOccupancyMaxActiveClusters(&active, kernel, &config) != cudaSuccess) {
      cudaGetLastError();
      return 1;
    }
    return active >= 1 ? kSmallClusterBlocks : 1;
  });
}

/// Launches `kernel(args...)` on `stream`: `blocks` blocks along x (one cluster), `columns` along y.
inline void launch_small_cluster(const void* kernel, cudaStream_t stream, int blocks, int columns,
                                 void** args) {
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = small_cluster_config(stream, blocks, columns, attribute);
  TCSOLVE_CUDA_CHECK(cudaLaunchKernelExC(&config, kernel, args));
}

}  // namespace tcsolve::cuda::kernels
