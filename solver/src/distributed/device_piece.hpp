// One GPU member's part of the distributed solve (distributed.hpp, GPU members; internal to
// tcsolve::solver): its columns of A on its device, R and C, the norms, the FP32 LU
// (cuda/distributed_lu_cuda.hpp), A x and the solves with the factors, for the distributed
// solve's story (distributed_solve.cpp), whose vectors stay whole on the host of every member.
// Defined in cuda/distributed_piece_cuda.cpp; without CUDA in the build, make_device_piece
// throws Unavailable (cuda_stub).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../scaled_norm.hpp"
#include "refine_ops.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve {
namespace cuda {
class Context;
}
namespace distributed {

class DevicePiece {
 public:
  virtual ~DevicePiece() = default;
  /// R and C of A_s = R A C (bitwise the single process'), the same on every member.
  virtual const Scales& scales() const = 0;
  /// ||A||_inf, ||A||_1 and ||A_s||_1 (plain doubles in frexp form), the same on every member.
  virtual detail::ScaledNorm norm_inf() const = 0;
  virtual detail::ScaledNorm norm_1() const = 0;
  virtual detail::ScaledNorm norm_1_s() const = 0;
  /// The FP32 LU of A_s through `variant`'s trailing updates (beam: each block's pivots searched
  /// in its diagonal block only, DeviceFactors::beam); returns the first exactly zero pivot's
  /// column or -1, the same on every member. A second call factors A_s afresh.
  virtual int factorize(Variant variant, bool beam = false) = 0;
  virtual Variant resolved() const = 0;
  virtual std::string note() const = 0;
  /// The plan the LU ran (what the device could not serve written back).
  virtual CudaLuPlan plan() const = 0;
  /// Device times of the phases so far (SolveTimes::phases' names).
  virtual std::vector<std::pair<std::string, double>> phases() = 0;
  /// A x in FP64 (x whole on the host, n x k): whole on every member, the same bits there.
  virtual Eigen::MatrixXd product(const Eigen::MatrixXd& x) = 0;
  /// W := (L U)^-1 P W (transpose: P^T (L U)^-T W) in FP32 with the factors, W rounded to FP32
  /// as it is: the same bits on every member.
  virtual void solve(Eigen::MatrixXd& w, bool transpose) = 0;
  /// The FP64 LU of A_s (cuda/distributed_lu64_cuda.hpp), made on the first call and kept;
  /// returns its first exactly zero or non-finite pivot's column or -1, the same on every member.
  /// Throws Agreed<Unavailable>, naming the bytes, when a member's GPU cannot hold it beside A;
  /// with release_fp32 the FP32 factors are freed first where that makes room (solve() must not
  /// be called after).
  virtual int factorize64(bool release_fp32) = 0;
  /// W := (L U)^-1 P W (transpose: P^T (L U)^-T W) in FP64 with the FP64 factors: the same bits
  /// on every member.
  virtual void solve64(Eigen::MatrixXd& w, bool transpose) = 0;
  /// PieceSource::generated: b (n x 1) as the device made it; else empty.
  virtual Eigen::MatrixXd generated_rhs() = 0;
  /// max |u_ii| / min |u_ii| of U over every member (a collective): the FP64 factors' (fp64)
  /// or the FP32 factors'.
  virtual double pivot_span(bool fp64) = 0;
  /// This member's entries of lines of the original A (distributed_search.hpp's LocalLines):
  /// out[k n + i] = A(lines[k], i) (rows) or A(i, lines[k]) (columns) where it holds them, 0
  /// elsewhere.
  virtual void local_lines(bool rows, const std::vector<int>& lines, std::vector<double>& out) = 0;
  /// v := the sum of every member's v (a collective: NCCL, staged through the device).
  virtual void sum_over_members(std::vector<double>& v) = 0;
  /// The search's samples at `positions` (row_samples: A's columns p_k; column_samples: its rows
  /// p_k; k n + i each), gathered on the device and summed over the members (a collective,
  /// enqueued here); the function returned reads them back, on any thread (the search's), once
  /// the device has them. It owns what it reads.
  virtual std::function<std::pair<std::vector<double>, std::vector<double>>()> sampled_lines(
      const std::vector<int>& positions) = 0;
};

/// The memory check before anything is allocated, on the calling thread's device: throws
/// InvalidInput naming the bytes one member needs for its piece on `grid` (A in FP64, the FP32
/// factors, the panels and the row moves' buffer) and the bytes free, when they do not fit.
/// `share`: CudaLuPlan::member_share > 0 (the panel stream's row moves need their own scratch).
void check_device_piece(const Grid& grid, const Descriptor& desc_a, int member, bool share = false);

/// Where make_device_piece finds A: this member's piece (desc_a.lld x local columns,
/// column-major) on the host or on its device, or the whole A (n x n, column-major, leading
/// dimension n) on the host, whose block columns it copies straight to the device; or none:
/// `generated`, the random mode's system of a seed (generate.hpp, by blocks) made on the device,
/// its columns of A and all of b, bitwise the generator's.
enum class PieceSource { host_piece, device_piece, host_whole, generated };

/// Member `comm.rank()` of a 1 x Q grid of GPU members: its columns of A copied to its device
/// (context `ctx`) and equilibrated (the row maxima and sums reduced over the members). Every
/// member calls. `upload_s`: the seconds of the copy.
std::unique_ptr<DevicePiece> make_device_piece(cuda::Context& ctx, runtime::Communicator& comm, const Grid& grid,
                                               const Descriptor& desc_a, const double* A, PieceSource source,
                                               std::uint64_t seed, const SolveOptions& options, double& upload_s);

}  // namespace distributed
}  // namespace tcsolve
