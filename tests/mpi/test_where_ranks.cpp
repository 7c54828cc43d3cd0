// The one "where" argument with a group (tcsolve_mpi_tests, cpu ranks): a GEMM runs on one
// device, so gemm(Where(group), ...) is refused with InvalidInput; solve(..., Where(group)) runs
// the distributed solver (test_solver_ranks.cpp tests it) -- on every rank alike.
#include <catch2/catch.hpp>
#include <vector>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

TEST_CASE("a group is refused by the GEMM and solved on by the solver", "[mpi][where]") {
  using namespace tcsolve;
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  std::vector<float> A(16, 1.0f), C(16);
  CHECK_THROWS_AS(gemm(runtime::Where(group), Variant::fp32_simt, Op::n, Op::n, 4, 4, 4, 1.0f, A.data(), 4, A.data(), 4,
                       0.0f, C.data(), 4),
                  InvalidInput);
  const LinearSystem sys = generate_system(8, 10, SpectrumMode::geometric, 1);
  CHECK(solve(sys, SolveOptions{}, runtime::Where(group)).converged);
}
