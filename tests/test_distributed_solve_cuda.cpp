// The distributed solver on GPU members (tcsolve/solver/distributed.hpp, solve_on_ranks with a
// gpus() group: cuda/distributed_lu_cuda.hpp, distributed/device_piece.hpp), against the cpu
// oracle, and the random-mode system made on the device ([gpu]: bitwise the host generator's A
// and b; cuSOLVER's baselines on it through solve_baseline_device bitwise solve_baseline's). [gpu], one device: a gpus({device}) group of one member (a 1 x 1 grid, NCCL over one
// rank). [multi_gpu], two devices: gpus({0, 1}) on a 1 x 2 grid. On systems whose order is no
// multiple of the block size and on committed inputs:
//   - converged to dsgesv's criterion, recomputed here;
//   - the forward error within 2 cond_inf(A) (eta + eta_cpu) of the single-process cpu solve's
//     x, eta = the backward errors at the dsgesv criterion (sqrt(n) eps64 each);
//   - iterations within the one-GPU solve's + 2;
//   - the same x bitwise on a second run (the LU and the sweeps are deterministic);
//   - two members' x within the bound above of one member's (bitwise where cuBLAS's TRSM keeps
//     each row's arithmetic: reported, not asserted);
//   - a 2 x 1 grid is refused by every member alike (Unavailable); a zero column by name.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <Eigen/Dense>
#include <cmath>
#include <string>
#include <vector>

#include "cuda_test_util.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/distributed.hpp"
#include "tcsolve/solver/generate.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve;
namespace runtime = tcsolve::runtime;

double cond_inf(const Eigen::MatrixXd& A) {
  return A.cwiseAbs().rowwise().sum().maxCoeff() * A.inverse().cwiseAbs().rowwise().sum().maxCoeff();
}

SolveOptions gpu_options(Variant v, int nb) {
  SolveOptions o;
  o.backend = Backend::cuda;
  o.variant = v;
  o.block_size = nb;
  return o;
}

std::vector<Variant> variants() {
  std::vector<Variant> v = {Variant::fp32_simt};
  if (cuda::compute_capability() >= 90) {
    v.push_back(Variant::ec_fp16);
    v.push_back(Variant::auto_);
  }
  return v;
}

/// The checks of one system on `group`.
void check_system(const LinearSystem& sys, const std::string& name, runtime::DeviceGroup& group, int nb) {
  const int n = sys.n();
  const double eps = 0x1p-53, cond = cond_inf(sys.A);
  SolveOptions cpu;
  cpu.backend = Backend::cpu;
  const SolveResult ref = solve(sys, cpu);
  REQUIRE(ref.converged);
  for (const Variant v : variants()) {
    INFO(name << " n = " << n << " nb = " << nb << " variant " << to_string(v) << " on " << group.describe());
    const SolveOptions o = gpu_options(v, nb);
    const SolveResult r = solve_on_ranks(sys, o, group);
    INFO(r.note);
    CHECK(r.backend == Backend::cuda);
    REQUIRE(r.converged);
    CHECK(test::dsgesv_criterion(sys, r.x));
    const double eta = 2 * std::sqrt(static_cast<double>(n)) * eps;
    const double dx = (r.x - ref.x).cwiseAbs().maxCoeff() / ref.x.cwiseAbs().maxCoeff();
    CHECK(dx <= 2 * cond * eta + 4 * eps);
    SolveOptions one = o;
    const SolveResult alone = solve(sys, one);
    CHECK(r.iterations <= alone.iterations + 2);
    const SolveResult again = solve_on_ranks(sys, o, group);
    CHECK((again.x.array() == r.x.array()).all());
    CHECK(again.iterations == r.iterations);
    if (o.estimate_condition) {
      REQUIRE(r.condition_estimate.has_value());
      CHECK(*r.condition_estimate <= 1.01 * cond_inf(sys.A.transpose()) * 1.0 + 1);
      CHECK(*r.condition_estimate >= ref.condition_estimate.value_or(0) / 10);
    }
  }
}

void check_group(runtime::DeviceGroup& group) {
  // generated: U(-1,1), n no multiple of nb (the last block narrower), and a randsvd with cond 1e6
  check_system(generate_random_system(1000, 11), "random", group, 128);
  check_system(generate_system(777, 1e6, SpectrumMode::geometric, 5), "randsvd 1e6", group, 64);
  for (const char* file : {"inputs/olm500.h5", "inputs/randsvd_n256_c1e4.h5"})
    check_system(read_system(test::test_data_path(file)), file, group, 96);
}

}  // namespace

TEST_CASE("the random-mode system made on the device is the generator's, bitwise", "[gpu][distributed]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the device-made random system");
  for (const int n : {1, 301, 1024}) {
    const LinearSystem host = generate_random_system(n, 7);
    cuda::Context ctx;
    cuda::DeviceBuffer<double> a(static_cast<std::size_t>(n) * (n + 3)), b(static_cast<std::size_t>(n));
    generate_random_device(n, 7, a.data(), n + 3, b.data(), ctx);
    const std::vector<double> ah = a.download(), bh = b.download();
    Eigen::MatrixXd A(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) A(i, j) = ah[static_cast<std::size_t>(j) * (n + 3) + i];
    INFO("n = " << n);
    CHECK((A.array() == host.A.array()).all());
    CHECK((Eigen::Map<const Eigen::VectorXd>(bh.data(), n).array() == host.b.col(0).array()).all());
    if (n < 300) continue;
    // cuSOLVER's baselines on that device system: bitwise the host system's (the same calls)
    DeviceSystemView view;
    view.n = n;
    view.A = a.data();
    view.lda = n + 3;
    view.B = b.data();
    view.ldb = n;
    for (const char* method : {"cusolver-dsgesv", "cusolver-dgetrf"}) {
      INFO(method);
      const SolveResult on_device = solve_baseline_device(view, method, &ctx);
      const SolveResult from_host = solve_baseline(host, method, &ctx);
      CHECK(on_device.converged);
      CHECK((on_device.x.array() == from_host.x.array()).all());
      CHECK(on_device.iterations == from_host.iterations);
    }
  }
}

TEST_CASE("the distributed solver on one GPU member (1 x 1) converges as the cpu oracle", "[gpu][distributed]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the distributed solver on a GPU member");
  if (!runtime::have_nccl()) {
    WARN("no NCCL in this build: skipping the GPU members' solve");
    return;
  }
  runtime::DeviceGroup group = runtime::DeviceGroup::gpus({cuda::current_device()});
  check_group(group);
}

TEST_CASE("the distributed solver on two GPUs (1 x 2) converges as the cpu oracle and one GPU member",
          "[multi_gpu][distributed]") {
  if (runtime::device_count() < 2 || !runtime::have_nccl()) {
    WARN("fewer than two CUDA devices or no NCCL: skipping the two-GPU distributed solve");
    return;
  }
  runtime::DeviceGroup group = runtime::DeviceGroup::gpus({0, 1});
  check_group(group);

  SECTION("two members and one member: x within the bound, the same iterations or close") {
    const LinearSystem sys = generate_random_system(1500, 3);
    runtime::DeviceGroup one = runtime::DeviceGroup::gpus({0});
    for (const Variant v : variants()) {
      const SolveResult a = solve_on_ranks(sys, gpu_options(v, 128), group);
      const SolveResult b = solve_on_ranks(sys, gpu_options(v, 128), one);
      INFO(to_string(v) << ": " << a.note);
      REQUIRE(a.converged);
      REQUIRE(b.converged);
      CHECK(std::abs(a.iterations - b.iterations) <= 1);
      const double dx = (a.x - b.x).cwiseAbs().maxCoeff() / b.x.cwiseAbs().maxCoeff();
      CHECK(dx <= 4 * cond_inf(sys.A) * std::sqrt(1500.0) * 0x1p-53);
      if ((a.x.array() == b.x.array()).all()) WARN(to_string(v) << ": two members gave one member's x bitwise");
    }
  }
  SECTION("a 2 x 1 grid is refused by both members alike") {
    const LinearSystem sys = generate_random_system(300, 1);
    const Grid g{2, 1};
    try {
      solve_on_ranks(sys, gpu_options(Variant::fp32_simt, 64), group, &g);
      FAIL("a 2 x 1 grid ran");
    } catch (const Unavailable& e) {
      CHECK(std::string(e.what()).find("1 x Q grids only") != std::string::npos);
      CHECK(dynamic_cast<const runtime::AgreedFailure*>(&e) != nullptr);
    }
  }
  SECTION("a zero column is refused by name before any member runs") {
    LinearSystem sys = generate_random_system(400, 2);
    sys.A.col(250).setZero();
    CHECK_THROWS_WITH(solve_on_ranks(sys, gpu_options(Variant::fp32_simt, 64), group),
                      Catch::Contains("column 251 (1-based) is zero"));
  }
}

#endif  // TCSOLVE_HAVE_CUDA
