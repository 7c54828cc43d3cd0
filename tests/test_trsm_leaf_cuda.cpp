// [gpu] tests of the GPU LU's diagonal-block solves (solver/src/cuda/trsm_leaf.cu, CudaLuPlan::
// trsm_leaves kernel): both kernels bitwise their reference (cpu/trsm_leaf.hpp, checked against
// forward substitution's bound in test_trsm_leaf.cpp) for widths up to 64, counts below, at and
// past the CTAs' vectors, leading dimensions beyond the data, a NaN; their refusals; and the LU
// with the kernel against cublasStrsm's (the default): partial pivoting's factors within the LU
// bound and other last bits, beam's solves converging, the choice reported.
// Skipped, with a warning, without a GPU (and empty in a build without CUDA).
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/trsm_leaf.hpp"
#include "cuda/kernels.hpp"
#include "cuda_test_util.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using tcsolve::cuda::DeviceBuffer;
using tcsolve::test::random_floats;

bool same(float x, float y) { return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0; }

}  // namespace

TEST_CASE("trsm_leaf kernels: X U = B (rows) and L X = B (columns) bitwise their reference", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the diagonal-block solves");
  namespace k = tcsolve::cuda::kernels;
  for (int w : {1, 5, 32, 63, 64}) {
    for (int count : {1, 63, 64, 65, 128, 129, 1000}) {
      CAPTURE(w, count);
      const int ldm = w + 5;
      std::vector<float> m = random_floats(static_cast<std::size_t>(ldm) * w, static_cast<unsigned>(w * 1000 + count));
      for (int i = 0; i < w; ++i) m[i + static_cast<std::size_t>(i) * ldm] = 1.5f + static_cast<float>(i % 3);
      // rows: B is count x w (leading dimension count + 3); U = m's upper part, unit
      const int ldr = count + 3;
      std::vector<float> br = random_floats(static_cast<std::size_t>(ldr) * w, static_cast<unsigned>(count));
      if (count > 10 && w > 2) br[7 + 2 * static_cast<std::size_t>(ldr)] = std::nanf("");  // row 7 turns NaN from entry 2
      // columns: B is w x count (leading dimension w + 2); L = m's lower part, non-unit
      const int ldc = w + 2;
      std::vector<float> bc = random_floats(static_cast<std::size_t>(ldc) * count, static_cast<unsigned>(count + 7));
      DeviceBuffer<float> dm(m), dbr(br), dbc(bc);
      REQUIRE(k::trsm_leaf_right_upper_unit(nullptr, dm.data(), ldm, dbr.data(), ldr, count, w));
      REQUIRE(k::trsm_leaf_left_lower(nullptr, dm.data(), ldm, dbc.data(), ldc, w, count));
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      const std::vector<float> gr = dbr.download(), gc = dbc.download();
      std::vector<float> rr = br, rc = bc;
      for (int r = 0; r < count; ++r)  // X U = B: row r solves x U = b, M(e, k) = U(k, e)
        tcsolve::cpu::trsm_leaf_substitute(
            rr.data() + r, ldr, w, true, [&](int e, int kk) { return m[kk + static_cast<std::size_t>(e) * ldm]; },
            [](int) { return 1.0f; });
      for (int c = 0; c < count; ++c)  // L X = B: column c solves L x = b
        tcsolve::cpu::trsm_leaf_substitute(
            rc.data() + static_cast<std::size_t>(c) * ldc, 1, w, false,
            [&](int e, int kk) { return m[e + static_cast<std::size_t>(kk) * ldm]; },
            [&](int kk) { return m[kk + static_cast<std::size_t>(kk) * ldm]; });
      std::size_t differ_r = 0, differ_c = 0;
      for (std::size_t i = 0; i < rr.size(); ++i) differ_r += same(gr[i], rr[i]) ? 0 : 1;  // padding untouched too
      for (std::size_t i = 0; i < rc.size(); ++i) differ_c += same(gc[i], rc[i]) ? 0 : 1;
      CHECK(differ_r == 0);
      CHECK(differ_c == 0);
      if (count > 10 && w > 2) CHECK(std::isnan(gr[7 + static_cast<std::size_t>(w - 1) * ldr]));
    }
  }
  // refused without a launch: wider than 64, leading dimensions too small; nothing to do is done
  CHECK_FALSE(k::trsm_leaf_right_upper_unit(nullptr, nullptr, 65, nullptr, 10, 10, 65));
  CHECK_FALSE(k::trsm_leaf_left_lower(nullptr, nullptr, 65, nullptr, 65, 65, 10));
  CHECK_FALSE(k::trsm_leaf_right_upper_unit(nullptr, nullptr, 8, nullptr, 9, 10, 8));
  CHECK_FALSE(k::trsm_leaf_left_lower(nullptr, nullptr, 7, nullptr, 8, 8, 10));
  CHECK(k::trsm_leaf_right_upper_unit(nullptr, nullptr, 8, nullptr, 10, 0, 8));
  CHECK(k::trsm_leaf_left_lower(nullptr, nullptr, 8, nullptr, 8, 8, 0));
}

TEST_CASE("the cuda LU with trsm_leaves kernel and cublas (the default): factors within the LU bound, beam converges",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the LU's diagonal-block solves");
  using namespace tcsolve;
  using namespace tcsolve::test;
  // nb = 512: U12's rest by halves down to 64-column leaves (after the first block)
  const int n = 2600;
  Eigen::MatrixXd A = Eigen::MatrixXd::Random(n, n);
  CudaLuPlan kernel, cublas;
  kernel.trsm_leaves = CudaLuPlan::TrsmLeaves::kernel;
  cublas.trsm_leaves = CudaLuPlan::TrsmLeaves::cublas;
  const LuFactorization fk = lu_factorize(Backend::cuda, A, Variant::ec_fp16, 512, {}, kernel);
  const LuFactorization fc = lu_factorize(Backend::cuda, A, Variant::ec_fp16, 512, {}, cublas);
  CHECK(lu_probe_ratio(fk, A, 2) <= 1.0);
  CHECK(lu_probe_ratio(fc, A, 2) <= 1.0);
  CHECK(fk.perm.size() == static_cast<std::size_t>(n));
  CHECK((fk.lu.array() != fc.lu.array()).count() > 0);  // other roundings in U12's leaves
  // the default runs cublasStrsm and says so; both converge
  for (CudaLuPlan::TrsmLeaves leaves : {CudaLuPlan::TrsmLeaves::automatic, CudaLuPlan::TrsmLeaves::kernel}) {
    SolveOptions o;
    o.backend = Backend::cuda;
    o.variant = Variant::ec_fp16;
    o.block_size = 512;
    o.fp64_below = 0;
    o.cuda_plan.trsm_leaves = leaves;
    const LinearSystem sys = with_ones(A);
    const SolveResult r = solve(sys, o);
    INFO(r.note);
    CHECK(r.converged);
    CHECK(dsgesv_criterion(sys, r.x));
    REQUIRE(r.cuda_plan);
    CHECK(r.cuda_plan->trsm_leaves ==
          (leaves == CudaLuPlan::TrsmLeaves::kernel ? CudaLuPlan::TrsmLeaves::kernel : CudaLuPlan::TrsmLeaves::cublas));
  }
  // beam: L21 = A21 U11^-1 by halves of 128 down to 64-column leaves (nb = 128), on random and
  // graded systems, with either leaves: converges by beam, without modifications
  for (double cond : {0.0, 1e4}) {
    const LinearSystem sys = cond == 0 ? generate_system(701, 1, SpectrumMode::random, 3)
                                       : generate_system(701, cond, SpectrumMode::geometric, 3);
    for (CudaLuPlan::TrsmLeaves leaves : {CudaLuPlan::TrsmLeaves::kernel, CudaLuPlan::TrsmLeaves::cublas}) {
      SolveOptions o;
      o.backend = Backend::cuda;
      o.variant = Variant::ec_fp16;
      o.block_size = 128;
      o.pivoting = Pivoting::beam;
      o.fp64_below = 0;
      o.fallback = false;
      o.cuda_plan.trsm_leaves = leaves;
      const SolveResult r = solve(sys, o);
      INFO("cond " << cond << ", " << to_string(leaves) << ": " << r.note);
      CHECK(r.pivoting == Pivoting::beam);
      CHECK(r.converged);
      CHECK(dsgesv_criterion(sys, r.x));
      REQUIRE(r.cuda_plan);
      CHECK(r.cuda_plan->trsm_leaves == leaves);
    }
  }
}

#endif
