// Batched products and the ec path's k-splitting on the cpu emulation (the oracle of the cuda
// kernels): the splitting rule (batch.hpp), a split product equal bitwise to the FP32 sum of its
// ranges' products, the error of a split product against FP64 within the derived bound of the
// unsplit one, and cpu::gemm_batched member by member (strided, pointer arrays, auto's one
// choice for the batch, argument errors). The cuda kernels against these: test_gpu_gemm_batched.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "tcsolve/gemm/batch.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/error.hpp"

using tcsolve::Batch;
using tcsolve::GemmInfo;
using tcsolve::GemmOptions;
using tcsolve::KSplit;
using tcsolve::Op;
using tcsolve::Variant;

namespace {

/// U(-1, 1) values, but element p of every column (A is stored m x k with ld m when `rows`: the
/// element of every row) at p % 64 == 0 has magnitude 1.5: every 64-wide range of k holds its
/// row's (column's) largest exponent, so the ec scaling of a range equals the whole k's.
std::vector<float> ranged(int rows, int k, bool rows_are_vectors, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(rows) * k);
  for (int r = 0; r < rows; ++r)
    for (int p = 0; p < k; ++p) {
      float v = u(gen);
      if (p % 64 == 0) v = v < 0 ? -1.5f : 1.5f;
      // A: m x k column-major (element (r, p) at r + p rows); B: k x n (element (p, r) at p + r k)
      const std::size_t at =
          rows_are_vectors ? r + static_cast<std::size_t>(p) * rows : p + static_cast<std::size_t>(r) * k;
      x[at] = v;
    }
  return x;
}

double gamma(int n, double u) { return n * u / (1 - n * u); }

}  // namespace

TEST_CASE("the k-splitting rule: by shape only, whole 64-wide ranges, no empty range", "[gemm][batched]") {
  using tcsolve::ec_k_split;
  // automatic: 128 or more tiles over the batch are never split
  CHECK(ec_k_split(16384, 1024, 16384, 1, 0).count == 1);
  CHECK(ec_k_split(128, 128, 64, 384, 0).count == 1);  // BERT's attention product: 384 tiles
  CHECK(ec_k_split(512, 512, 512, 64, 0).count == 1);  // CuPy's batched 64 x 512^3: 1024 tiles
  // one tile and a long k: ranges of at least 256 until about 256 units
  const KSplit one = ec_k_split(100, 100, 16384, 1, 0);
  CHECK(one.count == 64);
  CHECK(one.length == 256);
  // 128 tiles (16384 x 128): not split; 64 tiles of k 16384: 4 ranges (256 units)
  CHECK(ec_k_split(16384, 128, 16384, 1, 0).count == 1);
  CHECK(ec_k_split(8192, 128, 16384, 1, 0).count == 4);
  // k too short to split: automatic ranges hold 256 or more, explicit ones 64 or more
  CHECK(ec_k_split(64, 64, 500, 1, 0).count == 2);
  CHECK(ec_k_split(64, 64, 300, 1, 0).count == 1);
  CHECK(ec_k_split(64, 64, 64, 1, 8).count == 1);
  CHECK(ec_k_split(64, 64, 1000, 1, 1).count == 1);  // 1: never
  const KSplit three = ec_k_split(64, 64, 1000, 1, 3);
  CHECK(three.count == 3);
  CHECK(three.length == 384);
  // properties over a sweep of shapes and requests
  for (std::int64_t k : {1, 63, 64, 65, 255, 256, 257, 1000, 4096, 4097, 30000})
    for (std::int64_t tiles_m : {1, 3, 64, 127, 128})
      for (std::int64_t batch : {1, 2, 7})
        for (int requested : {0, 1, 2, 3, 5, 64, 1000}) {
          const KSplit s = ec_k_split(tiles_m * 128 - 5, 100, k, batch, requested);
          const std::int64_t kp = (k + 63) / 64 * 64;
          INFO("k " << k << " tiles " << tiles_m << " batch " << batch << " requested " << requested << ": "
                    << s.count << " x " << s.length);
          REQUIRE(s.count >= 1);
          REQUIRE(s.length % 64 == 0);
          REQUIRE(static_cast<std::int64_t>(s.count) * s.length >= kp);     // covers k
          REQUIRE(static_cast<std::int64_t>(s.count - 1) * s.length < kp);  // no empty range
          if (requested == 1 || (requested == 0 && tiles_m * batch >= 128)) REQUIRE(s.count == 1);
          if (requested >= 2) REQUIRE(s.count <= requested);
          // the error bound's condition: L + count - 1 <= N (chunks of 32 k)
          const std::int64_t chunks = kp / 32, per = s.length / 32;
          REQUIRE(per + s.count - 1 <= std::max<std::int64_t>(chunks, per));
        }
}

TEST_CASE("a split ec product is bitwise the FP32 sum, in order, of its ranges' products",
          "[gemm][batched]") {
  const int m = 37, n = 29, k = 1000;
  const std::vector<float> A = ranged(m, k, true, 1), B = ranged(n, k, false, 2);
  for (Variant v : {Variant::ec_fp16, Variant::ec_tf32}) {
    for (int requested : {0, 3}) {
      INFO(tcsolve::to_string(v) << ", split_k " << requested);
      GemmOptions o;
      o.split_k = requested;
      const KSplit split = tcsolve::ec_k_split(m, n, k, 1, requested);
      REQUIRE(split.count == (requested == 0 ? 4 : 3));
      std::vector<float> C(static_cast<std::size_t>(m) * n, 0.25f);
      const std::vector<float> c0 = C;
      const GemmInfo info = tcsolve::cpu::gemm(v, Op::n, Op::n, m, n, k, 0.75f, A.data(), m, B.data(), k,
                                               -2.0f, C.data(), m, o);
      CHECK(info.split_k == split.count);
      // each range alone, unsplit, alpha 1, beta 0; then ((R0 + R1) + R2) ... in FP32
      GemmOptions whole;
      whole.split_k = 1;
      std::vector<float> sum(static_cast<std::size_t>(m) * n), part(sum.size());
      for (int r = 0; r < split.count; ++r) {
        const int p0 = r * split.length, len = std::min(split.length, k - p0);
        const GemmInfo ri =
            tcsolve::cpu::gemm(v, Op::n, Op::n, m, n, len, 1.0f, A.data() + static_cast<std::size_t>(p0) * m,
                               m, B.data() + p0, k, 0.0f, part.data(), m, whole);
        REQUIRE(ri.split_k == 1);
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = r == 0 ? part[i] : sum[i] + part[i];
      }
      bool differs_from_unsplit = false;
      std::vector<float> unsplit = c0;
      tcsolve::cpu::gemm(v, Op::n, Op::n, m, n, k, 0.75f, A.data(), m, B.data(), k, -2.0f, unsplit.data(), m,
                         whole);
      for (std::size_t i = 0; i < sum.size(); ++i) {
        const float want = 0.75f * sum[i] + -2.0f * c0[i];
        REQUIRE(C[i] == want);
        differs_from_unsplit = differs_from_unsplit || C[i] != unsplit[i];
      }
      CHECK(differs_from_unsplit);  // the ranges really were summed apart
    }
  }
}

TEST_CASE("a split ec product stays within the unsplit product's error bound against FP64",
          "[gemm][batched]") {
  // 1 tile and k = 8192: automatic gives 32 ranges of 256. Bound (componentwise, per |A||B|):
  // the split representation 3 x 2^-22 (lo*lo dropped, lo's rounding), each chunk's 6 chained
  // mmas of 16 (the emulation's 25-bit RZ: 9 units of 2^-23 each) and, per batch.hpp, at most
  // N - 1 = k/32 - 1 FP32 additions outside, split or not.
  const int m = 40, n = 24, k = 8192;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> A(static_cast<std::size_t>(m) * k), B(static_cast<std::size_t>(k) * n);
  for (float& x : A) x = u(gen);
  for (float& x : B) x = u(gen);
  const double bound = 3 * 0x1p-22 + gamma(6 * 9, 0x1p-23) + gamma(k / 32 - 1, 0x1p-24);
  for (Variant v : {Variant::ec_fp16, Variant::ec_tf32}) {
    std::vector<double> worst;
    for (int requested : {0, 1}) {
      GemmOptions o;
      o.split_k = requested;
      std::vector<float> C(static_cast<std::size_t>(m) * n);
      const GemmInfo info =
          tcsolve::cpu::gemm(v, Op::n, Op::n, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f, C.data(), m, o);
      CHECK(info.split_k == (requested == 0 ? 32 : 1));
      double w = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          double exact = 0, scale = 0;
          for (int p = 0; p < k; ++p) {
            const double a = A[i + static_cast<std::size_t>(p) * m],
                         b = B[p + static_cast<std::size_t>(j) * k];
            exact += a * b, scale += std::fabs(a * b);
          }
          w = std::max(w, std::fabs(C[i + static_cast<std::size_t>(j) * m] - exact) / scale);
        }
      worst.push_back(w);
    }
    INFO(tcsolve::to_string(v) << ": split " << worst[0] << ", unsplit " << worst[1] << ", bound " << bound);
    CHECK(worst[0] <= bound);
    CHECK(worst[1] <= bound);
    CHECK(worst[0] > 0);  // not exact: the comparison sees the arithmetic
    CHECK(worst[0] <
          4 * 0x1p-24 * std::sqrt(static_cast<double>(k)));  // and typical: the table's 4 u sqrt(k)
  }
}

TEST_CASE("cpu::gemm_batched: each member is the single product with the batch's k ranges",
          "[gemm][batched]") {
  const int m = 70, n = 50, k = 700, count = 3;
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const long long sa = static_cast<long long>(m) * k + 3, sb = static_cast<long long>(k) * n + 5,
                  sc = static_cast<long long>(m) * n + 1;
  std::vector<float> A(sa * count), B(sb * count), C(sc * count);
  for (float& x : A) x = u(gen);
  for (float& x : B) x = u(gen);
  for (float& x : C) x = u(gen);
  const KSplit split = tcsolve::ec_k_split(m, n, k, count, 0);
  REQUIRE(split.count == 2);  // 3 tiles, k 700 (704): two ranges of 384 and 320
  REQUIRE(tcsolve::ec_k_split(m, n, k, 1, split.count).length == split.length);
  for (Variant v : {Variant::ec_fp16, Variant::ec_tf32, Variant::fp32_simt}) {
    INFO(tcsolve::to_string(v));
    std::vector<float> strided = C;
    Batch batch;
    batch.count = count, batch.stride_a = sa, batch.stride_b = sb, batch.stride_c = sc;
    const GemmInfo info = tcsolve::cpu::gemm_batched(v, Op::n, Op::n, m, n, k, 1.25f, A.data(), m, B.data(),
                                                     k, 0.5f, strided.data(), m, batch);
    const bool ec = v != Variant::fp32_simt;
    CHECK(info.split_k == (ec ? 2 : 1));
    // pointer arrays, members in reverse order
    std::vector<float> arrays = C;
    std::vector<const float*> pa, pb;
    std::vector<float*> pc;
    for (int b = count - 1; b >= 0; --b)
      pa.push_back(A.data() + b * sa), pb.push_back(B.data() + b * sb), pc.push_back(arrays.data() + b * sc);
    Batch by_pointer;
    by_pointer.count = count, by_pointer.a_array = pa.data(), by_pointer.b_array = pb.data(),
    by_pointer.c_array = pc.data();
    tcsolve::cpu::gemm_batched(v, Op::n, Op::n, m, n, k, 1.25f, nullptr, m, nullptr, k, 0.5f, nullptr, m,
                               by_pointer);
    CHECK(arrays == strided);
    GemmOptions o;
    o.split_k = info.split_k;
    for (int b = 0; b < count; ++b) {
      std::vector<float> one(C.begin() + b * sc, C.begin() + b * sc + m * n);
      tcsolve::cpu::gemm(v, Op::n, Op::n, m, n, k, 1.25f, A.data() + b * sa, m, B.data() + b * sb, k, 0.5f,
                         one.data(), m, o);
      CHECK(std::equal(one.begin(), one.end(), strided.begin() + b * sc));
      CHECK(strided[b * sc + m * n] == C[b * sc + m * n]);  // the gap between members untouched
    }
  }
}

TEST_CASE("cpu::gemm_batched with auto chooses FP16 or TF32 once for the batch", "[gemm][batched]") {
  const int m = 20, n = 20, k = 64;
  std::vector<float> A(static_cast<std::size_t>(m) * k * 2, 0.5f),
      B(static_cast<std::size_t>(k) * n * 2, 0.25f);
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = 0.5f + 0.001f * static_cast<float>(i % 97);
  A[static_cast<std::size_t>(m) * k + 1] = 1e-20f;  // member 1: a row with an exponent range of about 66
  std::vector<float> C(static_cast<std::size_t>(m) * n * 2);
  Batch batch;
  batch.count = 2, batch.stride_a = static_cast<long long>(m) * k,
  batch.stride_b = static_cast<long long>(k) * n, batch.stride_c = static_cast<long long>(m) * n;
  const GemmInfo info = tcsolve::cpu::gemm_batched(Variant::auto_, Op::n, Op::n, m, n, k, 1.0f, A.data(), m,
                                                   B.data(), k, 0.0f, C.data(), m, batch);
  CHECK(info.resolved == Variant::ec_tf32);
  std::vector<float> alone(static_cast<std::size_t>(m) * n), tf32(alone.size());
  CHECK(tcsolve::cpu::gemm(Variant::auto_, Op::n, Op::n, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f,
                           alone.data(), m)
            .resolved == Variant::ec_fp16);  // member 0 alone would take FP16
  tcsolve::cpu::gemm(Variant::ec_tf32, Op::n, Op::n, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f,
                     tf32.data(), m);
  CHECK(std::equal(tf32.begin(), tf32.end(), C.begin()));
}

TEST_CASE("cpu::gemm_batched refuses bad batches by name; an empty batch runs nothing", "[gemm][batched]") {
  std::vector<float> A(64, 1.0f), B(64, 1.0f), C(64, 7.0f);
  auto call = [&](const Batch& b) {
    return tcsolve::cpu::gemm_batched(Variant::ec_fp16, Op::n, Op::n, 4, 4, 4, 1.0f, A.data(), 4, B.data(), 4,
                                      0.0f, C.data(), 4, b);
  };
  Batch negative;
  negative.count = -1;
  CHECK_THROWS_WITH(call(negative), Catch::Contains("batch count must be >= 0"));
  Batch overlap;
  overlap.count = 2, overlap.stride_c = 8;  // a 4 x 4 C spans 16
  CHECK_THROWS_WITH(call(overlap), Catch::Contains("stride_c 8 makes the members' C overlap"));
  const float* arrays[1] = {A.data()};
  Batch partial;
  partial.count = 1, partial.a_array = arrays;
  CHECK_THROWS_WITH(call(partial), Catch::Contains("all three pointer arrays"));
  Batch empty;
  empty.count = 0;
  call(empty);
  CHECK(C == std::vector<float>(64, 7.0f));
}
