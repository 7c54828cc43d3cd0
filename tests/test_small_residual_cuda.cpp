// [gpu] tests of the one-launch residual (kernels::small_residual, solver/src/cuda/small_residual.cu):
// r and both norms bitwise its reference (cpu/small_residual.hpp, itself checked against the
// rounding-error bound in test_small_residual.cpp) for n below, at and past a multiple of its
// 32-column parts up to its largest n, one and several right-hand sides; the cluster it runs on
// (kSmallClusterBlocks blocks on compute capability 9); its refusals. The solver's FP64 path on
// every residuals setting is in test_lu_apply_cuda.cpp.
// Skipped, with a warning, without a GPU (and empty in a build without CUDA).
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/small_residual.hpp"
#include "cuda/kernels.hpp"
#include "cuda_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace {

bool same(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0;
}

}  // namespace

TEST_CASE("small_residual on the device: r and the norms bitwise its reference, one or several columns",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the one-launch residual");
  using tcsolve::cuda::DeviceBuffer;
  using tcsolve::cuda::kernels::kSmallResidualMaxN;
  int major = 0, device = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess);
  const int blocks = tcsolve::cuda::kernels::small_residual_blocks();
  INFO("cluster of " << blocks << " blocks");
  if (major >= 9) CHECK(blocks == 8);  // the cluster runs where the device has clusters
  for (int n : {1, 2, 31, 32, 33, 200, 511, 1000, kSmallResidualMaxN}) {
    for (int k : {1, 3}) {
      CAPTURE(n, k);
      std::mt19937_64 g(static_cast<unsigned>(n * 7 + k));
      std::uniform_real_distribution<double> d(-1, 1);
      const std::size_t m = static_cast<std::size_t>(n), count = m * static_cast<std::size_t>(k);
      std::vector<double> a(m * m), b(count), x(count);
      for (auto& v : a) v = d(g);
      for (auto& v : x) v = d(g);
      for (auto& v : b) v = d(g);
      if (k == 3 && n >= 2) x[m + 1] = std::nan("");  // column 1: NaN in both norms
      DeviceBuffer<double> da(a), db(b), dx(x), dr(count), norms(2 * static_cast<std::size_t>(k)),
          scratch(tcsolve::cuda::kernels::small_residual_scratch_doubles(n, k));
      tcsolve::cuda::kernels::small_residual(nullptr, da.data(), n, db.data(), dx.data(), dr.data(),
                                             norms.data(), k, scratch.data());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      const std::vector<double> r = dr.download(), nm = norms.download();
      std::size_t differ = 0;
      for (int c = 0; c < k; ++c) {
        std::vector<double> ref(m);
        double ref_norms[2];
        const std::size_t at = static_cast<std::size_t>(c) * m;
        tcsolve::cpu::small_residual_reference(n, a.data(), n, b.data() + at, x.data() + at, ref.data(),
                                               ref_norms);
        for (int i = 0; i < n; ++i) differ += same(r[at + i], ref[i]) ? 0 : 1;
        CHECK(same(nm[c], ref_norms[0]));
        CHECK(same(nm[k + c], ref_norms[1]));
      }
      REQUIRE(differ == 0);
    }
  }
  // refused before any launch
  REQUIRE_THROWS(tcsolve::cuda::kernels::small_residual(nullptr, nullptr, 0, nullptr, nullptr, nullptr,
                                                        nullptr, 1, nullptr));
  REQUIRE_THROWS(tcsolve::cuda::kernels::small_residual(nullptr, nullptr, kSmallResidualMaxN + 1, nullptr,
                                                        nullptr, nullptr, nullptr, 1, nullptr));
}

#endif
