// [gpu] tests of the sweeps' kernels on GPU members (solver/src/cuda/distributed_kernels.cu):
// fanned in, kernels::block_solve (a block's inverse applied to v - acc) and kernels::rows_dot
// (the factors' rows times a block's solution, added to acc); fanned out (the transposed
// sweeps), kernels::block_solve_n and kernels::cols_dot; each against a host emulation of the
// same arithmetic (chains of fmaf in the kernel's order, then its order of sums): bitwise, on
// the 16-byte path and the scalar one. rows_dot's rate on the
// shape of the sweeps at n = 65536 is printed, not asserted. Skipped, with a warning, without a
// GPU.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cuda/distributed_kernels.hpp"
#include "cuda_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace {

using namespace tcsolve;
using tcsolve::test::random_floats;

/// The warp's sum of its lanes' partial sums as __shfl_down_sync's tree gives lane 0.
float warp_tree(std::vector<float> s) {
  for (int d = 16; d > 0; d /= 2)
    for (int l = 0; l < d; ++l) s[static_cast<std::size_t>(l)] += s[static_cast<std::size_t>(l + d)];
  return s[0];
}

/// One warp's dot of `a` (w values) with `x`: lane l takes k = l, l + 32, ... (scalar) or the
/// 16-byte groups l, l + 32, ... (vector), each product by fmaf in order.
float warp_dot(const float* a, const float* x, int w, bool vector) {
  std::vector<float> s(32, 0.0f);
  for (int lane = 0; lane < 32; ++lane) {
    float& t = s[static_cast<std::size_t>(lane)];
    if (vector) {
      for (int k = lane; k < w / 4; k += 32)
        for (int c = 0; c < 4; ++c) t = std::fmaf(a[4 * k + c], x[4 * k + c], t);
    } else {
      for (int k = lane; k < w; k += 32) t = std::fmaf(a[k], x[k], t);
    }
  }
  return warp_tree(s);
}

}  // namespace

TEST_CASE("the members' sweep kernels give bitwise the host emulation of their arithmetic", "[gpu]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device: skipping the members' sweep kernels (" << cuda::device_name() << ")");
    return;
  }
  SECTION("block_solve: out = M^T (v - acc), and M^T v without acc") {
    for (const int w : {1024, 1000, 37}) {
      INFO("w = " << w);
      const std::vector<float> m = random_floats(static_cast<std::size_t>(w) * w, 1u + w),
                               v = random_floats(static_cast<std::size_t>(w), 2u + w),
                               acc = random_floats(static_cast<std::size_t>(w), 3u + w);
      cuda::DeviceBuffer<float> dm(m), dv(v), dacc(acc), dout(static_cast<std::size_t>(w));
      for (const bool with_acc : {true, false}) {
        cuda::kernels::block_solve(nullptr, dm.data(), w, dv.data(), with_acc ? dacc.data() : nullptr, dout.data());
        const std::vector<float> got = dout.download();
        std::vector<float> in(static_cast<std::size_t>(w));
        for (int k = 0; k < w; ++k)
          in[static_cast<std::size_t>(k)] = with_acc ? v[static_cast<std::size_t>(k)] - acc[static_cast<std::size_t>(k)]
                                                     : v[static_cast<std::size_t>(k)];
        int differ = 0;
        for (int i = 0; i < w; ++i)
          differ += got[static_cast<std::size_t>(i)] != warp_dot(m.data() + static_cast<std::size_t>(i) * w, in.data(), w, false);
        CHECK(differ == 0);
      }
    }
  }
  SECTION("rows_dot: acc += F x over rows of w values at a stride, 16-byte and scalar paths") {
    struct Case {
      int rows, w, ldf, offset;  ///< offset: F starts `offset` floats into its buffer
      bool vector;
    };
    const Case cases[] = {{5000, 1024, 1032, 0, true}, {777, 512, 516, 4, true}, {600, 1001, 1003, 0, false},
                          {300, 1024, 1030, 0, false}, {40, 256, 260, 1, false}};
    for (const Case& c : cases) {
      INFO(c.rows << " rows of " << c.w << ", stride " << c.ldf << ", offset " << c.offset);
      const std::size_t size = static_cast<std::size_t>(c.rows) * c.ldf + c.offset;
      const std::vector<float> f = random_floats(size, 11u + c.w), x = random_floats(static_cast<std::size_t>(c.w), 12u),
                               acc = random_floats(static_cast<std::size_t>(c.rows), 13u);
      cuda::DeviceBuffer<float> df(f), dx(x), dacc(acc);
      cuda::kernels::rows_dot(nullptr, df.data() + c.offset, c.ldf, c.rows, c.w, dx.data(), dacc.data());
      const std::vector<float> got = dacc.download();
      int differ = 0;
      for (int r = 0; r < c.rows; ++r) {
        const float* row = f.data() + c.offset + static_cast<std::size_t>(r) * c.ldf;
        differ += got[static_cast<std::size_t>(r)] != acc[static_cast<std::size_t>(r)] + warp_dot(row, x.data(), c.w, c.vector);
      }
      CHECK(differ == 0);
    }
  }
  SECTION("block_solve_n: out = M ((v - acc1) - acc2), and without the accumulators") {
    for (const int w : {1024, 1000, 37}) {
      INFO("w = " << w);
      const std::vector<float> m = random_floats(static_cast<std::size_t>(w) * w, 21u + w),
                               v = random_floats(static_cast<std::size_t>(w), 22u + w),
                               a1 = random_floats(static_cast<std::size_t>(w), 23u + w),
                               a2 = random_floats(static_cast<std::size_t>(w), 24u + w);
      cuda::DeviceBuffer<float> dm(m), dv(v), da1(a1), da2(a2), dout(static_cast<std::size_t>(w));
      for (const bool with_acc : {true, false}) {
        cuda::kernels::block_solve_n(nullptr, dm.data(), w, dv.data(), with_acc ? da1.data() : nullptr,
                                     with_acc ? da2.data() : nullptr, dout.data());
        const std::vector<float> got = dout.download();
        std::vector<float> in(static_cast<std::size_t>(w));
        for (std::size_t k = 0; k < in.size(); ++k) in[k] = with_acc ? (v[k] - a1[k]) - a2[k] : v[k];
        int differ = 0;
        for (int i = 0; i < w; ++i) {
          float t = 0;
          for (int g = 0; g < 8; ++g) {
            float s = 0;
            for (int k = g; k < w; k += 8)
              s = std::fmaf(m[static_cast<std::size_t>(i) + static_cast<std::size_t>(k) * w], in[static_cast<std::size_t>(k)], s);
            t = g == 0 ? s : t + s;
          }
          differ += got[static_cast<std::size_t>(i)] != t;
        }
        CHECK(differ == 0);
      }
    }
  }
  SECTION("cols_dot: acc += F^T x over the columns of rows at a stride, rows in chunks") {
    struct Case {
      int rows, cols, ldf;
    };
    for (const Case& c : {Case{1024, 3000, 3008}, Case{1000, 1024, 1030}, Case{5, 77, 80}, Case{300, 1, 4}}) {
      INFO(c.rows << " rows, " << c.cols << " columns, stride " << c.ldf);
      const std::vector<float> f = random_floats(static_cast<std::size_t>(c.rows) * c.ldf, 31u + c.rows),
                               x = random_floats(static_cast<std::size_t>(c.rows), 32u),
                               acc = random_floats(static_cast<std::size_t>(c.cols), 33u);
      cuda::DeviceBuffer<float> df(f), dx(x), dacc(acc), scratch(cuda::kernels::cols_dot_scratch(c.cols));
      cuda::kernels::cols_dot(nullptr, df.data(), c.ldf, c.rows, c.cols, dx.data(), dacc.data(), scratch.data());
      const std::vector<float> got = dacc.download();
      const int chunks = std::min(8, c.rows), per = (c.rows + chunks - 1) / chunks;
      int differ = 0;
      for (int col = 0; col < c.cols; ++col) {
        float t = 0;
        for (int r0 = 0; r0 < c.rows; r0 += per) {
          float s = 0;
          for (int r = r0; r < std::min(c.rows, r0 + per); ++r)
            s = std::fmaf(f[static_cast<std::size_t>(r) * c.ldf + col], x[static_cast<std::size_t>(r)], s);
          t = r0 == 0 ? s : t + s;
        }
        differ += got[static_cast<std::size_t>(col)] != acc[static_cast<std::size_t>(col)] + t;
      }
      CHECK(differ == 0);
    }
  }
  SECTION("rows_dot's rate on the sweeps' shape at n = 65536 (printed, not asserted)") {
    const int rows = 63488, w = 1024, ldf = 32768 + 32;
    cuda::DeviceBuffer<float> df(static_cast<std::size_t>(rows) * ldf), dx(random_floats(w, 5)),
        dacc(static_cast<std::size_t>(rows));
    cudaMemset(df.data(), 0, df.size() * sizeof(float));
    cudaMemset(dacc.data(), 0, dacc.size() * sizeof(float));
    const double s =
        1e-3 * test::median_device_ms(
                   [&] { cuda::kernels::rows_dot(nullptr, df.data(), ldf, rows, w, dx.data(), dacc.data()); }, 5, false);
    std::printf("rows_dot: %d rows of %d floats: %.1f us, %.2f TB/s\n", rows, w, 1e6 * s,
                static_cast<double>(rows) * w * sizeof(float) / s * 1e-12);
    CHECK(cudaGetLastError() == cudaSuccess);
  }
}

#endif
