// `tcsolve compare` under mpirun: the rows of the table on cpu ranks (compare_ranks.hpp).
#include "compare_ranks.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "input.hpp"
#include "rank_system.hpp"
#include "scalapack_baseline.hpp"
#include "tcsolve/runtime/communicator.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve::app {
namespace {

constexpr double kEps64 = 0x1p-53;
constexpr double kInf = std::numeric_limits<double>::infinity();
const std::string kPdgesv = "scalapack-pdgesv";


/// This rank's piece of A, where it sits in A, and b whole.
struct Pieces {
  const SystemPiece& piece;
  const CyclicMap& rows;
  int prow;
  const CyclicMap& cols;
  int pcol;
};

/// The backward error of x (whole, n x nrhs, on every rank) and dsgesv's criterion, as the solver
/// measures them (refinement_rules.hpp, assess_columns): per column j
///   eta_j = ||b_j - A x_j||_inf / (||A||_inf ||x_j||_inf + ||b_j||_inf),
///   done_j = ||b_j - A x_j||_inf <= sqrt(n) ||x_j||_inf ||A||_inf eps64,
/// with r = b - A x in FP64 by a distributed product: each rank adds its piece of A times the
/// matching rows of x into an n x nrhs sum, and the row sums of |A| into an n-vector, one
/// allreduce over the ranks for both. In plain FP64 (not the solver's overflow-safe scaled forms:
/// a system whose norms near 2^+-1000 would need them; the ones compare reads are far from there).
struct Assessment {
  double backward_error = kInf;
  bool converged = false;
};
Assessment assess(runtime::Communicator& world, const Pieces& p, const Eigen::MatrixXd& x) {
  const int n = p.rows.n;
  const Eigen::Index nrhs = x.cols();
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(n, nrhs + 1);  // A x, then the row sums of |A|
  const SystemPiece& s = p.piece;
  for (int j = 0; j < s.local_cols; ++j) {
    const int col = p.cols.global(j, p.pcol);
    const double* a = s.a.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(s.ld);
    for (int i = 0; i < s.local_rows; ++i) {
      const int row = p.rows.global(i, p.prow);
      for (Eigen::Index c = 0; c < nrhs; ++c) sums(row, c) += a[i] * x(col, c);
      sums(row, nrhs) += std::abs(a[i]);
    }
  }
  world.allreduce_sum(sums.data(), static_cast<std::size_t>(sums.size()), nullptr);
  const double norm_a = sums.col(nrhs).maxCoeff();
  Assessment out;
  out.backward_error = 0;
  out.converged = true;
  for (Eigen::Index c = 0; c < nrhs; ++c) {
    const double rn = (s.b.col(c) - sums.col(c)).lpNorm<Eigen::Infinity>();
    const double xn = x.col(c).lpNorm<Eigen::Infinity>(), bn = s.b.col(c).lpNorm<Eigen::Infinity>();
    double eta = kInf;
    bool ok = false;
    if (std::isfinite(rn) && std::isfinite(xn) && std::isfinite(norm_a)) {
      const double denominator = norm_a * xn + bn;
      eta = denominator > 0 ? rn / denominator : rn > 0 ? kInf : 0.0;
      if (!std::isfinite(eta)) eta = kInf;
      ok = rn <= std::sqrt(static_cast<double>(n)) * xn * norm_a * kEps64;
    }
    out.backward_error = std::max(out.backward_error, eta);
    out.converged = out.converged && ok;
  }
  return out;
}

/// The scalapack-pdgesv row: pdgesv on copies of the pieces, its x gathered and assessed.
SolveReport pdgesv_row(runtime::Communicator& world, const std::string& input, const Pieces& p,
                       const Grid& grid, int rank, const DistributedSystem& sys,
                       const SolveOptions& options) {
  ScalapackSolve solved;
  runtime::agreed(&world, [&] {
    solved = scalapack_pdgesv(grid, rank, sys.desc_a, sys.A, sys.desc_b, sys.B);
    if (solved.info > 0)  // solve's message, as for fp64-lu (U(info, info) is one-based already)
      throw InvalidInput(input + ": A: matrix is exactly singular: zero pivot in column " +
                         std::to_string(solved.info) + " (1-based; ScaLAPACK pdgesv)");
  });
  const std::vector<double> whole = gather(world, solved.x.data(), sys.desc_b, grid);
  const Eigen::MatrixXd x = Eigen::Map<const Eigen::MatrixXd>(whole.data(), sys.desc_b.m, sys.desc_b.n);
  const Assessment a = assess(world, p, x);
  SolveResult res;
  res.backend = Backend::cpu;
  res.resolved_variant = Variant::fp64;
  res.block_size = sys.desc_a.nb;
  res.converged = a.converged;
  res.backward_error = a.backward_error;
  res.history.push_back(a.backward_error);
  if (p.piece.x_true) res.forward_error = forward_error(x, *p.piece.x_true);
  res.time_s.factorization = solved.seconds;  // the call counted whole, as cuSOLVER's IRS calls are
  res.time_s.total = solved.seconds;
  res.note = "ScaLAPACK pdgesv (FP64 LU with partial pivoting) on the " + grid_text(grid) + " grid, nb " +
             std::to_string(sys.desc_a.nb) + "; dsgesv criterion " +
             (a.converged ? "holds" : "does not hold") +
             " (x gathered, r = b - A x in FP64 by the distributed product)";
  return {kPdgesv, true, options, std::move(res)};
}

}  // namespace

CompareRanksPlan plan_compare_ranks(const JobRanks& job, CompareRanksArgs& a) {
  CompareRanksPlan plan;
  plan.grid = Grid{1, job.size};
  runtime::agreed(job.world.get(), [&] {
    if (!a.grid.empty()) plan.grid = parse_grid(a.grid);
    check_grid(plan.grid, job.size);
    if (a.options.backend == Backend::automatic) a.options.backend = Backend::cpu;
    if (a.options.backend != Backend::cpu)
      throw Unavailable(
          "compare under mpirun: the distributed solver runs on cpu ranks only for now "
          "(--backend cpu); GPU ranks are not there yet");
    if (!is_hdf5_file(a.input) && std::filesystem::exists(a.input))
      throw InvalidInput(a.input +
                         ": under mpirun, compare reads an HDF5 system file, each rank its blocks; make "
                         "one with `tcsolve import --mtx " +
                         a.input + " --output SYS.h5`");
    plan.shape = inspect_system(a.input, a.layout);
    if (plan.shape.n > std::numeric_limits<int>::max() || plan.shape.nrhs > std::numeric_limits<int>::max())
      throw InvalidInput(a.input + ": A: order " + std::to_string(plan.shape.n) + " exceeds 2^31 - 1");
  });
  return plan;
}

CompareRanksRows compare_on_ranks(const JobRanks& job, const CompareRanksArgs& a,
                                  const CompareRanksPlan& plan, const std::vector<Variant>& variants,
                                  Progress& progress) {
  runtime::Communicator& world = *job.world;
  const Grid& grid = plan.grid;
  const int n = static_cast<int>(plan.shape.n);
  const int nb = a.options.block_size > 0 ? a.options.block_size : kDefaultBlockSizeCpu;
  const int prow = grid.row_of(job.rank), pcol = grid.col_of(job.rank);
  const CyclicMap rows{n, nb, grid.rows}, cols{n, nb, grid.cols};
  // this rank: its piece of A in FP64 (read), then either a solve's FP32 LU (4 bytes an entry;
  // its FP64 fallback, 16, as solve counts it: 12 with A's) or pdgesv's copy (8), so 16 with
  // A's; the solve's vectors (about 8 n x nrhs doubles) and pdgesv's x gathered (1 more)
  RankSystem mine;
  read_rank_system(world, a.input, a.layout, grid, nb, plan.shape, 16.0, 72.0 * plan.shape.n * plan.shape.nrhs, mine,
                   [&] { progress.step("reading this rank's piece of " + a.input); });
  const SystemPiece& piece = mine.piece;
  const DistributedSystem& sys = mine.system;

  runtime::DeviceGroup group = runtime::DeviceGroup::mpi(runtime::Memory::host);
  CompareRanksRows out;
  out.grid = grid_text(grid);
  out.group = group.describe();
  const std::size_t total = variants.size() + (have_scalapack() ? 1 : 0);
  const auto step = [&](const std::string& name) {
    progress.step("[" + std::to_string(out.rows.size() + 1) + "/" + std::to_string(total) + "] " + name);
  };
  for (Variant v : variants) {
    const std::string name(to_string(v));
    step(name);
    SolveOptions o = a.options;
    o.variant = v;
    o.block_size = nb;
    o.fp64_below = 0;  // every variant's own mixed path, as compare alone
    SolveReport report{name, false, o, {}};
    try {
      report.result = solve(sys, o, group);
    } catch (const InvalidInput& e) {  // an exactly singular A: name the file, as solve does
      if (std::string(e.what()).rfind("matrix is exactly singular", 0) == 0)
        throw runtime::Agreed<InvalidInput>(a.input + ": A: " + e.what());
      throw;
    }
    SolveResult& s = report.result;
    if (piece.x_true) s.forward_error = forward_error(s.x, *piece.x_true);
    s.x = Eigen::MatrixXd();  // compare reports errors and times, never a solution
    out.rows.push_back(std::move(report));
  }
  if (have_scalapack()) {
    step(kPdgesv);
    out.rows.push_back(
        pdgesv_row(world, a.input, Pieces{piece, rows, prow, cols, pcol}, grid, job.rank, sys, a.options));
  } else {
    out.notes.push_back(scalapack_absent_reason());
  }
  return out;
}

}  // namespace tcsolve::app
