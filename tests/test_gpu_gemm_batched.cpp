// [gpu] tests of cuda::gemm_batched and the ec path's k-splitting on the device:
//   - every member of a batch in one launch is bitwise the single product with the batch's k
//     ranges (strided, pointer arrays in device memory, transposes, beta != 0, device scalars,
//     auto's device-side choice), and the members' gaps in C stay untouched;
//   - a split product is bitwise the FP32 sum, in range order, of its ranges' unsplit products
//     (inputs whose every 64-wide range holds its row's largest exponent, so the ranges' ec
//     scalings are the whole k's), as on the cpu emulation (test_gemm_batched.cpp);
//   - the split product's error against FP64 within the bound of the unsplit one, with the
//     hardware's mma bound (test_gpu_gemm.cpp: 1.5 ks units of 2^-23 per mma of ks products);
//   - auto over a batch chooses TF32 for all members when one needs it, as the cpu does.
// Skipped, with a warning, without a GPU.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tcsolve/gemm/batch.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"

using namespace tcsolve;

namespace {

#define SKIP_WITHOUT_GPU()                                                                  \
  if (!cuda::device_available()) {                                                          \
    WARN("no CUDA device: skipping the batched GEMM test (" << cuda::device_name() << ")"); \
    return;                                                                                 \
  }

std::vector<float> uniform(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = u(gen);
  return x;
}

bool same_bits(const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(a + i, b + i, sizeof(float)) != 0) return false;
  return true;
}

double gamma(int n, double u) { return n * u / (1 - n * u); }

}  // namespace

TEST_CASE("cuda::gemm_batched: each member bitwise the single product, strided and by pointer arrays",
          "[gpu][batched]") {
  SKIP_WITHOUT_GPU();
  struct Shape {
    int m, n, k, count;
    Op ta, tb;
  };
  // a few tiles and a long k (split), BERT's attention shapes (many small members), odd sizes
  for (const Shape s : {Shape{200, 130, 1500, 3, Op::n, Op::n}, Shape{128, 128, 64, 48, Op::t, Op::n},
                        Shape{128, 64, 128, 48, Op::n, Op::t}, Shape{77, 301, 333, 5, Op::t, Op::t}}) {
    const int rows_a = s.ta == Op::n ? s.m : s.k, cols_a = s.ta == Op::n ? s.k : s.m;
    const int rows_b = s.tb == Op::n ? s.k : s.n, cols_b = s.tb == Op::n ? s.n : s.k;
    const long long sa = static_cast<long long>(rows_a) * cols_a + 16,
                    sb = static_cast<long long>(rows_b) * cols_b + 8;
    for (long long sc :
         {static_cast<long long>(s.m) * s.n + 2, static_cast<long long>(s.m) * s.n + 1}) {  // pairs, not
      const std::vector<float> A = uniform(sa * s.count, 1), B = uniform(sb * s.count, 2),
                               C0 = uniform(sc * s.count, 3);
      cuda::DeviceBuffer<float> dA(A), dB(B), dC(C0), dC2(C0), dS(std::vector<float>{0.75f, -1.25f});
      cuda::Context ctx;  // its own stream: every upload below is ordered on it
      cuda::device_synchronize();
      for (Variant v : {Variant::ec_fp16, Variant::ec_tf32, Variant::auto_}) {
        INFO(to_string(v) << " " << s.m << "x" << s.n << "x" << s.k << " batch " << s.count << " stride_c "
                          << sc);
        dC.upload(C0, ctx.stream());
        Batch batch;
        batch.count = s.count, batch.stride_a = sa, batch.stride_b = sb, batch.stride_c = sc;
        const GemmInfo info = cuda::gemm_batched(ctx, v, s.ta, s.tb, s.m, s.n, s.k, 0.75f, dA.data(), rows_a,
                                                 dB.data(), rows_b, -1.25f, dC.data(), s.m, batch);
        const std::vector<float> got = dC.download(ctx.stream());
        CHECK(info.split_k == ec_k_split(s.m, s.n, s.k, s.count, 0).count);
        CHECK(info.kernels == CudaKernels::wgmma);
        // pointer arrays (device memory), members in reverse order, device scalars
        std::vector<const float*> pa, pb;
        std::vector<float*> pc;
        for (int b = s.count - 1; b >= 0; --b)
          pa.push_back(dA.data() + b * sa), pb.push_back(dB.data() + b * sb),
              pc.push_back(dC2.data() + b * sc);
        cuda::DeviceBuffer<const float*> da(pa), db(pb);
        cuda::DeviceBuffer<float*> dc(pc);
        cuda::device_synchronize();
        Batch arrays;
        arrays.count = s.count, arrays.a_array = da.data(), arrays.b_array = db.data(),
        arrays.c_array = dc.data();
        dC2.upload(C0, ctx.stream());
        const DeviceAuto on_device;
        cuda::gemm_batched(ctx, v, s.ta, s.tb, s.m, s.n, s.k, cuda::DeviceScalars{dS.data(), dS.data() + 1},
                           nullptr, rows_a, nullptr, rows_b, nullptr, s.m, arrays, {}, &on_device);
        const std::vector<float> got2 = dC2.download(ctx.stream());
        CHECK(same_bits(got.data(), got2.data(), got.size()));
        // each member alone with the batch's k ranges
        GemmOptions o;
        o.split_k = info.split_k;
        REQUIRE(ec_k_split(s.m, s.n, s.k, 1, o.split_k).length ==
                ec_k_split(s.m, s.n, s.k, s.count, 0).length);
        cuda::DeviceBuffer<float> one(static_cast<std::size_t>(s.m) * s.n);
        for (int b = 0; b < s.count; ++b) {
          one.upload(std::vector<float>(C0.begin() + b * sc, C0.begin() + b * sc + s.m * s.n), ctx.stream());
          const GemmInfo single = cuda::gemm(ctx, v, s.ta, s.tb, s.m, s.n, s.k, 0.75f, dA.data() + b * sa,
                                             rows_a, dB.data() + b * sb, rows_b, -1.25f, one.data(), s.m, o);
          if (v == Variant::auto_) REQUIRE(single.resolved == info.resolved);  // U(-1,1): every member FP16
          const std::vector<float> want = one.download(ctx.stream());
          CHECK(same_bits(want.data(), got.data() + b * sc, want.size()));
          for (long long g = static_cast<long long>(s.m) * s.n; g < sc; ++g)  // the gap is untouched
            CHECK(same_bits(&got[b * sc + g], &C0[b * sc + g], 1));
        }
      }
    }
  }
}

TEST_CASE(
    "cuda: a split ec product is bitwise the FP32 sum of its ranges' products, and within the unsplit bound",
    "[gpu][batched]") {
  SKIP_WITHOUT_GPU();
  const int m = 150, n = 100, k = 8192;  // 2 tiles: automatic gives 32 ranges of 256
  std::vector<float> A = uniform(static_cast<std::size_t>(m) * k, 5),
                     B = uniform(static_cast<std::size_t>(k) * n, 6);
  // every 64-wide range of each row of A and column of B holds a 1.5: its ec scaling is the row's
  for (int p = 0; p < k; p += 64) {
    for (int i = 0; i < m; ++i) A[i + static_cast<std::size_t>(p) * m] = (i + p) % 3 ? 1.5f : -1.5f;
    for (int j = 0; j < n; ++j) B[p + static_cast<std::size_t>(j) * k] = (j + p) % 5 ? -1.5f : 1.5f;
  }
  cuda::DeviceBuffer<float> dA(A), dB(B), dC(static_cast<std::size_t>(m) * n),
      part(static_cast<std::size_t>(m) * n);
  cuda::Context ctx;
  for (Variant v : {Variant::ec_fp16, Variant::ec_tf32}) {
    INFO(to_string(v));
    const GemmInfo info =
        cuda::gemm(ctx, v, Op::n, Op::n, m, n, k, 1.0f, dA.data(), m, dB.data(), k, 0.0f, dC.data(), m);
    const KSplit split = ec_k_split(m, n, k, 1, 0);
    REQUIRE(split.count == 32);
    CHECK(info.split_k == 32);
    const std::vector<float> got = dC.download(ctx.stream());
    GemmOptions whole;
    whole.split_k = 1;
    std::vector<float> sum(got.size());
    for (int r = 0; r < split.count; ++r) {
      const int p0 = r * split.length, len = std::min(split.length, k - p0);
      CHECK(cuda::gemm(ctx, v, Op::n, Op::n, m, n, len, 1.0f, dA.data() + static_cast<std::size_t>(p0) * m, m,
                       dB.data() + p0, k, 0.0f, part.data(), m, whole)
                .split_k == 1);
      const std::vector<float> pr = part.download(ctx.stream());
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = r == 0 ? pr[i] : sum[i] + pr[i];
    }
    CHECK(same_bits(got.data(), sum.data(), sum.size()));
    // against FP64: split and unsplit within the same bound (batch.hpp), with the hardware's mma
    // units (1.5 x 16 per FP16 mma, 1.5 x 8 per TF32 one; 6 and 12 mmas chained per 32-k chunk)
    cuda::gemm(ctx, v, Op::n, Op::n, m, n, k, 1.0f, dA.data(), m, dB.data(), k, 0.0f, part.data(), m, whole);
    const std::vector<float> unsplit = part.download(ctx.stream());
    const double bound =
        3 * 0x1p-22 + gamma(v == Variant::ec_fp16 ? 6 * 24 : 12 * 12, 0x1p-23) + gamma(k / 32 - 1, 0x1p-24);
    double worst_split = 0, worst_unsplit = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double exact = 0, scale = 0;
        for (int p = 0; p < k; ++p) {
          const double x = static_cast<double>(A[i + static_cast<std::size_t>(p) * m]) *
                           B[p + static_cast<std::size_t>(j) * k];
          exact += x, scale += std::fabs(x);
        }
        const std::size_t at = i + static_cast<std::size_t>(j) * m;
        worst_split = std::max(worst_split, std::fabs(got[at] - exact) / scale);
        worst_unsplit = std::max(worst_unsplit, std::fabs(unsplit[at] - exact) / scale);
      }
    INFO("max |C - C64| / (|A||B|): split " << worst_split << ", unsplit " << worst_unsplit << ", bound "
                                            << bound);
    CHECK(worst_split <= bound);
    CHECK(worst_unsplit <= bound);
    CHECK(worst_split > 0);
  }
}

TEST_CASE("cuda::gemm_batched with auto: TF32 for every member when one needs it, as the cpu chooses",
          "[gpu][batched]") {
  SKIP_WITHOUT_GPU();
  const int m = 130, n = 140, k = 96, count = 3;
  std::vector<float> A = uniform(static_cast<std::size_t>(m) * k * count, 8),
                     B = uniform(static_cast<std::size_t>(k) * n * count, 9);
  A[static_cast<std::size_t>(m) * k * 2 + 5] = 1e-25f;  // member 2: a row with an exponent range above 39
  cuda::DeviceBuffer<float> dA(A), dB(B), dC(static_cast<std::size_t>(m) * n * count),
      one(static_cast<std::size_t>(m) * n);
  cuda::Context ctx;
  Batch batch;
  batch.count = count, batch.stride_a = static_cast<long long>(m) * k,
  batch.stride_b = static_cast<long long>(k) * n, batch.stride_c = static_cast<long long>(m) * n;
  const GemmInfo info = cuda::gemm_batched(ctx, Variant::auto_, Op::n, Op::n, m, n, k, 1.0f, dA.data(), m,
                                           dB.data(), k, 0.0f, dC.data(), m, batch);
  CHECK(info.resolved == Variant::ec_tf32);
  std::vector<float> hC(static_cast<std::size_t>(m) * n * count);
  CHECK(cpu::gemm_batched(Variant::auto_, Op::n, Op::n, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f,
                          hC.data(), m, batch)
            .resolved == Variant::ec_tf32);
  const std::vector<float> got = dC.download(ctx.stream());
  for (int b = 0; b < count; ++b) {
    cuda::gemm(ctx, Variant::ec_tf32, Op::n, Op::n, m, n, k, 1.0f, dA.data() + b * batch.stride_a, m,
               dB.data() + b * batch.stride_b, k, 0.0f, one.data(), m);
    const std::vector<float> want = one.download(ctx.stream());
    CHECK(same_bits(want.data(), got.data() + b * batch.stride_c, want.size()));
  }
}
