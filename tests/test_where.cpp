// The one "where" argument (tcsolve/runtime/where.hpp) of the GEMM and the solver: Where() runs
// the cpu backend and gives bitwise its results; [gpu] Where(context) runs in that context and
// gives bitwise the results of the same context passed the older way (cuda::gemm, and
// SolveOptions::cuda_context). The group case is refused (tests/mpi/test_where_ranks.cpp).
#include <catch2/catch.hpp>
#include <vector>

#include "gemm_test_util.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/where.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve;

/// C = A B of the problem through `v` on `where` (host pointers: Where() only).
void product(const runtime::Where& where, Variant v, const test::Problem& p, float* C) {
  gemm(where, v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, p.A.data(), p.m, p.B.data(), p.k, 0.0f, C, p.m);
}

}  // namespace

TEST_CASE("Where() runs the GEMM and the solve on the cpu backend, bitwise", "[exact][where]") {
  const test::Problem p = test::make_problem(40, 30, 50, "urand", "urand", 3);
  for (Variant v : {Variant::fp32_simt, Variant::ec_fp16, Variant::fp64}) {
    INFO(to_string(v));
    std::vector<float> a(static_cast<std::size_t>(p.m) * p.n), b(a.size());
    product(runtime::Where(), v, p, a.data());
    gemm(Backend::cpu, v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, p.A.data(), p.m, p.B.data(), p.k, 0.0f, b.data(), p.m);
    CHECK(a == b);
  }
  const LinearSystem sys = generate_system(64, 1e3, SpectrumMode::geometric, 5);
  SolveOptions o;
  o.variant = Variant::ec_fp16;
  o.backend = Backend::cpu;
  const SolveResult direct = solve(sys, o);
  o.backend = Backend::cuda;  // replaced by the where
  const SolveResult where = solve(sys, o, runtime::Where());
  CHECK(where.x == direct.x);
  CHECK(where.iterations == direct.iterations);
}

#if defined(TCSOLVE_HAVE_CUDA)
#include "cuda_test_util.hpp"

TEST_CASE("Where(context) runs the GEMM and the solve in that context, bitwise the older way", "[gpu][where]") {
  TCSOLVE_SKIP_WITHOUT_GPU("Where(context)");
  const test::Problem p = test::make_problem(300, 200, 260, "urand", "urand", 7);
  cuda::Context context;
  cuda::DeviceBuffer<float> A(p.A), B(p.B), C1(static_cast<std::size_t>(p.m) * p.n), C2(C1.size());
  for (Variant v : {Variant::fp32_simt, Variant::ec_fp16}) {
    INFO(to_string(v));
    gemm(runtime::Where(context), v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, A.data(), p.m, B.data(), p.k, 0.0f, C1.data(),
         p.m);
    cuda::gemm(context, v, Op::n, Op::n, p.m, p.n, p.k, 1.0f, A.data(), p.m, B.data(), p.k, 0.0f, C2.data(), p.m);
    CHECK(C1.download(context.stream()) == C2.download(context.stream()));
  }
  const LinearSystem sys = generate_system(512, 1e3, SpectrumMode::geometric, 5);
  SolveOptions o;
  o.variant = Variant::ec_fp16;
  o.backend = Backend::cuda;
  o.cuda_context = &context;
  const SolveResult direct = solve(sys, o);
  o.backend = Backend::cpu;  // replaced by the where
  o.cuda_context = nullptr;
  const SolveResult where = solve(sys, o, runtime::Where(context));
  CHECK(where.x == direct.x);
  CHECK(where.iterations == direct.iterations);
}
#endif
