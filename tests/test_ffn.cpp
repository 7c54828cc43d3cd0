// [ffn] tests of the FFN demo (tcsolve/demos/ffn.hpp, `tcsolve ffn`): the FP32 GELU against
// FP64 within its derived bound, the seeded data, the accuracy claims on the cpu
// emulation (ootomo-fp16 and ec-fp16 at most 2x fp32-simt's error, fp16-tc in the band its
// 2^-11 input rounding predicts), the command line, and ([gpu]) the cuda block against the cpu
// block within a derived componentwise bound.
//
// Cost: the emulated variants take ~10-40 ns per product and term on one core, and one block
// is 2 T d_model d_ff products, so the BERT-size cases use T = 16 (~80M products per run).
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "tcsolve/demos/ffn.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/metrics.hpp"
#include "tcsolve/gemm/random.hpp"
#include "tcsolve/gemm/variant.hpp"

using namespace tcsolve;
using demos::FfnBench;
using demos::FfnProblem;
using demos::FfnShape;
using tcsolve::test::contains;
using tcsolve::test::Json;
using tcsolve::test::require_one_object;
using tcsolve::test::run_tcsolve;

namespace {

const double r = info(Variant::fp32_simt).unit_roundoff;   // 2^-24, FP32 RN
const double u16 = info(Variant::fp16_tc).unit_roundoff;   // 2^-11, FP16 RN input rounding
const double r64 = info(Variant::fp64).unit_roundoff;      // 2^-53

/// max_x |GELU'(x)| = GELU'(sqrt 2) = Phi(sqrt 2) + sqrt 2 phi(sqrt 2) = 1.12897...: the
/// Lipschitz constant of GELU (its minimum slope is -0.170 at -sqrt 2).
constexpr double kGeluLipschitz = 1.129;

double gamma(double n, double u) {
  REQUIRE(n * u < 1);
  return n * u / (1 - n * u);
}

std::string name(Variant v) { return std::string(to_string(v)); }

/// The block's error on the cpu backend, one run.
double cpu_error(FfnBench& bench, Variant v) {
  const demos::FfnResult res = bench.run(v);
  INFO(name(v) << " ran as " << demos::resolved_name(res.info));
  CHECK(res.info.first.resolved != Variant::fp32_simt);  // no silent fallback to the baseline
  return res.relative_error;
}

}  // namespace

// =============================================================================================
// GELU and data
// =============================================================================================

TEST_CASE("the FP32 GELU is within 3 * 2^-24 * |x| of the FP64 GELU (derivation in ffn.hpp)", "[ffn]") {
  // Every multiple of 2^-10 in [-16, 16], then 10^6 random values: U(-12, 12) and log-uniform
  // magnitudes 2^-40 .. 2^6 of either sign (tiny x: GELU(x) ~ x/2; large negative x: GELU -> 0).
  std::vector<float> xs;
  for (int i = -16 * 1024; i <= 16 * 1024; ++i) xs.push_back(static_cast<float>(i) * 0x1p-10f);
  Rng rng(2024);
  std::uniform_real_distribution<double> uniform(-12.0, 12.0), log2_mag(-40.0, 6.0);
  for (int i = 0; i < 500000; ++i) {
    xs.push_back(static_cast<float>(uniform(rng)));
    const double mag = std::exp2(log2_mag(rng));
    xs.push_back(static_cast<float>(i % 2 ? mag : -mag));
  }
  double worst = 0;  // max |err| / (r |x|)
  float worst_x = 0;
  for (float x : xs) {
    const double err = std::fabs(static_cast<double>(demos::gelu(x)) - demos::gelu(static_cast<double>(x)));
    if (x == 0.0f) {
      REQUIRE(err == 0);
      continue;
    }
    const double units = err / (r * std::fabs(static_cast<double>(x)));
    if (units > worst) worst = units, worst_x = x;
  }
  std::printf("\nGELU: max |gelu32(x) - gelu64(x)| / (2^-24 |x|) = %.3f at x = %.9g (bound %.1f)\n", worst,
              static_cast<double>(worst_x), demos::kGeluErrorUnits);
  INFO("worst x = " << worst_x);
  CHECK(worst <= demos::kGeluErrorUnits);
  CHECK(worst >= demos::kGeluErrorUnits / 8);  // the bound is not vacuous

  // The FP64 reference itself: GELU(1) = Phi(1), and GELU(-x) = GELU(x) - x (x Phi(-x) = x - x Phi(x)),
  // to a few units of 2^-53.
  CHECK(std::fabs(demos::gelu(1.0) - 0.8413447460685429486) <= 4 * r64);
  for (double x : {0.25, 1.0, 2.5, 6.0})
    CHECK(std::fabs(demos::gelu(-x) - (demos::gelu(x) - x)) <= 8 * r64 * x);
}

TEST_CASE("make_problem draws BERT's N(0, 0.02^2) weights and layer-normalized tokens, reproducibly", "[ffn]") {
  const FfnShape shape{32, 768, 3072};
  const FfnProblem p = demos::make_problem(shape, 7);
  REQUIRE(p.X.size() == 768u * 32u);
  REQUIRE(p.W1.size() == 3072u * 768u);
  REQUIRE(p.W2.size() == 768u * 3072u);
  REQUIRE(p.b1.size() == 3072u);
  REQUIRE(p.b2.size() == 768u);
  // sample standard deviation of n = 2.4e6 normal draws: relative standard error 1/sqrt(2n) < 1e-3
  for (const std::vector<float>* w : {&p.W1, &p.W2}) {
    double sum2 = 0;
    for (float v : *w) sum2 += static_cast<double>(v) * v;
    CHECK(std::sqrt(sum2 / w->size()) == Approx(demos::kBertInitStd).epsilon(5e-3));
  }
  // LayerNorm in double, one FP32 rounding per entry: mean 0 and variance 1 per token up to
  // |x| 2^-24 per entry (the eps 1e-12 changes the variance by 1e-12)
  for (int j = 0; j < shape.tokens; ++j) {
    double mean = 0, var = 0;
    for (int i = 0; i < shape.d_model; ++i) mean += p.X[static_cast<std::size_t>(j) * shape.d_model + i];
    mean /= shape.d_model;
    for (int i = 0; i < shape.d_model; ++i) {
      const double d = p.X[static_cast<std::size_t>(j) * shape.d_model + i] - mean;
      var += d * d;
    }
    var /= shape.d_model;
    CHECK(std::fabs(mean) <= 8 * r);
    CHECK(std::fabs(var - 1) <= 8 * r);
  }
  const FfnProblem again = demos::make_problem(shape, 7), other = demos::make_problem(shape, 8);
  CHECK(again.X == p.X);
  CHECK(again.W1 == p.W1);
  CHECK(again.b2 == p.b2);
  CHECK(other.W1 != p.W1);
  CHECK_THROWS_AS(demos::make_problem(FfnShape{0, 768, 3072}, 1), InvalidInput);
  CHECK_THROWS_AS(demos::make_problem(FfnShape{4, 768, -1}, 1), InvalidInput);
}

TEST_CASE("the block on the host computes GELU(W1 X + b1) W2 + b2 as documented (fp64 variant against the FP64 reference)", "[ffn]") {
  // Through the fp64 variant each GEMM is exact to FP64 and then rounded once to FP32, so the
  // block's error is that of FP32 storage of H and Y, the FP32 bias additions and the FP32 GELU:
  // a few units of 2^-24 relative. A wrong layout, bias index or activation would be O(1).
  const FfnProblem p = demos::make_problem(FfnShape{8, 96, 160}, 3);
  demos::FfnInfo info;
  const std::vector<float> Y = demos::ffn_forward(Variant::fp64, p, &info);
  const std::vector<double> Y64 = demos::ffn_reference(p);
  CHECK(info.first.resolved == Variant::fp64);
  CHECK(info.second.resolved == Variant::fp64);
  const double err = relative_residual(Y.data(), 96, Y64.data(), 96, 8);
  INFO("fp64 block error " << err);
  CHECK(err <= 16 * r);
  CHECK(err > 0);
}

// =============================================================================================
// The accuracy claims (cpu emulation)
// =============================================================================================

TEST_CASE("BERT-base FFN (768, 3072, T = 16): ootomo-fp16 and ec-fp16 errors are at most 2x fp32-simt's", "[ffn]") {
  const FfnProblem p = demos::make_problem(FfnShape{16, demos::kBertDModel, demos::kBertDFf}, 11);
  FfnBench bench(Backend::cpu, p);
  const double simt = bench.run(Variant::fp32_simt).relative_error;
  const double ootomo = cpu_error(bench, Variant::ootomo_fp16);
  const double ec = cpu_error(bench, Variant::ec_fp16);
  std::printf("\nFFN 768/3072, T = 16 (cpu): fp32-simt %.3e, ootomo-fp16 %.3e, ec-fp16 %.3e\n", simt, ootomo, ec);
  // fp32-simt itself: the errors of an FP32 block are a few 2^-24 (random signs: no sqrt(k) growth
  // in the relative Frobenius norm beyond a small factor)
  CHECK(simt <= 64 * r);
  CHECK(ootomo <= 2 * simt);
  CHECK(ec <= 2 * simt);
}

TEST_CASE("smaller FFN blocks, three seeds: every ec-* and ootomo-* variant and auto stay within 2x fp32-simt", "[ffn]") {
  const Variant variants[] = {Variant::ootomo_fp16, Variant::ootomo_tf32, Variant::ec_fp16, Variant::ec_tf32,
                              Variant::auto_};
  for (std::uint64_t seed : {21u, 22u, 23u}) {
    const FfnProblem p = demos::make_problem(FfnShape{16, 256, 1024}, seed);
    FfnBench bench(Backend::cpu, p);
    const double simt = bench.run(Variant::fp32_simt).relative_error;
    for (Variant v : variants) {
      const double err = cpu_error(bench, v);
      INFO("seed " << seed << ": " << name(v) << " " << err << ", fp32-simt " << simt);
      CHECK(err <= 2 * simt);
    }
  }
}

TEST_CASE("BERT-base FFN (T = 16): fp16-tc's error is in the band its 2^-11 input rounding predicts, [u16/4, 4 u16]", "[ffn]") {
  // Model (u16 = 2^-11): RN to FP16 errs by at most u16 relative; with significands spread as in
  // Benford's law the RMS relative error of one rounding is u16 sqrt(E[1/m^2] / 3) = 0.42 u16
  // (E[1/m^2] = 0.54 for m in [1, 2)); a product of two rounded inputs carries 0.60 u16, and a sum
  // of such products with random signs the same relative RMS error. The first GEMM's error
  // reaches Y through GELU' (W2 GELU'(Z) dZ); with Z ~ N(0, 0.555^2) (768 * 0.02^2 + 0.02^2) that
  // adds E[GELU'(Z)^2] var(Z) / E[GELU(Z)^2] = 1.07 times the second GEMM's share: in all
  // 0.60 sqrt(1 + 1.07) u16 = 0.86 u16 = 4.2e-4. Asserted: within a factor 4 of u16 either way, and
  // far above fp32-simt (so the variant really rounded its inputs).
  const FfnProblem p = demos::make_problem(FfnShape{16, demos::kBertDModel, demos::kBertDFf}, 11);
  FfnBench bench(Backend::cpu, p);
  const double simt = bench.run(Variant::fp32_simt).relative_error;
  const double tc = cpu_error(bench, Variant::fp16_tc);
  std::printf("\nFFN 768/3072, T = 16 (cpu): fp16-tc %.3e = %.2f u16 (model 0.86 u16)\n", tc, tc / u16);
  CHECK(tc >= u16 / 4);
  CHECK(tc <= 4 * u16);
  CHECK(tc >= 100 * simt);
}

// =============================================================================================
// Command line
// =============================================================================================

TEST_CASE("tcsolve ffn --json: one object with the documented fields, one result per variant", "[ffn][cli]") {
  const auto r = run_tcsolve(
      "ffn --backend cpu --tokens 6 --d-model 64 --d-ff 256 --variants fp32-simt,ec-fp16,fp16-tc --seed 5 --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json doc = require_one_object(r);
  REQUIRE(doc.find("command"));
  CHECK(doc.find("command")->string == "ffn");
  REQUIRE(doc.find("tokens"));
  CHECK(doc.find("tokens")->number == 6);
  REQUIRE(doc.find("d_model"));
  CHECK(doc.find("d_model")->number == 64);
  REQUIRE(doc.find("d_ff"));
  CHECK(doc.find("d_ff")->number == 256);
  CHECK(doc.find("backend")->string == "cpu");
  const Json* results = doc.find("results");
  REQUIRE(results);
  REQUIRE(results->type == Json::Type::array);
  REQUIRE(results->items.size() == 3);
  const char* names[] = {"fp32-simt", "ec-fp16", "fp16-tc"};
  double errors[3] = {};
  for (std::size_t i = 0; i < 3; ++i) {
    const Json& e = results->items[i];
    REQUIRE(e.find("variant"));
    CHECK(e.find("variant")->string == names[i]);
    CHECK(e.find("resolved_variant")->string == names[i]);
    for (const char* key : {"relative_error", "time_s", "tflops", "speedup_vs_fp32_simt"}) {
      INFO(names[i] << "." << key);
      REQUIRE(e.find(key));
      REQUIRE(e.find(key)->type == Json::Type::number);
      CHECK(e.find(key)->number > 0);
    }
    errors[i] = e.find("relative_error")->number;
  }
  CHECK(errors[1] <= 2 * errors[0]);
  CHECK(errors[2] >= 100 * errors[0]);
  CHECK(r.err.empty());  // stderr is no terminal here: no progress lines

  // The table: one line per variant under a header.
  const auto t = run_tcsolve("ffn --backend cpu --tokens 4 --d-model 32 --d-ff 64 --variants fp32-simt,ootomo-fp16");
  INFO(t);
  REQUIRE(t.exit_code == 0);
  CHECK(contains(t.out, "rel. error"));
  CHECK(contains(t.out, "TFLOP/s"));
  CHECK(contains(t.out, "ootomo-fp16"));
}

TEST_CASE("tcsolve ffn --variants all on the cpu reports the cuda-only variants as unavailable and exits 0", "[ffn][cli]") {
  const auto r = run_tcsolve("ffn --backend cpu --tokens 2 --d-model 32 --d-ff 48 --json");
  INFO(r);
  REQUIRE(r.exit_code == 0);
  const Json doc = require_one_object(r);
  const Json* results = doc.find("results");
  REQUIRE(results);
  REQUIRE(results->items.size() == kVariants.size());
  for (const Json& e : results->items) {
    const Variant v = parse_variant(e.find("variant")->string);
    INFO(name(v));
    CHECK(e.find("available")->boolean == info(v).on_cpu);
    if (info(v).on_cpu) {
      CHECK(e.find("relative_error")->type == Json::Type::number);
    } else {
      CHECK(e.find("relative_error")->type == Json::Type::null);
      CHECK(contains(e.find("note")->string, "not available"));
    }
  }
}

TEST_CASE("tcsolve ffn: bad sizes and names exit 2, a named unavailable variant exits 4", "[ffn][cli]") {
  for (const char* args : {"ffn --backend cpu --tokens 0", "ffn --backend cpu --tokens -5",
                           "ffn --backend cpu --tokens many", "ffn --backend cpu --d-model 0",
                           "ffn --backend cpu --d-ff -1", "ffn --backend cpu --tokens 4 --repeats 0",
                           "ffn --backend cpu --variants nope", "ffn --backend gpu", "ffn stray"}) {
    const auto r = run_tcsolve(args);
    INFO(r);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "tcsolve ffn: error:"));
  }
  const auto unavailable = run_tcsolve("ffn --backend cpu --tokens 2 --d-model 16 --d-ff 16 --variants cublas-tf32");
  INFO(unavailable);
  CHECK(unavailable.exit_code == 4);
  CHECK(contains(unavailable.err, "cublas-tf32"));
  if (!cuda::device_available()) {
    const auto no_gpu = run_tcsolve("ffn --backend cuda --tokens 2 --d-model 16 --d-ff 16");
    INFO(no_gpu);
    CHECK(no_gpu.exit_code == 4);
  }
  const auto help = run_tcsolve("ffn --help");
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "--tokens"));
}

// =============================================================================================
// [gpu]: the cuda block against the cpu block
// =============================================================================================
//
// Bound. For a GEMM through variant v (either backend) with FP32 inputs A, B:
//   |fl_v(A B) - A B| <= c_v |A||B| + a_v        (componentwise; per-variant constants below)
// Each side s (cpu, cuda) computes, from the same X, W1, b1, W2, b2 (exact: Z = W1 X + b1,
// G = GELU(Z), Y = W2 G + b2):
//   Z_s = fl(fl_v(W1 X) + b1):  |Z_s - Z| <= e_Z = (c1 |W1||X| + a1)(1 + r) + r |Z|
//   G_s = gelu32(Z_s):          |G_s - G| <= e_G = L e_Z + k_g r (|Z| + e_Z)
//                               (L = kGeluLipschitz, k_g = kGeluErrorUnits: ffn.hpp)
//   Y_s = fl(fl_v(W2 G_s) + b2): |fl_v(W2 G_s) - W2 G| <= d_2 = |W2| e_G + c2 |W2| (|G| + e_G) + a2,
//                               |Y_s - Y| <= e_Y = d_2 (1 + r) + r |Y|
// so |Y_cuda - Y_cpu| <= 2 e_Y elementwise; the cpu side alone is checked against FP64 below.
// The ingredients are evaluated in double (relative error ~ k 2^-53, absorbed by a factor
// (1 + 2^-20)).
//
// Constants (r = 2^-24; the mma model of tests/test_gpu_gemm.cpp: an mma of 16 FP16 products
// loses at most 16 + 2 * 16 / 4 = 24 units of 2^-23 relative to its sum of |terms|):
//   fp32-simt (Eigen float / cuBLAS SGEMM, any order, FMA or not, split-K): c = gamma(k + 2, r), a = 0.
//   ec-fp16: representation of a b by hi_a hi_b + lo_a hi_b + hi_a lo_b with lo = RN(a - hi): each
//     residual is rounded once (2^-11 of |a - hi| <= 2^-11 |a|: 2^-22 |a|) and lo lo is dropped
//     (<= 2^-22 |a b|): 3 * 2^-22 (1 + 2^-10); accumulation as test_gpu_gemm's ec bound with
//     ec_chunk_k = 32 (the three products chained over 3 * 2 mmas from zero, each chunk added
//     outside in FP32); the power-of-two unscaling is exact; one more rounding in the epilogue.
//     a covers FP16-subnormal residuals (after the row/column scaling to a maximum in
//     [2^14, 2^15) a residual errs by at most 2^-25 in scaled units, 2^-39 of the row's
//     maximum, on either operand): a = 2^-38 k max|A| max|B|.
namespace {

struct GemmBound {
  double c = 0;        ///< relative to |A||B|
  double a_unit = 0;   ///< a = a_unit * k * max|A| * max|B|
};

double chained16(double mmas) { return gamma(mmas * (16 + 2.0 * 16 / 4), 0x1p-23); }

GemmBound gemm_bound(Variant v, int k) {
  GemmBound b;
  if (v == Variant::fp32_simt) {
    b.c = gamma(k + 2, r);
    return b;
  }
  REQUIRE(v == Variant::ec_fp16);
  const double hh = (1 + u16) * (1 + u16), cc = 2 * (1 + u16) * 0x1p-10;
  const int chunk = GemmOptions{}.ec_chunk_k / 16;
  const int n16 = (k + 15) / 16;
  const double inside = chained16(3 * chunk), outside = gamma((n16 + chunk - 1) / chunk, r);
  const double acc = (hh + cc) * (inside + outside * (1 + inside));
  b.c = 3 * 0x1p-22 * (1 + 0x1p-10) + acc + gamma(2, r) * (hh + cc + acc);
  b.a_unit = 0x1p-38;
  return b;
}

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;

MatD as_double(const std::vector<float>& v, int rows, int cols) {
  MatD m(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) m(i, j) = v[static_cast<std::size_t>(j) * rows + i];
  return m;
}

/// e_Y of the comment above (the bound of one side against the exact block), both GEMMs through v.
MatD side_bound(const FfnProblem& p, Variant v) {
  const FfnShape& s = p.shape;
  const MatD W1 = as_double(p.W1, s.d_ff, s.d_model), X = as_double(p.X, s.d_model, s.tokens);
  const MatD W2 = as_double(p.W2, s.d_model, s.d_ff);
  const MatD b1 = as_double(p.b1, s.d_ff, 1), b2 = as_double(p.b2, s.d_model, 1);
  const GemmBound g1 = gemm_bound(v, s.d_model), g2 = gemm_bound(v, s.d_ff);

  MatD Z = W1 * X;
  Z.colwise() += b1.col(0);
  const MatD G = Z.unaryExpr([](double z) { return demos::gelu(z); });
  MatD Y = W2 * G;
  Y.colwise() += b2.col(0);

  const double a1 = g1.a_unit * s.d_model * W1.cwiseAbs().maxCoeff() * X.cwiseAbs().maxCoeff();
  const MatD S1 = W1.cwiseAbs() * X.cwiseAbs();
  const MatD eZ = ((g1.c * S1).array() + a1).matrix() * (1 + r) + r * Z.cwiseAbs();
  const MatD eG = kGeluLipschitz * eZ + demos::kGeluErrorUnits * r * (Z.cwiseAbs() + eZ);
  const MatD Gs = G.cwiseAbs() + eG;  // bound on |G_s|
  const double a2 = g2.a_unit * s.d_ff * W2.cwiseAbs().maxCoeff() * Gs.maxCoeff();
  const MatD d2 = ((W2.cwiseAbs() * eG + g2.c * (W2.cwiseAbs() * Gs)).array() + a2).matrix();
  return (1 + 0x1p-20) * (d2 * (1 + r) + r * Y.cwiseAbs());
}

/// max over the elements of |Y - Y64| / bound; fails the test where the bound does not hold.
double worst_ratio(const std::vector<float>& Y, const std::vector<double>& Y64, const MatD& bound) {
  double worst = 0;
  for (Eigen::Index j = 0; j < bound.cols(); ++j)
    for (Eigen::Index i = 0; i < bound.rows(); ++i) {
      const std::size_t e = static_cast<std::size_t>(j * bound.rows() + i);
      const double diff = std::fabs(static_cast<double>(Y[e]) - Y64[e]);
      worst = std::max(worst, diff / bound(i, j));
      if (!(diff <= bound(i, j))) FAIL_CHECK("(" << i << ", " << j << "): |difference| " << diff << " > " << bound(i, j));
    }
  return worst;
}

}  // namespace

TEST_CASE("the per-side bound of the cuda-vs-cpu test holds for the cpu block against FP64 (fp32-simt, ec-fp16)", "[ffn]") {
  // The [gpu] test below rests on |Y_s - Y| <= e_Y for each side; this checks the cpu side here,
  // against the exact block (FP64), so that the derivation is tested on machines without a GPU.
  const FfnProblem p = demos::make_problem(FfnShape{12, 256, 1024}, 41);
  const std::vector<double> Y64 = demos::ffn_reference(p);
  for (Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
    INFO(name(v));
    const double worst = worst_ratio(demos::ffn_forward(v, p), Y64, side_bound(p, v));
    std::printf("\nFFN per-side bound, cpu %s: max |Y - Y64| / e_Y = %.3e\n", name(v).c_str(), worst);
  }
}

TEST_CASE("cuda FFN block matches the cpu block for fp32-simt and ec-fp16 within the derived bound", "[ffn][gpu]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device: skipping the cuda-vs-cpu FFN test (" << cuda::device_name() << ")");
    return;
  }
  // BERT sizes; T = 37 is no multiple of any tile.
  const FfnProblem p = demos::make_problem(FfnShape{37, demos::kBertDModel, demos::kBertDFf}, 31);
  const FfnShape& s = p.shape;
  FfnBench cpu(Backend::cpu, p), gpu(Backend::cuda, p);
  const std::vector<double> Y64 = demos::ffn_reference(p);
  for (Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
    INFO(name(v));
    const demos::FfnResult rc = cpu.run(v), rg = gpu.run(v, 1, 1);
    CHECK(rg.info.first.resolved == v);
    CHECK(rg.info.second.resolved == v);
    const std::vector<float> Yc = cpu.output(), Yg = gpu.output();
    REQUIRE(Yg.size() == Yc.size());
    const std::vector<double> Yc64(Yc.begin(), Yc.end());
    const double worst = worst_ratio(Yg, Yc64, 2 * side_bound(p, v));  // |Y_cuda - Y_cpu| <= 2 e_Y
    // The device computes its own FP64 reference (DGEMM, FP64 GELU kernel). Both references err by
    // O(k 2^-53) ~ 1e-12 relative, 10^4 below the FP32 errors here (~1e-7): the device's error
    // figure must equal the host's recomputation from the downloaded Y to 1e-3 of itself.
    const double host_err = relative_residual(Yg.data(), s.d_model, Y64.data(), s.d_model, s.tokens);
    CHECK(rg.relative_error == Approx(host_err).epsilon(1e-3));
    std::printf("\nFFN cuda vs cpu, %s: max |diff| / bound = %.3e; errors cpu %.3e, cuda %.3e\n", name(v).c_str(),
                worst, rc.relative_error, rg.relative_error);
  }
}
