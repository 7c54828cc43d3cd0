// The distributed LU on GPU members (distributed_lu_cuda.hpp says what it does): the steps of one
// block on one member, the broadcasts over NCCL, the look-ahead's two streams.
#include "distributed_lu_cuda.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "blocked_lu.hpp"
#include "distributed_kernels.hpp"
#include "kernels.hpp"
#include "lookahead_schedule.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

void distributed_lu(DeviceRun& run, runtime::Communicator& comm, DeviceFactors& f, Variant variant,
                    PhaseClock& clock, const std::function<void(CUstream_st*)>& convert_rest) {
  const int n = f.n, nb = f.nb, q = f.member, ldt = f.ldt, lc = f.local;
  // Kernels first used on the panel's path, loaded before any broadcast is in flight (a module
  // loaded lazily while a broadcast waited for the other member hung both: session 28).
  kernels::trsm_lower_unit_load();
  const CyclicMap& cols = f.cols;
  float* t = f.t.data();
  // CudaLuPlan::panel_sms auto on GPU members: 24 (each updates its share of the columns only)
  if (run.plan.panel_sms == 0) run.plan.panel_sms = 24;
  run.plan.trsm_leaves = CudaLuPlan::TrsmLeaves::cublas;  // U12's recursion ends in cublasStrsm here (reported)
  BlockPanel panel(run, n, clock);
  panel.set_join_variant(variant);
  f.note = panel.note();
  const SolverLibraries::Lookahead* ahead = nullptr;
  if (run.plan.lookahead && n > nb) {
    const SolverLibraries::Lookahead& l = run.libs.lookahead(run.plan.panel_sms);
    if (l.streams.unavailable.empty())
      ahead = &l;
    else
      f.note += (f.note.empty() ? "" : "; ") + ("no look-ahead: " + l.streams.unavailable);
  }
  if (ahead == nullptr) run.plan.lookahead = false;
  const cudaStream_t ps = ahead ? ahead->streams.panel : run.stream;
  const cudaStream_t us = ahead ? ahead->streams.update : run.stream;
  Context& panel_gemm = ahead ? *ahead->panel_gemm : run.ctx;
  if (run.plan.panel_products == CudaLuPlan::PanelProducts::automatic)  // (reported)
    run.plan.panel_products = CudaLuPlan::PanelProducts::tiles;
  if (ahead) ahead->set_panel_products(run.plan.panel_products == CudaLuPlan::PanelProducts::tiles);
  Context& update_gemm = ahead ? *ahead->update_gemm : run.ctx;
  cublasHandle_t panel_blas = run.libs.blas(ps);
  cublasHandle_t update_blas = ahead ? run.libs.blas_second(us) : panel_blas;
  PhaseClock update_clock(clock.enabled(), us);

  // The panels and their interchanges, three of each (panel k in slot k % 3: the update stream
  // may still read panel k - 1 while panel k + 1 is written, see the loop), the moves of two
  // blocks (k % 2), the row moves' scratch and rows.
  const int w_max = std::min(nb, n);
  DeviceBuffer<float> panels[3] = {DeviceBuffer<float>(static_cast<std::size_t>(n) * w_max),
                                   DeviceBuffer<float>(static_cast<std::size_t>(n) * w_max),
                                   DeviceBuffer<float>(static_cast<std::size_t>(n) * w_max)};
  DeviceBuffer<int> origins[3] = {DeviceBuffer<int>(static_cast<std::size_t>(n)),
                                  DeviceBuffer<int>(static_cast<std::size_t>(n)),
                                  DeviceBuffer<int>(static_cast<std::size_t>(n))};
  DeviceBuffer<int> moves[2] = {DeviceBuffer<int>(kernels::block_moves_ints(w_max)),
                                DeviceBuffer<int>(kernels::block_moves_ints(w_max))};
  DeviceBuffer<float> moved(static_cast<std::size_t>(2) * w_max * std::max(lc, 1)),
      moved_next(static_cast<std::size_t>(2) * w_max * w_max);
  // CudaLuPlan::member_share: the panel stream's part of an update, its row moves' scratch
  const int share_percent = run.plan.member_share;
  DeviceBuffer<float> moved_share(share_percent > 0 ? static_cast<std::size_t>(2) * w_max * std::max(lc, 1) : 1);
  {
    std::vector<int> identity(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) identity[static_cast<std::size_t>(i)] = i;
    f.perm = DeviceBuffer<int>(identity.size());
    f.perm.upload(identity, run.stream);
  }
  // update_done[k % 3]: the update stream's work of block k done; ahead_ready: the columns of
  // block k + 2 updated with panel k (the first thing the update stream does for block k after
  // its row moves), which is all the panel stream needs before block k + 1's step.
  StreamEvent started, moved_event, ahead_ready;
  StreamEvent update_done[3];
  // The diagonal blocks' inverses (DeviceFactors::inverses), from the identity by cublasStrsm.
  {
    std::size_t mine = 0;
    f.inverse_index.assign(static_cast<std::size_t>((n + nb - 1) / nb), -1);
    for (int j = 0; j < n; j += nb)
      if (cols.owner(j) == q) f.inverse_index[static_cast<std::size_t>(j / nb)] = static_cast<int>(mine++);
    f.inverses = DeviceBuffer<float>(std::max<std::size_t>(mine, 1) * 2 * w_max * w_max);
  }
  DeviceBuffer<float> identity(static_cast<std::size_t>(w_max) * w_max);
  {
    std::vector<float> id(static_cast<std::size_t>(w_max) * w_max, 0.0f);
    for (int i = 0; i < w_max; ++i) id[static_cast<std::size_t>(i) * w_max + i] = 1.0f;
    identity.upload(id, run.stream);
  }
  // On the panel stream (after the block's panel: stream order), while another member factors the
  // next panel: X = (L11^T)^-1 and Y = (U11^T)^-1 of the column-major view of the row-major
  // diagonal block (L11^T upper unit, U11^T lower). Later row moves leave the block's rows alone.
  // (On the update stream, before session 26, they waited there for the next panel.)
  auto invert = [&](int j, int w) {
    float* x = f.inverses.data() + static_cast<std::size_t>(f.inverse_index[static_cast<std::size_t>(j / nb)]) * 2 * w_max * w_max;
    float* y = x + static_cast<std::size_t>(w_max) * w_max;
    const float* diagonal = t + static_cast<std::size_t>(j) * ldt + cols.local(j);
    const float one = 1.0f;
    for (float* m : {x, y})
      TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(m, static_cast<std::size_t>(w) * sizeof(float), identity.data(),
                                           static_cast<std::size_t>(w_max) * sizeof(float), static_cast<std::size_t>(w) * sizeof(float),
                                           static_cast<std::size_t>(w), cudaMemcpyDeviceToDevice, ps));
    TCSOLVE_CUBLAS_CHECK(cublasStrsm(panel_blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_UNIT, w, w, &one, diagonal, ldt, x, w));
    TCSOLVE_CUBLAS_CHECK(cublasStrsm(panel_blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_NON_UNIT, w, w, &one, diagonal, ldt, y, w));
  };
  int pending_invert = -1;  // the block whose panel this member factored last, not yet inverted
  auto invert_pending = [&] {
    if (pending_invert < 0) return;
    clock.mark("inverses");
    invert(pending_invert, std::min(nb, n - pending_invert));
    pending_invert = -1;
  };
  if (ahead) {
    started.record(run.stream);
    started.wait(ps);
    started.wait(us);
  }
  clock.set_stream(ps);
  if (convert_rest) {  // A_s's other columns, beside the first panel
    if (ahead) update_clock.mark("equilibrate_rest");
    convert_rest(us);
    if (ahead) update_clock.mark(nullptr);
  }

  // beam: each block's diagonal block factored alone (a BlockPanel of its rows only, kept for its
  // zero-pivot report at the end), the identity as the origin of the rows below it.
  std::vector<std::unique_ptr<BlockPanel>> diagonal;
  DeviceBuffer<int> identity_rows;
  if (f.beam) {
    std::vector<int> rows(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = i;
    identity_rows = DeviceBuffer<int>(rows.size());
    identity_rows.upload(rows, run.stream);
  }
  // The owner's panel of block j (width w) factored in place and copied out to panels[slot],
  // its interchanges to origins[slot] (rows j..n-1).
  auto factor_and_copy = [&](int j, int w, int slot) {
    const int l0 = cols.local(j);
    clock.mark("panel");
    if (f.beam) {
      // the diagonal block's LU with its pivots searched in its own rows; then L21 = A21 U11^-1
      // (in the column-major view of the row-major block, U11^T X = A21^T: lower, non-unit)
      diagonal.push_back(std::make_unique<BlockPanel>(run, j + w, clock));
      diagonal.back()->factor(ps, t + l0 - j, ldt, j, w);
      if (n - j - w > 0) {
        const float one = 1.0f;
        TCSOLVE_CUBLAS_CHECK(cublasStrsm(panel_blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                         CUBLAS_DIAG_NON_UNIT, w, n - j - w, &one,
                                         t + static_cast<std::size_t>(j) * ldt + l0, ldt,
                                         t + static_cast<std::size_t>(j + w) * ldt + l0, ldt));
      }
      clock.mark("copy");
      copy_device_to_device(origins[slot].data(), diagonal.back()->origin() + j, static_cast<std::size_t>(w) * sizeof(int), ps);
      if (n - j - w > 0)
        copy_device_to_device(origins[slot].data() + w, identity_rows.data() + j + w,
                              static_cast<std::size_t>(n - j - w) * sizeof(int), ps);
      TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(panels[slot].data(), static_cast<std::size_t>(w) * sizeof(float),
                                           t + static_cast<std::size_t>(j) * ldt + l0, static_cast<std::size_t>(ldt) * sizeof(float),
                                           static_cast<std::size_t>(w) * sizeof(float), static_cast<std::size_t>(n - j),
                                           cudaMemcpyDeviceToDevice, ps));
      return;
    }
    panel.factor(ps, t + l0 - j, ldt, j, w);
    clock.mark("copy");
    TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(panels[slot].data(), static_cast<std::size_t>(w) * sizeof(float),
                                         t + static_cast<std::size_t>(j) * ldt + l0, static_cast<std::size_t>(ldt) * sizeof(float),
                                         static_cast<std::size_t>(w) * sizeof(float), static_cast<std::size_t>(n - j),
                                         cudaMemcpyDeviceToDevice, ps));
    copy_device_to_device(origins[slot].data(), panel.origin() + j, static_cast<std::size_t>(n - j) * sizeof(int), ps);
  };
  bool first_update = true;
  DeviceAuto on_device;
  // X U = B in place for X = x (m x w, leading dimension ldt) with U the unit upper w x w
  // triangle at u (leading dimension ldu): by halves of U down to 64 columns (cublasStrsm), the
  // off-diagonal parts by a product (the single GPU's recursive TRSM, blocked_lu.cpp): SGEMM, or
  // the variant with CudaLuPlan::trsm_products variant. automatic is SGEMM here: on 2 x H200 at n
  // = 65536 the variant's products made the update stream 809 ms a GPU against SGEMM's 763 (and
  // one cublasStrsm per update, before session 25, 790-820).
  std::function<void(Context&, cublasHandle_t, const float*, int, int, float*, int)> trsm =
      [&](Context& ctx, cublasHandle_t h, const float* u, int ldu, int w, float* x, int m) {
        const float one = 1.0f, minus_one = -1.0f;
        if (w <= 64 || run.plan.trsm == CudaLuPlan::Trsm::cublas) {
          TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                           CUBLAS_DIAG_UNIT, m, w, &one, u, ldu, x, ldt));
          return;
        }
        const int w1 = (w / 2 + 31) / 32 * 32, w2 = w - w1;
        trsm(ctx, h, u, ldu, w1, x, m);
        const float* u12 = u + static_cast<std::size_t>(w1) * ldu;
        float* x2 = x + static_cast<std::size_t>(w1) * ldt;
        const bool by_variant = variant != Variant::fp32_simt && w1 >= kJoinVariantMinK &&
                                run.plan.trsm_products == CudaLuPlan::Joins::variant;
        if (by_variant)
          cuda::gemm(ctx, variant, Op::n, Op::n, m, w2, w1, -1.0f, x, ldt, u12, ldu, 1.0f, x2, ldt, run.gemm,
                     first_update ? nullptr : &on_device);
        else
          TCSOLVE_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, w2, w1, &minus_one, x, ldt, u12, ldu,
                                           &one, x2, ldt));
        trsm(ctx, h, u12 + w1, ldu, w2, x2, m);
      };
  // A22 -= L21 U12 for the local columns [c, c + m) of block j (width w), panel in `p`, on
  // `stream` (h and ctx bound to it). `next`: the next block's columns, on the panel's path,
  // where CudaLuPlan::Trsm::mixed solves U12 by trsm.cu's kernel in one launch (as on one GPU;
  // the recursion's 16 cublasStrsm calls of 64 columns and its SGEMMs are launch-bound at nb =
  // 1024), as Trsm::kernel does everywhere.
  auto update = [&](cudaStream_t stream, Context& ctx, cublasHandle_t h, const float* p, int j, int w, int c, int m,
                    bool next) {
    if (m <= 0) return;
    // U12 = L11^-1 A12: in T's terms (T = A^T, column-major) X U = B, U = the panel's T(0..w, 0..w);
    // in A's (row-major) L11 at p (leading dimension w) and A12 at x (leading dimension ldt)
    float* x = t + c + static_cast<std::size_t>(j) * ldt;
    const bool by_kernel = run.plan.trsm == CudaLuPlan::Trsm::kernel || (next && run.plan.trsm == CudaLuPlan::Trsm::mixed);
    if (!by_kernel || !kernels::trsm_lower_unit(stream, p, w, x, ldt, w, m)) trsm(ctx, h, p, w, w, x, m);
    const int rest = n - j - w;
    if (rest <= 0) return;
    const GemmInfo gi = cuda::gemm(ctx, variant, Op::n, Op::n, m, rest, w, -1.0f,
                                   t + c + static_cast<std::size_t>(j) * ldt, ldt, p + static_cast<std::size_t>(w) * w, w,
                                   1.0f, t + c + static_cast<std::size_t>(j + w) * ldt, ldt, run.gemm,
                                   first_update ? nullptr : &on_device);
    if (first_update) {
      f.resolved = gi.resolved;
      if (!gi.note.empty()) f.note += (f.note.empty() ? "" : "; ") + ("trailing update: " + gi.note);
      first_update = false;
    }
  };

  if (cols.owner(0) == q) {
    factor_and_copy(0, std::min(nb, n), 0);
    pending_invert = 0;
  }
  // With look-ahead the panel stream runs up to a block ahead of the update stream: before block
  // k's broadcast it waits for block k - 2's update (panel k + 1 is written to the slot panel
  // k - 2 had, moves[k % 2] was block k - 2's), and before block k + 1's rows move for block
  // k's updates only for ahead_ready of block k - 1 (those columns updated with panel k - 1), not
  // for the rest of block k - 1's update.
  for (int j = 0, k = 0; j < n; j += nb, ++k) {
    const int w = std::min(nb, n - j), slot = k % 3, owner = cols.owner(j);
    const bool mine = owner == q;
    int* block_moves_scratch = moves[k % 2].data();
    if (ahead && k >= 2) {
      clock.mark("update_wait");
      update_done[(k - 2) % 3].wait(ps);
    }
    clock.mark("bcast");
    comm.broadcast(panels[slot].data(), static_cast<std::size_t>(n - j) * w * sizeof(float), owner, ps);
    comm.broadcast(origins[slot].data(), static_cast<std::size_t>(n - j) * sizeof(int), owner, ps);
    clock.mark("swap");
    kernels::block_moves(ps, origins[slot].data() - j, j, n, w, f.perm.data(), block_moves_scratch);
    const int l0 = mine ? cols.local(j) : 0;
    const kernels::Columns panel_cols = mine ? kernels::Columns{l0, l0 + w} : kernels::Columns{};
    if (j + w >= n) {
      if (ahead && k >= 1) {  // `moved` is the update stream's scratch: its last block done first
        clock.mark("update_wait");
        update_done[(k - 1) % 3].wait(ps);
        clock.mark("swap");
      }
      kernels::move_rows(ps, t, ldt, {0, lc}, panel_cols, block_moves_scratch, w, moved.data());
      invert_pending();
      break;
    }
    // The trailing columns of this member; the next block's first when it owns it.
    const int next = j + w, next_w = std::min(nb, n - next);
    const bool owns_next = cols.owner(next) == q;
    const int c0 = cols.first_at_or_after(next, q);
    const float* p = panels[slot].data();
    // The rows move in the next block's columns here, on the panel's path (after block k - 1's
    // update of those columns: ahead_ready); in the others (L's columns, the rest of the trailing
    // ones) on the update stream, before the rest of the update.
    if (ahead && k >= 1 && owns_next) {
      clock.mark("update_wait");
      ahead_ready.wait(ps);
      clock.mark("swap");
    }
    const kernels::Columns next_cols = owns_next ? kernels::Columns{c0, c0 + next_w} : kernels::Columns{};
    kernels::move_rows(ps, t, ldt, next_cols, {}, block_moves_scratch, w, moved_next.data());
    if (ahead) {  // the rest of the swap and of the update may start
      moved_event.record(ps);
      moved_event.wait(us);
    }
    invert_pending();  // (with two or more members the next panel is another's: this stream idles)
    if (owns_next) {
      clock.mark("update_next");
      update(ps, panel_gemm, panel_blas, p, j, w, c0, next_w, true);
      factor_and_copy(next, next_w, (k + 1) % 3);
    }
    clock.mark(nullptr);
    const int r0 = c0 + (owns_next ? next_w : 0);
    // skip: the panel's columns (moved by its leaves) and the next block's (moved above); when
    // both are this member's they are adjacent (a 1 x 1 grid)
    const kernels::Columns skip = mine && owns_next ? kernels::Columns{l0, c0 + next_w}
                                  : mine            ? panel_cols
                                                    : next_cols;
    // block k + 2's columns first (the panel stream's next wait), then the rest
    const int after = next + next_w;
    const int first_w = after < n && cols.owner(after) == q ? std::min(nb, n - after) : 0;
    // CudaLuPlan::member_share: while another member factors the next panel, this member's panel
    // stream (otherwise idle until that panel arrives) takes the last `share` columns of the
    // update: after the update stream's work of block k - 1 (those columns' previous update), and
    // before block k + 1's row moves on the update stream (which wait for the panel stream's
    // moved_event of block k + 1, recorded after this).
    const int rest_cols = std::max(0, lc - r0 - first_w);
    const int share = ahead && !owns_next ? rest_cols * share_percent / 100 : 0;
    if (ahead) update_clock.mark("swap_rest");
    kernels::move_rows(us, t, ldt, {0, lc - share}, skip, block_moves_scratch, w, moved.data());
    update(us, update_gemm, update_blas, p, j, w, r0, std::min(first_w, lc - r0), false);
    if (ahead) ahead_ready.record(us);
    update(us, update_gemm, update_blas, p, j, w, r0 + first_w, rest_cols - share, false);
    if (ahead) {
      update_clock.mark(nullptr);
      update_done[slot].record(us);
    }
    if (share > 0) {
      if (k >= 1) {
        clock.mark("update_wait");
        update_done[(k - 1) % 3].wait(ps);
      }
      clock.mark("update_share");
      kernels::move_rows(ps, t, ldt, {lc - share, lc}, {}, block_moves_scratch, w, moved_share.data());
      update(ps, panel_gemm, panel_blas, p, j, w, lc - share, share, false);
      clock.mark(nullptr);
    }
    if (owns_next) pending_invert = next;
  }
  clock.mark(nullptr);
  if (ahead) {
    TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(us));
    TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(ps));
  }
  clock.set_stream(run.stream);
  for (auto& phase : update_clock.totals()) clock.add(phase.first, phase.second);
  f.perm_host = f.perm.download(run.stream);
  // The first zero pivot over the members (each saw its own panels'): agreed.
  int mine = panel.zero_pivot();
  for (auto& d : diagonal) {  // beam: the first exact zero pivot of the diagonal blocks
    const int z = d->zero_pivot();
    if (z >= 0 && (mine < 0 || z < mine)) mine = z;
  }
  const double worst = comm.max(mine >= 0 ? static_cast<double>(n - mine) : 0.0, run.stream);
  f.zero_pivot = worst > 0 ? n - static_cast<int>(worst) : -1;
}

}  // namespace tcsolve::cuda
