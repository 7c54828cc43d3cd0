// Test systems: randsvd matrices with a chosen condition number (LAPACK xLATMS modes) and U(-1,1)
// matrices (Matrix Market files turned into systems: tcsolve/io/matrix_market.hpp).
//
// Random mode has two streams (issue 33, "generate makes systems larger than one host's memory
// block by block"):
//   - whole matrix (n <= kWholeMatrixRandomOrder, by default): one std::mt19937_64 seeded with the
//     seed draws A column by column, then x_true; b = A x_true by Eigen's product. A row of A is
//     spread over the whole stream, so this stream can only be drawn whole, in memory. It is kept
//     because inputs/random_n512.h5 was made with it (inputs/README.md gives the command, `tcsolve
//     generate --backend cpu --n 512 --mode random --seed 1`, which must still reproduce it) and
//     every test that draws generate_system(n, ..., random, ...) uses n <= 1000.
//   - by blocks (n > kWholeMatrixRandomOrder, or any n through generate_random_blocks and `tcsolve
//     generate --block-rows R`): counter-based, Philox4x32-10 (philox.hpp) keyed by the seed:
//     A(i, j) and x_true(i, c) are pure functions of (seed, i, j), so any block of rows is made
//     independently, in O(block rows x n) memory, and the result does not depend on the block
//     size; b(i, c) = sum over j = 0, 1, ..., n-1 in that order of A(i, j) x_true(j, c) in FP64,
//     row by row, so b too is independent of the blocks.
// The randsvd modes are made whole, in memory (their QR factorizations are O(n^3) and need U and
// V whole anyway).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve {
namespace cuda {
class Context;
}

enum class SpectrumMode { geometric, arithmetic, clustered, random };

/// Largest order generate_system accepts: 2^17, twice what an 80 GB GPU solves (n^2 = 1.7e10
/// elements, 137 GB as FP64). Every element index and count of the solver is 64-bit (until
/// 2026-11-26 this was 46340, n^2 < 2^31, on a claim of 32-bit kernel indices that a review of
/// every kernel disproved; n = 64512 is solved on an H100 in docs/BENCHMARKS.md). Memory is the
/// caller's check: the cpu holds up to five n x n FP64 matrices at once for randsvd and one for
/// random in memory (generate_system), the cuda backend three on the device for randsvd;
/// generate_random_blocks holds one block of rows.
constexpr int kMaxGeneratedOrder = 131072;

/// Largest order whose random mode keeps the whole-matrix mt19937_64 stream (see the top of this
/// file): 1024 covers inputs/random_n512.h5 and the tests' random systems (n <= 1000); A is 8 MiB.
/// Above it generate_system's random mode is the block stream (generate_random_blocks).
constexpr int kWholeMatrixRandomOrder = 1024;

/// "geometric" | "arithmetic" | "clustered" | "random"; throws InvalidInput otherwise.
SpectrumMode parse_spectrum_mode(std::string_view name);
std::string_view to_string(SpectrumMode mode);

/// The randsvd singular values sigma_1 = 1 >= ... >= sigma_n = 1/cond of `mode` (not random):
/// geometric sigma_i = cond^(-(i-1)/(n-1)); arithmetic sigma_i = 1 - (i-1)/(n-1) (1 - 1/cond);
/// clustered sigma_1..n-1 = 1, sigma_n = 1/cond; sigma_n is set to 1/cond exactly; n = 1: 1.
Eigen::VectorXd randsvd_singular_values(int n, double cond, SpectrumMode mode);

/// randsvd: A = U diag(sigma) V^T with Haar-random orthogonal U, V and singular values sigma =
/// randsvd_singular_values(n, cond, mode) from 1 down to 1/cond. random: A ~ U(-1, 1) (cond
/// ignored): the whole-matrix stream for n <= kWholeMatrixRandomOrder, else the block stream,
/// assembled in memory (generate_random_system, the same bits as `tcsolve generate` writes). x_true ~ U(-1, 1) (n x nrhs), b = A x_true in FP64 on the host. Deterministic in
/// `seed` on one backend; the random streams of the two backends differ, so one seed gives
/// different randsvd matrices (with the same singular values) on cpu and cuda.
///
/// U and V are Q * diag(sign(diag(R))) of the QR of an n x n standard Gaussian matrix (Haar
/// measure; Mezzadri 2007), sign(0) taken as +1.
///   cpu (the reference; the files of inputs/): one std::mt19937_64 seeded with `seed` draws, in
///     this order, U's Gaussian matrix, V's (column-major, Box-Muller), then x_true (U(-1,1) from
///     53 random bits); random mode (n <= kWholeMatrixRandomOrder) draws A then x_true. Eigen Householder QR of the two
///     matrices on two threads, the product by column blocks on up to hardware_concurrency()
///     threads, each block an ordinary Eigen product: the same bits as one thread. Same seed,
///     same platform: same bits.
///   cuda (the O(n^3) part on the GPU, for large n; b and the file stay on the host): the
///     Gaussian matrices from Philox4x32-10 (philox.hpp: U's stream 0, V's stream 1, key `seed`),
///     cuSOLVER dgeqrf + dorgqr, the signs, cuBLAS dgemm for A, in FP64 on the device; x_true
///     from a std::mt19937_64 seeded with `seed` (its first draws). Same seed, same GPU model
///     and CUDA version: same bits. random mode is the cpu's on both backends (O(n^2)).
/// backend automatic: cuda when a usable GPU is present. n = 1: sigma = 1 in every mode. Throws
/// InvalidInput unless 1 <= n <= kMaxGeneratedOrder, nrhs >= 1 and cond is finite and >= 1;
/// Unavailable for a randsvd mode on cuda without a usable device (or a build without CUDA).
LinearSystem generate_system(int n, double cond, SpectrumMode mode, std::uint64_t seed, int nrhs = 1,
                             Backend backend = Backend::cpu);

// --- random mode by blocks of rows (generate_blocks.cpp) -------------------------------------

/// The block stream's U[-1, 1) number `index` of stream `stream` under `seed`: Philox4x32-10 of
/// counter (lo(index / 2), hi(index / 2), stream, 0) and key (lo(seed), hi(seed)); of its four
/// words, (w0 w1) as 64 bits for an even index, (w2 w3) for an odd one, u = (those >> 11) 2^-53
/// in [0, 1), returned 2 u - 1 (exact). Streams: 2 for A (index i n + j), 3 for x_true (index i
/// nrhs + c); 0 and 1 are the cuda randsvd's Gaussians.
double block_stream_uniform(std::uint64_t seed, std::uint32_t stream, std::uint64_t index);

/// x_true of the block stream: n x nrhs, x(i, c) = block_stream_uniform(seed, 3, i nrhs + c).
Eigen::MatrixXd random_x_true(int n, int nrhs, std::uint64_t seed);

/// Rows row0 .. row0 + rows - 1 of the block stream's A and b = A x: `a` gets rows x n doubles,
/// row-major (A(row0 + r, j) at a[r n + j]), A(i, j) = block_stream_uniform(seed, 2, i n + j);
/// `b` gets rows x nrhs, row-major, b(i, c) = sum_{j = 0..n-1, in order} A(i, j) x(j, c) in
/// FP64 (x = random_x_true(n, nrhs, seed), n x nrhs). The rows are shared among up to
/// hardware_concurrency() threads, each row made by one: the same bits on any number of threads.
void random_rows(int n, std::uint64_t seed, std::int64_t row0, int rows, const Eigen::MatrixXd& x, double* a,
                 double* b);

/// Receives one block of rows from generate_random_blocks: rows row0 .. row0 + rows - 1 of A
/// (rows x n) and of b (rows x nrhs), both row-major, valid during the call. May throw: the
/// generation stops there.
using RandomRowBlock = std::function<void(std::int64_t row0, int rows, const double* a, const double* b)>;

/// The block stream's A and b by blocks of `block_rows` rows (the last may be shorter), in
/// order, each passed to `sink`; x = random_x_true(n, x.cols(), seed). Holds one block (block_rows
/// x (n + nrhs) doubles) at a time. Throws InvalidInput unless 1 <= n <= kMaxGeneratedOrder,
/// block_rows >= 1 and x is n x nrhs with nrhs >= 1.
void generate_random_blocks(int n, std::uint64_t seed, const Eigen::MatrixXd& x, int block_rows,
                            const RandomRowBlock& sink);

/// The block stream's system in memory (tests, and generate_system's random mode for n >
/// kWholeMatrixRandomOrder): A, b by generate_random_blocks with `block_rows` (default: all n;
/// the bits do not depend on it), x_true, b_is_vector = nrhs == 1, random_description(n, seed).
LinearSystem generate_random_system(int n, std::uint64_t seed, int nrhs = 1, int block_rows = 0);

/// The random-mode system of `seed` (generate_random_blocks' A and b = A x_true with one
/// right-hand side, the same bits) made on the device of `context` (the calling thread's device
/// must be its device): A into the n x n column-major device array A (leading dimension lda >=
/// n), b into the n doubles of device b, in the context's stream order; x_true is
/// random_x_true(n, 1, seed). No host copy of A: `solve --synthetic`. Unavailable without CUDA.
void generate_random_device(int n, std::uint64_t seed, double* A, int lda, double* b, cuda::Context& context);

/// The description attribute of a block-stream random system.
std::string random_description(int n, std::uint64_t seed);

}  // namespace tcsolve
