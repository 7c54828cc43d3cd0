// The blocked LU on the device (blocked_lu.cpp says how it runs): DeviceLu, the FP32 factors of
// the equilibrated A_s = R A C with R, C, the permutation and the zero pivot, or (rbt) of the
// transformed A_r = U^T A_s V without pivoting with the butterflies; factorize() and
// factorize_rbt(), the equilibration and the LU; HostScales, host copies of R and C. Internal to
// tcsolve::solver; host code built with CUDA only.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../butterfly.hpp"
#include "device_system.hpp"
#include "phase_clock.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::cuda {

/// rbt: the butterflies U, V of A_r = U^T A_s V (butterfly.hpp), on the host (the condition
/// estimate applies them there) and their entries on the device (butterfly.cu).
struct DeviceButterflies {
  detail::RandomButterfly u, v;
  DeviceBuffer<double> u_outer, u_inner, v_outer, v_inner;
  int window;  ///< SolveOptions::rbt_window: the LU's pivot window (0: no pivoting)
  /// u from seed, v from seed + 1 (the cpu path's rule), for order n; the entries copied to the
  /// device on `stream` (the solve's).
  DeviceButterflies(int n, std::uint64_t seed, int pivot_window, CUstream_st* stream)
      : u(n, seed), v(n, seed + 1), u_outer(u.outer().size()), u_inner(u.inner().size()),
        v_outer(v.outer().size()), v_inner(v.inner().size()), window(pivot_window) {
    u_outer.upload(u.outer(), stream);
    u_inner.upload(u.inner(), stream);
    v_outer.upload(v.outer(), stream);
    v_inner.upload(v.inner(), stream);
  }
};

struct DeviceLu {
  int n = 0;      ///< the system's order (R, C, col_sum: n entries)
  int order = 0;  ///< the factors' order: n, or with rbt p = n rounded up to a multiple of 4
  DeviceBuffer<float> lu;  ///< L (unit lower) and U packed, order x order, ROW-MAJOR (row i at lu + i order)
  DeviceBuffer<double> row_scale, col_scale;
  DeviceBuffer<double> col_sum;  ///< sum_i |a_ij| of the FP64 A (from the equilibration's reads): ||A||_1
  DeviceBuffer<int> perm;  ///< original row at position i (device copy of perm_host)
  std::vector<int> perm_host;
  double norm_a = 0;    ///< ||A||_inf of the FP64 A
  int zero_pivot = -1;  ///< 0-based column of the first exactly zero FP32 pivot (rbt: tiny), or -1
  /// rbt: the butterflies; lu then holds the factors of P A_r (windowed pivoting; without it
  /// perm is the identity).
  std::optional<DeviceButterflies> rbt;
  /// rbt, beam: why the LU broke down (a tiny or non-finite pivot, growth), empty when it did not.
  std::string breakdown;
  /// beam (factorize_beam): the pivots searched in each diagonal block's rows only, tiny ones
  /// modified: lu holds the factors of P (A_s + E) with E's entries at (perm[column], column).
  bool beam = false;
  struct Modification {
    int column;    ///< 0-based
    double delta;  ///< the new pivot minus the old
  };
  std::vector<Modification> modifications;  ///< beam: E
  double growth = 0;  ///< rbt, beam: max|L U| / max|A_s| (0 where not measured)
  Variant resolved = Variant::fp32_simt;
  CudaKernels kernels = CudaKernels::automatic;  ///< the first trailing update's GemmInfo::kernels
  std::string note;  ///< the first trailing update's GemmInfo note; the leaf path
  /// The diagonal blocks' inverses for lu_solve (kernels::lu_block_inverses) when the plan's
  /// trsv is inverse; empty otherwise.
  DeviceBuffer<float> inverses;
  const float* solve_inverses() const { return inverses.size() > 0 ? inverses.data() : nullptr; }
};

/// Equilibration and the blocked LU of the device A (n x n FP64). Ends with the pivots read
/// back (the device is idle afterwards).
DeviceLu factorize(DeviceRun& run, const DeviceSystem& s, Variant variant, int block_size, PhaseClock& clock);

/// rbt: the equilibration, the transform A_r = fp32(U^T A_s V) (bitwise the cpu's, cpu/rbt.hpp)
/// and the blocked LU of A_r with windowed pivoting (`window` rows; 0: none), the cpu's
/// factorize_rbt_lu: leaf_rbt.cu's leaves, the same joins, interchanges, TRSM, trailing updates
/// and look-ahead as factorize(); then the cpu's breakdown tests (a pivot not above
/// kRbtTinyPivot max|A_r|, factors grown beyond kRbtGrowth max|A_r|) set `breakdown`. Phases
/// "equilibrate" (R, C), "butterfly" (the transform), then the LU's, and "growth".
DeviceLu factorize_rbt(DeviceRun& run, const DeviceSystem& s, Variant variant, int block_size, std::uint64_t seed,
                       int window, PhaseClock& clock);

/// beam (Pivoting::beam): the full equilibration (all of A_s first: max|A_s| sets a zero panel's
/// threshold and the growth test) and the blocked LU with in-block pivoting (BlockedLu's beam
/// mode: each block's panel over its nb diagonal rows only, by leaf_rbt.cu's beam windows, the
/// same joins; L21 = A21 U11^-1 below it by a recursive TRSM whose products run through the
/// variant where the plan's trsm_products says; the same permutation moves, U12, trailing
/// updates and look-ahead as factorize()); then the cpu's breakdown tests (beam_rules.hpp) set
/// `breakdown`, the modifications and the growth are read back. block_size at most
/// kernels::kMaxBeamWindow. Phases "equilibrate", the LU's, "growth".
DeviceLu factorize_beam(DeviceRun& run, const DeviceSystem& s, Variant variant, int block_size, PhaseClock& clock);

/// max |u_ii| / min |u_ii| of the FP32 factors' U (detail::pivot_span: inf for a zero pivot),
/// read back through one strided copy of the diagonal (SolveOptions::condition_estimate's
/// automatic rule).
double pivot_span(const DeviceRun& run, const DeviceLu& f);

/// R, C, the column sums and ||A||_inf of the device A, and no LU (lu empty, order n, perm the
/// identity): the FP64 solve of small systems (fp64_solve.hpp). Phase "equilibrate".
DeviceLu equilibrate(DeviceRun& run, const DeviceSystem& s, PhaseClock& clock);

/// The LU's panel step alone, for the distributed LU on GPU members (distributed_lu_cuda.cpp):
/// the blocked LU's recursive block factorization (its leaves and joins, as factorize() runs
/// them, the plan's leaf choice) on a row-major matrix the caller holds. For order n.
class BlockPanel {
 public:
  BlockPanel(DeviceRun& run, int n, PhaseClock& clock);
  ~BlockPanel();
  BlockPanel(const BlockPanel&) = delete;
  BlockPanel& operator=(const BlockPanel&) = delete;
  /// Factors the block of columns [c0, c0 + w) over the rows c0..n-1 of the row-major a (A(r, c)
  /// at a + r ld + c for the block's columns c; a may point before the caller's allocation, as
  /// only the block's columns are touched) on `stream`, with partial pivoting; its rows move in
  /// the block only. origin() (device, n ints) then holds origin[i] = the row (at the block's
  /// start) that row i holds now, for i in [c0, n).
  void factor(cudaStream_t stream, float* a, int ld, int c0, int w);
  /// The joins' variant (CudaLuPlan::joins; by default fp32_simt: cublasSgemm).
  void set_join_variant(Variant v);
  const int* origin() const;
  /// The first exactly zero pivot's 0-based column over the blocks factored so far, or -1
  /// (reads the leaves' reports back: a synchronization).
  int zero_pivot();
  /// The leaf path (DeviceLu::note's start: cuSOLVER leaves, or empty).
  std::string note() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Host copies of the equilibration's scales (the EquilibratedInverse works on the host).
struct HostScales {
  Eigen::VectorXd row, col;
  HostScales(const DeviceRun& run, const DeviceLu& f) : HostScales(run, f.n, f.row_scale.data(), f.col_scale.data()) {}
  HostScales(const DeviceRun& run, int n, const double* row_scale, const double* col_scale) : row(n), col(n) {
    copy_to_host(row.data(), row_scale, static_cast<std::size_t>(n) * sizeof(double), run.stream);
    copy_to_host(col.data(), col_scale, static_cast<std::size_t>(n) * sizeof(double), run.stream);
  }
};

}  // namespace tcsolve::cuda
