// Random mode by blocks of rows (generate.hpp, "by blocks"): A ~ U(-1, 1) and x_true ~ U(-1, 1)
// from the counter-based Philox4x32-10 (philox.hpp) keyed by the seed, so that each element is a
// pure function of (seed, its index) and any block of rows is made on its own; b = A x_true row by
// row, each row's sum in a fixed order. Memory: one block of rows at a time, never the whole A.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"
#include "tcsolve/solver/philox.hpp"

namespace tcsolve {
namespace {

constexpr std::uint32_t kStreamA = 2, kStreamX = 3;  // 0 and 1: the cuda randsvd's U and V

/// Fewest elements of A per thread before random_rows uses another one (a thread's start costs
/// about as much as drawing a few thousand numbers).
constexpr std::int64_t kElementsPerThread = std::int64_t{1} << 16;


/// out[k] = block_stream_uniform(seed, stream, first + k) for k < count: one Philox call per pair
/// of numbers (an odd first or last index draws its pair for one of them).
void fill_uniform(std::uint64_t seed, std::uint32_t stream, std::uint64_t first, std::uint64_t count, double* out) {
  std::uint64_t k = 0;
  if (count > 0 && first % 2 == 1) {
    out[k++] = philox::uniform_pair(seed, stream, first / 2).second;
  }
  for (; k + 1 < count; k += 2) {
    const philox::UniformPair u = philox::uniform_pair(seed, stream, (first + k) / 2);
    out[k] = u.first;
    out[k + 1] = u.second;
  }
  if (k < count) {
    out[k] = philox::uniform_pair(seed, stream, (first + k) / 2).first;
  }
}

/// Rows [r0, r1) of the block (relative to row0): A's rows drawn, then b's, each row by itself.
void make_rows(int n, std::uint64_t seed, std::int64_t row0, int r0, int r1, const Eigen::MatrixXd& x, double* a,
               double* b) {
  const std::int64_t nrhs = x.cols();
  for (int r = r0; r < r1; ++r) {
    double* row = a + static_cast<std::int64_t>(r) * n;
    const std::uint64_t i = static_cast<std::uint64_t>(row0 + r);
    fill_uniform(seed, kStreamA, i * static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(n), row);
    for (std::int64_t c = 0; c < nrhs; ++c) {
      const double* xc = x.col(c).data();
      double sum = 0;
      for (int j = 0; j < n; ++j) sum += row[j] * xc[j];  // j = 0, 1, ..., n-1: the defined order
      b[r * nrhs + c] = sum;
    }
  }
}

/// Largest n of random_x_true: 2^20. For `solve --synthetic` on GPUs x_true (n doubles a column)
/// is all the host makes: A is made on the devices, each rank's columns checked against its
/// device's memory before anything is allocated, so the order is bounded by the devices, not by
/// kMaxGeneratedOrder (files and systems in host memory). 2^20 covers docs/design.md's 64-GPU
/// n = 500000; A's indices i n + j stay below 2^40.
constexpr int kMaxSyntheticOrder = 1 << 20;

void check_order(int n, int most = kMaxGeneratedOrder) {
  if (n < 1 || n > most)
    throw InvalidInput("generated system: n must be in 1.." + std::to_string(most) + ", got " + std::to_string(n));
}

}  // namespace

double block_stream_uniform(std::uint64_t seed, std::uint32_t stream, std::uint64_t index) {
  const philox::UniformPair u = philox::uniform_pair(seed, stream, index / 2);
  return index % 2 == 0 ? u.first : u.second;
}

Eigen::MatrixXd random_x_true(int n, int nrhs, std::uint64_t seed) {
  check_order(n, kMaxSyntheticOrder);
  if (nrhs < 1) throw InvalidInput("generated system: nrhs must be at least 1, got " + std::to_string(nrhs));
  // Drawn in the stream's order (i nrhs + c: row-major), stored column-major.
  std::vector<double> drawn(static_cast<std::size_t>(n) * static_cast<std::size_t>(nrhs));
  fill_uniform(seed, kStreamX, 0, drawn.size(), drawn.data());
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(drawn.data(), n,
                                                                                                  nrhs);
}

void random_rows(int n, std::uint64_t seed, std::int64_t row0, int rows, const Eigen::MatrixXd& x, double* a,
                 double* b) {
  if (rows <= 0) return;
  const std::int64_t elements = static_cast<std::int64_t>(rows) * n;
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const int threads = static_cast<int>(
      std::min<std::int64_t>({static_cast<std::int64_t>(hardware), rows, std::max<std::int64_t>(1, elements / kElementsPerThread)}));
  if (threads <= 1) {
    make_rows(n, seed, row0, 0, rows, x, a, b);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(threads));
  for (int t = 0, r0 = 0; t < threads; ++t) {
    const int count = rows / threads + (t < rows % threads ? 1 : 0);
    pool.emplace_back([&, t, r0, count] {
      try {
        make_rows(n, seed, row0, r0, r0 + count, x, a, b);
      } catch (...) {
        failures[static_cast<std::size_t>(t)] = std::current_exception();
      }
    });
    r0 += count;
  }
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& f : failures)
    if (f) std::rethrow_exception(f);
}

void generate_random_blocks(int n, std::uint64_t seed, const Eigen::MatrixXd& x, int block_rows,
                            const RandomRowBlock& sink) {
  check_order(n);
  if (block_rows < 1)
    throw InvalidInput("generated system: rows per block must be at least 1, got " + std::to_string(block_rows));
  if (x.rows() != n || x.cols() < 1)
    throw InvalidInput("generated system: x_true is " + std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
                       ", expected " + std::to_string(n) + " x nrhs");
  const int rows_per_block = std::min(block_rows, n);
  const std::int64_t nrhs = x.cols();
  std::vector<double> a(static_cast<std::size_t>(rows_per_block) * static_cast<std::size_t>(n));
  std::vector<double> b(static_cast<std::size_t>(rows_per_block * nrhs));
  for (std::int64_t row0 = 0; row0 < n; row0 += rows_per_block) {
    const int rows = static_cast<int>(std::min<std::int64_t>(rows_per_block, n - row0));
    random_rows(n, seed, row0, rows, x, a.data(), b.data());
    sink(row0, rows, a.data(), b.data());
  }
}

LinearSystem generate_random_system(int n, std::uint64_t seed, int nrhs, int block_rows) {
  check_order(n);
  LinearSystem sys;
  sys.x_true = random_x_true(n, nrhs, seed);
  sys.A.resize(n, n);
  sys.b.resize(n, nrhs);
  generate_random_blocks(n, seed, *sys.x_true, block_rows > 0 ? block_rows : n,
                         [&](std::int64_t row0, int rows, const double* a, const double* b) {
                           using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
                           sys.A.middleRows(row0, rows) = Eigen::Map<const RowMajor>(a, rows, n);
                           sys.b.middleRows(row0, rows) = Eigen::Map<const RowMajor>(b, rows, nrhs);
                         });
  sys.b_is_vector = nrhs == 1;
  sys.description = random_description(n, seed);
  return sys;
}

std::string random_description(int n, std::uint64_t seed) {
  return "random: A ~ U(-1,1), n " + std::to_string(n) + ", seed " + std::to_string(seed) +
         ", by rows from Philox4x32-10; x ~ U(-1,1), b = A x row by row (tcsolve generate)";
}

}  // namespace tcsolve
