// The cuda path of the solver (solver.hpp; solver.cpp states the algorithm and the rules): the
// same algorithm as the cpu path with A, the factors and the vectors on the device.
//
//   transfer     A (FP64) and b are copied to the device once; x comes back at the end.
//   equilibrate  R, C and A_s = fp32(R A C) by kernels (equilibrate.cu), bitwise the cpu's, and
//                ||A||_inf: R, ||A||_inf and the first block's columns first; with look-ahead
//                the rest on the update stream beside the first panel ("equilibrate_rest").
//   LU           blocked right-looking on the ROW-MAJOR FP32 A_s (class BlockedLu below), per
//                block of w = min(nb, n - j) columns:
//                  panel   recursive (halves, down to leaves of 32 columns): a leaf by the
//                          cluster kernel (panel.cu), which also moves its rows in the block's
//                          other columns, or by cuSOLVER sgetrf and row_swap.cu ("swap"); the
//                          halves joined by
//                          trsm.cu's kernel and FP32 cublasSgemm ("panel_update");
//                  swap    the block's composed interchanges applied once to the columns
//                          outside it ("swap");
//                  trsm    U12 = L11^-1 A12: the next block's columns by trsm.cu's kernel, the
//                          rest by a recursive TRSM (cublasStrsm on 64-column diagonal blocks,
//                          FP32 cublasSgemm between them); with look-ahead, the rest on the
//                          update stream ("trsm_rest");
//                  update  A22 -= L21 U12 through tcsolve::gemm(cuda, variant): the only place
//                          the variant enters (GemmInfo.resolved of the first one is reported);
//                          the next block's columns first, on the panel's stream
//                          ("update_next"), then the rest, which runs on its own SMs while the next
//                          block's panel is factored (look-ahead, lookahead.hpp; phases
//                          "update_wait" on the panel's stream and "update" on the update's).
//                The permutation is kept on the device and comes back once, with the zero pivot.
//   refinement   detail::refinement_loop, shared with the cpu path; on the device:
//                  residual    r = b - A x in FP64 (cublasDgemv, or Dgemm for several rhs) and
//                              the column norms of r and x (a few doubles read back per step);
//                  correction  d = C U^-1 L^-1 P R r: r scaled per column by a power of two to
//                              ||R r|| in [1/2, 1) and rounded to FP32 (refine_kernels.cu), two
//                              cublasStrsm on the row-major LU, unscaled to FP64; x += d in FP64.
//                  gmres       (--refine gmres) d from one GMRES cycle per column on M^-1 A d =
//                              M^-1 r, M the FP32 LU as in the correction: the Krylov basis,
//                              the FP64 products A v (cublasDgemv) and the Gram-Schmidt (CGS2,
//                              cublasDgemv) on the device; the (k+1) x k Hessenberg
//                              least-squares problem on the host (detail::GmresLeastSquares,
//                              the cpu's code). Same cycle, tolerance, stopping rules, result
//                              fields and note as the cpu GMRES-IR.
//   fallback     cusolverDnDgetrf of the FP64 equilibrated A_s = R A C (kernels::scale_copy), its
//                pivots read back (info and the diagonal: a zero or non-finite pivot is an exactly
//                singular A), dgetrs per right-hand side through condition.hpp's
//                EquilibratedInverse (R b and C y in exponent arithmetic on the host); x is the
//                better of its solution and the best iterate (solver.cpp's rules).
//   condition    ||A||_1 from column sums (summed by the equilibration's column pass, during the
//                LU), Hager's estimator
//                (condition.hpp) on host vectors with the solves on the device: A_s^-1 by
//                triangular.cu's lu_solve, A_s^-T by two cublasStrsm on the row-major LU (OP_N
//                with the fills of lu_apply's cublas branch: T's lower part is U^T, its strict
//                upper part L^T), one vector up and one down per product (the one read-back a
//                step needs); the resolution check's A x by cublasDgemv. Where the FP32 factors
//                do not resolve A^-1, the estimate from the FP64 LU (dgetrs, OP_N and OP_T).
//                Phase "condition".
// Times: factorization and refinement by the host clock around device-synchronized phases
// (A already on the device); the finer phases (SolveTimes.phases) by CUDA events.
//
// Baselines: cuSOLVER dgetrf + dgetrs, and the IRS solvers cusolverDnD{S,H,B,X}gesv with their
// defaults (classical refinement, dsgesv's tolerance, 50 iterations, FP64 fallback).
//
// Everything but the LU's look-ahead runs on the default stream: cuBLAS and cuSOLVER handles of
// this file, the gemm library's kernels and the copies are ordered by it. The LU binds them to
// its two streams (OnStream, tcsolve::cuda::LaunchStream) and ends synchronized.
#include "../solver_cuda.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../condition.hpp"
#include "../solver_internal.hpp"
#include "kernels.hpp"
#include "libraries.hpp"
#include "lookahead.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/cuda_check.hpp"
#include "tcsolve/gemm/error.hpp"

namespace tcsolve::cuda {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

/// Whether the environment variable `name` is set to `value` (the switches that select a code
/// path for comparison: README's table).
bool env_is(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e && std::string(e) == value;
}

std::size_t elements(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

// ---------------------------------------------------------------------------------------------
// Phase times from CUDA events
// ---------------------------------------------------------------------------------------------

/// Device times of named phases: mark("panel") records an event on the default stream that
/// closes the open phase and opens "panel"; mark(nullptr) closes it. totals() waits for the
/// last event and sums the segments per name, in the order the names first appeared.
class PhaseClock {
 public:
  PhaseClock() = default;
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;
  ~PhaseClock() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    for (cudaEvent_t e : spare_) cudaEventDestroy(e);
  }

  /// Creates `count` events ahead, outside the timed region: the LU marks three phases per
  /// 32-column leaf, and creating each event in mark() cost the host more than the GPU took
  /// for some leaves.
  void reserve(std::size_t count) {
    if (!enabled_) return;
    while (spare_.size() < count) {
      cudaEvent_t e = nullptr;
      TCSOLVE_CUDA_CHECK(cudaEventCreate(&e));
      spare_.push_back(e);
    }
  }

  void mark(const char* next) {
    if (!enabled_) return;
    cudaEvent_t e = nullptr;
    if (spare_.empty()) {
      TCSOLVE_CUDA_CHECK(cudaEventCreate(&e));
    } else {
      e = spare_.back();
      spare_.pop_back();
    }
    events_.push_back(e);
    TCSOLVE_CUDA_CHECK(cudaEventRecord(e, stream_));
    const std::size_t now = events_.size() - 1;
    if (open_ >= 0) segments_.push_back({open_name_, static_cast<std::size_t>(open_), now});
    open_ = next ? static_cast<long>(now) : -1;
    if (next) open_name_ = next;
  }

  /// The stream of the following marks (nullptr: the default stream). A phase must open and
  /// close on the same stream: mark(nullptr) before switching.
  void set_stream(cudaStream_t stream) { stream_ = stream; }

  /// Adds `seconds` to the phase `name` of totals() (phases measured elsewhere).
  void add(const std::string& name, double seconds) { added_.emplace_back(name, seconds); }

  std::vector<std::pair<std::string, double>> totals() {
    if (open_ >= 0) mark(nullptr);
    std::vector<std::pair<std::string, double>> sums;
    auto add_to = [&](const std::string& name, double s) {
      auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& p) { return p.first == name; });
      if (it == sums.end()) it = sums.insert(sums.end(), {name, 0.0});
      it->second += s;
    };
    if (!events_.empty()) {
      TCSOLVE_CUDA_CHECK(cudaEventSynchronize(events_.back()));
      for (const Segment& s : segments_) {
        float ms = 0;
        TCSOLVE_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[s.from], events_[s.to]));
        add_to(s.name, 1e-3 * ms);
      }
    }
    for (const auto& [name, s] : added_) add_to(name, s);
    return sums;
  }

 private:
  struct Segment {
    std::string name;
    std::size_t from, to;
  };
  /// TCSOLVE_SOLVER_PHASES=off: no events at all (to see what the marks cost the host).
  bool enabled_ = !env_is("TCSOLVE_SOLVER_PHASES", "off");
  std::vector<cudaEvent_t> events_, spare_;
  std::vector<Segment> segments_;
  std::vector<std::pair<std::string, double>> added_;
  cudaStream_t stream_ = nullptr;
  long open_ = -1;
  std::string open_name_;
};

// ---------------------------------------------------------------------------------------------
// The system on the device
// ---------------------------------------------------------------------------------------------

struct DeviceSystem {
  int n = 0, nrhs = 0;
  DeviceBuffer<double> a;      ///< FP64 A, n x n, leading dimension n
  DeviceBuffer<double> b;      ///< n x nrhs
  std::vector<double> b_norm;  ///< ||b_j||_inf (host)
};

DeviceSystem upload(const LinearSystem& sys) {
  DeviceSystem d;
  d.n = sys.n();
  d.nrhs = sys.nrhs();
  d.a = DeviceBuffer<double>(elements(d.n, d.n));
  d.b = DeviceBuffer<double>(elements(d.n, d.nrhs));
  copy_to_device(d.a.data(), sys.A.data(), d.a.size() * sizeof(double));  // Eigen: column-major
  copy_to_device(d.b.data(), sys.b.data(), d.b.size() * sizeof(double));
  for (Eigen::Index j = 0; j < sys.b.cols(); ++j) d.b_norm.push_back(sys.b.col(j).lpNorm<Eigen::Infinity>());
  return d;
}

/// A norm of A summed on the device (`sum`, unscaled) as detail::norm_inf / norm_1 define it:
/// the device's sum where it lies in [2^-900, 2^900] (then so does the largest |a_ij| within a
/// factor n, and no sum overflowed), else the host's scaled sum of sys.A (rare: A near
/// overflow or underflow).
detail::ScaledNorm safe_norm(double sum, const Eigen::MatrixXd& A, bool rows) {
  if (std::isfinite(sum) && sum >= 0x1p-900 && sum <= 0x1p900) return detail::scaled_norm(sum);
  return rows ? detail::norm_inf(A) : detail::norm_1(A);
}

/// ||A||_inf of the device A (a fixed summation order; the cpu's may differ in the last bits).
detail::ScaledNorm norm_inf(const DeviceSystem& s, const Eigen::MatrixXd& A) {
  DeviceBuffer<double> workspace(kernels::equilibrate_workspace_doubles(s.n));
  DeviceBuffer<double> norm(1);
  kernels::norm_inf(s.a.data(), s.n, norm.data(), workspace.data());
  return safe_norm(norm.download()[0], A, true);
}

/// ||A||_1: the maximum of the column sums the equilibration left in col_sum (device), on the host.
detail::ScaledNorm norm_1(const DeviceBuffer<double>& col_sum, const Eigen::MatrixXd& A) {
  double largest = 0;
  for (const double v : col_sum.download()) largest = std::isnan(v) || v > largest ? v : largest;
  return safe_norm(largest, A, false);
}

// ---------------------------------------------------------------------------------------------
// The blocked LU on the device
// ---------------------------------------------------------------------------------------------

struct DeviceLu {
  int n = 0;
  DeviceBuffer<float> lu;  ///< L (unit lower) and U packed, n x n, ROW-MAJOR (row i at lu + i n)
  DeviceBuffer<double> row_scale, col_scale;
  DeviceBuffer<double> col_sum;  ///< sum_i |a_ij| of the FP64 A (from the equilibration's reads): ||A||_1
  DeviceBuffer<int> perm;  ///< original row at position i (device copy of perm_host)
  std::vector<int> perm_host;
  double norm_a = 0;    ///< ||A||_inf of the FP64 A
  int zero_pivot = -1;  ///< 0-based column of the first exactly zero FP32 pivot, or -1
  Variant resolved = Variant::fp32_simt;
  std::string note;  ///< the first trailing update's GemmInfo note; the leaf path
};

/// TCSOLVE_SOLVER_HOST_TIME=on: host seconds spent enqueueing each kind of LU work, printed to
/// stderr at the end of the LU (to see whether the host or the device sets the pace).
class HostTimes {
 public:
  struct Scope {
    HostTimes& t;
    int k;
    Clock::time_point start = Clock::now();
    ~Scope() {
      if (t.on_) t.seconds_[k] += seconds(start, Clock::now());
    }
  };
  enum Kind { leaf, swap, join, trsm, update, marks, kinds };
  Scope time(Kind k) { return Scope{*this, k}; }
  void print() const {
    if (!on_) return;
    static const char* names[] = {"leaf", "swap", "join", "trsm", "update", "marks"};
    std::fprintf(stderr, "lu host ms:");
    for (int k = 0; k < kinds; ++k) std::fprintf(stderr, " %s %.2f", names[k], 1e3 * seconds_[k]);
    std::fprintf(stderr, "\n");
  }

 private:
  bool on_ = env_is("TCSOLVE_SOLVER_HOST_TIME", "on");
  double seconds_[kinds] = {};
};

/// The look-ahead's two host threads hand over per block (the column j where it starts): the
/// panel thread posts `trsm` (U12 of the next block's columns enqueued), the update thread
/// `next` (their update enqueued) and `done` (the whole update enqueued); each waits for the
/// other's post before enqueueing a wait on the matching CUDA event. fail() wakes both for good.
class Handover {
 public:
  enum Kind { trsm, done, kinds };
  void post(Kind k, int j) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      posted_[k] = j;
    }
    changed_.notify_all();
  }
  /// Waits until `k` is posted for block j; false when fail() was called.
  bool wait(Kind k, int j) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return failed_ || posted_[k] >= j; });
    return !failed_;
  }
  /// wait(), rethrowing the other thread's exception (or throwing) if it failed.
  void wait_or_throw(Kind k, int j) {
    if (!wait(k, j)) {
      rethrow();
      throw CudaError("the LU's update thread stopped");
    }
  }
  void fail(std::exception_ptr e) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      failed_ = true;
      if (e && !error_) error_ = e;
    }
    changed_.notify_all();
  }
  void rethrow() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int posted_[kinds] = {-1, -1};
  bool failed_ = false;
  std::exception_ptr error_;
};

/// A CUDA event without timing, for ordering two streams.
class StreamEvent {
 public:
  StreamEvent() { TCSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~StreamEvent() { cudaEventDestroy(e_); }
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  /// Marks the work enqueued on `on` so far.
  void record(cudaStream_t on) { TCSOLVE_CUDA_CHECK(cudaEventRecord(e_, on)); }
  /// `waiter`'s later work waits for the marked work.
  void wait(cudaStream_t waiter) { TCSOLVE_CUDA_CHECK(cudaStreamWaitEvent(waiter, e_, 0)); }

 private:
  cudaEvent_t e_ = nullptr;
};

/// Binds the solver's cuBLAS and cuSOLVER handles and the thread's launch stream to `stream`
/// while in scope (back to the default stream afterwards).
class OnStream {
 public:
  explicit OnStream(cudaStream_t stream) : launch_(stream) { bind(stream); }
  ~OnStream() {
    try {
      bind(nullptr);
    } catch (...) {  // destructors do not throw
    }
  }
  OnStream(const OnStream&) = delete;
  OnStream& operator=(const OnStream&) = delete;

 private:
  static void bind(cudaStream_t stream) {
    TCSOLVE_CUBLAS_CHECK(cublasSetStream(blas(), stream));
    TCSOLVE_CUSOLVER_CHECK(cusolverDnSetStream(dense(), stream));
  }
  LaunchStream launch_;
};

/// The blocked LU of the row-major FP32 A_s on the device. Row-major, because a row
/// interchange then moves contiguous rows (column-major, each moved element is a 32-byte
/// sector of its own: 16 ms of the 122 at n = 16384 went to the swaps). In cuBLAS's
/// column-major terms the matrix is T = A_s^T; T(i, j) is A_s(j, i), at a + i + j ld.
///
/// Columns are factored in blocks of nb (the trailing update's k), each block recursively
/// (Toledo): the left half, U12 of the right half by TRSM, the right half's update by FP32
/// SGEMM, the right half; the recursion ends in leaves of `leaf` columns (32 at n <= 16384)
/// factored by the cluster kernel (panel.cu), or, where that cannot run, by cuSOLVER's sgetrf
/// on a column-major copy. A leaf's interchanges move the rows of its own block only (and are
/// composed into `origin_`); the columns outside the block receive the block's composed
/// permutation once, after the block (row_swap.cu).
///
/// Look-ahead (lookahead.hpp; TCSOLVE_SOLVER_LOOKAHEAD=off: one stream): per block k, on the
/// panel stream: wait for the update of block k - 1, the block's permutation outside it, U12 by
/// TRSM; on the update stream: A22 -= L21 U12 for the next block's columns, then for the rest;
/// the panel stream factors block k + 1 as soon as its columns are updated, while the rest of
/// the update of block k runs beside it on the other SMs.
class BlockedLu {
 public:
  BlockedLu(DeviceLu& f, PhaseClock& clock)
      : f_(f),
        clock_(clock),
        n_(f.n),
        a_(f.lu.data()),
        // TCSOLVE_SOLVER_LEAF=cusolver: cuSOLVER's leaves even where the cluster kernel runs
        leaf_(env_is("TCSOLVE_SOLVER_LEAF", "cusolver") ? 0 : kernels::leaf_width(f.n)),
        pairs_(kernels::interchange_scratch_ints(kernels::kMaxLeafWidth)),
        infos_(static_cast<std::size_t>(2 + f.n / kernels::kMaxLeafWidth)),
        origin_(static_cast<std::size_t>(f.n)),
        block_scratch_(kernels::block_permutation_scratch_ints(f.n)) {
    device_memset(infos_.data(), 0, infos_.size() * sizeof(int));
    std::vector<int> identity(static_cast<std::size_t>(n_));
    for (int i = 0; i < n_; ++i) identity[static_cast<std::size_t>(i)] = i;
    f_.perm = DeviceBuffer<int>(identity);
    if (leaf_ == 0) {
      const int w = std::min(kernels::kMaxLeafWidth, n_);
      panel_ = DeviceBuffer<float>(elements(n_, w));
      int lwork = 0;
      TCSOLVE_CUSOLVER_CHECK(cusolverDnSgetrf_bufferSize(dense(), n_, w, panel_.data(), n_, &lwork));
      work_ = DeviceBuffer<float>(static_cast<std::size_t>(std::max(lwork, 1)));
      ipiv_ = DeviceBuffer<int>(static_cast<std::size_t>(w));
      f_.note = "panel leaves by cuSOLVER sgetrf";
    }
    // TCSOLVE_SOLVER_LOOKAHEAD=off: everything on the default stream, one step after the other
    if (!env_is("TCSOLVE_SOLVER_LOOKAHEAD", "off") && n_ > kernels::kMaxLeafWidth) {
      const LookaheadStreams& streams = lookahead_streams();
      if (streams.unavailable.empty())
        streams_ = &streams;
      else
        f_.note += (f_.note.empty() ? "" : "; ") + ("no look-ahead: " + streams.unavailable);
    }
  }

  /// The LU in blocks of nb columns; the trailing updates by `variant`. Ends with the pivots
  /// read back (the device is idle afterwards).
  ///
  /// With look-ahead, two host threads enqueue the work, as the host's enqueueing (cuBLAS calls,
  /// 16 leaf launches and 15 joins per block) set the pace otherwise: this thread the panel
  /// stream's (permutation right of the block, U12 of the next block's columns and their
  /// update, the next panel) and, before its post, the block permutation's moves left of the
  /// block on the update stream; a second one the rest of the update stream's work (the rest of
  /// U12 and of the update). They hand over per block through Handover; CUDA events order the
  /// streams.
  ///
  /// fp16_only (auto whose first update chose FP16, with look-ahead): the later updates launch
  /// only the FP16 path (GemmOptions::cuda_auto_tf32_needed); tf32_skipped() then says whether
  /// one of them chose TF32, i.e. the factors are wrong and the LU must be done again without.
  void run(int nb, Variant variant, const GemmOptions& options, bool fp16_only = false) {
    device_synchronize();  // the streams below do not wait for the default stream's work
    const bool ahead = streams_ != nullptr;
    const cudaStream_t panel = ahead ? streams_->panel : nullptr, update = ahead ? streams_->update : nullptr;
    GemmOptions gemm_options = options;
    if (ahead) gemm_options.cuda_max_blocks = streams_->update_sms;
    PhaseClock update_clock;
    update_clock.reserve(6 * static_cast<std::size_t>(n_ / std::max(nb, 1) + 2));
    update_clock.set_stream(update);
    StreamEvent trsm_done, update_done, swap_done, converted;
    // The equilibration's columns right of the first block (factorize() converted only the
    // first block's): with look-ahead on the update stream, beside the first panel, the next
    // block's columns first (`converted`: the first panel's stream waits for them before the
    // block's permutation), then the rest (split_first_swap: the first block's permutation of
    // those columns then moves on the update stream too). Else here, before the first panel.
    // Enqueued before the update thread starts, so ahead of that stream's own work.
    const bool convert_rest = convert_from_ != nullptr && convert_c0_ < n_;
    const int convert_mid = std::min(n_, convert_c0_ + nb);
    const bool split_first_swap = ahead && convert_rest && convert_mid < n_;
    if (convert_rest) {
      const LaunchStream on_update(update);
      if (ahead)
        update_clock.mark("equilibrate_rest");
      else
        mark("equilibrate");
      kernels::equilibrate_columns(convert_from_, n_, f_.row_scale.data(), f_.col_scale.data(), a_,
                                   convert_c0_, ahead ? convert_mid : n_, f_.col_sum.data());
      if (ahead) {
        converted.record(update);
        kernels::equilibrate_columns(convert_from_, n_, f_.row_scale.data(), f_.col_scale.data(), a_,
                                     convert_mid, n_, f_.col_sum.data());
        update_clock.mark(nullptr);
      }
    }
    Handover handover;
    HostTimes update_host;
    bool first_update = true;  // touched by the panel thread only until its first trsm post

    // A22 -= L21 U12 for the columns c.. c + m of the block at j (width w), through the variant.
    auto update_columns = [&](HostTimes& host, int j, int w, int c, int m) {
      const auto timed = host.time(HostTimes::update);
      GemmOptions o = gemm_options;
      // auto's choice stays on the device, except in the first call (reported)
      o.cuda_auto_on_device = ahead && !first_update;
      if (o.cuda_auto_on_device && fp16_only_) o.cuda_auto_tf32_needed = tf32_needed_.data();
      const int rest = n_ - j - w;
      const GemmInfo gi = tcsolve::gemm(Backend::cuda, variant, Op::n, Op::n, m, rest, w, -1.0f, t(c, j), n_,
                                        t(j, j + w), n_, 1.0f, t(c, j + w), n_, o);
      if (first_update) {
        f_.resolved = gi.resolved;
        fp16_only_ = fp16_only && variant == Variant::auto_ && gi.resolved == Variant::ec_fp16;
        if (!gi.note.empty()) f_.note += (f_.note.empty() ? "" : "; ") + ("trailing update: " + gi.note);
        first_update = false;
      }
    };
    // The update stream's work for the block at j (width w), after U12 of the next block's
    // columns and their update (on the panel's path): the rest of U12 and the rest of the update.
    auto update_side = [&](int j, int w) {
      const int rest = n_ - j - w, next = std::min(nb, rest);
      const LaunchStream on_update(update);
      if (ahead) trsm_done.wait(update);
      if (rest > next) {
        {
          const auto timed = update_host.time(HostTimes::trsm);
          if (ahead) update_clock.mark("trsm_rest");
          TCSOLVE_CUBLAS_CHECK(cublasSetStream(blas_second(), update));
          trsm(blas_second(), j, w, j + w + next, rest - next);
          if (ahead) update_clock.mark("update");
        }
        update_columns(update_host, j, w, j + w + next, rest - next);
      }
      if (ahead) {
        update_clock.mark(nullptr);
        update_done.record(update);  // waited for by the next block's permutation
        handover.post(Handover::done, j);
      }
    };
    std::thread update_thread;
    if (ahead)
      update_thread = std::thread([&] {
        try {
          for (int j = 0; j + nb < n_; j += nb) {
            if (!handover.wait(Handover::trsm, j)) return;
            update_side(j, std::min(nb, n_ - j));
          }
        } catch (...) {
          handover.fail(std::current_exception());
        }
      });
    // Joins the update thread on every way out (an exception here stops it first).
    struct Joiner {
      std::thread& t;
      Handover& h;
      ~Joiner() {
        if (t.joinable()) {
          h.fail(nullptr);
          t.join();
        }
      }
    } joiner{update_thread, handover};

    {
      const OnStream on_panel(panel);
      clock_.set_stream(panel);
      const auto enqueue_start = Clock::now();
      factor_block(0, std::min(nb, n_));
      for (int j = 0; j < n_; j += nb) {
        const int w = std::min(nb, n_ - j), rest = n_ - j - w;
        if (ahead && j == 0 && convert_rest) converted.wait(panel);
        if (ahead && j > 0) {
          handover.wait_or_throw(Handover::done, j - nb);
          mark("update_wait");
          update_done.wait(panel);
        }
        mark("swap");
        {
          const auto timed = host_.time(HostTimes::swap);
          // With look-ahead, only the columns right of the block here; those left of it (L's,
          // which nothing reads before the end) move on the update stream, off the panel's
          // path, before that stream's work for this block (enqueued from this thread before
          // the trsm post below, so in this order) and so before the next block's permutation
          // overwrites the scratch (it waits for update_done).
          // The first block's permutation right of the next block's columns likewise, after the
          // equilibration's columns there (split_first_swap).
          const bool split = j == 0 && split_first_swap && j + w < convert_mid;
          kernels::apply_block_permutation(a_, n_, n_, j, w, origin_.data(), f_.perm.data(),
                                           block_scratch_.data(), /*right_only=*/ahead,
                                           split ? convert_mid : -1);
          if (ahead && (j > 0 || split)) {
            swap_done.record(panel);
            const LaunchStream on_update(update);
            swap_done.wait(update);
            if (split)
              kernels::move_block_permutation_columns(a_, n_, n_, j, w, block_scratch_.data(), convert_mid, n_);
            else
              kernels::move_block_permutation_left(a_, n_, n_, j, w, block_scratch_.data());
          }
        }
        if (rest == 0) break;
        // U12 and A22 -= L21 U12 (in T's terms T22 -= U12^T L21^T): for the next block's columns
        // (T's rows j + w .. j + w + next) here, on the panel's path, then for the rest
        // (update_side; the same calls in either mode). The next block's update runs on the panel
        // stream itself: the update stream has finished the previous block then (the permutation
        // above waited for it), and no handover between the host threads sits on the panel's path
        // (session 4 had the update thread enqueue this update and the panel thread wait for its
        // post before it could enqueue the next panel).
        const int next = std::min(nb, rest);
        mark("trsm");
        {
          const auto timed = host_.time(HostTimes::trsm);
          trsm(blas(), j, w, j + w, next, /*plain=*/true);
        }
        if (ahead) trsm_done.record(panel);
        mark(ahead ? "update_next" : "update");
        update_columns(host_, j, w, j + w, next);
        if (ahead)
          handover.post(Handover::trsm, j);  // after the first update_columns (first_update)
        else
          update_side(j, w);
        factor_block(j + w, next);
      }
      mark("pivots");
      const double enqueued = seconds(enqueue_start, Clock::now());
      if (ahead) update_thread.join();
      if (env_is("TCSOLVE_SOLVER_HOST_TIME", "on")) {  // how long the host took to enqueue the LU
        std::fprintf(stderr, "lu: enqueued in %.2f ms (host)\n", 1e3 * enqueued);
        host_.print();
        update_host.print();
      }
      if (ahead) {
        handover.rethrow();
        TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(update));
        TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(panel));
      }
      mark(nullptr);
    }
    clock_.set_stream(nullptr);
    finish();
    mark("pivots");
    mark(nullptr);
    for (auto& phase : update_clock.totals()) clock_.add(phase.first, phase.second);
  }

  /// run() converts the columns [c0, n) of A_s from the FP64 `a` first (kernels::
  /// equilibrate_columns; the row scales and the columns left of c0 are done).
  void convert_rest(const double* a, int c0) {
    convert_from_ = a;
    convert_c0_ = c0;
  }

  /// Whether an update of a fp16_only run chose TF32 and was skipped (reads a flag back).
  bool tf32_skipped() { return fp16_only_ && tf32_needed_.download()[0] != 0; }

  /// T(i, j): A_s(j, i).
  float* t(int i, int j) { return a_ + i + elements(j, n_); }

 private:
  int leaf_width() const { return leaf_ > 0 ? leaf_ : std::min(kernels::kMaxLeafWidth, n_); }

  /// The block of w columns at c0 (rows c0..n-1), its interchanges inside it only.
  void factor_block(int c0, int w) {
    mark("panel");  // leaves and joins; TCSOLVE_SOLVER_PHASES=detail tells them apart
    block_lo_ = c0;
    block_hi_ = c0 + w;
    {
      const auto timed = host_.time(HostTimes::swap);
      kernels::reset_origin(origin_.data(), c0, n_);
    }
    factor_columns(c0, w);
  }

  /// Columns c0..c0+w-1 (rows c0..n-1) recursively.
  void factor_columns(int c0, int w) {
    const int leaf = leaf_width();
    if (w <= leaf) {
      factor_leaf(c0, w);
      return;
    }
    const int w1 = (w / 2 + leaf - 1) / leaf * leaf, w2 = w - w1;
    factor_columns(c0, w1);
    if (detail_) mark("panel_update");
    {
      const float one = 1.0f, minus_one = -1.0f;
      const auto timed = host_.time(HostTimes::join);
      // U12 of the right half (A_s's rows c0.. c0 + w1, columns c0 + w1 ..): trsm.cu's kernel
      if (plain_trsm_ || !kernels::trsm_lower_unit(t(c0, c0), t(c0 + w1, c0), n_, w1, w2))
        TCSOLVE_CUBLAS_CHECK(cublasStrsm(blas(), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                         CUBLAS_DIAG_UNIT, w2, w1, &one, t(c0, c0), n_, t(c0 + w1, c0), n_));
      TCSOLVE_CUBLAS_CHECK(cublasSgemm(blas(), CUBLAS_OP_N, CUBLAS_OP_N, w2, n_ - c0 - w1, w1, &minus_one,
                                       t(c0 + w1, c0), n_, t(c0, c0 + w1), n_, &one, t(c0 + w1, c0 + w1),
                                       n_));
    }
    factor_columns(c0 + w1, w2);
  }

  /// U12 = L11^-1 A12 for the block of w columns at j: in T's terms X U = B with U = T(j.., j..)
  /// upper unit triangular (w x w) and X = T(x0.., j..) (rows x rows, w columns), recursively:
  /// halves of U, the off-diagonal part by SGEMM, so that most flops run in SGEMM rather than
  /// in cublasStrsm (about 10 TFLOP/s on these shapes). (An inverse of L11 times an SGEMM, as
  /// MAGMA does, measured no faster here and left a 5x larger LU residual: docs/BENCHMARKS.md.)
  ///
  /// `plain` (U12 of the next block's columns, on the panel's path): one call of trsm.cu's kernel
  /// (in A_s's terms L11^-1 A12, row-major), 44 us where cublasStrsm took 150 (launches and
  /// internal steps, not flops, set the time at 512 x 512); TCSOLVE_SOLVER_TRSM=kernel: the rest
  /// too, TCSOLVE_SOLVER_TRSM=cublas: one cublasStrsm per part (to compare).
  void trsm(cublasHandle_t h, int j, int w, int x0, int rows, bool plain = false) {
    const float one = 1.0f, minus_one = -1.0f;
    if ((plain || kernel_trsm_) && !plain_trsm_ && kernels::trsm_lower_unit(t(j, j), t(x0, j), n_, w, rows))
      return;
    if (w <= kTrsmLeaf || plain_trsm_ || plain) {
      TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                       CUBLAS_DIAG_UNIT, rows, w, &one, t(j, j), n_, t(x0, j), n_));
      return;
    }
    const int w1 = (w / 2 + 31) / 32 * 32, w2 = w - w1;
    trsm(h, j, w1, x0, rows);
    // X2 U22 = B2 - X1 U12
    TCSOLVE_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, rows, w2, w1, &minus_one, t(x0, j), n_,
                                     t(j, j + w1), n_, &one, t(x0, j + w1), n_));
    trsm(h, j + w1, w2, x0, rows);
  }

  /// Reads the pivots and the zero-pivot reports back (the device is idle afterwards).
  void finish() {
    f_.perm_host = f_.perm.download();
    const std::vector<int> infos = infos_.download();
    if (infos[0] > 0) f_.zero_pivot = infos[0] - 1;
    for (std::size_t l = 1; l < infos.size() && f_.zero_pivot < 0; ++l)
      if (infos[l] > 0)
        f_.zero_pivot = static_cast<int>(l - 1) * kernels::kMaxLeafWidth + infos[l] - 1;
      else if (infos[l] < 0)
        throw CudaError("cusolverDnSgetrf: invalid argument " + std::to_string(-infos[l]) +
                        " (leaf at column " + std::to_string((l - 1) * kernels::kMaxLeafWidth + 1) + ")");
  }

  void factor_leaf(int c0, int w) {
    if (detail_) mark("panel");
    if (leaf_ > 0) {  // the cluster kernel, which also moves the rows in the block's other columns
      const auto timed = host_.time(HostTimes::leaf);
      kernels::factor_leaf(a_, n_, n_, c0, w, pairs_.data(), infos_.data(), block_lo_, block_hi_,
                           origin_.data());
      return;
    }
    // cuSOLVER: the leaf's rows c0..n-1 are T's columns: transposed to a column-major m x w
    // copy, factored, transposed back; sgetrf's ipiv composed into pairs, applied in the block.
    const int m = n_ - c0;
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t h = blas();
    TCSOLVE_CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, w, &one, t(c0, c0), n_, &zero,
                                     panel_.data(), m, panel_.data(), m));
    TCSOLVE_CUSOLVER_CHECK(cusolverDnSgetrf(dense(), m, w, panel_.data(), m, work_.data(), ipiv_.data(),
                                            infos_.data() + 1 + c0 / kernels::kMaxLeafWidth));
    TCSOLVE_CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, w, m, &one, panel_.data(), m, &zero,
                                     t(c0, c0), n_, t(c0, c0), n_));
    kernels::compose_interchanges(ipiv_.data(), c0, w, n_, pairs_.data());
    if (detail_) mark("swap");
    const auto timed = host_.time(HostTimes::swap);
    kernels::apply_row_pairs_in_block(a_, n_, c0, w, block_lo_, block_hi_, pairs_.data(), origin_.data());
  }

  void mark(const char* next) {
    const auto timed = host_.time(HostTimes::marks);
    clock_.mark(next);
  }

  /// TCSOLVE_SOLVER_PHASES=detail: phase marks around every leaf and join ("panel",
  /// "panel_update"; about 1000 events at n = 16384, which cost the GPU about 1.5 ms), else one
  /// "panel" phase per block.
  bool detail_ = env_is("TCSOLVE_SOLVER_PHASES", "detail");

  /// Widest diagonal block that trsm() hands to cublasStrsm.
  static constexpr int kTrsmLeaf = 64;
  /// TCSOLVE_SOLVER_TRSM=cublas: U12 and the joins' solves by one cublasStrsm each (to compare).
  bool plain_trsm_ = env_is("TCSOLVE_SOLVER_TRSM", "cublas");
  /// TCSOLVE_SOLVER_TRSM=kernel: the rest of U12 by trsm.cu's kernel too.
  bool kernel_trsm_ = env_is("TCSOLVE_SOLVER_TRSM", "kernel");

  DeviceLu& f_;
  PhaseClock& clock_;
  int n_;
  float* a_;
  int leaf_;  ///< the cluster kernel's leaf width, 0: cuSOLVER leaves of kMaxLeafWidth
  DeviceBuffer<int> pairs_;
  DeviceBuffer<int> infos_;          ///< [0]: the cluster kernel's zero pivot; [1 + c0 / 32]: sgetrf's info
  DeviceBuffer<int> origin_;         ///< the block's composed interchanges (row_swap.cu)
  DeviceBuffer<int> block_scratch_;  ///< apply_block_permutation's scratch
  int block_lo_ = 0, block_hi_ = 0;  ///< the block being factored
  DeviceBuffer<float> panel_, work_;
  DeviceBuffer<int> ipiv_;
  const LookaheadStreams* streams_ = nullptr;  ///< null: one stream (the default)
  HostTimes host_;
  bool fp16_only_ = false;           ///< run()'s fp16_only, once the first update chose FP16
  DeviceBuffer<int> tf32_needed_{std::vector<int>{0}};  ///< set by an update that chose TF32 (fp16_only_)
  const double* convert_from_ = nullptr;  ///< convert_rest()'s A (null: A_s is complete)
  int convert_c0_ = 0;
};

/// Equilibration and the blocked LU of the device A (n x n FP64). Ends with the pivots read
/// back (the device is idle afterwards).
DeviceLu factorize(const DeviceSystem& s, Variant variant, int block_size, const GemmOptions& gemm_options,
                   PhaseClock& clock) {
  // auto: the updates after the first launch their FP16 path only (the first chose FP16; its
  // TF32 split and kernel, gated off on the device, cost 20-60 us a call); should one of them
  // choose TF32 after all, the LU is done again with both paths (TCSOLVE_SOLVER_AUTO=both: always
  // both, to compare). The factors are the same either way.
  const bool fp16_only = variant == Variant::auto_ && !env_is("TCSOLVE_SOLVER_AUTO", "both");
  const bool retry = env_is("TCSOLVE_SOLVER_AUTO", "retry");  // tests: the repeat as if TF32 were chosen
  for (int attempt = 0;; ++attempt) {
    const int n = s.n;
    DeviceLu f;
    f.n = n;
    f.lu = DeviceBuffer<float>(elements(n, n));
    f.row_scale = DeviceBuffer<double>(static_cast<std::size_t>(n));
    f.col_scale = DeviceBuffer<double>(static_cast<std::size_t>(n));
    f.col_sum = DeviceBuffer<double>(static_cast<std::size_t>(n));
    f.resolved = variant;  // the requested one when no trailing update runs (n <= nb)

    // The row scales, ||A||_inf and the first block's columns of A_s here; the rest of A_s
    // beside the first panel (BlockedLu::run(); 2.9 ms of equilibration at n = 16384 were
    // on the panel's path before, session 6).
    const int nb = std::max(block_size, 1), first = std::min(nb, n);
    clock.mark("equilibrate");
    {
      DeviceBuffer<double> workspace(kernels::equilibrate_workspace_doubles(n));
      DeviceBuffer<double> norm(1);
      kernels::equilibrate_rows(s.a.data(), n, f.row_scale.data(), norm.data(), workspace.data());
      kernels::equilibrate_columns(s.a.data(), n, f.row_scale.data(), f.col_scale.data(), f.lu.data(), 0,
                                   first, f.col_sum.data());
      f.norm_a = norm.download()[0];
    }
    clock.mark(nullptr);

    BlockedLu lu(f, clock);
    lu.convert_rest(s.a.data(), first);
    lu.run(nb, variant, gemm_options, fp16_only && attempt == 0);
    if (!lu.tf32_skipped() && !(retry && attempt == 0)) {
      if (attempt > 0)
        f.note += (f.note.empty() ? "" : "; ") +
                  std::string("auto: a trailing update chose TF32, factorization repeated with both paths");
      return f;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Residuals, corrections and the refinement on the device
// ---------------------------------------------------------------------------------------------

/// r = b - A x and the assessment of x (detail::assess_columns) for one device system.
class DeviceChecker {
 public:
  DeviceChecker(const DeviceSystem& s, detail::ScaledNorm norm_a)
      : s_(s), norm_a_(norm_a), r_(elements(s.n, s.nrhs)), norms_(2 * static_cast<std::size_t>(s.nrhs)) {}

  /// r = b - A x in FP64 on the device; returns the assessment (reads 2 nrhs doubles back).
  detail::Assessment assess(const double* x) {
    const int n = s_.n, k = s_.nrhs;
    copy_device_to_device(r_.data(), s_.b.data(), r_.size() * sizeof(double));
    const double minus_one = -1.0, one = 1.0;
    cublasHandle_t h = blas();
    if (k == 1)
      TCSOLVE_CUBLAS_CHECK(
          cublasDgemv(h, CUBLAS_OP_N, n, n, &minus_one, s_.a.data(), n, x, 1, &one, r_.data(), 1));
    else
      TCSOLVE_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, k, n, &minus_one, s_.a.data(), n, x, n,
                                       &one, r_.data(), n));
    kernels::column_max_abs(r_.data(), n, n, k, nullptr, norms_.data(), nullptr);
    kernels::column_max_abs(x, n, n, k, nullptr, norms_.data() + k, nullptr);
    const std::vector<double> norms = norms_.download();
    const std::vector<double> r_norm(norms.begin(), norms.begin() + k),
        x_norm(norms.begin() + k, norms.end());
    return detail::assess_columns(r_norm, x_norm, s_.b_norm, norm_a_, n);
  }

  const double* r() const { return r_.data(); }

 private:
  const DeviceSystem& s_;
  detail::ScaledNorm norm_a_;
  DeviceBuffer<double> r_;
  DeviceBuffer<double> norms_;
};

/// The device side of detail::refinement_loop (solver_internal.hpp): classical refinement (d =
/// LU^-1 r) or GMRES-IR (d from one GMRES cycle per column, gmres() below).
class DeviceRefinement {
 public:
  DeviceRefinement(const DeviceSystem& s, const DeviceLu& f, detail::ScaledNorm norm_a, Refinement method,
                   PhaseClock& clock)
      : s_(s),
        f_(f),
        method_(method),
        clock_(clock),
        checker_(s, norm_a),
        x_(elements(s.n, s.nrhs)),
        best_(elements(s.n, s.nrhs)),
        d_(elements(s.n, s.nrhs)),
        y_(elements(s.n, s.nrhs)),
        solve_scratch_(kernels::lu_solve_scratch_ints(s.n, s.nrhs)),
        scratch_(static_cast<std::size_t>(s.nrhs)),
        exponent_(static_cast<std::size_t>(s.nrhs)),
        mask_(static_cast<std::size_t>(s.nrhs)) {
    if (method_ == Refinement::gmres) {
      cycle_ = std::min(detail::kGmresCycle, s.n);
      basis_ = DeviceBuffer<double>(elements(s.n, cycle_ + 1));
      product_ = DeviceBuffer<double>(static_cast<std::size_t>(s.n));
      coefficients_ = DeviceBuffer<double>(2 * static_cast<std::size_t>(cycle_ + 1));
      solution_ = DeviceBuffer<double>(static_cast<std::size_t>(cycle_));
    }
  }

  /// x = LU^-1 b: the initial solve (both methods).
  void initial_solve() {
    clock_.mark("correction");
    lu_apply(s_.b.data(), x_.data(), s_.nrhs);
    clock_.mark(nullptr);
  }

  detail::Assessment assess() {
    clock_.mark("residual");
    detail::Assessment a = checker_.assess(x_.data());
    clock_.mark(nullptr);
    return a;
  }

  std::vector<double> correct(const std::vector<bool>& done) {
    const int n = s_.n, k = s_.nrhs;
    if (method_ == Refinement::classical) {
      clock_.mark("correction");
      lu_apply(checker_.r(), d_.data(), k);
    } else {
      clock_.mark("gmres");
      device_memset(d_.data(), 0, d_.size() * sizeof(double));  // the columns done keep d = 0
      for (int j = 0; j < k; ++j)
        if (!done[static_cast<std::size_t>(j)])
          inner_iterations_ += gmres(checker_.r() + elements(n, j), d_.data() + elements(n, j));
    }
    kernels::column_max_abs(d_.data(), n, n, k, nullptr, scratch_.data(), nullptr);
    clock_.mark(nullptr);
    return scratch_.download();
  }

  void apply(const std::vector<bool>& done) {
    std::vector<int> mask(done.size());
    for (std::size_t j = 0; j < done.size(); ++j) mask[j] = done[j] ? 0 : 1;
    mask_.upload(mask);
    kernels::masked_add(x_.data(), d_.data(), s_.n, s_.nrhs, mask_.data());
  }

  void keep_best() { copy_device_to_device(best_.data(), x_.data(), x_.size() * sizeof(double)); }

  /// The iterate buffer, for a solution computed elsewhere (the FP64 fallback) or zeroed.
  double* x() { return x_.data(); }

  /// The kept iterate, copied to the host.
  Eigen::MatrixXd best() const {
    Eigen::MatrixXd x(s_.n, s_.nrhs);
    copy_to_host(x.data(), best_.data(), best_.size() * sizeof(double));
    return x;
  }

  /// GMRES inner iterations summed over the outer steps and the columns.
  long inner_iterations() const { return inner_iterations_; }

 private:
  /// out = C U^-1 L^-1 P R rhs for `cols` columns (leading dimension n), each through FP32 with
  /// a power-of-two scaling (the cpu path's lu_apply).
  void lu_apply(const double* rhs, double* out, int cols) {
    const int n = s_.n;
    kernels::column_max_abs(rhs, n, n, cols, f_.row_scale.data(), scratch_.data(), exponent_.data());
    kernels::scale_permute_to_fp32(rhs, n, n, cols, f_.row_scale.data(), f_.perm.data(), exponent_.data(),
                                   y_.data());
    if (cublas_solves_) {
      // The row-major LU is T = (LU)^T in cuBLAS's terms: L y = r is T's unit upper part
      // transposed, U y = r its lower part transposed.
      const float one = 1.0f;
      cublasHandle_t h = blas();
      TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                                       CUBLAS_DIAG_UNIT, n, cols, &one, f_.lu.data(), n, y_.data(), n));
      TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                       CUBLAS_DIAG_NON_UNIT, n, cols, &one, f_.lu.data(), n, y_.data(), n));
    } else {
      kernels::lu_solve(f_.lu.data(), n, n, y_.data(), cols, solve_scratch_.data());
    }
    kernels::unscale_to_fp64(y_.data(), n, cols, f_.col_scale.data(), exponent_.data(), out);
  }

  /// ||v||_2 of a device vector of n doubles (cublasDnrm2 in host pointer mode: waits for it).
  double norm2(const double* v) {
    double norm = 0;
    TCSOLVE_CUBLAS_CHECK(cublasDnrm2(blas(), s_.n, v, 1, &norm));
    return norm;
  }

  /// The cpu path's gmres() (solver.cpp) for one column on the device: d = the GMRES solution
  /// of M^-1 A d = M^-1 r, x0 = 0, M = the FP32 LU, one cycle of at most min(n, kGmresCycle)
  /// iterations. Per Arnoldi step k: t = A v_k (cublasDgemv, FP64), w = M^-1 t (lu_apply: FP32
  /// triangular solves of the scaled FP32 rhs, FP64 result) written straight into v_{k+1};
  /// classical Gram-Schmidt run twice (CGS2: h1 = V^T w, w -= V h1, h2 = V^T w, w -= V h2 with
  /// V = v_0..v_k, four cublasDgemv; as accurate as the cpu's MGS twice, without one device
  /// round trip per basis vector); h = h1 + h2 and ||w||_2 read back (2 (k+1) + 1 doubles),
  /// v_{k+1} = w / ||w||; the rotations and the stopping test on the host
  /// (detail::GmresLeastSquares, shared with the cpu). At the end d = V(:, 0..k-1) y. Returns
  /// the inner iterations done. r and d are device columns of n doubles (r is not changed).
  int gmres(const double* r, double* d) {
    const int n = s_.n, m = cycle_;
    lu_apply(r, d, 1);  // z = M^-1 r
    const double beta = norm2(d);
    if (!(beta > 0) || !std::isfinite(beta)) return 0;  // d = z: r == 0 gives 0; non-finite propagates
    double* v = basis_.data();                          // n x (m + 1), leading dimension n
    auto column = [&](int i) { return v + elements(n, i); };
    kernels::divide(d, n, beta, column(0));  // v_0 = z / beta
    double* h1 = coefficients_.data();
    double* h2 = coefficients_.data() + (m + 1);
    std::vector<double> host(2 * static_cast<std::size_t>(m + 1));
    std::vector<double> h(static_cast<std::size_t>(m + 1));
    const double one = 1.0, zero = 0.0, minus_one = -1.0;
    cublasHandle_t handle = blas();
    detail::GmresLeastSquares ls(m, beta);
    while (ls.size() < m) {
      const int k = ls.size();
      double* w = column(k + 1);
      TCSOLVE_CUBLAS_CHECK(cublasDgemv(handle, CUBLAS_OP_N, n, n, &one, s_.a.data(), n, column(k), 1, &zero,
                                       product_.data(), 1));
      lu_apply(product_.data(), w, 1);
      for (double* hp : {h1, h2}) {
        TCSOLVE_CUBLAS_CHECK(
            cublasDgemv(handle, CUBLAS_OP_T, n, k + 1, &one, v, n, w, 1, &zero, hp, 1));  // hp = V^T w
        TCSOLVE_CUBLAS_CHECK(
            cublasDgemv(handle, CUBLAS_OP_N, n, k + 1, &minus_one, v, n, hp, 1, &one, w, 1));  // w -= V hp
      }
      const double h_next = norm2(w);
      copy_to_host(host.data(), coefficients_.data(), host.size() * sizeof(double));
      for (int i = 0; i <= k; ++i)
        h[static_cast<std::size_t>(i)] =
            host[static_cast<std::size_t>(i)] + host[static_cast<std::size_t>(m + 1 + i)];
      if (h_next > 0) kernels::divide(w, n, h_next, w);
      if (ls.add_column(h.data(), h_next)) break;
    }
    const int k = ls.size();
    const Eigen::VectorXd y = ls.solve();
    copy_to_device(solution_.data(), y.data(), static_cast<std::size_t>(k) * sizeof(double));
    TCSOLVE_CUBLAS_CHECK(
        cublasDgemv(handle, CUBLAS_OP_N, n, k, &one, v, n, solution_.data(), 1, &zero, d, 1));  // d = V y
    return k;
  }

  const DeviceSystem& s_;
  const DeviceLu& f_;
  Refinement method_;
  PhaseClock& clock_;
  DeviceChecker checker_;
  DeviceBuffer<double> x_, best_, d_;
  DeviceBuffer<float> y_;
  /// The triangular solves: triangular.cu's sync-free row-block solves, or cuBLAS's strsm with
  /// TCSOLVE_SOLVER_TRSV=cublas (to compare).
  bool cublas_solves_ = env_is("TCSOLVE_SOLVER_TRSV", "cublas");
  DeviceBuffer<int> solve_scratch_;
  DeviceBuffer<double> scratch_;
  DeviceBuffer<int> exponent_, mask_;
  // GMRES-IR only: the Krylov basis (n x (cycle + 1)), A v_k, the two Gram-Schmidt passes'
  // coefficients (2 (cycle + 1)), the least-squares solution y (cycle).
  int cycle_ = 0;
  DeviceBuffer<double> basis_, product_, coefficients_, solution_;
  long inner_iterations_ = 0;
};

/// What fp64_lu_solve() did: dgetrf's info (0, or the 1-based column of an exactly zero pivot;
/// x is then what dgetrs makes of it) and, when timed, the seconds of dgetrf and of dgetrs.
struct Fp64Solve {
  int info = 0;
  double factorization_s = 0, solve_s = 0;
};

/// x = A^-1 b by cuSOLVER FP64 dgetrf + dgetrs on a copy of the device A (the copies of A and b
/// are made before the timed part).
Fp64Solve fp64_lu_solve(const DeviceSystem& s, double* x, bool timed = false) {
  const int n = s.n;
  cusolverDnHandle_t solver = dense();
  DeviceBuffer<double> lu(elements(n, n));
  copy_device_to_device(lu.data(), s.a.data(), lu.size() * sizeof(double));
  int lwork = 0;
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(solver, n, n, lu.data(), n, &lwork));
  DeviceBuffer<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
  DeviceBuffer<int> ipiv(static_cast<std::size_t>(n));
  DeviceBuffer<int> info(2);
  device_memset(info.data(), 0, 2 * sizeof(int));
  copy_device_to_device(x, s.b.data(), s.b.size() * sizeof(double));
  Fp64Solve out;
  if (timed) device_synchronize();
  const auto t_start = Clock::now();
  TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf(solver, n, n, lu.data(), n, work.data(), ipiv.data(), info.data()));
  if (timed) device_synchronize();
  const auto t_factored = Clock::now();
  TCSOLVE_CUSOLVER_CHECK(
      cusolverDnDgetrs(solver, CUBLAS_OP_N, n, s.nrhs, lu.data(), n, ipiv.data(), x, n, info.data() + 1));
  const std::vector<int> infos = info.download();  // waits for dgetrs
  const auto t_end = Clock::now();
  if (infos[0] < 0 || infos[1] < 0)
    throw CudaError("cusolverDnDgetrf/getrs: invalid argument " +
                    std::to_string(-std::min(infos[0], infos[1])));
  out.info = infos[0];
  if (timed) {
    out.factorization_s = seconds(t_start, t_factored);
    out.solve_s = seconds(t_factored, t_end);
  }
  return out;
}

/// Host copies of the equilibration's scales (the EquilibratedInverse works on the host).
struct HostScales {
  Eigen::VectorXd row, col;
  explicit HostScales(const DeviceLu& f) : row(f.n), col(f.n) {
    copy_to_host(row.data(), f.row_scale.data(), static_cast<std::size_t>(f.n) * sizeof(double));
    copy_to_host(col.data(), f.col_scale.data(), static_cast<std::size_t>(f.n) * sizeof(double));
  }
};

/// The FP64 LU of the equilibrated A_s = R A C on the device (cuSOLVER dgetrf), for the fallback
/// and the condition estimate. The constructor throws InvalidInput for an exactly singular A:
/// rows or columns equal up to sign and a power of two (detail::exact_singularity, on the
/// host's A, before the LU), then dgetrf's info or a non-finite diagonal entry of U.
class DeviceFp64Lu {
 public:
  DeviceFp64Lu(const LinearSystem& sys, const DeviceSystem& s, const DeviceLu& f)
      : n_(s.n), lu_(elements(s.n, s.n)), ipiv_(static_cast<std::size_t>(s.n)), info_(1) {
    if (const auto why = detail::exact_singularity(sys.A)) throw InvalidInput(*why);
    kernels::scale_copy(s.a.data(), n_, f.row_scale.data(), f.col_scale.data(), lu_.data());
    cusolverDnHandle_t solver = dense();
    int lwork = 0;
    TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(solver, n_, n_, lu_.data(), n_, &lwork));
    DeviceBuffer<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
    device_memset(info_.data(), 0, sizeof(int));
    TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrf(solver, n_, n_, lu_.data(), n_, work.data(), ipiv_.data(), info_.data()));
    // The diagonal of U (stride n + 1), read back with the info: a zero pivot (info > 0), or a
    // non-finite one (growth past DBL_MAX), is an exactly singular A to FP64.
    DeviceBuffer<double> diagonal(static_cast<std::size_t>(n_));
    TCSOLVE_CUBLAS_CHECK(cublasDcopy(blas(), n_, lu_.data(), n_ + 1, diagonal.data(), 1));
    const int info = info_.download()[0];
    if (info < 0) throw CudaError("cusolverDnDgetrf: invalid argument " + std::to_string(-info));
    if (info > 0) throw InvalidInput(detail::zero_pivot_message(info - 1));
    const std::vector<double> d = diagonal.download();
    for (int i = 0; i < n_; ++i)
      if (!std::isfinite(d[static_cast<std::size_t>(i)]) || d[static_cast<std::size_t>(i)] == 0)
        throw InvalidInput(detail::zero_pivot_message(i));
  }

  /// W := A_s^-1 W (transpose: A_s^-T W) by dgetrs, through the device.
  void solve(Eigen::MatrixXd& w, bool transpose) {
    const int k = static_cast<int>(w.cols());
    if (rhs_.size() < static_cast<std::size_t>(w.size()))
      rhs_ = DeviceBuffer<double>(static_cast<std::size_t>(w.size()));
    copy_to_device(rhs_.data(), w.data(), static_cast<std::size_t>(w.size()) * sizeof(double));
    TCSOLVE_CUSOLVER_CHECK(cusolverDnDgetrs(dense(), transpose ? CUBLAS_OP_T : CUBLAS_OP_N, n_, k, lu_.data(),
                                            n_, ipiv_.data(), rhs_.data(), n_, info_.data()));
    copy_to_host(w.data(), rhs_.data(), static_cast<std::size_t>(w.size()) * sizeof(double));
  }

  detail::EquilibratedInverse inverse(const HostScales& scales) {
    return detail::EquilibratedInverse(
        scales.row, scales.col, [this](Eigen::MatrixXd& w) { solve(w, false); },
        [this](Eigen::MatrixXd& w) { solve(w, true); });
  }

 private:
  int n_;
  DeviceBuffer<double> lu_;
  DeviceBuffer<int> ipiv_, info_;
  DeviceBuffer<double> rhs_;  ///< the right-hand sides of solve(), grown to the widest call
};

/// The condition estimate's solves with the device FP32 LU (P A_s = L U, row-major, i.e. T =
/// (LU)^T column-major), one host vector at a time: A_s^-1 w = U^-1 L^-1 P w by triangular.cu's
/// lu_solve (the refinement's solve); A_s^-T w = P^T L^-T U^-T w by two cublasStrsm with OP_N on
/// T (U^T is T's lower triangle with the diagonal, L^T its strict upper one with a unit
/// diagonal). w is rounded to FP32 on the host (||w||_inf in [1/2, 1): EquilibratedInverse).
/// A x in FP64 for the resolution check by cublasDgemv.
class DeviceConditionOps {
 public:
  DeviceConditionOps(const DeviceSystem& s, const DeviceLu& f)
      : s_(s),
        f_(f),
        y_(elements(s.n, kMaxColumns)),
        host_(elements(s.n, kMaxColumns)),
        scratch_(kernels::lu_solve_scratch_ints(s.n, kMaxColumns)),
        u_(static_cast<std::size_t>(s.n)),
        au_(static_cast<std::size_t>(s.n)) {}

  detail::EquilibratedInverse inverse(const HostScales& scales) {
    return detail::EquilibratedInverse(
        scales.row, scales.col, [this](Eigen::MatrixXd& w) { solve(w); },
        [this](Eigen::MatrixXd& w) { solve_transpose(w); });
  }

  /// y := A y in FP64 on the device (one column).
  void times_a(Eigen::MatrixXd& y) {
    const int n = s_.n;
    const double one = 1.0, zero = 0.0;
    if (y.cols() != 1) throw InvalidInput("DeviceConditionOps::times_a: one column");
    copy_to_device(u_.data(), y.data(), static_cast<std::size_t>(n) * sizeof(double));
    TCSOLVE_CUBLAS_CHECK(
        cublasDgemv(blas(), CUBLAS_OP_N, n, n, &one, s_.a.data(), n, u_.data(), 1, &zero, au_.data(), 1));
    copy_to_host(y.data(), au_.data(), static_cast<std::size_t>(n) * sizeof(double));
  }

 private:
  /// Most columns per solve (estimate_norm1's first call has two).
  static constexpr int kMaxColumns = 2;

  int columns(const Eigen::MatrixXd& w) const {
    if (w.cols() < 1 || w.cols() > kMaxColumns) throw InvalidInput("DeviceConditionOps: 1 or 2 columns");
    return static_cast<int>(w.cols());
  }

  void solve(Eigen::MatrixXd& w) {
    const int n = s_.n, k = columns(w);
    for (int c = 0; c < k; ++c)
      for (int i = 0; i < n; ++i)
        host_[elements(n, c) + static_cast<std::size_t>(i)] =
            static_cast<float>(w(f_.perm_host[static_cast<std::size_t>(i)], c));
    copy_to_device(y_.data(), host_.data(), elements(n, k) * sizeof(float));
    kernels::lu_solve(f_.lu.data(), n, n, y_.data(), k, scratch_.data());
    copy_to_host(host_.data(), y_.data(), elements(n, k) * sizeof(float));
    for (int c = 0; c < k; ++c)
      for (int i = 0; i < n; ++i) w(i, c) = host_[elements(n, c) + static_cast<std::size_t>(i)];
  }

  void solve_transpose(Eigen::MatrixXd& w) {
    const int n = s_.n, k = columns(w);
    for (int c = 0; c < k; ++c)
      for (int i = 0; i < n; ++i)
        host_[elements(n, c) + static_cast<std::size_t>(i)] = static_cast<float>(w(i, c));
    copy_to_device(y_.data(), host_.data(), elements(n, k) * sizeof(float));
    const float one = 1.0f;
    cublasHandle_t h = blas();
    TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_NON_UNIT, n, k, &one, f_.lu.data(), n, y_.data(), n));
    TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_UNIT, n, k, &one, f_.lu.data(), n, y_.data(), n));
    copy_to_host(host_.data(), y_.data(), elements(n, k) * sizeof(float));
    for (int c = 0; c < k; ++c)
      for (int i = 0; i < n; ++i)
        w(f_.perm_host[static_cast<std::size_t>(i)], c) = host_[elements(n, c) + static_cast<std::size_t>(i)];
  }

  const DeviceSystem& s_;
  const DeviceLu& f_;
  DeviceBuffer<float> y_;
  std::vector<float> host_;
  DeviceBuffer<int> scratch_;
  DeviceBuffer<double> u_, au_;
};

void check_variant(Variant variant) {
  if (!implements(variant))
    throw Unavailable("variant " + std::string(to_string(variant)) +
                      " has no implementation on the cuda backend");
}

}  // namespace

SolveResult solve(const LinearSystem& sys, const SolveOptions& options) {
  require_device("the cuda solver");
  check_variant(options.variant);
  SolveResult res;
  res.backend = Backend::cuda;
  PhaseClock clock;

  auto t = Clock::now();
  const DeviceSystem s = upload(sys);
  double transfer = seconds(t, Clock::now());

  clock.reserve(4 * (static_cast<std::size_t>(s.n) / 16 + 64));  // the LU's marks and the refinement's
  device_synchronize();
  const auto t_start = Clock::now();
  const DeviceLu f = factorize(s, options.variant, options.block_size, options.gemm, clock);
  const auto t_factored = Clock::now();  // factorize() ends with a read-back: the device is idle
  res.resolved_variant = f.resolved;

  std::optional<HostScales> host_scales;  // read back when the fallback or the estimate needs them
  auto scales = [&]() -> const HostScales& {
    if (!host_scales) host_scales.emplace(f);
    return *host_scales;
  };
  DeviceRefinement refinement(s, f, safe_norm(f.norm_a, sys.A, true), options.refinement, clock);
  // The FP64 LU of A_s, made at most once: for the fallback, or for the condition estimate.
  std::optional<DeviceFp64Lu> lu64;
  auto fp64 = [&]() -> DeviceFp64Lu& {
    if (!lu64) lu64.emplace(sys, s, f);
    return *lu64;
  };
  // The fallback's x = C A_s^-1 R b (the scalings on the host), into the iterate buffer.
  auto fallback_solution = [&]() {
    Eigen::MatrixXd x = sys.b;
    fp64().inverse(scales()).apply(x);
    copy_to_device(refinement.x(), x.data(), elements(s.n, s.nrhs) * sizeof(double));
  };

  if (f.zero_pivot >= 0) {
    // Exactly singular, or singular only to FP32 precision: the FP64 LU decides.
    clock.mark("fallback");
    fp64();
    const std::string why = "the FP32 LU hit a zero pivot in column " + std::to_string(f.zero_pivot + 1) +
                            " (singular to FP32 precision)";
    if (options.fallback)
      fallback_solution();
    else
      device_memset(refinement.x(), 0, elements(s.n, s.nrhs) * sizeof(double));
    clock.mark(nullptr);
    const detail::Assessment a = refinement.assess();
    refinement.keep_best();
    res.backward_error = a.backward_error;
    if (options.fallback) {
      res.converged = a.all_done;
      res.fallback_used = true;
      res.note = why + "; FP64 LU fallback used";
    } else {
      res.note = why + "; no fallback: x = 0";
    }
    res.history.push_back(res.backward_error);
  } else {
    refinement.initial_solve();
    detail::refinement_loop(options.max_iterations, refinement, res);
    if (options.refinement == Refinement::gmres)
      res.note += "; GMRES inner iterations: " + std::to_string(refinement.inner_iterations());
    if (!res.converged && options.fallback) {
      clock.mark("fallback");
      fallback_solution();
      clock.mark(nullptr);
      detail::take_fallback(refinement.assess(), res, [&] { refinement.keep_best(); });
    }
  }

  if (options.estimate_condition) {
    clock.mark("condition");
    const detail::ScaledNorm norm1 = norm_1(f.col_sum, sys.A);
    if (!lu64) {
      DeviceConditionOps ops(s, f);
      const detail::ConditionEstimate c = detail::estimate_condition(
          norm1, ops.inverse(scales()), [&ops](Eigen::MatrixXd& y) { ops.times_a(y); });
      if (c.resolved)
        res.condition_estimate = c.estimate;
      else
        res.note += "; condition estimate from an FP64 LU (the FP32 factors do not resolve A^-1)";
    }
    if (!res.condition_estimate) res.condition_estimate = detail::estimate_condition(norm1, fp64().inverse(scales())).estimate;
    clock.mark(nullptr);
  }
  device_synchronize();
  const auto t_end = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);

  t = Clock::now();
  res.x = refinement.best();
  transfer += seconds(t, Clock::now());
  res.time_s.phases.emplace_back("transfer", transfer);
  for (auto& phase : clock.totals()) res.time_s.phases.push_back(std::move(phase));
  if (!f.note.empty()) res.note += "; " + f.note;
  detail::finish_result(sys, res);
  return res;
}

LuFactorization lu_factorize(const Eigen::MatrixXd& A, Variant variant, int block_size,
                             const GemmOptions& gemm) {
  require_device("the cuda LU factorization");
  check_variant(variant);
  LinearSystem sys;
  sys.A = A;
  sys.b = Eigen::MatrixXd::Zero(A.rows(), 1);
  const DeviceSystem s = upload(sys);
  PhaseClock clock;
  const DeviceLu f = factorize(s, variant, block_size, gemm, clock);
  if (f.zero_pivot >= 0) throw InvalidInput(detail::zero_pivot_message(f.zero_pivot));
  LuFactorization out;
  const int n = s.n;
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major(n, n);
  copy_to_host(row_major.data(), f.lu.data(), f.lu.size() * sizeof(float));
  out.lu = row_major;
  out.row_scale.resize(n);
  out.col_scale.resize(n);
  copy_to_host(out.row_scale.data(), f.row_scale.data(), static_cast<std::size_t>(n) * sizeof(double));
  copy_to_host(out.col_scale.data(), f.col_scale.data(), static_cast<std::size_t>(n) * sizeof(double));
  out.perm = f.perm_host;
  out.resolved_variant = f.resolved;
  return out;
}

SolveResult solve_baseline(const LinearSystem& sys, std::string_view method) {
  require_device("baseline " + std::string(method));
  using Gesv = cusolverStatus_t (*)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, double*,
                                    cusolver_int_t, cusolver_int_t*, double*, cusolver_int_t, double*,
                                    cusolver_int_t, void*, size_t, cusolver_int_t*, cusolver_int_t*);
  using GesvBufferSize =
      cusolverStatus_t (*)(cusolverDnHandle_t, cusolver_int_t, cusolver_int_t, double*, cusolver_int_t,
                           cusolver_int_t*, double*, cusolver_int_t, double*, cusolver_int_t, void*, size_t*);
  struct Irs {
    std::string_view method;
    const char* function;
    Gesv gesv;
    GesvBufferSize buffer_size;
  };
  static const Irs kIrs[] = {
      {"cusolver-dsgesv", "cusolverDnDSgesv", cusolverDnDSgesv, cusolverDnDSgesv_bufferSize},
      {"cusolver-dhgesv", "cusolverDnDHgesv", cusolverDnDHgesv, cusolverDnDHgesv_bufferSize},
      {"cusolver-dbgesv", "cusolverDnDBgesv", cusolverDnDBgesv, cusolverDnDBgesv_bufferSize},
      {"cusolver-dxgesv", "cusolverDnDXgesv", cusolverDnDXgesv, cusolverDnDXgesv_bufferSize},
  };

  SolveResult res;
  res.backend = Backend::cuda;
  res.resolved_variant = Variant::fp64;
  auto t = Clock::now();
  const DeviceSystem s = upload(sys);
  double transfer = seconds(t, Clock::now());
  const int n = s.n, nrhs = s.nrhs;
  DeviceBuffer<double> x(elements(n, nrhs));
  std::string what;

  if (method == "cusolver-dgetrf") {
    const Fp64Solve fs = fp64_lu_solve(s, x.data(), true);
    if (fs.info > 0) throw InvalidInput(detail::zero_pivot_message(fs.info - 1));
    res.time_s.factorization = fs.factorization_s;
    res.time_s.refinement = fs.solve_s;
    what = "cuSOLVER FP64 dgetrf + dgetrs";
  } else {
    const Irs* irs = nullptr;
    for (const Irs& candidate : kIrs)
      if (candidate.method == method) irs = &candidate;
    if (!irs) throw InvalidInput("unknown cuda baseline method '" + std::string(method) + "'");
    cusolverDnHandle_t solver = dense();
    DeviceBuffer<double> a(elements(n, n));  // the IRS may overwrite A with its FP64 LU
    copy_device_to_device(a.data(), s.a.data(), a.size() * sizeof(double));
    DeviceBuffer<double> b(elements(n, nrhs));
    copy_device_to_device(b.data(), s.b.data(), b.size() * sizeof(double));
    DeviceBuffer<int> ipiv(static_cast<std::size_t>(n));
    DeviceBuffer<int> info(1);
    device_memset(info.data(), 0, sizeof(int));
    std::size_t bytes = 0;
    TCSOLVE_CUSOLVER_CHECK(irs->buffer_size(solver, n, nrhs, a.data(), n, ipiv.data(), b.data(), n, x.data(),
                                            n, nullptr, &bytes));
    DeviceBuffer<unsigned char> work(std::max<std::size_t>(bytes, 1));
    cusolver_int_t niters = 0;
    device_synchronize();
    const auto t_start = Clock::now();
    const cusolverStatus_t status = irs->gesv(solver, n, nrhs, a.data(), n, ipiv.data(), b.data(), n,
                                              x.data(), n, work.data(), bytes, &niters, info.data());
    device_synchronize();
    const auto t_end = Clock::now();
    const int info_host = info.download()[0];
    if (info_host > 0) throw InvalidInput(detail::zero_pivot_message(info_host - 1));
    if (status == CUSOLVER_STATUS_IRS_MATRIX_SINGULAR)
      throw InvalidInput("matrix is exactly singular (" + std::string(irs->function) + ")");
    cusolver_check(status, irs->function, __FILE__, __LINE__);
    if (info_host < 0)
      throw CudaError(std::string(irs->function) + ": invalid argument " + std::to_string(-info_host));
    res.time_s.factorization = seconds(t_start, t_end);  // one call: factorization and refinement
    res.time_s.refinement = 0;
    res.iterations = niters >= 0 ? niters : 0;
    res.fallback_used = niters < 0;
    what = "cuSOLVER " + std::string(irs->function) + ", niters = " + std::to_string(niters) +
           (niters >= 0     ? " (converged by cuSOLVER's test)"
            : niters == -50 ? " (50 iterations without convergence; FP64 fallback)"
                            : " (refinement not used or failed; FP64 fallback)") +
           "; one call: time_s.factorization holds factorization and refinement";
  }
  res.time_s.total = res.time_s.factorization + res.time_s.refinement;

  DeviceChecker checker(s, norm_inf(s, sys.A));
  const detail::Assessment a = checker.assess(x.data());
  res.backward_error = a.backward_error;
  res.converged = a.all_done;
  res.history.push_back(res.backward_error);
  t = Clock::now();
  res.x.resize(n, nrhs);
  copy_to_host(res.x.data(), x.data(), x.size() * sizeof(double));
  transfer += seconds(t, Clock::now());
  res.forward_error = detail::forward_error(sys, res.x);
  res.time_s.phases.emplace_back("transfer", transfer);
  res.note = what + (res.converged ? "; dsgesv criterion holds" : "; dsgesv criterion does not hold");
  return res;
}

}  // namespace tcsolve::cuda
