// Launchers of the solver's device kernels (equilibrate.cu, row_swap.cu, refine_kernels.cu,
// random_kernels.cu), called by solver_cuda.cpp and generate_cuda.cpp. Plain C++ signatures (no
// CUDA or Eigen types): every pointer is device memory, matrices are column-major, everything
// runs on the default stream; a launcher returns once its kernels are enqueued and throws
// CudaError when a launch fails.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tcsolve::cuda::kernels {

/// Widest panel the row-interchange kernels take (shared memory: 5w ints and 2w floats).
inline constexpr int kMaxPanelWidth = 1024;

// --- equilibrate.cu ----------------------------------------------------------------------------

/// Doubles of scratch that equilibrate() needs for order n.
std::size_t equilibrate_workspace_doubles(int n);

/// The cpu path's equilibration of the FP64 A (n x n, leading dimension n), bitwise: row_scale[i]
/// = 2^e(max_j |a_ij|), col_scale[j] = 2^e(max_i row_scale[i] |a_ij|) with e =
/// detail::equilibration_exponent; a_s (n x n FP32, leading dimension n) = fp32_rn((row_scale[i]
/// a_ij) col_scale[j]); *norm_inf = ||A||_inf = max_i sum_j |a_ij| (row sums in a fixed order:
/// deterministic, but not the cpu's order). A must be finite.
void equilibrate(const double* a, int n, double* row_scale, double* col_scale, float* a_s, double* norm_inf,
                 double* workspace);

/// *norm = ||A||_inf as equilibrate() computes it (A: n x n FP64, leading dimension n; the
/// same workspace).
void norm_inf(const double* a, int n, double* norm, double* workspace);

// --- row_swap.cu -------------------------------------------------------------------------------

/// Ints of the `pairs` scratch that apply_panel_interchanges() needs for panel width w.
inline std::size_t interchange_scratch_ints(int w) { return 1 + 4 * static_cast<std::size_t>(w); }

/// Applies the row interchanges of the panel at column j (width w <= kMaxPanelWidth, pivots
/// ipiv[0..w) 1-based within rows j..n-1, as cuSOLVER sgetrf returns them) to the columns of
/// a (n x n, leading dimension lda) outside the panel, in LAPACK's order (interchanges.hpp).
void apply_panel_interchanges(float* a, int lda, int n, int j, int w, const int* ipiv, int* pairs);

// --- refine_kernels.cu -------------------------------------------------------------------------

/// out[c] = max_i |scale[i] x(i, c)| for a rows x cols matrix x (leading dimension ld; scale
/// nullptr: 1), NaN when an entry is NaN. exponent (nullptr: not written): e with out[c] = f 2^e,
/// f in [1/2, 1) (std::frexp), 0 when out[c] is 0 or not finite.
void column_max_abs(const double* x, int ld, int rows, int cols, const double* scale, double* out,
                    int* exponent);

/// y(i, c) = fp32_rn(ldexp(row_scale[perm[i]] r(perm[i], c), -exponent[c])) for i < n, c < cols:
/// P R r scaled by a power of two per column (r: leading dimension ld; y: leading dimension n).
void scale_permute_to_fp32(const double* r, int ld, int n, int cols, const double* row_scale, const int* perm,
                           const int* exponent, float* y);

/// d(i, c) = (col_scale[i] double(y(i, c))) 2^exponent[c] (y, d: leading dimension n).
void unscale_to_fp64(const float* y, int n, int cols, const double* col_scale, const int* exponent,
                     double* d);

/// x(:, c) += d(:, c) for the columns with mask[c] != 0 (leading dimension n).
void masked_add(double* x, const double* d, int n, int cols, const int* mask);

/// y[i] = x[i] / s for i < n, correctly rounded (the cpu's Eigen `x / s`); y may be x.
void divide(const double* x, int n, double s, double* y);

// --- random_kernels.cu ------------------------------------------------------------------------

/// x[2p], x[2p + 1] = philox::gaussian_pair(seed, stream, p) for 2p, 2p + 1 < count: `count`
/// standard normal numbers (tcsolve/solver/philox.hpp), the same for any launch shape.
void gaussian_fill(double* x, std::size_t count, std::uint64_t seed, std::uint32_t stream);

}  // namespace tcsolve::cuda::kernels
