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
//   - the refinement's sweeps on two members fanned in (the default) or broadcast: both converge,
//     x within the bound of each other, fan_in deterministic;
//   - a 2 x 1 grid is refused by every member alike (Unavailable); a zero column by name;
//   - the FP64 LU on the members (1 and 2): the fallback where FP32 refinement cannot converge
//     (forward error within the cpu's plus 2 cond eta; the estimate within 3x the cpu's), a
//     matrix singular only in FP32, fp64_below;
//   - beam on the members: converged by GMRES-IR with pivoting beam on U(-1,1), x bitwise again;
//     a zero diagonal block pivots partially from a fresh LU, the note naming the zero pivot;
//   - the condition estimate on auto: skipped or made by the single process' rules (U's diagonal
//     span over the members, the sampled search for equal rows), equal rows refused by name.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
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
  o.condition_estimate = ConditionEstimate::always;  // checked against the cpu's below
  o.fp64_below = 0;  // the mixed path (fp64_below has its own case below)
  return o;
}

/// One GPU member on the current device, and two (devices 0 and 1) where the machine has them.
std::vector<runtime::DeviceGroup> member_groups() {
  std::vector<runtime::DeviceGroup> groups;
  groups.push_back(runtime::DeviceGroup::gpus({cuda::current_device()}));
  if (runtime::device_count() >= 2) groups.push_back(runtime::DeviceGroup::gpus({0, 1}));
  return groups;
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
  cpu.condition_estimate = ConditionEstimate::always;
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
    if (o.condition_estimate != ConditionEstimate::never) {
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

double forward_error(const Eigen::MatrixXd& x, const Eigen::MatrixXd& x_true) {
  return (x - x_true).cwiseAbs().maxCoeff() / x_true.cwiseAbs().maxCoeff();
}

/// The FP64 LU on GPU members (cuda/distributed_lu64_cuda.hpp), as the cpu solve uses it: the
/// fallback where FP32 refinement cannot converge, a matrix singular only in FP32, fp64_below.
void check_fp64(runtime::DeviceGroup& group) {
  const double eps = 0x1p-53;
  SolveOptions cpu;
  cpu.backend = Backend::cpu;
  cpu.variant = Variant::fp32_simt;
  {
    // cond 1e12: cond u32 ~ 6e4, FP32 factors contract nothing; the FP64 LU solves it.
    const LinearSystem sys = generate_system(300, 1e12, SpectrumMode::geometric, 8);
    const int n = sys.n();
    SolveOptions o = gpu_options(Variant::fp32_simt, 64);
    o.max_iterations = 5;
    cpu.max_iterations = 5;
    cpu.block_size = 64;
    const SolveResult single = solve(sys, cpu);
    REQUIRE(single.fallback_used);
    const SolveResult r = solve_on_ranks(sys, o, group);
    INFO("fallback on " << group.describe() << ": " << r.note << " | cpu: " << single.note);
    CHECK(r.fallback_used);
    CHECK(r.note.find("FP64 LU fallback used") != std::string::npos);
    CHECK(r.converged == single.converged);
    if (r.converged) CHECK(test::dsgesv_criterion(sys, r.x));
    double best = std::numeric_limits<double>::infinity();
    for (double h : r.history) best = std::min(best, h);
    CHECK(r.backward_error <= best);  // never worse than the best iterate
    // each x has backward error eta: within 2 cond eta of x_true, so the GPU's forward error is at
    // most the cpu's plus that
    const double kappa = cond_inf(sys.A);
    const double eta = std::max(r.backward_error, std::sqrt(static_cast<double>(n)) * eps);
    CHECK(forward_error(r.x, *sys.x_true) <= forward_error(single.x, *sys.x_true) + 2 * kappa * eta + 4 * eps);
    // the estimate came from the FP64 LU the fallback made: near the cpu's
    REQUIRE(r.condition_estimate.has_value());
    REQUIRE(single.condition_estimate.has_value());
    CHECK(*r.condition_estimate <= 3 * *single.condition_estimate);
    CHECK(*r.condition_estimate >= *single.condition_estimate / 3);
    const SolveResult again = solve_on_ranks(sys, o, group);
    CHECK((again.x.array() == r.x.array()).all());
    SolveOptions without = o;
    without.fallback = false;
    const SolveResult w = solve_on_ranks(sys, without, group);
    CHECK_FALSE(w.converged);
    CHECK_FALSE(w.fallback_used);
  }
  {
    // Rows and columns 120, 121 hold only [[1, 1], [1, 1 + 2^-30]] in a diagonally dominant A:
    // nonsingular in FP64, but 1 + 2^-30 rounds to 1 in FP32, so the FP32 LU meets an exact zero
    // pivot in column 122 (1-based; block 1 of 64: the second member's on two GPUs).
    const int n = 300;
    Eigen::MatrixXd A = generate_system(n, 1, SpectrumMode::random, 17).A;
    A.diagonal().array() += 2.0 * n;
    for (int k : {120, 121}) {
      A.row(k).setZero();
      A.col(k).setZero();
    }
    A(120, 120) = A(120, 121) = A(121, 120) = 1;
    A(121, 121) = 1 + 0x1p-30;
    LinearSystem sys;
    sys.A = A;
    sys.x_true = Eigen::MatrixXd::Ones(n, 1);
    sys.b = A * *sys.x_true;
    const SolveResult r = solve_on_ranks(sys, gpu_options(Variant::fp32_simt, 64), group);
    INFO("FP32-singular on " << group.describe() << ": " << r.note);
    CHECK(r.fallback_used);
    CHECK(r.note.find("zero pivot in column 122") != std::string::npos);
    CHECK(r.converged);
    CHECK(test::dsgesv_criterion(sys, r.x));
  }
  {
    // fp64_below: variant auto on a small system runs the FP64 LU, refined in FP64
    const LinearSystem sys = generate_system(150, 1e10, SpectrumMode::geometric, 23);
    SolveOptions o = gpu_options(Variant::auto_, 32);
    o.fp64_below = 200;
    SolveOptions c = cpu;
    c.variant = Variant::auto_;
    c.fp64_below = 200;
    c.max_iterations = 30;
    c.block_size = 0;
    const SolveResult single = solve(sys, c);
    REQUIRE(single.fp64_lu);
    const SolveResult r = solve_on_ranks(sys, o, group);
    INFO("fp64_below on " << group.describe() << ": " << r.note);
    CHECK(r.fp64_lu);
    CHECK(r.resolved_variant == Variant::fp64);
    CHECK(r.converged);
    CHECK(test::dsgesv_criterion(sys, r.x));
    CHECK(r.iterations <= single.iterations + 2);
    REQUIRE(r.condition_estimate.has_value());
    CHECK(*r.condition_estimate <= 3 * *single.condition_estimate);
    CHECK(*r.condition_estimate >= *single.condition_estimate / 3);
  }
}

}  // namespace

TEST_CASE("beam on GPU members: in-block pivoting refined by GMRES-IR, partial pivoting after a zero pivot",
          "[gpu][distributed]") {
  TCSOLVE_SKIP_WITHOUT_GPU("beam on GPU members");
  if (!runtime::have_nccl()) {
    WARN("no NCCL in this build: skipping the GPU members' solve");
    return;
  }
  std::vector<runtime::DeviceGroup> groups = member_groups();
  const double eps = 0x1p-53;
  for (runtime::DeviceGroup& group : groups) {
    for (const Variant v : variants()) {
      const LinearSystem sys = generate_random_system(1000, 11);
      SolveOptions o = gpu_options(v, 128);
      o.pivoting = Pivoting::beam;
      const SolveResult r = solve_on_ranks(sys, o, group);
      INFO(group.describe() << " " << to_string(v) << ": " << r.note);
      CHECK(r.converged);
      CHECK(r.pivoting == Pivoting::beam);  // U(-1,1): no zero pivot within a diagonal block
      CHECK(test::dsgesv_criterion(sys, r.x));
      const double fe = (r.x - *sys.x_true).cwiseAbs().maxCoeff() / sys.x_true->cwiseAbs().maxCoeff();
      CHECK(fe <= 2 * cond_inf(sys.A) * 2 * std::sqrt(1000.0) * eps + 4 * eps);
      const SolveResult again = solve_on_ranks(sys, o, group);
      CHECK((again.x.array() == r.x.array()).all());
    }
    // the first diagonal block zero (later blocks change by the updates before their turn): an
    // exact zero pivot within it, partial pivoting from a fresh LU
    Eigen::MatrixXd A = generate_random_system(600, 4).A;
    A.block(0, 0, 64, 64).setZero();
    LinearSystem sys;
    sys.A = A;
    sys.x_true = Eigen::MatrixXd::Ones(600, 1);
    sys.b = A * *sys.x_true;
    SolveOptions o = gpu_options(Variant::fp32_simt, 64);
    o.pivoting = Pivoting::beam;
    const SolveResult r = solve_on_ranks(sys, o, group);
    INFO(group.describe() << " zero block: " << r.note);
    CHECK(r.converged);
    CHECK(r.pivoting == Pivoting::partial);
    CHECK(r.note.find("beam: an exactly zero pivot in column 1 ") != std::string::npos);
    CHECK(test::dsgesv_criterion(sys, r.x));
  }
}

TEST_CASE(
    "the condition estimate on auto on GPU members: skipped and made as by the cpu's distributed solve, "
    "U's diagonal span gathered from the members, equal rows refused by name",
    "[gpu][distributed]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the automatic condition estimate on GPU members");
  if (!runtime::have_nccl()) {
    WARN("no NCCL in this build: skipping the GPU members' solve");
    return;
  }
  std::vector<runtime::DeviceGroup> groups = member_groups();
  for (runtime::DeviceGroup& group : groups) {
    // cond 1e2: classical refinement contracts fast and U's diagonal spans little (skipped);
    // cond 1e12: the FP32 refinement cannot converge, the fallback runs (made)
    for (const double cond : {1e2, 1e12}) {
      const LinearSystem sys = generate_system(900, cond, SpectrumMode::geometric, 23);
      SolveOptions o = gpu_options(Variant::fp32_simt, 128);
      o.condition_estimate = ConditionEstimate::automatic;
      const SolveResult r = solve_on_ranks(sys, o, group);
      INFO(group.describe() << " cond " << cond << ": " << r.condition_estimate_reason << " | " << r.note);
      CHECK(r.condition_estimate_reason.rfind("automatic", 0) == 0);
      CHECK(r.condition_estimate.has_value() == (cond > 1e6));
      if (cond < 1e6) CHECK(r.condition_estimate_reason.find("not needed") != std::string::npos);
    }
    // rows 101 and 700 (1-based) equal up to -2^-5: the cpu's message, every member alike
    LinearSystem sys = generate_system(900, 1e2, SpectrumMode::geometric, 29);
    sys.A.row(699) = -0x1p-5 * sys.A.row(100);
    sys.b = sys.A * Eigen::VectorXd::Ones(900);
    SolveOptions o = gpu_options(Variant::fp32_simt, 128);
    o.condition_estimate = ConditionEstimate::automatic;
    std::string message;
    try {
      solve_on_ranks(sys, o, group);
    } catch (const InvalidInput& e) {
      message = e.what();
    }
    INFO(group.describe());
    CHECK(message.find("rows 101 and 700 (1-based) are equal up to sign and a power of two") != std::string::npos);
  }
}

TEST_CASE("the FP64 LU on GPU members: fallback, FP32-singular matrix, fp64_below", "[gpu][distributed]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the distributed FP64 LU on a GPU member");
  if (!runtime::have_nccl()) {
    WARN("no NCCL in this build: skipping the GPU members' solve");
    return;
  }
  runtime::DeviceGroup one = runtime::DeviceGroup::gpus({cuda::current_device()});
  check_fp64(one);
  if (runtime::device_count() >= 2) {
    runtime::DeviceGroup two = runtime::DeviceGroup::gpus({0, 1});
    check_fp64(two);
  }
}

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

TEST_CASE("U12's TRSM on GPU members: its products through the variant (trsm_products=variant) or SGEMM, "
          "the one-call cublasStrsm (trsm=cublas), trsm.cu's kernel for all of U12 (trsm=kernel), a share of the update on the panel stream "
          "(member_share): each converges, the x within the bound of the others",
          "[gpu][distributed]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the members' TRSM products");
  if (!runtime::have_nccl()) {
    WARN("no NCCL in this build: skipping the GPU members' TRSM products");
    return;
  }
  // nb = 512: halves of 256 and 128 columns, so that forced variant products run (the automatic
  // choice takes them from 16384 columns only)
  const LinearSystem sys = generate_random_system(2600, 5);
  for (runtime::DeviceGroup& group : member_groups()) {
    std::vector<SolveResult> results;
    for (const char* plan :
         {"trsm_products=variant", "trsm_products=sgemm", "trsm=cublas", "trsm=kernel", "member_share=30"}) {
      SolveOptions o = gpu_options(Variant::ec_fp16, 512);
      set_plan_fields(o.cuda_plan, plan);
      results.push_back(solve_on_ranks(sys, o, group));
      INFO(plan << ": " << results.back().note);
      REQUIRE(results.back().converged);
      REQUIRE(results.back().cuda_plan);
    }
    CHECK(results[0].cuda_plan->trsm_products == CudaLuPlan::Joins::variant);
    const double bound = 4 * cond_inf(sys.A) * std::sqrt(2600.0) * 0x1p-53;
    for (std::size_t i = 1; i < results.size(); ++i) {
      const double dx = (results[i].x - results[0].x).cwiseAbs().maxCoeff() / results[0].x.cwiseAbs().maxCoeff();
      CHECK(dx <= bound);
    }
  }
}

TEST_CASE("GPU members' panel-stream products with a block per tile (panel_products automatic: tiles) give "
          "bitwise the persistent grid's x (budget)",
          "[gpu][distributed]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the members' panel-stream products");
  if (!runtime::have_nccl()) {
    WARN("no NCCL in this build: skipping the GPU members' panel-stream products");
    return;
  }
  const LinearSystem sys = generate_random_system(2600, 7);
  for (runtime::DeviceGroup& group : member_groups()) {
    SolveOptions automatic = gpu_options(Variant::ec_fp16, 512), budget = gpu_options(Variant::ec_fp16, 512);
    set_plan_fields(automatic.cuda_plan, "joins=variant");
    set_plan_fields(budget.cuda_plan, "joins=variant,panel_products=budget");
    const SolveResult a = solve_on_ranks(sys, automatic, group);
    const SolveResult b = solve_on_ranks(sys, budget, group);
    INFO(a.note);
    REQUIRE(a.converged);
    REQUIRE(a.cuda_plan);
    CHECK(a.cuda_plan->panel_products == CudaLuPlan::PanelProducts::tiles);
    CHECK(a.iterations == b.iterations);
    CHECK((a.x.array() == b.x.array()).all());
  }
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
  SECTION("the refinement's sweeps fanned in (transposed: fanned out) or broadcast: both converge in the same "
          "iterations or close, x within the bound of each other, the condition estimates within 1% of each "
          "other, fan_in bitwise on a second run") {
    const LinearSystem sys = generate_random_system(1500, 5);  // 12 blocks of 128, the last 92 rows
    for (const Variant v : variants()) {
      SolveOptions fan = gpu_options(v, 128), broadcast = gpu_options(v, 128);
      broadcast.cuda_plan.member_sweeps = CudaLuPlan::MemberSweeps::broadcast;
      fan.condition_estimate = broadcast.condition_estimate = ConditionEstimate::always;
      const SolveResult a = solve_on_ranks(sys, fan, group);
      const SolveResult again = solve_on_ranks(sys, fan, group);
      const SolveResult b = solve_on_ranks(sys, broadcast, group);
      INFO(to_string(v) << ": " << a.note);
      REQUIRE(a.cuda_plan);
      CHECK(a.cuda_plan->member_sweeps == CudaLuPlan::MemberSweeps::fan_in);
      REQUIRE(a.converged);
      REQUIRE(b.converged);
      CHECK(test::dsgesv_criterion(sys, a.x));
      CHECK(a.iterations <= b.iterations + 1);
      CHECK((a.x.array() == again.x.array()).all());
      const double dx = (a.x - b.x).cwiseAbs().maxCoeff() / b.x.cwiseAbs().maxCoeff();
      CHECK(dx <= 4 * cond_inf(sys.A) * std::sqrt(1500.0) * 0x1p-53);
      REQUIRE(a.condition_estimate);
      REQUIRE(b.condition_estimate);
      REQUIRE(again.condition_estimate);
      CHECK(*a.condition_estimate == *again.condition_estimate);
      CHECK(std::abs(*a.condition_estimate - *b.condition_estimate) <= 1e-2 * *b.condition_estimate);
    }
  }
  SECTION("a 2 x 1 grid runs as 1 x 2: the same x bit for bit, said in the note") {
    const LinearSystem sys = generate_random_system(300, 1);
    const Grid tall{2, 1}, line{1, 2};
    const SolveResult a = solve_on_ranks(sys, gpu_options(Variant::fp32_simt, 64), group, &tall);
    const SolveResult b = solve_on_ranks(sys, gpu_options(Variant::fp32_simt, 64), group, &line);
    REQUIRE(a.converged);
    CHECK((a.x.array() == b.x.array()).all());
    CHECK(a.iterations == b.iterations);
    CHECK(a.note.find("the 2x1 grid ran as 1x2") != std::string::npos);
  }
  SECTION("a zero column is refused by name before any member runs") {
    LinearSystem sys = generate_random_system(400, 2);
    sys.A.col(250).setZero();
    CHECK_THROWS_WITH(solve_on_ranks(sys, gpu_options(Variant::fp32_simt, 64), group),
                      Catch::Contains("column 251 (1-based) is zero"));
  }
}

#endif  // TCSOLVE_HAVE_CUDA
