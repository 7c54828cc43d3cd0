// [gpu] tests of the partial-pivoting cluster leaf kernel (solver/src/cuda/panel.cu) at each of
// its widths (32, 16, 8 columns: a 16-CTA cluster holds 16384, 32768 (36864 with 9 rows a thread) or
// 65536 rows) and each
// build (look-ahead posting or not, rows moved by bulk copies or by the threads): one tall leaf
// against the host emulation of partial pivoting (leaf_test_util.hpp: the same fmaf, the same
// reciprocal, the lower row on a tie), bitwise: its pivots, its factored rows in their places,
// its pairs. Skipped, with a warning, without a GPU or off Hopper.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <Eigen/Dense>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "cuda/kernels.hpp"
#include "cuda_test_util.hpp"
#include "leaf_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace {

using namespace tcsolve;
using test::RowMajorF;

constexpr int kLd = 36;  ///< the test matrix's row length: 16-byte rows, room for 32 columns

}  // namespace

TEST_CASE(
    "the cluster leaf kernel at each width and build gives bitwise the host emulation's pivots, factored "
    "rows in their places and pairs, on leaves as tall as its cluster holds",
    "[gpu]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device: skipping the cluster leaf kernel (" << cuda::device_name() << ")");
    return;
  }
  if (cuda::kernels::leaf_width(1000) == 0) {
    WARN("the cluster leaf kernel does not run on " << cuda::device_name() << " (Hopper only): skipped");
    return;
  }
  struct Case {
    int width, rows;
  };
  // The tallest leaf each kernel takes (its cluster's last CTA partly filled), and 8 columns on
  // 3000 rows and 32 on 1000 (1-CTA clusters). The time of one leaf (the default build, the
  // median of 9 after a warm-up) is printed, not asserted.
  const Case cases[] = {{32, 16384 - 5}, {16, 32768 - 5}, {16, 36864 - 5}, {8, 65536 - 5}, {8, 3000}, {32, 1000}};
  for (const Case& t : cases) {
    for (int w : {t.width, t.width - 3}) {  // whole 16-byte rows (bulk copies allowed), and not
      INFO("width " << t.width << ", " << t.rows << " rows, w = " << w);
      REQUIRE(cuda::kernels::leaf_width(t.rows) >= t.width);
      std::mt19937 rng(static_cast<unsigned>(t.rows + w));
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      RowMajorF a(t.rows, kLd);
      for (int i = 0; i < t.rows; ++i)
        for (int j = 0; j < kLd; ++j) a(i, j) = dist(rng) * std::ldexp(1.0f, (i * 7) % 13 - 6);
      RowMajorF work = RowMajorF::Zero(t.rows, 32);
      work.leftCols(w) = a.leftCols(w);
      std::vector<int> ids(static_cast<std::size_t>(t.rows));
      std::iota(ids.begin(), ids.end(), 0);
      const std::vector<int> pivots = test::eliminate_host(work, ids, w, nullptr, nullptr, nullptr);
      const std::vector<int> dest = test::destinations(pivots, t.rows, w);
      RowMajorF expected = a;
      for (int r = 0; r < t.rows; ++r)
        expected.block(dest[static_cast<std::size_t>(r)], 0, 1, w) = work.block(r, 0, 1, w);
      for (bool ahead : {true, false})
        for (cuda::kernels::LeafCopies copies : {cuda::kernels::LeafCopies::bulk, cuda::kernels::LeafCopies::threads}) {
          INFO("look-ahead " << ahead << ", copies " << (copies == cuda::kernels::LeafCopies::bulk ? "bulk" : "threads"));
          cuda::kernels::LeafVariant variant;
          variant.ahead = ahead;
          variant.copies = copies;
          cuda::DeviceBuffer<float> d_a(test::host_vector(a.data(), a.size()));
          cuda::DeviceBuffer<int> info(std::vector<int>{0}), pairs(cuda::kernels::interchange_scratch_ints(w));
          cuda::kernels::factor_leaf(nullptr, variant, t.width, d_a.data(), kLd, t.rows, 0, w, pairs.data(),
                                     info.data());
          const std::vector<float> got = d_a.download();
          CHECK(info.download()[0] == 0);
          // every row of the leaf in its place, bitwise; the columns beyond w untouched
          CHECK(std::memcmp(expected.data(), got.data(), got.size() * sizeof(float)) == 0);
          // the pairs: row dst receives the original row src, as many as rows moved
          const std::vector<int> pr = pairs.download();
          const int count = pr[0];
          int moved = 0;
          for (int r = 0; r < t.rows; ++r) moved += dest[static_cast<std::size_t>(r)] != r;
          CHECK(count == moved);
          CHECK(count <= 2 * w);
          for (int k = 0; k < count; ++k) {
            const int dst = pr[static_cast<std::size_t>(1 + k)], src = pr[static_cast<std::size_t>(1 + 2 * w + k)];
            REQUIRE(src >= 0);
            REQUIRE(src < t.rows);
            CHECK(dest[static_cast<std::size_t>(src)] == dst);
          }
        }
      if (w == t.width)  // the time of one leaf per build: printed, not asserted
        for (bool ahead : {true, false})
          for (cuda::kernels::LeafCopies copies : {cuda::kernels::LeafCopies::bulk, cuda::kernels::LeafCopies::threads}) {
            cuda::kernels::LeafVariant variant;
            variant.ahead = ahead;
            variant.copies = copies;
            cuda::DeviceBuffer<float> d_a(test::host_vector(a.data(), a.size()));
            cuda::DeviceBuffer<int> info(std::vector<int>{0}), pairs(cuda::kernels::interchange_scratch_ints(w));
            const double ms = test::median_device_ms(
                [&] {
                  cuda::kernels::factor_leaf(nullptr, variant, t.width, d_a.data(), kLd, t.rows, 0, w, pairs.data(),
                                             info.data());
                },
                9, true);
            std::printf("cluster leaf: width %2d, %5d rows, look-ahead %d, %s copies: %.1f us a leaf (%.2f us a column)\n",
                        t.width, t.rows, ahead ? 1 : 0, copies == cuda::kernels::LeafCopies::bulk ? "bulk" : "threads",
                        1e3 * ms, 1e3 * ms / w);
          }
    }
  }
}

#endif
