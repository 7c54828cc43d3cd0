// The system on the device: A (FP64) and b copied once (DeviceSystem, upload), the norms of A that
// the stopping test needs (norm_inf, norm_1, overflow-safe through safe_norm), and DeviceChecker:
// r = b - A x in FP64 (cublasDgemv, or Dgemm for several rhs) and the column norms of r and x (a
// few doubles read back per step; on its own arrays or the caller's), assessed by
// detail::assess_columns (refinement_rules.hpp, the cpu's rules). Internal to tcsolve::solver;
// host code built with CUDA only.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../refinement_rules.hpp"
#include "../scaled_norm.hpp"
#include "device_run.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve::cuda {

/// Elements of a rows x cols matrix (size_t: no int overflow).
inline std::size_t elements(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

struct DeviceSystem {
  int n = 0, nrhs = 0;
  DeviceBuffer<double> a;      ///< FP64 A, n x n, leading dimension n
  DeviceBuffer<double> b;      ///< n x nrhs
  std::vector<double> b_norm;  ///< ||b_j||_inf (host)
  /// The search for rows and columns of A equal up to sign and a power of two
  /// (detail::exact_singularity), started on a host thread by upload() so that it runs beside
  /// the device's work: on the caller's host A, or (a system given on the device) on its sampled
  /// entries gathered on the device and read back by the thread. Not valid where no upload made
  /// the system (the kept factors start their own).
  std::shared_future<std::optional<std::string>> singular;
};

/// The system's detail::SingularitySearch (refinement_rules.hpp): the upload's search, or empty
/// where none was started.
inline detail::SingularitySearch singularity_search(const DeviceSystem& s) {
  if (!s.singular.valid()) return {};
  return [f = s.singular] { return f.get(); };
}

/// Whether upload() starts DeviceSystem::singular's search: the solves do; the baselines and
/// the plain factorization, which never ask for it, do not.
enum class EqualRows { search, skip };

/// A stream of the calling thread's own on `device` (made the thread's current device),
/// destroyed with it: a helper thread's read-backs beside the solve's stream (the searches for
/// equal rows).
class ThreadStream {
 public:
  explicit ThreadStream(int device);
  ~ThreadStream();
  ThreadStream(const ThreadStream&) = delete;
  ThreadStream& operator=(const ThreadStream&) = delete;
  CUstream_st* get() const { return stream_; }
  /// Its later work waits for `event` (recorded on another stream).
  void after(CUevent_st* event);
  /// The `count` doubles at `first` and the `count` after them, copied to the host (waits).
  std::pair<std::vector<double>, std::vector<double>> halves(const double* first, std::size_t count);

 private:
  CUstream_st* stream_ = nullptr;
};

/// A and b copied to the device (Eigen's column-major layout), ||b_j||_inf on the host.
DeviceSystem upload(const DeviceRun& run, const LinearSystem& sys, EqualRows rows = EqualRows::search);

/// A system already on the device, packed into a DeviceSystem by device copies (row-major: a
/// cuBLAS transposition) and checked as detail::check_system checks a host system (non-finite
/// entries, zero columns, zero rows: the same messages) from column maxima and row flags read
/// back, never a host copy of A.
DeviceSystem upload(const DeviceRun& run, const DeviceSystemView& view, EqualRows rows = EqualRows::search);

/// The host A (or b) for the rare paths that need it (norms beyond 2^+-900, the search for rows
/// equal up to a power of two before an FP64 LU, the fallback's b): the caller's matrix, or a
/// device system's downloaded on first use.
using HostMatrix = std::function<const Eigen::MatrixXd&()>;

/// A norm of A summed on the device (`sum`, unscaled) as detail::norm_inf / norm_1 define it:
/// the device's sum where it lies in [2^-900, 2^900] (then so does the largest |a_ij| within a
/// factor n, and no sum overflowed), else the host's scaled sum of sys.A (rare: A near
/// overflow or underflow).
detail::ScaledNorm safe_norm(double sum, const HostMatrix& A, bool rows);

/// ||A||_inf of the device A (a fixed summation order; the cpu's may differ in the last bits).
detail::ScaledNorm norm_inf(const DeviceRun& run, const DeviceSystem& s, const HostMatrix& A);

/// ||A||_1: the maximum of the column sums the equilibration left in col_sum (device), on the host.
detail::ScaledNorm norm_1(const DeviceRun& run, const DeviceBuffer<double>& col_sum, const HostMatrix& A);

/// ||A||_1 from n column sums on the device (the small systems' store).
detail::ScaledNorm norm_1(const DeviceRun& run, const double* col_sum, int n, const HostMatrix& A);

/// r = b - A x and the assessment of x (detail::assess_columns) for one device system.
class DeviceChecker {
 public:
  DeviceChecker(const DeviceRun& run, const DeviceSystem& s, detail::ScaledNorm norm_a)
      : run_(run), s_(s), norm_a_(norm_a), own_r_(elements(s.n, s.nrhs)), own_norms_(2 * static_cast<std::size_t>(s.nrhs)),
        r_(own_r_.data()), norms_(own_norms_.data()) {}
  /// On the caller's arrays: r (n nrhs doubles), norms (2 nrhs doubles: those of r, then of
  /// x) and scratch (residual_scratch_doubles(n, nrhs) doubles, for the one-launch residual);
  /// ||A||_inf given later by set_norm_a() (the small systems' path reads it back with its first
  /// assessment).
  DeviceChecker(const DeviceRun& run, const DeviceSystem& s, double* r, double* norms, double* scratch)
      : run_(run), s_(s), r_(r), norms_(norms), scratch_(scratch) {}

  /// Doubles of scratch the one-launch residual (CudaLuPlan::residuals) needs for order n and
  /// nrhs right-hand sides (0 where it does not serve n).
  static std::size_t residual_scratch_doubles(int n, int nrhs);

  /// r = b - A x in FP64 on the device; returns the assessment (reads 2 nrhs doubles back).
  detail::Assessment assess(const double* x);

  /// The device half of assess(): r and the norms, enqueued (nothing waits): by
  /// kernels::small_residual in one launch or by cuBLAS (residuals_for(run.plan, n, nrhs)).
  void enqueue(const double* x);
  /// The host half: the assessment from the 2 nrhs norms read back.
  detail::Assessment assessment(const double* norms) const;

  void set_norm_a(detail::ScaledNorm norm_a) { norm_a_ = norm_a; }

  const double* r() const { return r_; }

 private:
  const DeviceRun& run_;
  const DeviceSystem& s_;
  detail::ScaledNorm norm_a_{};
  DeviceBuffer<double> own_r_, own_norms_, own_scratch_;
  double* r_;
  double* norms_;
  double* scratch_ = nullptr;  ///< the one-launch residual's (own_scratch_'s when not given)
};

}  // namespace tcsolve::cuda
