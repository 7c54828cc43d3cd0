// The distributed solver on cpu ranks (tcsolve_mpi_tests under mpirun -np 1..4; distributed.hpp,
// block_cyclic.hpp). Every rank runs every test, on every grid P x Q equal to the rank count
// (1x1; 1x2, 2x1; 1x3, 3x1; 1x4, 2x2, 4x1), with n not a multiple of nb:
//   - the layout's index maps equal a brute-force dealing of the blocks, and scatter / gather
//     are inverse;
//   - the distributed LU's pivot sequence equals the single-process FP32 LU's (lu_factorize of
//     A, whose pivots are those of R A C: the distributed LU, without equilibration yet, is given
//     R A C, exact in FP64 and in FP32 as R, C are powers of two) on random systems (no
//     near-ties), its factors are bitwise the single process', and P A = L U holds to the FP32
//     LU's bound;
//   - the solve converges to dsgesv's criterion on generated and committed systems, and its
//     forward error is within the derived bound of the single-process cpu solve's (below);
//   - a bad descriptor field on one rank, a grid that does not match the ranks and an exactly
//     singular A end every rank with the same InvalidInput, marked Agreed.
#include <catch2/catch.hpp>
#include <Eigen/Dense>
#include <cmath>
#include <string>
#include <vector>

#include "../test_data.hpp"
#include "tcsolve/io/system_file.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/where.hpp"
#include "tcsolve/solver/block_cyclic.hpp"
#include "tcsolve/solver/distributed.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/solver.hpp"

namespace {

using namespace tcsolve;
constexpr double kEps64 = 0x1p-53;

/// Every P x Q grid with P Q = ranks.
std::vector<Grid> grids_for(int ranks) {
  std::vector<Grid> grids;
  for (int p = 1; p <= ranks; ++p)
    if (ranks % p == 0) grids.push_back(Grid{p, ranks / p});
  return grids;
}

std::string name(const Grid& g) { return std::to_string(g.rows) + "x" + std::to_string(g.cols); }

/// This rank's local pieces of a global column-major matrix.
struct Pieces {
  Descriptor desc;
  std::vector<double> local;
};
Pieces pieces(const Eigen::MatrixXd& M, int nb, const Grid& g, int rank) {
  Pieces p;
  p.desc = Descriptor::make(static_cast<int>(M.rows()), static_cast<int>(M.cols()), nb, nb, g, g.row_of(rank));
  p.local.assign(static_cast<std::size_t>(p.desc.lld) * std::max(1, p.desc.local_cols(g, g.col_of(rank))), 0.0);
  scatter(M.data(), static_cast<int>(M.rows()), p.desc, g, g.row_of(rank), g.col_of(rank), p.local.data());
  return p;
}

/// The relative forward error max_j ||x_j - x_true_j||_inf / ||x_true_j||_inf.
double forward_error(const Eigen::MatrixXd& x, const Eigen::MatrixXd& x_true) {
  double e = 0;
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    e = std::max(e, (x.col(j) - x_true.col(j)).cwiseAbs().maxCoeff() / x_true.col(j).cwiseAbs().maxCoeff());
  return e;
}

/// Solves sys on `grid` through the local-piece entry point and checks it against the
/// single-process cpu solve: both meet dsgesv's criterion ||r|| <= sqrt(n) ||x|| ||A|| eps64,
/// so each x is within about kappa_inf(A) sqrt(n) eps64 of x_true in the relative inf-norm
/// (a backward error eta gives ||dx||/||x|| <= kappa eta / (1 - kappa eta)); the distributed
/// one's forward error is then at most the single process' plus twice that bound.
void check_solve(const LinearSystem& sys, const Grid& grid, int nb, Variant variant, runtime::DeviceGroup& group) {
  const int rank = group.host_communicator()->rank();
  const int n = static_cast<int>(sys.A.rows());
  const Pieces a = pieces(sys.A, nb, grid, rank), b = pieces(sys.b, nb, grid, rank);
  DistributedSystem d{grid, a.desc, a.local.data(), b.desc, b.local.data()};
  SolveOptions options;
  options.variant = variant;
  const SolveResult dist = solve(d, options, group);
  options.block_size = nb;
  const SolveResult single = solve(sys, options, runtime::Where());
  INFO("grid " << name(grid) << ", n " << n << ", nb " << nb << ", " << to_string(variant) << ": " << dist.note);
  REQUIRE(dist.converged);
  REQUIRE(single.converged);
  CHECK(dist.iterations <= single.iterations + 2);
  const double norm_a = sys.A.cwiseAbs().rowwise().sum().maxCoeff();
  const double norm_inv = sys.A.inverse().cwiseAbs().rowwise().sum().maxCoeff();
  const double kappa = norm_a * norm_inv;
  for (Eigen::Index j = 0; j < sys.b.cols(); ++j) {  // dsgesv's criterion, checked here
    const Eigen::VectorXd r = sys.b.col(j) - sys.A * dist.x.col(j);
    CHECK(r.cwiseAbs().maxCoeff() <= std::sqrt(double(n)) * dist.x.col(j).cwiseAbs().maxCoeff() * norm_a * kEps64);
  }
  if (sys.x_true) {
    const double bound = 2 * kappa * std::sqrt(double(n)) * kEps64;
    const double fe_dist = forward_error(dist.x, *sys.x_true), fe_single = forward_error(single.x, *sys.x_true);
    INFO("forward error " << fe_dist << ", single process " << fe_single << ", bound + " << bound);
    CHECK(fe_dist <= fe_single + bound);
  }
}

/// Runs `step` expecting InvalidInput on every rank, marked Agreed, with the same message on
/// every rank; returns the message.
template <class F>
std::string expect_agreed_invalid(runtime::Communicator& comm, F&& step) {
  std::string message;
  bool agreed = false, invalid = false;
  try {
    step();
  } catch (const InvalidInput& e) {
    invalid = true;
    message = e.what();
    agreed = dynamic_cast<const runtime::AgreedFailure*>(&e) != nullptr;
  }
  CHECK(invalid);
  CHECK(agreed);
  // The same message everywhere: its length and a sum of its bytes, maximum == minimum.
  double len = static_cast<double>(message.size()), sum = 0;
  for (char c : message) sum = sum * 31 + static_cast<unsigned char>(c), sum = std::fmod(sum, 1e9);
  CHECK(comm.max(len) == -comm.max(-len));
  CHECK(comm.max(sum) == -comm.max(-sum));
  return message;
}

}  // namespace

TEST_CASE("block-cyclic index maps equal a brute-force dealing of the blocks", "[mpi][block_cyclic]") {
  for (int n : {1, 7, 31, 32, 33, 150, 161})
    for (int nb : {1, 5, 32})
      for (int procs : {1, 2, 3, 4}) {
        const CyclicMap map{n, nb, procs};
        std::vector<int> count(static_cast<std::size_t>(procs), 0);
        for (int g = 0; g < n; ++g) {
          const int owner = (g / nb) % procs;  // block g / nb dealt round the processes
          INFO("n " << n << " nb " << nb << " procs " << procs << " g " << g);
          REQUIRE(map.owner(g) == owner);
          REQUIRE(map.local(g) == count[static_cast<std::size_t>(owner)]);
          REQUIRE(map.global(map.local(g), owner) == g);
          for (int p = 0; p < procs; ++p) REQUIRE(map.first_at_or_after(g, p) == count[static_cast<std::size_t>(p)]);
          ++count[static_cast<std::size_t>(owner)];
        }
        for (int p = 0; p < procs; ++p) {
          REQUIRE(numroc(n, nb, p, procs) == count[static_cast<std::size_t>(p)]);
          REQUIRE(map.first_at_or_after(n, p) == count[static_cast<std::size_t>(p)]);
        }
      }
}

TEST_CASE("descriptors are ScaLAPACK's desc[9] and name a bad field", "[mpi][block_cyclic]") {
  const Grid g{2, 3};
  const Descriptor d = Descriptor::make(150, 150, 32, 32, g, 1);
  CHECK(d.to_array() == std::array<int, 9>{1, 0, 150, 150, 32, 32, 0, 0, numroc(150, 32, 1, 2)});
  const std::array<int, 9> a = d.to_array();
  CHECK(Descriptor::from_array(a.data()).to_array() == a);
  CHECK_NOTHROW(validate(d, g, 1, "desca"));
  const std::vector<std::pair<int, std::string>> bad = {{0, "DTYPE"}, {2, "M"}, {3, "N"}, {4, "MB"},
                                                        {5, "NB"},    {6, "RSRC"}, {7, "CSRC"}, {8, "LLD"}};
  for (const auto& [field, text] : bad) {
    std::array<int, 9> b = a;
    b[static_cast<std::size_t>(field)] = field == 0 ? 2 : field >= 6 && field <= 7 ? 1 : field == 8 ? 10 : field <= 3 ? -1 : 0;
    try {
      validate(Descriptor::from_array(b.data()), g, 1, "desca");
      FAIL("no error for " << text);
    } catch (const InvalidInput& e) {
      CHECK_THAT(e.what(), Catch::Contains("desca: descriptor field " + text + " = "));
    }
  }
  CHECK(parse_grid("2x3").rows == 2);
  CHECK(parse_grid("2x3").cols == 3);
  CHECK_THROWS_AS(parse_grid("2x"), InvalidInput);
  CHECK_THROWS_AS(parse_grid("0x2"), InvalidInput);
}

TEST_CASE("scatter and gather of a block-cyclic matrix are inverse on every grid", "[mpi][block_cyclic]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  runtime::Communicator& comm = *group.host_communicator();
  Eigen::MatrixXd M(75, 3);
  for (Eigen::Index j = 0; j < M.cols(); ++j)
    for (Eigen::Index i = 0; i < M.rows(); ++i) M(i, j) = double(i) + 1000.0 * double(j);
  for (const Grid& g : grids_for(comm.size())) {
    for (int nb : {4, 16}) {
      Pieces p = pieces(M, nb, g, comm.rank());
      const std::vector<double> all = gather(comm, p.local.data(), p.desc, g);
      CHECK(Eigen::Map<const Eigen::MatrixXd>(all.data(), M.rows(), M.cols()) == M);
      std::vector<double> from_root(p.local.size(), 0.0);  // as pieces() pads
      scatter_from(comm, 0, comm.rank() == 0 ? M.data() : nullptr, 75, p.desc, g, from_root.data());
      CHECK(from_root == p.local);
    }
  }
}

TEST_CASE("the distributed LU pivots as the single-process FP32 LU on every grid", "[mpi][distributed]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  runtime::Communicator& comm = *group.host_communicator();
  const int n = 150, nb = 32;
  const LinearSystem sys = generate_system(n, 1, SpectrumMode::random, 7);
  for (Variant variant : {Variant::fp32_simt, Variant::ootomo_fp16}) {
    const LuFactorization single = lu_factorize(sys.A, variant, nb);
    // R A C: what the single-process LU factors (exact: powers of two).
    const Eigen::MatrixXd As = single.row_scale.asDiagonal() * sys.A * single.col_scale.asDiagonal();
    for (const Grid& g : grids_for(comm.size())) {
      const Pieces a = pieces(As, nb, g, comm.rank());
      const DistributedLu f = distributed_lu_factorize(comm, g, a.desc, a.local.data(), variant);
      INFO("grid " << name(g) << ", " << to_string(variant));
      CHECK(f.perm() == single.perm);
      std::vector<int> identity(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) identity[static_cast<std::size_t>(i)] = i;
      CHECK(f.perm() != identity);  // rows were interchanged: the test exercises the pivoting
      // P A_s = L U to the FP32 LU's bound: |P A_s - L U| <= gamma_n |L| |U| entrywise
      // (Higham, Thm 9.3), gamma_n ~ n u32, with the variant's GEMM no worse than FP32's.
      const std::vector<float> lu = gather(comm, f.lu.data(), f.desc, g);
      const Eigen::MatrixXf LU = Eigen::Map<const Eigen::MatrixXf>(lu.data(), n, n);
      // Bitwise the single-process factors: every entry sees the same operations in the same
      // order (the panel's eliminations entry by entry, U12's triangular solve per column, the
      // trailing updates' k-sums per entry in the variant's order), only on other ranks.
      CHECK(LU == single.lu);
      const Eigen::MatrixXd L = Eigen::MatrixXd(LU.cast<double>().triangularView<Eigen::UnitLower>());
      const Eigen::MatrixXd U = Eigen::MatrixXd(LU.cast<double>().triangularView<Eigen::Upper>());
      Eigen::MatrixXd PA(n, n);
      const std::vector<int> perm = f.perm();
      for (int i = 0; i < n; ++i) PA.row(i) = As.row(perm[static_cast<std::size_t>(i)]);
      const Eigen::MatrixXd bound = 2.0 * n * 0x1p-24 * (L.cwiseAbs() * U.cwiseAbs());
      CHECK(((PA - L * U).cwiseAbs() - bound).maxCoeff() <= 0.0);
    }
  }
}

TEST_CASE("the distributed solve converges to dsgesv's criterion on every grid", "[mpi][distributed]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  for (const Grid& g : grids_for(group.size())) {
    check_solve(generate_system(150, 1e3, SpectrumMode::geometric, 3), g, 32, Variant::fp32_simt, group);
    check_solve(generate_system(150, 1, SpectrumMode::random, 5, 2), g, 32, Variant::ootomo_fp16, group);
    check_solve(generate_system(100, 1e5, SpectrumMode::geometric, 9), g, 16, Variant::auto_, group);
    for (const char* file : {"west0067.h5", "bfwa62.h5", "randsvd_n256_c1e4.h5"})
      check_solve(read_system(test::test_data_path(std::string("inputs/") + file)), g, 16, Variant::fp32_simt, group);
  }
}

TEST_CASE("solve(sys, options, Where(group)) runs the distributed solver on cpu ranks", "[mpi][distributed]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  const LinearSystem sys = read_system(test::test_data_path("inputs/west0067.h5"));
  SolveOptions options;
  options.block_size = 16;
  const SolveResult dist = solve(sys, options, runtime::Where(group));
  const SolveResult single = solve(sys, options, runtime::Where());
  CHECK(dist.converged);
  REQUIRE(dist.forward_error);
  const double bound = 1e-12;  // cond2(west0067) 1.3e2: kappa sqrt(n) eps64 well below this
  CHECK(*dist.forward_error <= *single.forward_error + bound);
  const Grid square{group.size(), 1};
  CHECK(solve_on_ranks(sys, options, group, &square).converged);
}

TEST_CASE("distributed errors end every rank with one agreed InvalidInput", "[mpi][distributed]") {
  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  runtime::Communicator& comm = *group.host_communicator();
  const int ranks = comm.size(), last = ranks - 1;
  const LinearSystem sys = generate_system(70, 10, SpectrumMode::geometric, 2);
  const Grid g{1, ranks};
  Pieces a = pieces(sys.A, 16, g, comm.rank()), b = pieces(sys.b, 16, g, comm.rank());
  SECTION("a bad descriptor field on the last rank only") {
    DistributedSystem d{g, a.desc, a.local.data(), b.desc, b.local.data()};
    if (comm.rank() == last) d.desc_a.lld = 0;
    const std::string m = expect_agreed_invalid(comm, [&] { solve(d, SolveOptions{}, group); });
    CHECK_THAT(m, Catch::Contains("desca: descriptor field LLD = 0"));
    DistributedSystem e{g, a.desc, a.local.data(), b.desc, b.local.data()};
    if (comm.rank() == last) e.desc_b.dtype = 7;
    CHECK_THAT(expect_agreed_invalid(comm, [&] { solve(e, SolveOptions{}, group); }),
               Catch::Contains("descb: descriptor field DTYPE = 7"));
  }
  SECTION("a grid that does not match the ranks") {
    const Grid wrong{ranks + 1, 1};
    DistributedSystem d{wrong, a.desc, a.local.data(), b.desc, b.local.data()};
    CHECK_THAT(expect_agreed_invalid(comm, [&] { solve(d, SolveOptions{}, group); }),
               Catch::Contains("processes, but there are " + std::to_string(ranks) + " ranks"));
  }
  SECTION("an exactly singular matrix (a zero column)") {
    Eigen::MatrixXd A = sys.A;
    A.col(40).setZero();
    const Pieces z = pieces(A, 16, g, comm.rank());
    DistributedSystem d{g, z.desc, z.local.data(), b.desc, b.local.data()};
    CHECK_THAT(expect_agreed_invalid(comm, [&] { solve(d, SolveOptions{}, group); }),
               Catch::Contains("zero pivot in column 41"));
  }
}
