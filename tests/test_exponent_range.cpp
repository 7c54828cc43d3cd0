// Ootomo Sec. 4.1.1: the exponent range of the inputs against halfhalf, tf32tf32 and the
// production path's power-of-two scaling.
//   type 1: A, B ~ exp_rand(-15, 14)
//   type 2: A ~ exp_rand(-15, 14), B ~ exp_rand(-100, -35)
//   type 3: A, B ~ exp_rand(-35, -15)
//   type 4: A ~ exp_rand(-100, -35), B ~ exp_rand(-35, -15)   ("at least one of A, B" in
//           (-100, -35); the other operand is chosen so that the products stay in FP32's normal
//           range, otherwise fp32-simt itself flushes them and there is no FP32 answer to match)
#include <catch2/catch.hpp>
#include <cstdio>

#include "gemm_test_util.hpp"

using namespace tcsolve;
using tcsolve::test::make_problem;
using tcsolve::test::residual;

namespace {
struct InputType {
  int id;
  const char* a;
  const char* b;
};
const InputType kTypes[] = {
    {1, "exp_rand:-15:14", "exp_rand:-15:14"},
    {2, "exp_rand:-15:14", "exp_rand:-100:-35"},
    {3, "exp_rand:-35:-15", "exp_rand:-35:-15"},
    {4, "exp_rand:-100:-35", "exp_rand:-35:-15"},
};
}  // namespace

TEST_CASE("Ootomo's input types 1-4: tf32tf32, auto and ec-fp16 match fp32-simt; halfhalf only type 1", "[accuracy]") {
  // 64 x 1024 times 1024 x 64. "Match" = relative residual at most 2x fp32-simt's.
  std::printf("\nInput types (cpu emulation, relative residual / fp32-simt's)\n%5s %10s %8s %8s %8s %8s %8s\n", "type",
              "fp32-simt", "oo-fp16", "oo-tf32", "ec-fp16", "ec-tf32", "auto");
  for (const InputType& t : kTypes) {
    const auto p = make_problem(64, 64, 1024, t.a, t.b, 400 + t.id);
    const double simt = residual(p, Variant::fp32_simt);
    GemmInfo auto_info;
    const double o16 = residual(p, Variant::ootomo_fp16) / simt;
    const double o32 = residual(p, Variant::ootomo_tf32) / simt;
    const double e16 = residual(p, Variant::ec_fp16) / simt;
    const double e32 = residual(p, Variant::ec_tf32) / simt;
    const double au = residual(p, Variant::auto_, {}, &auto_info) / simt;
    std::printf("%5d %10.2e %8.2f %8.2f %8.2f %8.2f %8.2f (auto ran %s)\n", t.id, simt, o16, o32, e16, e32, au,
                std::string(to_string(auto_info.resolved)).c_str());
    INFO("type " << t.id << ": ootomo-fp16 " << o16 << "x, ootomo-tf32 " << o32 << "x, ec-fp16 " << e16
                 << "x, ec-tf32 " << e32 << "x, auto " << au << "x fp32-simt's residual " << simt);
    // TF32 has FP32's exponent range: tf32tf32 and the TF32 production path work on all types
    CHECK(o32 <= 2);
    CHECK(e32 <= 2);
    CHECK(au <= 2);
    // auto picks by exponent range: types 2 and 4 span 65 binades in B's columns / A's rows
    CHECK(auto_info.resolved == (t.id == 2 || t.id == 4 ? Variant::ec_tf32 : Variant::ec_fp16));
    // halfhalf without scaling: type 1 fits FP16; on type 3 the residual parts underflow (lo
    // below 2^-24) and on types 2 and 4 even the hi parts do
    if (t.id == 1) CHECK(o16 <= 2);
    else CHECK(o16 > 4);
    // ec-fp16 scales every row of A and column of B so its largest element sits at 2^14: type 3
    // then looks like type 1. On types 2 and 4 a column of B still spans 65 binades, more than
    // FP16's hi + lo reach; the elements it loses lie more than 2^-35 below their column's
    // largest, so their products are below FP32's rounding of the sums they enter and ec-fp16
    // still matches fp32-simt in norm. auto nevertheless prefers ec-tf32 there, which keeps
    // every element to full precision (see scaling.hpp).
    CHECK(e16 <= 2);
  }
}
