// [gpu] tests of the one-launch FP64 LU (kernels::coop_lu, solver/src/cuda/coop_lu.cu): its
// factors, pivots and info bitwise those of its reference (cpu/coop_lu.hpp, itself checked against
// Eigen's LU in test_coop_lu.cpp), for panel widths 16 and 32, n not a multiple of either, a
// leading dimension past n, grids of 1, 2, 3 blocks and the default, a zero pivot and NaN entries
// (NaN compared as NaN: the device's and the host's NaN bits differ). Skipped, with a warning,
// without a GPU (and empty in a build without CUDA).
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/coop_lu.hpp"
#include "cuda/kernels.hpp"
#include "cuda_test_util.hpp"

namespace {

struct Factored {
  std::vector<double> a;
  std::vector<int> ipiv;
  int info = -1;
};

Factored on_device(const std::vector<double>& a, int n, int lda, int nb, int blocks) {
  tcsolve::test::Stream stream;
  double* da = nullptr;
  int *dp = nullptr, *di = nullptr;
  REQUIRE(cudaMalloc(&da, a.size() * sizeof(double)) == cudaSuccess);
  REQUIRE(cudaMalloc(&dp, (n + 1) * sizeof(int)) == cudaSuccess);
  di = dp + n;
  REQUIRE(cudaMemcpy(da, a.data(), a.size() * sizeof(double), cudaMemcpyHostToDevice) == cudaSuccess);
  tcsolve::cuda::kernels::coop_lu(stream.get(), da, n, lda, nb, dp, di, blocks);
  Factored f{std::vector<double>(a.size()), std::vector<int>(n), 0};
  REQUIRE(cudaMemcpyAsync(f.a.data(), da, a.size() * sizeof(double), cudaMemcpyDeviceToHost, stream.get()) ==
          cudaSuccess);
  REQUIRE(cudaMemcpyAsync(f.ipiv.data(), dp, n * sizeof(int), cudaMemcpyDeviceToHost, stream.get()) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(&f.info, di, sizeof(int), cudaMemcpyDeviceToHost, stream.get()) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream.get()) == cudaSuccess);
  cudaFree(da);
  cudaFree(dp);
  return f;
}

bool same(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0;
}

void check(const std::vector<double>& a, int n, int lda, int nb, int blocks) {
  CAPTURE(n, lda, nb, blocks);
  std::vector<double> ref = a;
  std::vector<int> ipiv(n);
  const int info = tcsolve::cpu::coop_lu_reference(ref.data(), n, lda, nb, ipiv.data());
  const Factored f = on_device(a, n, lda, nb, blocks);
  REQUIRE(f.info == info);
  REQUIRE(f.ipiv == ipiv);
  std::size_t differ = 0;
  for (std::size_t e = 0; e < a.size(); ++e) differ += same(f.a[e], ref[e]) ? 0 : 1;
  REQUIRE(differ == 0);
}

std::vector<double> uniform(int n, int lda, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> a(static_cast<std::size_t>(lda) * n, 5.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) a[i + static_cast<std::size_t>(j) * lda] = d(g);
  return a;
}

}  // namespace

TEST_CASE("coop_lu on the device: bitwise its reference, any n, panel width and grid", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the one-launch FP64 LU");
  using tcsolve::cuda::kernels::coop_lu_max_n;
  for (int nb : {16, 32}) {
    const int max_n = coop_lu_max_n(nb);
    REQUIRE(max_n >= (nb == 32 ? 700 : 1400));  // an H100/H200's 227 KB per block
    for (int n : {1, 2, 31, 33, 100, 200, 517})
      for (int blocks : {1, 2, 3, 0}) check(uniform(n, n, 11 + n), n, n, nb, blocks);
    check(uniform(150, 161, 5), 150, 161, nb, 0);
    check(uniform(max_n, max_n, 9), max_n, max_n, nb, 0);
    std::vector<double> tooth = uniform(max_n + 1, max_n + 1, 9);
    REQUIRE_THROWS(on_device(tooth, max_n + 1, max_n + 1, nb, 0));
  }
}

TEST_CASE("coop_lu on the device: zero pivots and NaN as its reference", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the one-launch FP64 LU");
  const int n = 90;
  std::vector<double> a = uniform(n, n, 4);
  for (int i = 0; i < n; ++i) a[i + 40 * n] = 0;  // column 41: a zero pivot
  check(a, n, n, 32, 0);
  check(a, n, n, 16, 2);
  std::vector<double> b = uniform(n, n, 6);
  b[17 + 3 * n] = std::nan("");
  b[60 + 70 * n] = std::nan("");
  check(b, n, n, 32, 0);
  check(b, n, n, 16, 1);
}

#endif
