// Test systems: randsvd matrices with a chosen condition number (LAPACK xLATMS modes) and U(-1,1)
// matrices (Matrix Market files turned into systems: tcsolve/io/matrix_market.hpp).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <string_view>

#include "tcsolve/gemm/variant.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve {

enum class SpectrumMode { geometric, arithmetic, clustered, random };

/// Largest order generate_system accepts: 2^17, twice what an 80 GB GPU solves (n^2 = 1.7e10
/// elements, 137 GB as FP64). Every element index and count of the solver is 64-bit (until
/// 2026-11-26 this was 46340, n^2 < 2^31, on a claim of 32-bit kernel indices that a review of
/// every kernel disproved; n = 64512 is solved on an H100 in docs/BENCHMARKS.md). Memory is the
/// caller's check: the cpu holds up to five n x n FP64 matrices at once for randsvd and one for
/// random, the cuda backend three on the device for randsvd.
constexpr int kMaxGeneratedOrder = 131072;

/// "geometric" | "arithmetic" | "clustered" | "random"; throws InvalidInput otherwise.
SpectrumMode parse_spectrum_mode(std::string_view name);
std::string_view to_string(SpectrumMode mode);

/// The randsvd singular values sigma_1 = 1 >= ... >= sigma_n = 1/cond of `mode` (not random):
/// geometric sigma_i = cond^(-(i-1)/(n-1)); arithmetic sigma_i = 1 - (i-1)/(n-1) (1 - 1/cond);
/// clustered sigma_1..n-1 = 1, sigma_n = 1/cond; sigma_n is set to 1/cond exactly; n = 1: 1.
Eigen::VectorXd randsvd_singular_values(int n, double cond, SpectrumMode mode);

/// randsvd: A = U diag(sigma) V^T with Haar-random orthogonal U, V and singular values sigma =
/// randsvd_singular_values(n, cond, mode) from 1 down to 1/cond. random: A ~ U(-1, 1) (cond
/// ignored). x_true ~ U(-1, 1) (n x nrhs), b = A x_true in FP64 on the host. Deterministic in
/// `seed` on one backend; the random streams of the two backends differ, so one seed gives
/// different randsvd matrices (with the same singular values) on cpu and cuda.
///
/// U and V are Q * diag(sign(diag(R))) of the QR of an n x n standard Gaussian matrix (Haar
/// measure; Mezzadri 2007), sign(0) taken as +1.
///   cpu (the reference; the files of inputs/): one std::mt19937_64 seeded with `seed` draws, in
///     this order, U's Gaussian matrix, V's (column-major, Box-Muller), then x_true (U(-1,1) from
///     53 random bits); random mode draws A then x_true. Eigen Householder QR of the two
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

}  // namespace tcsolve
