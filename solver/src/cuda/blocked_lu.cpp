// The blocked LU of the cuda path (blocked_lu.hpp): the equilibration and a blocked
// right-looking LU of the ROW-MAJOR FP32 A_s, with look-ahead.
//
//   equilibrate  R, C and A_s = fp32(R A C) by kernels (equilibrate.cu), bitwise the cpu's, and
//                ||A||_inf: R, ||A||_inf and the first block's columns first; with look-ahead
//                the rest on the update stream beside the first panel ("equilibrate_rest").
//   LU           per block of w = min(nb, n - j) columns (class BlockedLu below):
//                  panel   recursive (halves, down to leaves of 32 columns): a leaf by the
//                          cluster kernel (panel.cu), which also moves its rows in the block's
//                          other columns, or by cuSOLVER sgetrf and row_swap.cu ("swap"); the
//                          halves joined by
//                          trsm.cu's kernel and FP32 cublasSgemm ("panel_update");
//                  swap    the block's composed interchanges applied once to the columns
//                          outside it ("swap");
//                  trsm    U12 = L11^-1 A12: the next block's columns by trsm.cu's kernel, the
//                          rest by a recursive TRSM (64-column diagonal blocks by trsm_leaf.cu's
//                          kernel or cublasStrsm, CudaLuPlan::trsm_leaves; FP32 cublasSgemm or
//                          the variant between them); with look-ahead, the rest on the update
//                          stream ("trsm_rest");
//                  update  A22 -= L21 U12 through tcsolve::gemm(cuda, variant): the only place
//                          the variant enters (GemmInfo.resolved of the first one is reported);
//                          the next block's columns first, on the panel's stream
//                          ("update_next"), then the rest, which runs on its own SMs while the next
//                          block's panel is factored (look-ahead: lookahead.hpp makes the streams,
//                          lookahead_schedule.hpp holds the hand-over; phases "update_wait" on the
//                          panel's stream and "update" on the update's).
//                The permutation is kept on the device and comes back once, with the zero pivot.
//
// Without look-ahead everything runs on the solve's stream (DeviceRun::stream). With it, the
// panel and the update streams of the context's look-ahead (SolverLibraries::lookahead) wait
// for the solve's stream first, the solver's two cuBLAS handles and cuSOLVER handle are bound
// to them, and the GEMMs run in the look-ahead's GEMM contexts; the LU ends with both streams
// synchronized. The plan (CudaLuPlan) chooses the leaves, the TRSM, the look-ahead, the
// panel's SMs, auto's paths and the phase marks; what the device cannot serve is written
// back into run.plan.
//
// rbt (factorize_rbt): R and C only ("equilibrate"), then A_r = fp32(U^T A_s V) straight from
// the FP64 A (butterfly.cu, "butterfly"), and the same BlockedLu with the leaves by leaf_rbt.cu
// (one CTA searches each pivot in a window of rows, a pass over the rows below; the window's
// interchanges then move as the cuSOLVER leaves' do); without pivoting (window 0) no
// interchanges and no "swap" phase; the growth test reads max|LU| once ("growth").
//
// beam (factorize_beam): the whole A_s first and max|A_s|, then the same BlockedLu in its beam
// mode: per block, the panel's largest |entry| (the threshold), the recursive panel over the
// block's diagonal rows only with the leaves by leaf_beam.cu (one CTA, pivots searched in the
// block's rows, tiny pivots modified and listed; "panel", and "swap" for their moves in the
// block), the joins over those rows, then L21 = A21 U11^-1 below the block ("panel_l21" with
// phases=detail); the permutation, U12, updates and look-ahead as above; then the growth test.
#include "blocked_lu.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../beam_rules.hpp"
#include "../cpu/trsm_leaf.hpp"
#include "../refinement_rules.hpp"
#include "kernels.hpp"
#include "libraries.hpp"
#include "lookahead.hpp"
#include "lookahead_schedule.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/per_device.hpp"

namespace tcsolve::cuda {
namespace {

static_assert(kernels::kMaxBeamWindow == kMaxBeamBlockCuda, "beam's block: one window's rows");
static_assert(kernels::kMaxLeafWidth == detail::kRbtLeafWidth,
              "rbt's windows start at the cpu reference's leaves (butterfly.hpp)");

kernels::LeafCopies leaf_copies(CudaLuPlan::LeafCopies c) {
  switch (c) {
    case CudaLuPlan::LeafCopies::bulk: return kernels::LeafCopies::bulk;
    case CudaLuPlan::LeafCopies::threads: return kernels::LeafCopies::threads;
    case CudaLuPlan::LeafCopies::automatic: break;
  }
  return kernels::LeafCopies::automatic;
}

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
/// Look-ahead (lookahead.hpp; CudaLuPlan::lookahead false: one stream): per block k, on the
/// panel stream: wait for the update of block k - 1, the block's permutation outside it, U12 by
/// TRSM; on the update stream: A22 -= L21 U12 for the next block's columns, then for the rest;
/// the panel stream factors block k + 1 as soon as its columns are updated, while the rest of
/// the update of block k runs beside it on the other SMs.
class BlockedLu {
 public:
  BlockedLu(DeviceRun& run, DeviceLu& f, PhaseClock& clock)
      : run_(run),
        f_(f),
        clock_(clock),
        n_(f.order),
        a_(f.lu.data()),
        ld_(f.order),
        window_(f.rbt ? f.rbt->window : -1),
        beam_(f.beam),
        pivot_(window_ != 0),
        leaf_variant_{run.plan.leaf_chunk, run.plan.leaf_ahead, leaf_copies(run.plan.leaf_copies)},
        // CudaLuPlan::Leaf::tournament: leaf_tournament.cu's leaves where that kernel runs
        tournament_(window_ < 0 && !beam_ && run.plan.leaf == CudaLuPlan::Leaf::tournament &&
                    kernels::tournament_leaf_width(f.order) > 0),
        // CudaLuPlan::Leaf::cusolver: cuSOLVER's leaves even where the cluster kernel runs;
        // rbt: leaf_rbt.cu's leaves of kMaxLeafWidth
        leaf_(window_ >= 0 || tournament_ || beam_
                  ? kernels::kMaxLeafWidth
                  : (run.plan.leaf == CudaLuPlan::Leaf::cusolver ? 0 : kernels::leaf_width(f.order, leaf_variant_))),
        pairs_(kernels::interchange_scratch_ints(kernels::kMaxLeafWidth)),
        infos_(static_cast<std::size_t>(2 + f.order / kernels::kMaxLeafWidth)),
        origin_(pivot_ ? static_cast<std::size_t>(f.order) : 1),
        block_scratch_(pivot_ ? kernels::block_permutation_scratch_ints(f.order) : 1),
        host_(run.plan.host_times),
        detail_(run.plan.phases == CudaLuPlan::Phases::detail),
        plain_trsm_(run.plan.trsm == CudaLuPlan::Trsm::cublas),
        kernel_trsm_(run.plan.trsm == CudaLuPlan::Trsm::kernel),
        leaf_kernel_(run.plan.trsm_leaves == CudaLuPlan::TrsmLeaves::kernel) {
    if (run_.plan.trsm_leaves == CudaLuPlan::TrsmLeaves::automatic)  // (reported)
      run_.plan.trsm_leaves = CudaLuPlan::TrsmLeaves::cublas;
    panel_ = run_.stream;
    device_memset(infos_.data(), 0, infos_.size() * sizeof(int), run_.stream);
    if (beam_) device_memset(beam_count_.data(), 0, sizeof(int), run_.stream);
    std::vector<int> identity(static_cast<std::size_t>(n_));
    for (int i = 0; i < n_; ++i) identity[static_cast<std::size_t>(i)] = i;
    f_.perm = DeviceBuffer<int>(identity.size());
    f_.perm.upload(identity, run_.stream);
    if (run_.plan.leaf == CudaLuPlan::Leaf::tournament && !tournament_ && leaf_ > 0)
      run_.plan.leaf = CudaLuPlan::Leaf::cluster;  // reported: the tournament kernel cannot run for this n
    // leaf_width block: the cluster kernel for the blocks whose rows it holds, even where the
    // first blocks have too many (below: cuSOLVER's buffers for those)
    by_block_ = !tournament_ && window_ < 0 && !beam_ && run.plan.leaf == CudaLuPlan::Leaf::cluster &&
                run.plan.leaf_width == CudaLuPlan::LeafWidth::block;
    if (leaf_ == 0) {
      const int w = std::min(kernels::kMaxLeafWidth, n_);
      leaf_copy_ = DeviceBuffer<float>(elements(n_, w));
      int lwork = 0;
      TCSOLVE_CUSOLVER_CHECK(cusolverDnSgetrf_bufferSize(run_.dense(), n_, w, leaf_copy_.data(), n_, &lwork));
      work_ = DeviceBuffer<float>(static_cast<std::size_t>(std::max(lwork, 1)));
      ipiv_ = DeviceBuffer<int>(static_cast<std::size_t>(w));
      if (by_block_ && kernels::leaf_width(std::min(n_, 16384), leaf_variant_) > 0) {
        f_.note = "panel leaves by cuSOLVER sgetrf in the blocks with more rows than the cluster kernel holds";
      } else {
        f_.note = "panel leaves by cuSOLVER sgetrf";
        run_.plan.leaf = CudaLuPlan::Leaf::cusolver;
        by_block_ = false;
      }
    }
    if (run_.plan.panel_sms == 0) run_.plan.panel_sms = kPanelSmsOneGpu;  // auto (reported)
    // CudaLuPlan::lookahead false: everything on the solve's stream, one step after the other
    if (run_.plan.lookahead && n_ > kernels::kMaxLeafWidth) {
      const SolverLibraries::Lookahead& l = run_.libs.lookahead(run_.plan.panel_sms);
      if (l.streams.unavailable.empty())
        lookahead_ = &l;
      else
        f_.note += (f_.note.empty() ? "" : "; ") + ("no look-ahead: " + l.streams.unavailable);
    }
    if (lookahead_ == nullptr) run_.plan.lookahead = false;
  }

  /// rbt: the tiny-pivot threshold of the leaves.
  void set_tiny(float tiny) { tiny_ = tiny; }
  /// beam: the threshold of a zero block panel's pivots (the cpu's fp32(kBeamThreshold max|A_s|)).
  void set_beam_zero_panel(float tiny) { beam_zero_tiny_ = tiny; }

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
  /// only the FP16 path (DeviceAuto::tf32_needed); tf32_skipped() then says whether one of them
  /// chose TF32, i.e. the factors are wrong and the LU must be done again without.
  void run(int nb, Variant variant, bool fp16_only = false) {
    join_variant_ = variant;
    const bool ahead = lookahead_ != nullptr;
    const cudaStream_t panel = ahead ? lookahead_->streams.panel : run_.stream;
    const cudaStream_t update = ahead ? lookahead_->streams.update : run_.stream;
    // The GEMM contexts: with look-ahead the two streams' (the update's SM budget on both),
    // else the solve's.
    Context& panel_gemm = ahead ? *lookahead_->panel_gemm : run_.ctx;
    if (run_.plan.panel_products == CudaLuPlan::PanelProducts::automatic)  // (reported)
      run_.plan.panel_products = CudaLuPlan::PanelProducts::budget;
    if (ahead) lookahead_->set_panel_products(run_.plan.panel_products == CudaLuPlan::PanelProducts::tiles);
    Context& update_gemm = ahead ? *lookahead_->update_gemm : run_.ctx;
    panel_blas_ = run_.libs.blas(panel);
    panel_dense_ = run_.libs.dense(panel);
    update_blas_ = run_.libs.blas_second(update);
    PhaseClock update_clock(clock_.enabled(), update);
    update_clock.reserve(6 * static_cast<std::size_t>(n_ / std::max(nb, 1) + 2));
    StreamEvent trsm_done, update_done, swap_done, converted, started;
    if (ahead) {  // the look-ahead's streams start after the solve's stream's work so far
      started.record(run_.stream);
      started.wait(panel);
      started.wait(update);
    }
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
      if (ahead)
        update_clock.mark("equilibrate_rest");
      else
        mark("equilibrate");
      kernels::equilibrate_columns(update, convert_from_, n_, f_.row_scale.data(), f_.col_scale.data(), a_,
                                   convert_c0_, ahead ? convert_mid : n_, f_.col_sum.data());
      if (ahead) {
        converted.record(update);
        kernels::equilibrate_columns(update, convert_from_, n_, f_.row_scale.data(), f_.col_scale.data(), a_,
                                     convert_mid, n_, f_.col_sum.data());
        update_clock.mark(nullptr);
      }
    }
    Handover handover;
    HostTimes update_host(run_.plan.host_times);
    bool first_update = true;  // touched by the panel thread only until its first trsm post

    // A22 -= L21 U12 for the columns c.. c + m of the block at j (width w), through the variant.
    auto update_columns = [&](Context& gemm_context, HostTimes& host, int j, int w, int c, int m) {
      const auto timed = host.time(HostTimes::update);
      // auto's choice stays on the device, except in the first call (reported)
      DeviceAuto on_device;
      if (fp16_only_) on_device.tf32_needed = tf32_needed_.data();
      const bool gated = ahead && !first_update;
      const int rest = n_ - j - w;
      const GemmInfo gi = cuda::gemm(gemm_context, variant, Op::n, Op::n, m, rest, w, -1.0f, t(c, j), n_,
                                     t(j, j + w), n_, 1.0f, t(c, j + w), n_, run_.gemm, gated ? &on_device : nullptr);
      if (first_update) {
        f_.resolved = gi.resolved;
        f_.kernels = gi.kernels;
        fp16_only_ = fp16_only && variant == Variant::auto_ && gi.resolved == Variant::ec_fp16;
        if (!gi.note.empty()) f_.note += (f_.note.empty() ? "" : "; ") + ("trailing update: " + gi.note);
        first_update = false;
      }
    };
    // The update stream's work for the block at j (width w), after U12 of the next block's
    // columns and their update (on the panel's path): the rest of U12 and the rest of the update.
    auto update_side = [&](int j, int w) {
      const int rest = n_ - j - w, next = std::min(nb, rest);
      if (ahead) trsm_done.wait(update);
      if (rest > next) {
        {
          const auto timed = update_host.time(HostTimes::trsm);
          if (ahead) update_clock.mark("trsm_rest");
          trsm(update, update_blas_, j, w, j + w + next, rest - next, false, &update_gemm);
          if (ahead) update_clock.mark("update");
        }
        update_columns(update_gemm, update_host, j, w, j + w + next, rest - next);
      }
      if (ahead) {
        update_clock.mark(nullptr);
        update_done.record(update);  // waited for by the next block's permutation
        handover.post(Handover::done, j);
      }
    };
    std::thread update_thread;
    // A new thread starts on device 0 (the runtime's current device is per thread): the update
    // thread takes the caller's, or its workspaces and handles would be made on device 0.
    const int device = tcsolve::cuda::current_device();
    if (ahead)
      update_thread = std::thread([&, device] {
        try {
          TCSOLVE_CUDA_CHECK(cudaSetDevice(device));
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
      panel_ = panel;
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
        if (pivot_) {
          mark("swap");
          const auto timed = host_.time(HostTimes::swap);
          // With look-ahead, only the columns right of the block here; those left of it (L's,
          // which nothing reads before the end) move on the update stream, off the panel's
          // path, before that stream's work for this block (enqueued from this thread before
          // the trsm post below, so in this order) and so before the next block's permutation
          // overwrites the scratch (it waits for update_done).
          // The first block's permutation right of the next block's columns likewise, after the
          // equilibration's columns there (split_first_swap).
          const bool split = j == 0 && split_first_swap && j + w < convert_mid;
          kernels::apply_block_permutation(panel, a_, n_, n_, j, w, origin_.data(), f_.perm.data(),
                                           block_scratch_.data(), /*right_only=*/ahead,
                                           split ? convert_mid : -1);
          if (ahead && (j > 0 || split)) {
            swap_done.record(panel);
            swap_done.wait(update);
            if (split)
              kernels::move_block_permutation_columns(update, a_, n_, n_, j, w, block_scratch_.data(), convert_mid,
                                                      n_);
            else
              kernels::move_block_permutation_left(update, a_, n_, n_, j, w, block_scratch_.data());
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
          trsm(panel, panel_blas_, j, w, j + w, next, /*plain=*/true);
        }
        if (ahead) trsm_done.record(panel);
        mark(ahead ? "update_next" : "update");
        update_columns(panel_gemm, host_, j, w, j + w, next);
        if (ahead)
          handover.post(Handover::trsm, j);  // after the first update_columns (first_update)
        else
          update_side(j, w);
        factor_block(j + w, next);
      }
      mark("pivots");
      const double enqueued = seconds(enqueue_start, Clock::now());
      if (ahead) update_thread.join();
      if (run_.plan.host_times) {  // how long the host took to enqueue the LU
        clock_.add("host_enqueue", enqueued);
        host_.report(clock_, "host_panel_");
        update_host.report(clock_, "host_update_");
      }
      if (ahead) {
        handover.rethrow();
        TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(update));
        TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(panel));
      }
      mark(nullptr);
    }
    clock_.set_stream(run_.stream);
    panel_ = run_.stream;
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
  bool tf32_skipped() { return fp16_only_ && tf32_needed_.download(run_.stream)[0] != 0; }

  /// T(i, j): A_s(j, i).
  float* t(int i, int j) { return a_ + i + elements(j, ld_); }

  /// The distributed LU's panel (BlockPanel): the block of w columns at c0 (rows c0..n-1) of the
  /// row-major a with leading dimension ld (a + r ld + c: A(r, c) for the block's columns c; a may
  /// point before the caller's allocation), on `stream`; origin_ then holds its permutation.
  /// The variant of the joins of factor_external's blocks (CudaLuPlan::joins; fp32_simt, the
  /// default: SGEMM).
  void set_join_variant(Variant v) { join_variant_ = v; }
  void factor_external(cudaStream_t stream, float* a, int ld, int c0, int w) {
    a_ = a;
    ld_ = ld;
    panel_ = stream;
    panel_blas_ = run_.libs.blas(stream);
    panel_dense_ = run_.libs.dense(stream);
    factor_block(c0, w);
  }
  const int* origin() const { return origin_.data(); }
  /// The zero pivot the leaves reported so far (reads the reports back), or -1.
  int zero_pivot() {
    finish_reports();
    return f_.zero_pivot;
  }

 private:
  int leaf_width() const { return block_leaf_ > 0 ? block_leaf_ : std::min(kernels::kMaxLeafWidth, n_); }

  /// The cluster kernel's leaf width for the block at c0 (CudaLuPlan::leaf_width), 0: cuSOLVER's
  /// leaves; the rbt and tournament leaves keep theirs.
  int block_leaf(int c0) const {
    if (!by_block_) return leaf_;
    const int w = kernels::leaf_width(n_ - c0, leaf_variant_);
    return w == 0 ? leaf_ : w;  // fewer rows than n: never narrower than leaf_ (cuSOLVER's need leaf_ 0)
  }

  /// The block of w columns at c0 (rows c0..n-1), its interchanges inside it only.
  void factor_block(int c0, int w) {
    mark("panel");  // leaves and joins; CudaLuPlan::Phases::detail tells them apart
    block_lo_ = c0;
    block_hi_ = c0 + w;
    block_leaf_ = block_leaf(c0);
    if (pivot_) {
      const auto timed = host_.time(HostTimes::swap);
      kernels::reset_origin(panel_, origin_.data(), c0, n_);
    }
    if (beam_)  // the block's threshold: its panel's largest |entry|, rows c0..n-1 (the cpu's)
      kernels::block_max_abs(panel_, a_, ld_, c0, n_, c0, w, beam_max_.data());
    factor_columns(c0, w);
    if (beam_ && c0 + w < n_) {  // the rows below the diagonal block: L21 = A21 U11^-1
      if (detail_) mark("panel_l21");
      const auto timed = host_.time(HostTimes::join);
      l21(c0, w, c0 + w, n_ - c0 - w);
    }
  }

  /// The rows the block's panel factors: all below it, or (beam) its diagonal block's.
  int row_end() const { return beam_ ? block_hi_ : n_; }

  /// beam: L21 = A21 U11^-1 for the rows x0.. x0 + rows of the block of w columns at c0; in T's
  /// terms U11^T X = T(c0.., x0..), U11^T lower triangular, non-unit (w x w): halves of it
  /// recursively, the off-diagonal product through join_variant_ where the plan's
  /// trsm_products says (else SGEMM), diagonal blocks of kTrsmLeaf by trsm_leaf.cu's kernel
  /// (CudaLuPlan::trsm_leaves) or cublasStrsm.
  void l21(int c0, int w, int x0, int rows) {
    const float one = 1.0f, minus_one = -1.0f;
    if (w <= kTrsmLeaf) {
      if (!leaf_kernel_ || !kernels::trsm_leaf_left_lower(panel_, t(c0, c0), ld_, t(c0, x0), ld_, w, rows))
        TCSOLVE_CUBLAS_CHECK(cublasStrsm(panel_blas_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                         CUBLAS_DIAG_NON_UNIT, w, rows, &one, t(c0, c0), ld_, t(c0, x0), ld_));
      return;
    }
    const int w1 = (w / 2 + 31) / 32 * 32, w2 = w - w1;
    l21(c0, w1, x0, rows);
    // X2 = L22^-1 (B2 - L21 X1): T(c0 + w1.., c0..) is w2 x w1, X1 = T(c0.., x0..) w1 x rows
    if (by_variant(run_.plan.trsm_products, w1, rows)) {
      Context& ctx = lookahead_ != nullptr && panel_ == lookahead_->streams.panel ? *lookahead_->join_gemm : run_.ctx;
      variant_product(ctx, w2, rows, w1, t(c0 + w1, c0), ld_, t(c0, x0), ld_, t(c0 + w1, x0), ld_);
    } else {
      TCSOLVE_CUBLAS_CHECK(cublasSgemm(panel_blas_, CUBLAS_OP_N, CUBLAS_OP_N, w2, rows, w1, &minus_one,
                                       t(c0 + w1, c0), ld_, t(c0, x0), ld_, &one, t(c0 + w1, x0), ld_));
    }
    l21(c0 + w1, w2, x0, rows);
  }

  /// Whether a product inside the panel (`choice`: CudaLuPlan::joins) or inside U12's TRSM
  /// (CudaLuPlan::trsm_products) with inner size w1 and `rows` rows goes through join_variant_
  /// (else cublasSgemm).
  bool by_variant(CudaLuPlan::Joins choice, int w1, int rows) const {
    if (join_variant_ == Variant::fp32_simt || w1 < kJoinVariantMinK) return false;
    switch (choice) {
      case CudaLuPlan::Joins::sgemm: return false;
      case CudaLuPlan::Joins::variant: return true;
      case CudaLuPlan::Joins::automatic: return rows >= kJoinVariantMinRows;
    }
    return false;
  }
  /// A product through join_variant_ with auto's FP16/TF32 choice gated on the device as the
  /// trailing updates' (fp16_only_: the FP16 path alone, a TF32 choice flagged for the redo).
  void variant_product(Context& ctx, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                       float* c, int ldc) {
    DeviceAuto on_device;
    if (fp16_only_) on_device.tf32_needed = tf32_needed_.data();
    cuda::gemm(ctx, join_variant_, Op::n, Op::n, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc, run_.gemm, &on_device);
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
      if (plain_trsm_ || !kernels::trsm_lower_unit(panel_, t(c0, c0), t(c0 + w1, c0), ld_, w1, w2))
        TCSOLVE_CUBLAS_CHECK(cublasStrsm(panel_blas_, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                         CUBLAS_DIAG_UNIT, w2, w1, &one, t(c0, c0), ld_, t(c0 + w1, c0), ld_));
      const int rows = row_end() - c0 - w1;
      if (by_variant(run_.plan.joins, w1, rows)) {  // on the tensor cores (CudaLuPlan::joins)
        Context& ctx = lookahead_ != nullptr && panel_ == lookahead_->streams.panel ? *lookahead_->join_gemm : run_.ctx;
        variant_product(ctx, w2, rows, w1, t(c0 + w1, c0), ld_, t(c0, c0 + w1), ld_, t(c0 + w1, c0 + w1), ld_);
      } else {
        TCSOLVE_CUBLAS_CHECK(cublasSgemm(panel_blas_, CUBLAS_OP_N, CUBLAS_OP_N, w2, rows, w1, &minus_one,
                                         t(c0 + w1, c0), ld_, t(c0, c0 + w1), ld_, &one, t(c0 + w1, c0 + w1),
                                         ld_));
      }
    }
    factor_columns(c0 + w1, w2);
  }

  /// U12 = L11^-1 A12 for the block of w columns at j: in T's terms X U = B with U = T(j.., j..)
  /// upper unit triangular (w x w) and X = T(x0.., j..) (rows x rows, w columns), recursively:
  /// halves of U, the off-diagonal part by SGEMM, so that most flops run in SGEMM rather than
  /// in cublasStrsm (about 10 TFLOP/s on these shapes). (An inverse of L11 times an SGEMM, as
  /// MAGMA does, measured no faster here and left a 5x larger LU residual: docs/benchmark-history.md.)
  ///
  /// `plain` (U12 of the next block's columns, on the panel's path): one call of trsm.cu's kernel
  /// (in A_s's terms L11^-1 A12, row-major), 44 us where cublasStrsm took 150 (launches and
  /// internal steps, not flops, set the time at 512 x 512); CudaLuPlan::Trsm::kernel: the rest
  /// too, CudaLuPlan::Trsm::cublas: one cublasStrsm per part (to compare). On `stream`, with the
  /// handle `h` bound to it.
  /// `products` (not null: the rest of U12, on the update stream): the context of the
  /// recursion's products through join_variant_ (CudaLuPlan::trsm_products), where they run.
  void trsm(cudaStream_t stream, cublasHandle_t h, int j, int w, int x0, int rows, bool plain = false,
            Context* products = nullptr) {
    const float one = 1.0f, minus_one = -1.0f;
    if ((plain || kernel_trsm_) && !plain_trsm_ &&
        kernels::trsm_lower_unit(stream, t(j, j), t(x0, j), n_, w, rows))
      return;
    if (w <= kTrsmLeaf || plain_trsm_ || plain) {
      // trsm_leaves kernel: the recursion's diagonal blocks (not trsm = cublas's one call)
      const bool leaf = w <= kTrsmLeaf && !plain_trsm_ && leaf_kernel_;
      if (!leaf || !kernels::trsm_leaf_right_upper_unit(stream, t(j, j), n_, t(x0, j), n_, rows, w))
        TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                         CUBLAS_DIAG_UNIT, rows, w, &one, t(j, j), n_, t(x0, j), n_));
      return;
    }
    const int w1 = (w / 2 + 31) / 32 * 32, w2 = w - w1;
    trsm(stream, h, j, w1, x0, rows, false, products);
    // X2 U22 = B2 - X1 U12
    if (products != nullptr && by_variant(run_.plan.trsm_products, w1, rows)) {
      variant_product(*products, rows, w2, w1, t(x0, j), n_, t(j, j + w1), n_, t(x0, j + w1), n_);
    } else {
      TCSOLVE_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, rows, w2, w1, &minus_one, t(x0, j), n_,
                                       t(j, j + w1), n_, &one, t(x0, j + w1), n_));
    }
    trsm(stream, h, j + w1, w2, x0, rows, false, products);
  }

  /// Reads the pivots and the zero-pivot reports back (the device is idle afterwards).
  void finish() {
    f_.perm_host = f_.perm.download(run_.stream);
    finish_reports();
    if (beam_) {  // the modifications, in the order the leaves made them (by column)
      const int count = beam_count_.download(run_.stream)[0];
      const std::size_t kept = static_cast<std::size_t>(std::min(count, n_));
      std::vector<int> columns(kept);
      std::vector<double> deltas(kept);
      copy_to_host(columns.data(), beam_columns_.data(), kept * sizeof(int), run_.stream);
      copy_to_host(deltas.data(), beam_deltas_.data(), kept * sizeof(double), run_.stream);
      f_.modifications.clear();
      for (std::size_t i = 0; i < kept; ++i) f_.modifications.push_back({columns[i], deltas[i]});
      std::sort(f_.modifications.begin(), f_.modifications.end(),
                [](const DeviceLu::Modification& x, const DeviceLu::Modification& y) { return x.column < y.column; });
    }
  }

  /// The leaves' zero-pivot reports into f_.zero_pivot (reads them back on run_.stream).
  void finish_reports() {
    const std::vector<int> infos = infos_.download(run_.stream);
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
    if (beam_) {  // one CTA over the diagonal block's rows from c0; its moves in the block's other columns
      {
        const auto timed = host_.time(HostTimes::leaf);
        kernels::factor_beam_window(panel_, a_, ld_, c0, w, block_hi_ - c0, beam_max_.data(), kBeamThreshold,
                                    beam_zero_tiny_, pairs_.data(), infos_.data(),
                                    {beam_count_.data(), beam_columns_.data(), beam_deltas_.data(), n_});
      }
      if (detail_) mark("swap");
      const auto timed = host_.time(HostTimes::swap);
      kernels::apply_row_pairs_in_block(panel_, a_, ld_, c0, w, block_lo_, block_hi_, pairs_.data(), origin_.data());
      return;
    }
    if (window_ >= 0) {  // rbt: the window's search only; a tiny pivot is reported in infos_[0]
      {
        const auto timed = host_.time(HostTimes::leaf);
        kernels::factor_rbt_window(panel_, a_, ld_, n_, c0, w, window_, tiny_, pairs_.data(), infos_.data());
        if (detail_) mark("panel_below");
        kernels::factor_rbt_below(panel_, a_, ld_, n_, c0, w, window_);
      }
      if (window_ == 0) return;
      if (detail_) mark("swap");
      const auto timed = host_.time(HostTimes::swap);
      kernels::apply_row_pairs_in_block(panel_, a_, ld_, c0, w, block_lo_, block_hi_, pairs_.data(), origin_.data());
      return;
    }
    if (tournament_) {  // like the cluster kernel, with tournament pivoting
      const auto timed = host_.time(HostTimes::leaf);
      kernels::factor_leaf_tournament(panel_, a_, ld_, n_, c0, w, pairs_.data(), infos_.data(), block_lo_, block_hi_,
                                      origin_.data());
      return;
    }
    if (block_leaf_ > 0) {  // the cluster kernel, which also moves the rows in the block's other columns
      const auto timed = host_.time(HostTimes::leaf);
      kernels::factor_leaf(panel_, leaf_variant_, block_leaf_, a_, ld_, n_, c0, w, pairs_.data(), infos_.data(), block_lo_,
                           block_hi_, origin_.data());
      return;
    }
    // cuSOLVER: the leaf's rows c0..n-1 are T's columns: transposed to a column-major m x w
    // copy, factored, transposed back; sgetrf's ipiv composed into pairs, applied in the block.
    const int m = n_ - c0;
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t h = panel_blas_;
    TCSOLVE_CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, w, &one, t(c0, c0), ld_, &zero,
                                     leaf_copy_.data(), m, leaf_copy_.data(), m));
    TCSOLVE_CUSOLVER_CHECK(cusolverDnSgetrf(panel_dense_, m, w, leaf_copy_.data(), m, work_.data(), ipiv_.data(),
                                            infos_.data() + 1 + c0 / kernels::kMaxLeafWidth));
    TCSOLVE_CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, w, m, &one, leaf_copy_.data(), m, &zero,
                                     t(c0, c0), ld_, t(c0, c0), ld_));
    kernels::compose_interchanges(panel_, ipiv_.data(), c0, w, n_, pairs_.data());
    if (detail_) mark("swap");
    const auto timed = host_.time(HostTimes::swap);
    kernels::apply_row_pairs_in_block(panel_, a_, ld_, c0, w, block_lo_, block_hi_, pairs_.data(), origin_.data());
  }

  void mark(const char* next) {
    const auto timed = host_.time(HostTimes::marks);
    clock_.mark(next);
  }

  /// Widest diagonal block where trsm() and l21() end (trsm_leaf.cu's or cublasStrsm's).
  static constexpr int kTrsmLeaf = 64;
  static_assert(kTrsmLeaf <= cpu::kTrsmLeafMaxWidth, "the leaf kernel serves every diagonal block");
  /// CudaLuPlan::panel_sms auto on one GPU.
  static constexpr int kPanelSmsOneGpu = 16;

  DeviceRun& run_;
  DeviceLu& f_;
  PhaseClock& clock_;
  int n_;
  float* a_;
  int ld_;  ///< a_'s leading dimension: n_, or factor_external's
  int window_;  ///< rbt: its pivot window (0: no pivoting); -1: partial pivoting (not rbt)
  bool beam_;   ///< beam's in-block pivoting (DeviceLu::beam)
  bool pivot_;  ///< rows are interchanged (partial pivoting, or rbt's windowed pivoting)
  float tiny_ = 0;  ///< rbt: a pivot not above this in magnitude is reported
  kernels::LeafVariant leaf_variant_;  ///< CudaLuPlan::leaf_chunk, leaf_ahead
  bool tournament_;  ///< the leaves by leaf_tournament.cu (CudaLuPlan::Leaf::tournament, where it runs)
  int leaf_;  ///< the cluster kernel's leaf width for n rows, 0: cuSOLVER leaves of kMaxLeafWidth
  int block_leaf_ = 0;  ///< the current block's (block_leaf())
  bool by_block_ = false;  ///< CudaLuPlan::LeafWidth::block with the cluster kernel
  DeviceBuffer<int> pairs_;
  DeviceBuffer<int> infos_;          ///< [0]: the cluster kernel's zero pivot; [1 + c0 / 32]: sgetrf's info
  DeviceBuffer<int> origin_;         ///< the block's composed interchanges (row_swap.cu)
  DeviceBuffer<int> block_scratch_;  ///< apply_block_permutation's scratch
  int block_lo_ = 0, block_hi_ = 0;  ///< the block being factored
  DeviceBuffer<float> leaf_copy_, work_;  ///< cuSOLVER leaves: the column-major copy, sgetrf's work
  DeviceBuffer<int> ipiv_;
  const SolverLibraries::Lookahead* lookahead_ = nullptr;  ///< null: one stream (the solve's)
  cudaStream_t panel_ = nullptr;  ///< the panel's stream while run() enqueues, else the solve's
  cublasHandle_t panel_blas_ = nullptr, update_blas_ = nullptr;  ///< bound to the panel's, update's stream
  cusolverDnHandle_t panel_dense_ = nullptr;                     ///< bound to the panel's stream
  HostTimes host_;
  /// CudaLuPlan::Phases::detail: phase marks around every leaf and join ("panel",
  /// "panel_update"; about 1000 events at n = 16384, which cost the GPU about 1.5 ms), else one
  /// "panel" phase per block.
  bool detail_;
  /// CudaLuPlan::Trsm::cublas: U12 and the joins' solves by one cublasStrsm each (to compare).
  bool plain_trsm_;
  /// CudaLuPlan::Trsm::kernel: the rest of U12 by trsm.cu's kernel too.
  bool kernel_trsm_;
  /// CudaLuPlan::TrsmLeaves::kernel: the recursive TRSMs' diagonal blocks by trsm_leaf.cu.
  bool leaf_kernel_;
  bool fp16_only_ = false;           ///< run()'s fp16_only, once the first update chose FP16
  Variant join_variant_ = Variant::fp32_simt;  ///< the joins' variant (CudaLuPlan::joins): run()'s
  DeviceBuffer<int> tf32_needed_{std::vector<int>{0}};  ///< set by an update that chose TF32 (fp16_only_)
  const double* convert_from_ = nullptr;  ///< convert_rest()'s A (null: A_s is complete)
  // beam: the block panel's largest |entry| (bits), the zero panel's threshold, the modifications
  // (allocated for beam only: nothing is copied for the other pivotings)
  DeviceBuffer<unsigned> beam_max_{beam_ ? 1u : 0u};  ///< set by block_max_abs per block
  float beam_zero_tiny_ = 0;
  DeviceBuffer<int> beam_count_{beam_ ? 1u : 0u};  ///< zeroed by the constructor
  DeviceBuffer<int> beam_columns_{static_cast<std::size_t>(beam_ ? n_ : 0)};
  DeviceBuffer<double> beam_deltas_{static_cast<std::size_t>(beam_ ? n_ : 0)};
  int convert_c0_ = 0;
};

/// A DeviceLu of order n with its LU, R, C and column sums allocated (not set); `resolved` the
/// requested variant (what is reported when no trailing update runs, n <= nb).
DeviceLu allocated_lu(int n, Variant variant) {
  DeviceLu f;
  f.n = n;
  f.order = n;
  f.lu = DeviceBuffer<float>(elements(n, n));
  f.row_scale = DeviceBuffer<double>(static_cast<std::size_t>(n));
  f.col_scale = DeviceBuffer<double>(static_cast<std::size_t>(n));
  f.col_sum = DeviceBuffer<double>(static_cast<std::size_t>(n));
  f.resolved = variant;
  return f;
}

/// The plan's trsv = inverse: the diagonal blocks' inverses for the solves (phase "inverses").
void prepare_solves(DeviceRun& run, DeviceLu& f, PhaseClock& clock) {
  if (run.plan.trsv != CudaLuPlan::Trsv::inverse || f.zero_pivot >= 0) return;  // no inverse of a zero pivot
  clock.mark("inverses");
  f.inverses = DeviceBuffer<float>(kernels::lu_block_inverse_floats(f.order));
  kernels::lu_block_inverses(run.stream, f.lu.data(), f.order, f.order, f.inverses.data());
  clock.mark(nullptr);
}

}  // namespace

struct BlockPanel::Impl {
  DeviceLu f;
  BlockedLu lu;
  Impl(DeviceRun& run, int n, PhaseClock& clock) : f(shell(n)), lu(run, f, clock) {}
  static DeviceLu shell(int n) {
    DeviceLu f;
    f.n = n;
    f.order = n;
    return f;
  }
};
BlockPanel::BlockPanel(DeviceRun& run, int n, PhaseClock& clock) : impl_(std::make_unique<Impl>(run, n, clock)) {}
BlockPanel::~BlockPanel() = default;
void BlockPanel::set_join_variant(Variant v) { impl_->lu.set_join_variant(v); }
void BlockPanel::factor(cudaStream_t stream, float* a, int ld, int c0, int w) {
  impl_->lu.factor_external(stream, a, ld, c0, w);
}
const int* BlockPanel::origin() const { return impl_->lu.origin(); }
int BlockPanel::zero_pivot() { return impl_->lu.zero_pivot(); }
std::string BlockPanel::note() const { return impl_->f.note; }

DeviceLu factorize(DeviceRun& run, const DeviceSystem& s, Variant variant, int block_size, PhaseClock& clock) {
  // auto: the updates after the first launch their FP16 path only (the first chose FP16; its
  // TF32 split and kernel, gated off on the device, cost 20-60 us a call); should one of them
  // choose TF32 after all, the LU is done again with both paths (CudaLuPlan::AutoPaths::both:
  // always both, to compare). The factors are the same either way.
  const bool fp16_only = variant == Variant::auto_ && run.plan.auto_paths != CudaLuPlan::AutoPaths::both;
  const bool retry = run.plan.auto_paths == CudaLuPlan::AutoPaths::retry;  // tests: as if TF32 were chosen
  for (int attempt = 0;; ++attempt) {
    const int n = s.n;
    DeviceLu f = allocated_lu(n, variant);

    // The row scales, ||A||_inf and the first block's columns of A_s here; the rest of A_s
    // beside the first panel (BlockedLu::run(); 2.9 ms of equilibration at n = 16384 were
    // on the panel's path before, session 6).
    const int nb = std::max(block_size, 1), first = std::min(nb, n);
    clock.mark("equilibrate");
    {
      DeviceBuffer<double> workspace(kernels::equilibrate_workspace_doubles(n));
      DeviceBuffer<double> norm(1);
      kernels::equilibrate_rows(run.stream, s.a.data(), n, f.row_scale.data(), norm.data(), workspace.data());
      kernels::equilibrate_columns(run.stream, s.a.data(), n, f.row_scale.data(), f.col_scale.data(),
                                   f.lu.data(), 0, first, f.col_sum.data());
      f.norm_a = norm.download(run.stream)[0];
    }
    clock.mark(nullptr);

    BlockedLu lu(run, f, clock);
    lu.convert_rest(s.a.data(), first);
    lu.run(nb, variant, fp16_only && attempt == 0);
    if (!lu.tf32_skipped() && !(retry && attempt == 0)) {
      if (attempt > 0)
        f.note += (f.note.empty() ? "" : "; ") +
                  std::string("auto: a trailing update chose TF32, factorization repeated with both paths");
      prepare_solves(run, f, clock);
      return f;
    }
  }
}

double pivot_span(const DeviceRun& run, const DeviceLu& f) {
  const int m = f.order;
  if (m == 0) return 1;
  DeviceBuffer<float> diagonal(static_cast<std::size_t>(m));
  TCSOLVE_CUBLAS_CHECK(cublasScopy(run.blas(), m, f.lu.data(), m + 1, diagonal.data(), 1));
  const std::vector<float> d = diagonal.download(run.stream);
  return detail::pivot_span(Eigen::Map<const Eigen::VectorXf>(d.data(), m));
}

DeviceLu equilibrate(DeviceRun& run, const DeviceSystem& s, PhaseClock& clock) {
  const int n = s.n;
  DeviceLu f;
  f.n = n;
  f.order = n;
  f.row_scale = DeviceBuffer<double>(static_cast<std::size_t>(n));
  f.col_scale = DeviceBuffer<double>(static_cast<std::size_t>(n));
  f.col_sum = DeviceBuffer<double>(static_cast<std::size_t>(n));
  f.resolved = Variant::fp64;
  clock.mark("equilibrate");
  DeviceBuffer<double> workspace(kernels::equilibrate_workspace_doubles(n));
  DeviceBuffer<double> norm(1);
  kernels::equilibrate_rows(run.stream, s.a.data(), n, f.row_scale.data(), norm.data(), workspace.data());
  kernels::equilibrate_columns(run.stream, s.a.data(), n, f.row_scale.data(), f.col_scale.data(), nullptr, 0, n,
                               f.col_sum.data());
  f.norm_a = norm.download(run.stream)[0];
  clock.mark(nullptr);
  f.perm_host.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) f.perm_host[static_cast<std::size_t>(i)] = i;
  return f;
}

DeviceLu factorize_rbt(DeviceRun& run, const DeviceSystem& s, Variant variant, int block_size, std::uint64_t seed,
                       int window, PhaseClock& clock) {
  const bool fp16_only = variant == Variant::auto_ && run.plan.auto_paths != CudaLuPlan::AutoPaths::both;
  const bool retry = run.plan.auto_paths == CudaLuPlan::AutoPaths::retry;
  for (int attempt = 0;; ++attempt) {
    const int n = s.n;
    DeviceLu f = equilibrate(run, s, clock);  // R, C, the column sums, ||A||_inf
    f.perm_host.clear();
    f.rbt.emplace(n, seed, window, run.stream);
    const int p = f.rbt->u.padded();
    f.order = p;
    f.lu = DeviceBuffer<float>(elements(p, p));
    f.resolved = variant;
    DeviceBuffer<unsigned> max_bits(1);
    clock.mark("butterfly");
    const DeviceButterflies& b = *f.rbt;
    kernels::butterfly_matrix(run.stream, s.a.data(), n, p, f.row_scale.data(), f.col_scale.data(), b.u_outer.data(),
                              b.u_inner.data(), b.v_outer.data(), b.v_inner.data(), f.lu.data(), max_bits.data());
    clock.mark(nullptr);
    const unsigned bits = max_bits.download(run.stream)[0];
    float a_max = 0;
    std::memcpy(&a_max, &bits, sizeof a_max);
    BlockedLu lu(run, f, clock);
    // the cpu's threshold: fp32(kRbtTinyPivot max|A_r|), max|A_r| of the FP32 values (rounding is
    // monotonic and the factor a power of two: the same float)
    lu.set_tiny(static_cast<float>(detail::kRbtTinyPivot * a_max));
    lu.run(std::max(block_size, 1), variant, fp16_only && attempt == 0);
    if (lu.tf32_skipped() || (retry && attempt == 0)) continue;
    if (attempt > 0)
      f.note += (f.note.empty() ? "" : "; ") +
                std::string("auto: a trailing update chose TF32, factorization repeated with both paths");
    clock.mark("growth");
    double growth = 0;
    if (f.zero_pivot < 0) {
      kernels::max_abs(run.stream, f.lu.data(), f.lu.size(), max_bits.data());
      const unsigned lu_bits = max_bits.download(run.stream)[0];
      float lu_max = 0;
      std::memcpy(&lu_max, &lu_bits, sizeof lu_max);
      growth = static_cast<double>(lu_max) / static_cast<double>(a_max);
    }
    clock.mark(nullptr);
    f.breakdown = detail::rbt_breakdown(f.zero_pivot, growth);
    if (f.breakdown.empty()) prepare_solves(run, f, clock);
    return f;
  }
}

DeviceLu factorize_beam(DeviceRun& run, const DeviceSystem& s, Variant variant, int block_size, PhaseClock& clock) {
  const int nb = std::max(block_size, 1);
  if (nb > kernels::kMaxBeamWindow)
    throw InvalidInput("pivoting beam on a GPU takes a block size of at most " +
                       std::to_string(kernels::kMaxBeamWindow) + ", got " + std::to_string(nb));
  const bool fp16_only = variant == Variant::auto_ && run.plan.auto_paths != CudaLuPlan::AutoPaths::both;
  const bool retry = run.plan.auto_paths == CudaLuPlan::AutoPaths::retry;
  for (int attempt = 0;; ++attempt) {
    const int n = s.n;
    DeviceLu f = allocated_lu(n, variant);
    f.beam = true;
    DeviceBuffer<unsigned> max_bits(1);
    clock.mark("equilibrate");
    {
      DeviceBuffer<double> workspace(kernels::equilibrate_workspace_doubles(n));
      DeviceBuffer<double> norm(1);
      kernels::equilibrate_rows(run.stream, s.a.data(), n, f.row_scale.data(), norm.data(), workspace.data());
      kernels::equilibrate_columns(run.stream, s.a.data(), n, f.row_scale.data(), f.col_scale.data(), f.lu.data(), 0,
                                   n, f.col_sum.data());
      kernels::max_abs(run.stream, f.lu.data(), f.lu.size(), max_bits.data());
      f.norm_a = norm.download(run.stream)[0];
    }
    clock.mark(nullptr);
    float a_max = 0;
    {
      const unsigned bits = max_bits.download(run.stream)[0];
      std::memcpy(&a_max, &bits, sizeof a_max);
    }
    BlockedLu lu(run, f, clock);
    // the cpu's zero-panel threshold: fp32(kBeamThreshold max|A_s|)
    lu.set_beam_zero_panel(static_cast<float>(kBeamThreshold * static_cast<double>(a_max)));
    lu.run(nb, variant, fp16_only && attempt == 0);
    if (lu.tf32_skipped() || (retry && attempt == 0)) continue;
    if (attempt > 0)
      f.note += (f.note.empty() ? "" : "; ") +
                std::string("auto: a trailing update chose TF32, factorization repeated with both paths");
    clock.mark("growth");
    if (f.zero_pivot < 0) {
      kernels::max_abs(run.stream, f.lu.data(), f.lu.size(), max_bits.data());
      const unsigned lu_bits = max_bits.download(run.stream)[0];
      float lu_max = 0;
      std::memcpy(&lu_max, &lu_bits, sizeof lu_max);
      f.growth = a_max > 0 ? static_cast<double>(lu_max) / static_cast<double>(a_max) : 0.0;
    }
    clock.mark(nullptr);
    f.breakdown = detail::beam_breakdown(f.zero_pivot, f.growth, f.modifications.size());
    if (f.breakdown.empty()) prepare_solves(run, f, clock);
    return f;
  }
}

}  // namespace tcsolve::cuda
