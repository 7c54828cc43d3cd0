// [gpu] tests of beam pivoting on one GPU (solver/src/cuda/leaf_rbt.cu's beam windows,
// blocked_lu.cpp's factorize_beam, solver_cuda.cpp's solve_beam), against the cpu reference:
//   - the beam leaf bitwise equal to a host emulation of its arithmetic (the same pivots, FMAs
//     and divisions in the same order), modified pivots and their list included, and the block
//     panel's maximum bitwise the host's;
//   - beam alone converges to dsgesv's criterion on random and randsvd 1e2..1e6 systems, with
//     the cpu beam's modification count and about its iterations;
//   - systems built to need pivoting and every committed system: converged, by beam or by a
//     reported fallback, never with a larger backward error than partial pivoting's beyond
//     sqrt(n) eps64; a zero diagonal block is modified as on the cpu and refined by GMRES-IR.
// Skipped, with a warning, without a GPU.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda/kernels.hpp"
#include "cuda_test_util.hpp"
#include "lu_test_util.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"
#include "test_data.hpp"

namespace {

using namespace tcsolve;
using test::with_ones;

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename T>
std::vector<T> host_vector(const T* data, std::size_t count) {
  return std::vector<T>(data, data + count);
}

SolveOptions beam_cuda(int nb, Variant v = Variant::ec_fp16) {
  SolveOptions o;
  o.backend = Backend::cuda;
  o.variant = v;
  o.block_size = nb;
  o.pivoting = Pivoting::beam;
  o.fp64_below = 0;  // auto's FP64 LU below 2048 would take beam's place
  return o;
}

/// The beam window's arithmetic on the host (leaf_rbt.cu's window_kernel with beam): rows
/// [c0, c0 + rows) and columns [c0, c0 + w) of the row-major a, in place; the modifications as
/// (column, delta) and the window's final row order (origin of each row).
struct HostLeaf {
  std::vector<std::pair<int, double>> modifications;
  std::vector<int> origin;
};
HostLeaf beam_leaf_on_host(RowMajorF& a, int c0, int w, int rows, float tiny) {
  HostLeaf out;
  out.origin.resize(static_cast<std::size_t>(rows));
  std::iota(out.origin.begin(), out.origin.end(), 0);
  auto at = [&](int r, int c) -> float& { return a(c0 + r, c0 + c); };
  for (int k = 0; k < w; ++k) {
    int p = k;
    float best = std::fabs(at(k, k));
    for (int r = k + 1; r < rows; ++r)
      if (std::fabs(at(r, k)) > best) {
        best = std::fabs(at(r, k));
        p = r;
      }
    if (!(std::fabs(at(p, k)) > tiny)) {
      const float old = at(p, k), v = old < 0 ? -tiny : tiny;
      at(p, k) = v;
      out.modifications.emplace_back(c0 + k, static_cast<double>(v) - static_cast<double>(old));
    }
    if (p != k) {
      for (int c = 0; c < w; ++c) std::swap(at(k, c), at(p, c));
      std::swap(out.origin[static_cast<std::size_t>(k)], out.origin[static_cast<std::size_t>(p)]);
    }
    for (int r = k + 1; r < rows; ++r) {
      const float l = at(r, k) / at(k, k);
      at(r, k) = l;
      for (int c = k + 1; c < w; ++c) at(r, c) = std::fma(-l, at(k, c), at(r, c));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the device beam leaf is bitwise its host emulation: pivots, multipliers, modified pivots", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the beam leaf");
  // a 700 x 700 row-major matrix; leaves of 32 and 17 columns over 500 and 37 rows (a full
  // block's window and the tail of one), U(-1,1) with some columns zero in the window's rows, so
  // that pivots are modified (the threshold from the block maximum)
  const int n = 700, c0 = 64;
  for (const auto& [w, rows] : std::vector<std::pair<int, int>>{{32, 500}, {17, 37}, {32, 32}}) {
    INFO("w " << w << ", rows " << rows);
    std::mt19937 rng(static_cast<unsigned>(31 * w + rows));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    RowMajorF a(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) a(i, j) = dist(rng);
    for (int r = c0; r < c0 + rows; ++r) {  // columns 3 and 9 of the leaf zero in its rows
      a(r, c0 + 3) = 0;
      a(r, c0 + 9) = 0;
    }
    cuda::DeviceBuffer<float> d_a(host_vector(a.data(), a.size()));
    cuda::DeviceBuffer<unsigned> bits(1);
    cuda::kernels::block_max_abs(nullptr, d_a.data(), n, c0, n, c0, w, bits.data());
    const unsigned got_bits = bits.download()[0];
    float block_max = 0;
    std::memcpy(&block_max, &got_bits, sizeof block_max);
    CHECK(block_max == a.block(c0, c0, n - c0, w).cwiseAbs().maxCoeff());
    const float tiny = static_cast<float>(kBeamThreshold * static_cast<double>(block_max));

    cuda::DeviceBuffer<int> info(std::vector<int>{0}), pairs(cuda::kernels::interchange_scratch_ints(w));
    cuda::DeviceBuffer<int> count(std::vector<int>{0}), columns(static_cast<std::size_t>(n));
    cuda::DeviceBuffer<double> deltas(static_cast<std::size_t>(n));
    cuda::kernels::factor_beam_window(nullptr, d_a.data(), n, c0, w, rows, bits.data(), kBeamThreshold, 1e-30f,
                                      pairs.data(), info.data(), {count.data(), columns.data(), deltas.data(), n});
    const std::vector<float> got = d_a.download();
    CHECK(info.download()[0] == 0);

    RowMajorF want = a;
    const HostLeaf h = beam_leaf_on_host(want, c0, w, rows, tiny);
    const Eigen::Map<const RowMajorF> f(got.data(), n, n);
    CHECK(std::memcmp(f.data(), want.data(), got.size() * sizeof(float)) == 0);  // the leaf's columns; the rest untouched
    // the modifications: at least the two zero columns', the same list
    const int k = count.download()[0];
    REQUIRE(k == static_cast<int>(h.modifications.size()));
    CHECK(k >= 2);
    const std::vector<int> cols = columns.download();
    const std::vector<double> ds = deltas.download();
    for (int i = 0; i < k; ++i) {
      CHECK(cols[static_cast<std::size_t>(i)] == h.modifications[static_cast<std::size_t>(i)].first);
      CHECK(ds[static_cast<std::size_t>(i)] == h.modifications[static_cast<std::size_t>(i)].second);
    }
    // the window's permutation as (dst, src) pairs: each moved row's origin
    const std::vector<int> pr = pairs.download();
    std::vector<int> origin(static_cast<std::size_t>(rows));
    std::iota(origin.begin(), origin.end(), 0);
    for (int m = 0; m < pr[0]; ++m)
      origin[static_cast<std::size_t>(pr[static_cast<std::size_t>(1 + m)] - c0)] =
          pr[static_cast<std::size_t>(1 + 2 * w + m)] - c0;
    CHECK(origin == h.origin);
  }
  // a non-finite candidate is reported (1-based global column)
  RowMajorF b = RowMajorF::Identity(64, 64);
  b(20, 4) = std::numeric_limits<float>::quiet_NaN();
  cuda::DeviceBuffer<float> d_b(host_vector(b.data(), b.size()));
  cuda::DeviceBuffer<unsigned> bits(std::vector<unsigned>{0x3f800000u});  // 1.0f
  cuda::DeviceBuffer<int> info(std::vector<int>{0}), pairs(cuda::kernels::interchange_scratch_ints(32));
  cuda::DeviceBuffer<int> count(std::vector<int>{0}), columns(64);
  cuda::DeviceBuffer<double> deltas(64);
  cuda::kernels::factor_beam_window(nullptr, d_b.data(), 64, 0, 32, 64, bits.data(), kBeamThreshold, 1e-30f,
                                    pairs.data(), info.data(), {count.data(), columns.data(), deltas.data(), 64});
  CHECK(info.download()[0] == 5);
}

TEST_CASE("cuda beam converges to dsgesv's criterion on random and randsvd 1e2..1e6 systems, as the cpu beam does",
          "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the cuda beam solves");
  // n = 701, nb = 128: five full blocks and a last one of 61 columns (look-ahead on)
  constexpr double kEps64 = 0x1p-53;
  const int n = 701;
  for (Variant v : {Variant::ec_fp16, Variant::auto_, Variant::fp32_simt}) {
    for (double cond : {0.0, 1e2, 1e4, 1e6}) {
      const LinearSystem sys = cond == 0 ? generate_system(n, 1, SpectrumMode::random, 3)
                                         : generate_system(n, cond, SpectrumMode::geometric, 3);
      SolveOptions og = beam_cuda(128, v), oc = beam_cuda(128, v);
      oc.backend = Backend::cpu;
      og.fallback = false;
      const SolveResult g = solve(sys, og);
      const SolveResult c = solve(sys, oc);
      INFO(to_string(v) << ", cond " << cond << ": cuda: " << g.note << "; cpu: " << c.note);
      CHECK(g.pivoting == Pivoting::beam);
      CHECK(g.converged);
      CHECK_FALSE(g.fallback_used);
      CHECK(test::dsgesv_criterion(sys, g.x));
      CHECK(g.note.find("beam (in-block pivoting, ") == 0);
      CHECK(g.modifications == c.modifications);  // the same tiny pivots (randsvd 1e2 has one at nb = 128)
      CHECK(g.growth > 0);
      CHECK(g.growth <= kBeamGrowth);
      // the same pivoting up to the order of the roundings: about the cpu's steps
      CHECK(c.pivoting == Pivoting::beam);
      CHECK(std::abs(g.iterations - c.iterations) <= 2);
      if (cond > 0) {  // x within 2 cond_inf eta of x_true, cond_inf <= n cond_2 (eta: dsgesv's criterion)
        const double fe = (g.x - *sys.x_true).cwiseAbs().maxCoeff() / sys.x_true->cwiseAbs().maxCoeff();
        const double eta = std::sqrt(static_cast<double>(n)) * kEps64;
        CHECK(fe <= 2 * n * cond * eta + 4 * kEps64);
      }
      bool growth = false;
      for (const auto& [name, seconds] : g.time_s.phases) growth = growth || name == "growth";
      CHECK(growth);
    }
  }
  // reproducible: the same system, the same bits
  const LinearSystem sys = generate_system(300, 1e3, SpectrumMode::geometric, 4);
  const SolveOptions o = beam_cuda(64);
  CHECK(solve(sys, o).x == solve(sys, o).x);
  // a block beyond one window is refused (solver.cpp's resolve_block_size)
  SolveOptions wide = o;
  wide.block_size = 1024;
  CHECK_THROWS_AS(solve(sys, wide), InvalidInput);
}

TEST_CASE("cuda beam converges, or falls back to partial pivoting with the reason, on systems built to need "
          "pivoting and on every committed system", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the cuda beam fall back");
  constexpr double kEps64 = 0x1p-53;
  const int n = 256, nb = 64;
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(-1, 1);
  auto uniform = [&] {
    Eigen::MatrixXd a(n, n);
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i) a(i, j) = u(rng);
    return a;
  };
  Eigen::MatrixXd zero_block = uniform();
  zero_block.block(0, 0, nb, nb).setZero();
  zero_block.diagonal().segment(2 * nb, nb).setZero();
  Eigen::MatrixXd dominant = uniform();
  dominant.diagonal().array() += 2.0 * n;
  Eigen::MatrixXd shifted(n, n);
  for (int i = 0; i < n; ++i) shifted.row((i + 97) % n) = dominant.row(i);
  Eigen::MatrixXd scaled = uniform();
  for (int i = 0; i < n; ++i) scaled.row(i) *= std::pow(10.0, 60.0 * i / (n - 1) - 30);
  std::vector<std::pair<std::string, LinearSystem>> systems = {{"zero diagonal block", with_ones(zero_block)},
                                                               {"permuted dominant", with_ones(shifted)},
                                                               {"rows 1e-30..1e30", with_ones(scaled)}};
  for (const double cond : {1e8, 1e10})
    systems.emplace_back("randsvd " + std::to_string(cond), generate_system(n, cond, SpectrumMode::geometric, 9));
  for (const char* file : {"bfwa62.h5", "gr_900_900_crg.h5", "olm500.h5", "west0067.h5", "randsvd_n256_c1e4.h5",
                           "random_n512.h5"})
    systems.emplace_back(file, read_system(test::test_data_path(std::string("inputs/") + file)));
  int fell_back = 0;
  for (const auto& [name, sys] : systems) {
    const SolveResult r = solve(sys, beam_cuda(nb));
    SolveOptions p = beam_cuda(nb);
    p.pivoting = Pivoting::partial;
    const SolveResult partial = solve(sys, p);
    SolveOptions oc = beam_cuda(nb);
    oc.backend = Backend::cpu;
    const SolveResult c = solve(sys, oc);
    INFO(name << ": beam " << to_string(r.pivoting) << ", " << r.modifications << " modified: " << r.note
              << "; cpu: " << c.note);
    CHECK(r.converged);
    CHECK(test::dsgesv_criterion(sys, r.x));
    CHECK(r.backward_error <= std::max(partial.backward_error, std::sqrt(static_cast<double>(sys.n())) * kEps64));
    if (r.pivoting == Pivoting::partial) {
      ++fell_back;
      CHECK(r.note.find("beam") == 0);
      CHECK(r.note.find("partial pivoting used") != std::string::npos);
      bool attempt = false;
      for (const auto& [phase, seconds] : r.time_s.phases) attempt = attempt || phase == "beam_attempt";
      CHECK(attempt);
    } else {
      CHECK(r.pivoting == Pivoting::beam);
      CHECK(r.beam_correction == (r.modifications > 0 ? BeamCorrection::gmres : BeamCorrection::none));
    }
    if (name == "zero diagonal block") {  // every pivot of the zero block modified, on both backends
      CHECK(r.modifications >= nb);
      CHECK(r.modifications == c.modifications);
    }
    std::printf("cuda beam on %-20s %-7s %d modified, growth %.2e, %d iterations, backward error %.2e (partial: %d, "
                "%.2e)\n",
                name.c_str(), std::string(to_string(r.pivoting)).c_str(), r.modifications, r.growth, r.iterations,
                r.backward_error, partial.iterations, partial.backward_error);
  }
  std::printf("cuda beam fell back on %d of %zu systems\n", fell_back, systems.size());
}

TEST_CASE("cuda beam's Woodbury correction solves with A itself, as the cpu's does", "[gpu]") {
  TCSOLVE_SKIP_WITHOUT_GPU("the cuda beam Woodbury correction");
  // a zero 32 x 32 diagonal block at n = 256 (nb 32): every pivot of it modified on both
  // backends; woodbury keeps the requested refinement (classical, as auto without
  // modifications) and converges in about the cpu's steps from about the cpu's first backward
  // error; auto and gmres run GMRES-IR
  const int n = 256, nb = 32;
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::MatrixXd A(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) A(i, j) = u(rng);
  A.block(0, 0, nb, nb).setZero();
  const LinearSystem sys = with_ones(A);
  for (BeamCorrection c : {BeamCorrection::woodbury, BeamCorrection::gmres, BeamCorrection::automatic}) {
    SolveOptions og = beam_cuda(nb), oc = beam_cuda(nb);
    og.beam_correction = oc.beam_correction = c;
    og.fallback = false;
    oc.backend = Backend::cpu;
    const SolveResult g = solve(sys, og);
    const SolveResult cpu = solve(sys, oc);
    INFO(to_string(c) << ": cuda: " << g.note << "; cpu: " << cpu.note);
    CHECK(g.pivoting == Pivoting::beam);
    CHECK(g.converged);
    CHECK(test::dsgesv_criterion(sys, g.x));
    CHECK(g.modifications >= nb);
    CHECK(g.modifications == cpu.modifications);
    CHECK(g.beam_correction == (c == BeamCorrection::woodbury ? BeamCorrection::woodbury : BeamCorrection::gmres));
    CHECK(g.beam_correction == cpu.beam_correction);
    if (c == BeamCorrection::woodbury) {
      CHECK(g.note.find("Woodbury correction of rank " + std::to_string(g.modifications)) != std::string::npos);
      // the same factorization up to the order of its roundings, so about the same contraction
      // per step (with growth 1e5 its rate follows the last bits: 14 steps against the cpu's 11
      // on an H200, session 31)
      CHECK(g.iterations <= 2 * cpu.iterations + 2);
      // the initial solve already through A_s^-1: about the cpu's first backward error
      REQUIRE_FALSE(g.history.empty());
      REQUIRE_FALSE(cpu.history.empty());
      CHECK(g.history.front() <= 100 * cpu.history.front() + 1e-15);
    }
  }
}

#endif  // TCSOLVE_HAVE_CUDA
