// FP64 LUs on the device by cuSOLVER dgetrf: DeviceFp64Lu, the LU of the equilibrated A_s = R A C
// for the fallback and the condition estimate, its pivots read back (info and the diagonal: a zero
// or non-finite pivot is an exactly singular A), its solves on the device (apply(): kernels::lu_apply,
// cublasDtrsm through the composed interchanges, or dgetrs: CudaLuPlan::fp64_solves) and through
// condition.hpp's EquilibratedInverse (dgetrs; R b and C y in exponent arithmetic on the host);
// fp64_lu_solve(), the plain dgetrf + dgetrs of the unscaled A (the cusolver-dgetrf baseline).
// Internal to tcsolve::solver; host code built with CUDA only.
#pragma once

#include <Eigen/Dense>

#include "../condition.hpp"
#include "blocked_lu.hpp"
#include "device_system.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve::cuda {

/// What fp64_lu_solve() did: dgetrf's info (0, or the 1-based column of an exactly zero pivot;
/// x is then what dgetrs makes of it) and, when timed, the seconds of dgetrf and of dgetrs.
struct Fp64Solve {
  int info = 0;
  double factorization_s = 0, solve_s = 0;
};

/// x = A^-1 b by cuSOLVER FP64 dgetrf + dgetrs on a copy of the device A (the copies of A and b
/// are made before the timed part).
Fp64Solve fp64_lu_solve(const DeviceRun& run, const DeviceSystem& s, double* x, bool timed = false);

/// R and C of the equilibration on the device (n entries each).
struct DeviceScales {
  const double* row = nullptr;
  const double* col = nullptr;
};

/// The FP64 LU of the equilibrated A_s = R A C on the device (cuSOLVER dgetrf), for the fallback,
/// the condition estimate and the FP64 LU path of small systems. The pivots are checked
/// (check_pivots) in the constructor, or by the caller after its own read-back (Placement::
/// deferred): InvalidInput for an exactly singular A: rows or columns equal up to sign and a
/// power of two (detail::exact_singularity: the upload's search, DeviceSystem::singular, where it
/// started one, else on the host's A), dgetrf's info or a non-finite diagonal entry of U.
class DeviceFp64Lu {
 public:
  /// When the host A is searched for equal rows and columns (an O(n^2) pass on the host, and a
  /// download of a device-made A).
  enum class Search {
    first,      ///< before the LU (the fallback and the condition estimate)
    on_failure  ///< only after an LU that met a zero or non-finite pivot, to name the equal rows
                ///< in its message; the caller searches otherwise (the small systems' path: on
                ///< the upload's thread, asked by detail::decide_condition_estimate)
  };
  /// Where the arrays live. store: nullptr, an allocation of the LU's own; else the caller's
  /// store_bytes() bytes (the small systems' SolveStore). diagonal: nullptr, in the store; else
  /// n + 1 doubles of the caller's where U's diagonal and dgetrf's info (its int bits) go.
  /// deferred: the constructor only enqueues the LU; the caller reads `diagonal` back (with its
  /// own read-back, after the first solve) and calls check_pivots() before using the result.
  /// prepared: the caller has put A_s in the store's factors_of() and 0 in its info_of()
  /// (kernels::equilibrate_fp64), ordered before the constructor's work.
  /// lwork: dgetrf's workspace_size() where the caller has it (-1: asked here).
  struct Placement {
    void* store = nullptr;
    double* diagonal = nullptr;
    bool deferred = false;
    bool prepared = false;
    int lwork = -1;
  };
  /// A: the host A for the search where the upload started none (downloaded there for a system
  /// given on the device).
  DeviceFp64Lu(const DeviceRun& run, const HostMatrix& A, const DeviceSystem& s, const DeviceLu& f,
               Search search = Search::first)
      : DeviceFp64Lu(run, A, s, DeviceScales{f.row_scale.data(), f.col_scale.data()}, search, Placement{}) {}
  DeviceFp64Lu(const DeviceRun& run, const HostMatrix& A, const DeviceSystem& s, DeviceScales scales, Search search,
               Placement placement);

  /// dgetrf's workspace (doubles) for the system s, and the bytes of a Placement::store.
  static int workspace_size(const DeviceRun& run, const DeviceSystem& s);
  static std::size_t store_bytes(const DeviceSystem& s, int lwork);
  /// Where a store keeps dgetrf's info and the n x n matrix it factors (Placement::prepared).
  static int* info_of(void* store);
  static double* factors_of(void* store);

  /// Checks U's diagonal and info (the n + 1 doubles read back from Placement::diagonal) and
  /// sets pivot_span(); throws InvalidInput for an exactly singular A (above).
  void check_pivots(const double* diagonal_and_info);

  /// max |u_ii| / min |u_ii| of U (SolveOptions::condition_estimate's automatic rule).
  double pivot_span() const { return pivot_span_; }

  /// out = C A_s^-1 R rhs = A^-1 rhs for `cols` device columns (leading dimension n; out may be
  /// rhs) on the device: the scalings of EquilibratedInverse::apply (column by column to
  /// ||R rhs||_inf in [1/2, 1), in exponent arithmetic) around the triangular solves, by
  /// CudaLuPlan::fp64_solves (fp64_solves_for): kernels::lu_apply (one launch), two cublasDtrsm
  /// after the rows are gathered through the composed interchanges, or dgetrs between the
  /// scalings' kernels (bitwise EquilibratedInverse::apply with dgetrs). With
  /// Placement::deferred and the kernel, the first call also writes U's diagonal and info.
  void apply(const double* rhs, double* out, int cols);

  /// W := A_s^-1 W (transpose: A_s^-T W) by dgetrs, through the device.
  void solve(Eigen::MatrixXd& w, bool transpose);

  detail::EquilibratedInverse inverse(const HostScales& scales) {
    return detail::EquilibratedInverse(
        scales.row, scales.col, [this](Eigen::MatrixXd& w) { solve(w, false); },
        [this](Eigen::MatrixXd& w) { solve(w, true); });
  }

 private:
  /// The right-hand sides of solve() and apply(): the store's for up to store_cols_ columns,
  /// else extra_ (grown to the widest call).
  double* rhs(int cols);

  const DeviceRun& run_;
  const DeviceSystem& s_;
  HostMatrix a_;  ///< for the search after a failed LU
  Search search_;
  int n_;
  DeviceScales scales_;
  /// One allocation (or the caller's store) for the LU, dgetrf's workspace, the diagonal and
  /// info read back, the pivots, apply()'s exponents and norms and the right-hand sides of up
  /// to store_cols_ columns (a cudaMalloc costs microseconds and a cudaFree waits for the
  /// device: the small systems' path counts them).
  DeviceBuffer<char> own_;
  DeviceBuffer<double> extra_;
  int store_cols_ = 0;
  double *lu_ = nullptr, *work_ = nullptr, *diagonal_ = nullptr, *rhs_ = nullptr, *norms_ = nullptr;
  int *ipiv_ = nullptr, *info_ = nullptr, *exponents_ = nullptr;
  int* perm_ = nullptr;  ///< fp64_solves trsm: dgetrf's interchanges composed (kernels::pivots_to_permutation)
  double pivot_span_ = 1;
  CudaLuPlan::Fp64Solves solves_ = CudaLuPlan::Fp64Solves::dgetrs;  ///< what apply() runs (fp64_solves_for)
  bool diagonal_owed_ = false;  ///< U's diagonal and info not yet written (the next apply() does)
};

}  // namespace tcsolve::cuda
