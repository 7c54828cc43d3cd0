// One GPU member's part of the distributed solve (distributed/device_piece.hpp): the piece of A
// on the device and its equilibration, the LU (distributed_lu_cuda.hpp), A x by cublasDgemm and
// an NCCL sum, and the triangular solves with the distributed factors: per block of columns its
// owner solves the diagonal block (through its inverse) and either the members' products for
// each block's rows are summed when it is reached (fan-in, CudaLuPlan::member_sweeps) or the
// owner updates the rest of the vector (cublasSgemv) and broadcasts it (NCCL), so every member
// ends with the same bits; the FP64 LU and its solves (distributed_lu64_cuda.hpp) when the solve
// asks for them.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../distributed/device_piece.hpp"
#include "device_run.hpp"
#include "device_system.hpp"
#include "distributed_kernels.hpp"
#include "distributed_lu64_cuda.hpp"
#include "distributed_lu_cuda.hpp"
#include "lookahead_schedule.hpp"
#include "phase_clock.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/generate.hpp"

namespace tcsolve::distributed {
namespace {

using cuda::DeviceBuffer;
using cuda::copy_device_to_device;
using cuda::copy_to_device;
using cuda::copy_to_host;
using cuda::device_memset;
namespace kernels = cuda::kernels;

class CudaPiece final : public DevicePiece {
 public:
  CudaPiece(cuda::Context& ctx, runtime::Communicator& comm, const Grid& grid, const Descriptor& desc, const double* A,
            PieceSource source, std::uint64_t seed, const SolveOptions& options, double& upload_s)
      : run_(ctx, options.cuda_plan, options.gemm),
        comm_(comm),
        clock_(run_.plan.phases != CudaLuPlan::Phases::off, run_.stream),
        n_(desc.n) {
    f_.n = n_;
    f_.nb = desc.nb;
    f_.cols = desc.cols(grid);
    f_.member = grid.col_of(comm.rank());
    f_.local = f_.cols.count(f_.member);
    f_.ldt = cuda::factors_ld(f_.local);
    const int lc = f_.local;
    const std::size_t n = static_cast<std::size_t>(n_);
    // A's piece, column-major n x lc (leading dimension n)
    const auto t0 = Clock::now();
    a_ = DeviceBuffer<double>(n * std::max(lc, 1));
    if (source == PieceSource::generated) {
      kernels::random_columns(run_.stream, seed, n_, f_.nb, f_.member, grid.cols, lc, a_.data(), n_);
      const Eigen::MatrixXd x = random_x_true(n_, 1, seed);
      DeviceBuffer<double> xd(n), bd(n);
      copy_to_device(xd.data(), x.data(), n * sizeof(double), run_.stream);
      kernels::random_rhs(run_.stream, seed, n_, xd.data(), bd.data());
      rhs_.resize(n_, 1);
      copy_to_host(rhs_.data(), bd.data(), n * sizeof(double), run_.stream);
    } else if (source == PieceSource::host_whole) {  // each local block column is contiguous in A
      for (int l0 = 0; l0 < lc; l0 += f_.nb) {
        const int w = std::min(f_.nb, lc - l0), g0 = f_.cols.global(l0, f_.member);
        TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(a_.data() + static_cast<std::size_t>(l0) * n, A + static_cast<std::size_t>(g0) * n,
                                           n * w * sizeof(double), cudaMemcpyHostToDevice, run_.stream));
      }
    } else if (lc > 0) {
      TCSOLVE_CUDA_CHECK(cudaMemcpy2DAsync(a_.data(), n * sizeof(double), A, static_cast<std::size_t>(desc.lld) * sizeof(double),
                                           n * sizeof(double), static_cast<std::size_t>(lc),
                                           source == PieceSource::device_piece ? cudaMemcpyDeviceToDevice
                                                                               : cudaMemcpyHostToDevice,
                                           run_.stream));
    }
    run_.synchronize();
    upload_s = seconds(t0, Clock::now());

    // The equilibration: the row pass here (R and ||A||_inf need every member's rows), the
    // column pass (C, the column norms and A_s in t) of this member's first block here too (its
    // first panel or update_next reads it), of its other columns on the LU's update stream beside
    // the first panel (convert_rest, as the one-GPU LU's "equilibrate_rest"); C and ||A||_1 are
    // gathered after the LU (gather_columns).
    clock_.mark("equilibrate");
    DeviceBuffer<double> row_max(n), row_sum(n);
    row_scale_ = DeviceBuffer<double>(n);
    kernels::piece_row_max_sum(run_.stream, a_.data(), n_, n_, lc, row_max.data(), row_sum.data());
    comm_.allreduce_max(row_max.data(), n, runtime::Element::f64, run_.stream);
    comm_.allreduce_sum(row_sum.data(), n, runtime::Element::f64, run_.stream);
    kernels::row_scales(run_.stream, row_max.data(), n_, row_scale_.data());
    width_ = static_cast<std::size_t>(std::max(f_.cols.count(0), 1));  // the most local columns
    col_ = DeviceBuffer<double>(3 * width_);
    device_memset(col_.data(), 0, col_.size() * sizeof(double), run_.stream);
    f_.t = DeviceBuffer<float>(n * static_cast<std::size_t>(f_.ldt));
    converted_ = std::min(f_.nb, lc);
    convert(run_.stream, 0, converted_);
    clock_.mark(nullptr);
    // R and ||A||_inf from the reduced rows
    const std::vector<double> r = row_scale_.download(run_.stream), sums = row_sum.download(run_.stream);
    scales_.row = Eigen::Map<const Eigen::VectorXd>(r.data(), n_);
    double inf = 0;
    for (double s : sums) inf = std::max(inf, s);
    norm_inf_ = detail::scaled_norm(inf);
  }

  const Scales& scales() const override { return scales_; }
  detail::ScaledNorm norm_inf() const override { return norm_inf_; }
  detail::ScaledNorm norm_1() const override { return norm_1_; }
  detail::ScaledNorm norm_1_s() const override { return norm_1_s_; }
  Variant resolved() const override { return f_.resolved; }
  std::string note() const override { return f_.note; }
  CudaLuPlan plan() const override { return run_.plan; }
  std::vector<std::pair<std::string, double>> phases() override {
    std::vector<std::pair<std::string, double>> p = clock_.totals();
    p.emplace_back("residual", residual_s_);  // A x, host-timed (the refinement's and the estimate's)
    p.emplace_back("solves", solves_s_);      // the triangular sweeps, host-timed
    return p;
  }

  int factorize(Variant variant, bool beam) override {
    if (factored_) {  // A_s again in t from the FP64 piece (the first LU overwrote it)
      DeviceBuffer<double> row(static_cast<std::size_t>(n_)), col(3 * static_cast<std::size_t>(std::max(f_.cols.count(0), 1)));
      copy_to_device(row.data(), scales_.row.data(), static_cast<std::size_t>(n_) * sizeof(double), run_.stream);
      const std::size_t width = static_cast<std::size_t>(std::max(f_.cols.count(0), 1));
      kernels::piece_columns(run_.stream, a_.data(), n_, n_, f_.local, row.data(), col.data(), col.data() + width,
                             col.data() + 2 * width, f_.t.data(), f_.ldt);
      run_.synchronize();
    }
    factored_ = true;
    f_.beam = beam;
    const int from = converted_;
    converted_ = f_.local;
    cuda::distributed_lu(run_, comm_, f_, variant, clock_, [this, from](cudaStream_t us) { convert(us, from, f_.local); });
    gather_columns();
    return f_.zero_pivot;
  }

  int factorize64(bool release_fp32) override {
    if (f64_) return zero64_;
    if (!gathered_) {  // no FP32 LU before (fp64_below): the column pass's rest here
      clock_.mark("equilibrate");
      convert(run_.stream, converted_, f_.local);
      converted_ = f_.local;
      clock_.mark(nullptr);
      gather_columns();
    }
    const int lc = f_.local;
    const std::size_t n = static_cast<std::size_t>(n_);
    const std::size_t need = n * std::max<std::size_t>(lc, 1) * sizeof(double) + cuda::lu64_workspace_bytes(n_, f_.nb);
    const std::size_t margin = std::size_t{1} << 30;  // cuBLAS's, cuSOLVER's and NCCL's workspaces
    runtime::agreed(&comm_, [&] {
      if (need + margin > cuda::device_memory().free && release_fp32 && f_.t.size() > 0) {
        f_.t = DeviceBuffer<float>();
        f_.inverses = DeviceBuffer<float>();
        fp32_released_ = true;
      }
      const std::size_t free = cuda::device_memory().free;
      if (need + margin > free)
        throw Unavailable("the FP64 LU needs " + std::to_string(need) + " bytes on member " +
                          std::to_string(f_.member) + "'s GPU beside A (and 1 GiB for workspaces); " +
                          std::to_string(free) + " are free there: use more GPUs");
    });
    clock_.mark("fp64_lu");
    cuda::DeviceFactors64 f;
    f.n = n_;
    f.nb = f_.nb;
    f.cols = f_.cols;
    f.member = f_.member;
    f.local = lc;
    f.a = DeviceBuffer<double>(n * std::max(lc, 1));
    {
      DeviceBuffer<double> row(n), col(static_cast<std::size_t>(std::max(lc, 1)));
      std::vector<double> c(static_cast<std::size_t>(std::max(lc, 1)), 1.0);
      for (int j = 0; j < lc; ++j) c[static_cast<std::size_t>(j)] = scales_.col[f_.cols.global(j, f_.member)];
      copy_to_device(row.data(), scales_.row.data(), n * sizeof(double), run_.stream);
      copy_to_device(col.data(), c.data(), c.size() * sizeof(double), run_.stream);
      kernels::scaled_piece(run_.stream, a_.data(), n_, n_, lc, row.data(), col.data(), f.a.data(), n_);
      zero64_ = cuda::distributed_lu64(run_, comm_, f);  // synchronizes before the buffers go
    }
    clock_.mark(nullptr);
    f64_ = std::make_unique<cuda::DeviceFactors64>(std::move(f));
    return zero64_;
  }

  void solve64(Eigen::MatrixXd& w, bool transpose) override {
    const auto t0 = Clock::now();
    const std::vector<int>& perm = f64_->perm_host;
    std::vector<double> y(static_cast<std::size_t>(n_));
    if (v64_.size() < y.size()) v64_ = DeviceBuffer<double>(y.size());
    for (Eigen::Index c = 0; c < w.cols(); ++c) {
      for (int i = 0; i < n_; ++i) y[static_cast<std::size_t>(i)] = w(transpose ? i : perm[static_cast<std::size_t>(i)], c);
      copy_to_device(v64_.data(), y.data(), y.size() * sizeof(double), run_.stream);
      cuda::solve_lu64(run_, comm_, *f64_, v64_.data(), transpose);
      copy_to_host(y.data(), v64_.data(), y.size() * sizeof(double), run_.stream);
      for (int i = 0; i < n_; ++i) w(transpose ? perm[static_cast<std::size_t>(i)] : i, c) = y[static_cast<std::size_t>(i)];
    }
    solves_s_ += seconds(t0, Clock::now());
  }

  Eigen::MatrixXd generated_rhs() override { return rhs_; }

  double pivot_span(bool fp64) override {
    // this member's diagonal entries (a strided cuBLAS copy per owned block into one buffer, read
    // back at once), then the span over the members
    const std::size_t n = static_cast<std::size_t>(n_);
    const std::size_t count = static_cast<std::size_t>(std::max(f_.local, 1));
    DeviceBuffer<double> d64(fp64 ? count : 1);
    DeviceBuffer<float> d32(fp64 ? 1 : count);
    for (int l0 = 0; l0 < f_.local; l0 += f_.nb) {
      const int w = std::min(f_.nb, f_.local - l0), g0 = f_.cols.global(l0, f_.member);
      if (fp64)
        TCSOLVE_CUBLAS_CHECK(cublasDcopy(run_.blas(), w, f64_->a.data() + static_cast<std::size_t>(l0) * n + g0,
                                         n_ + 1, d64.data() + l0, 1));
      else
        TCSOLVE_CUBLAS_CHECK(cublasScopy(run_.blas(), w, f_.t.data() + static_cast<std::size_t>(g0) * f_.ldt + l0,
                                         f_.ldt + 1, d32.data() + l0, 1));
    }
    std::vector<double> d(static_cast<std::size_t>(f_.local));
    if (fp64) {
      copy_to_host(d.data(), d64.data(), d.size() * sizeof(double), run_.stream);
    } else {
      std::vector<float> s(d.size());
      copy_to_host(s.data(), d32.data(), s.size() * sizeof(float), run_.stream);
      for (std::size_t i = 0; i < s.size(); ++i) d[i] = s[i];
    }
    double low = std::numeric_limits<double>::infinity(), high = 0;
    for (const double v : d) {
      low = std::min(low, std::abs(v));
      high = std::max(high, std::abs(v));
    }
    high = comm_.max(high, run_.stream);
    low = -comm_.max(-low, run_.stream);
    return high / low;
  }

  void local_lines(bool rows, const std::vector<int>& lines, std::vector<double>& out) override {
    // rows: this member's columns of each (a strided cuBLAS copy each); columns: whole on their
    // owner; gathered in one device buffer and read back at once
    const std::size_t n = static_cast<std::size_t>(n_), lc = static_cast<std::size_t>(f_.local);
    out.assign(lines.size() * n, 0.0);
    const std::size_t width = rows ? lc : n;
    if (width == 0 || lines.empty()) return;
    DeviceBuffer<double> gathered(lines.size() * width);
    std::vector<bool> held(lines.size(), rows);
    for (std::size_t k = 0; k < lines.size(); ++k) {
      const int line = lines[k];
      if (rows) {
        TCSOLVE_CUBLAS_CHECK(cublasDcopy(run_.blas(), f_.local, a_.data() + line, n_, gathered.data() + k * width, 1));
      } else if (f_.cols.owner(line) == f_.member) {
        held[k] = true;
        copy_device_to_device(gathered.data() + k * width, a_.data() + static_cast<std::size_t>(f_.cols.local(line)) * n,
                              n * sizeof(double), run_.stream);
      }
    }
    std::vector<double> host(lines.size() * width);
    copy_to_host(host.data(), gathered.data(), host.size() * sizeof(double), run_.stream);
    for (std::size_t k = 0; k < lines.size(); ++k) {
      if (!held[k]) continue;
      if (rows)
        for (std::size_t l = 0; l < lc; ++l)
          out[k * n + static_cast<std::size_t>(f_.cols.global(static_cast<int>(l), f_.member))] = host[k * width + l];
      else
        std::copy(host.begin() + static_cast<std::ptrdiff_t>(k * width),
                  host.begin() + static_cast<std::ptrdiff_t>((k + 1) * width), out.begin() + static_cast<std::ptrdiff_t>(k * n));
    }
  }

  std::function<std::pair<std::vector<double>, std::vector<double>>()> sampled_lines(
      const std::vector<int>& positions) override {
    struct Gathered {
      DeviceBuffer<int> positions;
      DeviceBuffer<double> samples;  ///< the columns p_k (c n), then the rows p_k (c n)
      cudaEvent_t ready = nullptr;
      ~Gathered() {
        if (ready) cudaEventDestroy(ready);
      }
    };
    const std::size_t n = static_cast<std::size_t>(n_), count = positions.size() * n;
    auto g = std::make_shared<Gathered>();
    g->positions = DeviceBuffer<int>(std::max<std::size_t>(positions.size(), 1));
    copy_to_device(g->positions.data(), positions.data(), positions.size() * sizeof(int), run_.stream);
    g->samples = DeviceBuffer<double>(std::max<std::size_t>(2 * count, 1));
    device_memset(g->samples.data(), 0, 2 * count * sizeof(double), run_.stream);
    kernels::piece_samples(run_.stream, a_.data(), n_, n_, f_.local, f_.nb, f_.member, comm_.size(), g->positions.data(),
                           static_cast<int>(positions.size()), g->samples.data(), g->samples.data() + count);
    comm_.allreduce_sum(g->samples.data(), 2 * count, runtime::Element::f64, run_.stream);
    TCSOLVE_CUDA_CHECK(cudaEventCreateWithFlags(&g->ready, cudaEventDisableTiming));
    TCSOLVE_CUDA_CHECK(cudaEventRecord(g->ready, run_.stream));
    const int device = run_.ctx.device();
    return [g, count, device] {
      cuda::ThreadStream own(device);
      own.after(g->ready);
      return own.halves(g->samples.data(), count);
    };
  }

  void sum_over_members(std::vector<double>& v) override {
    DeviceBuffer<double> d(std::max<std::size_t>(v.size(), 1));
    copy_to_device(d.data(), v.data(), v.size() * sizeof(double), run_.stream);
    comm_.allreduce_sum(d.data(), v.size(), runtime::Element::f64, run_.stream);
    copy_to_host(v.data(), d.data(), v.size() * sizeof(double), run_.stream);
  }

  Eigen::MatrixXd product(const Eigen::MatrixXd& x) override {
    const auto t0 = Clock::now();
    Eigen::MatrixXd y = product_(x);
    residual_s_ += seconds(t0, Clock::now());
    return y;
  }
  Eigen::MatrixXd product_(const Eigen::MatrixXd& x) {
    const int k = static_cast<int>(x.cols()), lc = f_.local;
    Eigen::MatrixXd local(std::max(lc, 1), k);
    for (int j = 0; j < lc; ++j) local.row(j) = x.row(f_.cols.global(j, f_.member));
    if (x_.size() < static_cast<std::size_t>(local.size())) x_ = DeviceBuffer<double>(static_cast<std::size_t>(local.size()));
    const std::size_t nk = static_cast<std::size_t>(n_) * k;
    if (y_.size() < nk) y_ = DeviceBuffer<double>(nk);
    copy_to_device(x_.data(), local.data(), static_cast<std::size_t>(local.size()) * sizeof(double), run_.stream);
    if (lc > 0) {
      const double one = 1, zero = 0;
      TCSOLVE_CUBLAS_CHECK(cublasDgemm(run_.blas(), CUBLAS_OP_N, CUBLAS_OP_N, n_, k, lc, &one, a_.data(), n_,
                                       x_.data(), std::max(lc, 1), &zero, y_.data(), n_));
    } else {
      device_memset(y_.data(), 0, nk * sizeof(double), run_.stream);
    }
    comm_.allreduce_sum(y_.data(), nk, runtime::Element::f64, run_.stream);
    Eigen::MatrixXd y(n_, k);
    copy_to_host(y.data(), y_.data(), nk * sizeof(double), run_.stream);
    return y;
  }

  void solve(Eigen::MatrixXd& w, bool transpose) override {
    const auto t0 = Clock::now();
    solve_(w, transpose);
    solves_s_ += seconds(t0, Clock::now());
  }
  void solve_(Eigen::MatrixXd& w, bool transpose) {
    if (fp32_released_) throw Unavailable("the FP32 factors were freed to make room for the FP64 LU");
    const std::vector<int>& perm = f_.perm_host;
    std::vector<float> y(static_cast<std::size_t>(n_));
    if (v_.size() < y.size()) v_ = DeviceBuffer<float>(y.size());
    for (Eigen::Index c = 0; c < w.cols(); ++c) {
      for (int i = 0; i < n_; ++i)
        y[static_cast<std::size_t>(i)] = static_cast<float>(w(transpose ? i : perm[static_cast<std::size_t>(i)], c));
      copy_to_device(v_.data(), y.data(), y.size() * sizeof(float), run_.stream);
      if (transpose && run_.plan.member_sweeps == CudaLuPlan::MemberSweeps::fan_in && comm_.size() > 1) {
        sweep_fan_out(true);
        sweep_fan_out(false);
      } else if (transpose) {
        sweep_upper_transpose();
        sweep_lower_transpose();
      } else if (run_.plan.member_sweeps == CudaLuPlan::MemberSweeps::fan_in && comm_.size() > 1) {
        sweep_fan_in(false);
        sweep_fan_in(true);
        gather_blocks();
      } else {
        sweep_lower();
        sweep_upper();
      }
      copy_to_host(y.data(), v_.data(), y.size() * sizeof(float), run_.stream);
      for (int i = 0; i < n_; ++i)
        w(transpose ? perm[static_cast<std::size_t>(i)] : i, c) = static_cast<double>(y[static_cast<std::size_t>(i)]);
    }
  }

 private:
  /// The block at j: its width, owner and (on the owner) its first local column.
  struct Block {
    int j, w, owner, l0;
  };
  Block block(int j) const {
    const int owner = f_.cols.owner(j);
    return {j, std::min(f_.nb, n_ - j), owner, owner == f_.member ? f_.cols.local(j) : 0};
  }
  /// A(r, c) of block b's column c (0..w) at factor(b, r) + c.
  const float* factor(const Block& b, int r) const { return f_.t.data() + static_cast<std::size_t>(r) * f_.ldt + b.l0; }
  void broadcast(int from, int count, int root) {
    if (count > 0) comm_.broadcast(v_.data() + from, static_cast<std::size_t>(count) * sizeof(float), root, run_.stream);
  }
  // In cuBLAS's column-major terms the row-major block (rows x w) is its transpose (w x rows):
  // the diagonal block's L11 is seen as L11^T (upper, unit), U11 as U11^T (lower).

  // Each block's triangular solve is a product with the inverses DeviceFactors keeps (X =
  // (L11^-1)^T, Y = (U11^-1)^T): L11^-1 y = X^T y, U11^-1 y = Y^T y, U11^-T y = Y y, L11^-T y = X y
  // (a shorter chain than cublasStrsv's; the refinement corrects the solves).
  /// y := y - M x for the w x m column-major M (leading dimension ld) of a transposed sweep: a
  /// short, wide product (w = nb outputs, m up to n terms each), which one cublasSgemv spreads
  /// over w threads only; here in chunks of kChunk columns (cublasSgemvStridedBatched into w x
  /// chunks partial sums), then the partial sums added in chunk order (a second product).
  void subtract_wide(int w, int m, const float* M, int ld, const float* x, float* y) {
    const float one = 1, zero = 0, minus_one = -1;
    if (m <= kChunk) {
      TCSOLVE_CUBLAS_CHECK(cublasSgemv(run_.blas(), CUBLAS_OP_N, w, m, &minus_one, M, ld, x, 1, &one, y, 1));
      return;
    }
    const int full = m / kChunk, rest = m - full * kChunk, chunks = full + (rest > 0 ? 1 : 0);
    const std::size_t need = static_cast<std::size_t>(w) * chunks;
    if (partial_.size() < need) partial_ = DeviceBuffer<float>(need);
    if (ones_.size() < static_cast<std::size_t>(chunks)) ones_ = DeviceBuffer<float>(std::vector<float>(chunks, 1.0f));
    TCSOLVE_CUBLAS_CHECK(cublasSgemvStridedBatched(run_.blas(), CUBLAS_OP_N, w, kChunk, &one, M, ld,
                                                   static_cast<long long>(kChunk) * ld, x, 1, kChunk, &zero,
                                                   partial_.data(), 1, w, full));
    if (rest > 0)
      TCSOLVE_CUBLAS_CHECK(cublasSgemv(run_.blas(), CUBLAS_OP_N, w, rest, &one,
                                       M + static_cast<std::size_t>(full) * kChunk * ld, ld, x + full * kChunk, 1,
                                       &zero, partial_.data() + static_cast<std::size_t>(full) * w, 1));
    TCSOLVE_CUBLAS_CHECK(cublasSgemv(run_.blas(), CUBLAS_OP_N, w, chunks, &minus_one, partial_.data(), w,
                                     ones_.data(), 1, &one, y, 1));
  }
  static constexpr int kChunk = 4096;

  /// Block b's X (lower_u false) or Y (DeviceFactors::inverses; on its owner).
  const float* inverse(const Block& b, bool lower_u) const {
    const std::size_t w_max = static_cast<std::size_t>(std::min(f_.nb, n_));
    return f_.inverses.data() +
           static_cast<std::size_t>(f_.inverse_index[static_cast<std::size_t>(b.j / f_.nb)]) * 2 * w_max * w_max +
           (lower_u ? w_max * w_max : 0);
  }
  /// v[j .. j + w) := M op v[j .. j + w) with block j's X (lower = false) or Y, op transposed or not.
  void apply_inverse(const Block& b, bool lower_u, bool transposed) {
    const float one = 1, zero = 0;
    const std::size_t w_max = static_cast<std::size_t>(std::min(f_.nb, n_));
    const float* m = inverse(b, lower_u);
    if (tmp_.size() < w_max) tmp_ = DeviceBuffer<float>(w_max);
    TCSOLVE_CUBLAS_CHECK(cublasSgemv(run_.blas(), transposed ? CUBLAS_OP_T : CUBLAS_OP_N, b.w, b.w, &one, m, b.w,
                                     v_.data() + b.j, 1, &zero, tmp_.data(), 1));
    copy_device_to_device(v_.data() + b.j, tmp_.data(), static_cast<std::size_t>(b.w) * sizeof(float), run_.stream);
  }
  void sweep_lower() {  // L y = v: forward; the owner updates the rest, which it then broadcasts
    const float minus_one = -1, one = 1;
    for (int j = 0; j < n_; j += f_.nb) {
      const Block b = block(j);
      const int rest = n_ - j - b.w;
      if (b.owner == f_.member) {
        apply_inverse(b, false, true);
        if (rest > 0)
          TCSOLVE_CUBLAS_CHECK(cublasSgemv(run_.blas(), CUBLAS_OP_T, b.w, rest, &minus_one, factor(b, j + b.w), f_.ldt,
                                           v_.data() + j, 1, &one, v_.data() + j + b.w, 1));
      }
      broadcast(j, n_ - j, b.owner);
    }
  }
  void sweep_upper() {  // U x = y: backward
    const float minus_one = -1, one = 1;
    for (int j = (n_ - 1) / f_.nb * f_.nb; j >= 0; j -= f_.nb) {
      const Block b = block(j);
      if (b.owner == f_.member) {
        apply_inverse(b, true, true);
        if (j > 0)
          TCSOLVE_CUBLAS_CHECK(cublasSgemv(run_.blas(), CUBLAS_OP_T, b.w, j, &minus_one, factor(b, 0), f_.ldt,
                                           v_.data() + j, 1, &one, v_.data(), 1));
      }
      broadcast(0, j + b.w, b.owner);
    }
  }
  // CudaLuPlan::MemberSweeps::fan_in: L y = v (upper false: forward, from v_ into w_) or U x = y
  // (backward, from w_ into v_) with each member's products summed per block instead of the
  // whole vector broadcast per block. Every member keeps acc_, the sum of its own blocks'
  // products L(:, k) y_k (U(:, k) x_k) so far; block k's rows are summed over the members (an NCCL
  // sum of w values) when block k is reached, and its owner solves out_k := inv (in_k - sum) (one
  // kernel, kernels::block_solve). The owner's product for the next block's rows
  // (kernels::rows_dot) follows at once on the chain's stream (SideStream::chain, high
  // priority); the product for the rest goes to a second stream, where it
  // runs beside the other members' steps, and is waited for only before the block after next is
  // summed. On return the output holds the solution's blocks on their owners only
  // (gather_blocks makes v_ whole).
  void sweep_fan_in(bool upper) {
    const int nb = f_.nb, blocks = (n_ + nb - 1) / nb;
    const std::size_t n = static_cast<std::size_t>(n_);
    if (acc_.size() < n) acc_ = DeviceBuffer<float>(n);
    if (w_.size() < n) w_ = DeviceBuffer<float>(n);
    if (!side_) side_ = std::make_unique<SideStream>();
    const float* in = upper ? w_.data() : v_.data();
    float* out = upper ? v_.data() : w_.data();
    const cudaStream_t main = side_->chain, side = side_->stream;
    side_->forked.record(run_.stream);  // the chain after the solve's stream's work so far
    side_->forked.wait(main);
    device_memset(acc_.data(), 0, n * sizeof(float), main);
    bool pending[2] = {false, false};  // the rest's product of step s issued (side_->done[s % 2])
    for (int s = 0; s < blocks; ++s) {
      const int k = upper ? blocks - 1 - s : s;
      const Block b = block(k * nb);
      if (pending[s % 2]) {  // step s - 2's rest covered these rows
        side_->done[s % 2].wait(main);
        pending[s % 2] = false;
      }
      comm_.allreduce_sum(acc_.data() + b.j, static_cast<std::size_t>(b.w), runtime::Element::f32, main);
      if (b.owner != f_.member) continue;
      kernels::block_solve(main, inverse(b, upper), b.w, in + b.j, acc_.data() + b.j, out + b.j);
      // the next block's rows [r0, r1) on the chain, then the rest [q0, q1) on the side stream
      const int r0 = upper ? std::max(0, b.j - nb) : b.j + b.w, r1 = upper ? b.j : std::min(n_, r0 + nb);
      const int q0 = upper ? 0 : r1, q1 = upper ? r0 : n_;
      const float* m = factor(b, 0);
      if (r1 > r0)
        kernels::rows_dot(main, m + static_cast<std::size_t>(r0) * f_.ldt, f_.ldt, r1 - r0, b.w, out + b.j, acc_.data() + r0);
      if (q1 > q0) {
        side_->ready.record(main);
        side_->ready.wait(side);
        kernels::rows_dot(side, m + static_cast<std::size_t>(q0) * f_.ldt, f_.ldt, q1 - q0, b.w, out + b.j, acc_.data() + q0);
        side_->done[s % 2].record(side);
        pending[s % 2] = true;
      }
    }
    for (int p = 0; p < 2; ++p)
      if (pending[p]) side_->done[p].wait(main);
    side_->joined.record(main);  // the solve's stream after the whole sweep
    side_->joined.wait(run_.stream);
  }
  // CudaLuPlan::MemberSweeps::fan_in, transposed: U^T z = v (forward: from v_ into w_) or L^T x
  // = z (backward: from w_ into v_). Each block's solution is broadcast by its owner (w values),
  // and every member then adds that block's rows' products with it to its own blocks further on
  // (fan-out): to the next of them on the chain's stream (into acc_), to the rest on the side
  // stream (into acc2_; kernels::cols_dot), so that a block's solve (kernels::block_solve_n:
  // in - acc_ - acc2_ through the block's inverse) waits only for the side's products issued
  // before the member's previous block. Every member ends with the whole solution. (Before
  // session 27 the owner subtracted the products of all earlier blocks on the chain.)
  void sweep_fan_out(bool forward) {
    const int nb = f_.nb, blocks = (n_ + nb - 1) / nb, lc = f_.local, q = f_.member;
    const std::size_t n = static_cast<std::size_t>(n_), local = static_cast<std::size_t>(std::max(lc, 1));
    if (acc_.size() < std::max(n, local)) acc_ = DeviceBuffer<float>(std::max(n, local));
    if (acc2_.size() < local) acc2_ = DeviceBuffer<float>(local);
    if (w_.size() < n) w_ = DeviceBuffer<float>(n);
    if (part_chain_.size() < kernels::cols_dot_scratch(std::min(nb, n_)))
      part_chain_ = DeviceBuffer<float>(kernels::cols_dot_scratch(std::min(nb, n_)));
    if (part_side_.size() < kernels::cols_dot_scratch(lc)) part_side_ = DeviceBuffer<float>(kernels::cols_dot_scratch(lc));
    if (!side_) side_ = std::make_unique<SideStream>();
    while (side_->steps.size() < static_cast<std::size_t>(blocks)) side_->steps.push_back(std::make_unique<cuda::StreamEvent>());
    const float* in = forward ? v_.data() : w_.data();
    float* out = forward ? w_.data() : v_.data();
    const cudaStream_t chain = side_->chain, side = side_->stream;
    side_->forked.record(run_.stream);
    side_->forked.wait(chain);
    device_memset(acc_.data(), 0, local * sizeof(float), chain);
    device_memset(acc2_.data(), 0, local * sizeof(float), chain);
    int last_side = -1;  // the step of the side's latest product
    int needed = -1;     // the side's products this member's next block waits for (up to this step's)
    for (int s = 0; s < blocks; ++s) {
      const int k = forward ? s : blocks - 1 - s;
      const Block b = block(k * nb);
      if (b.owner == q) {
        if (needed >= 0) side_->steps[static_cast<std::size_t>(needed)]->wait(chain);
        kernels::block_solve_n(chain, inverse(b, forward), b.w, in + b.j, acc_.data() + b.l0, acc2_.data() + b.l0,
                               out + b.j);
        needed = last_side;  // the next block: the side's products up to this step's previous ones
      }
      comm_.broadcast(out + b.j, static_cast<std::size_t>(b.w) * sizeof(float), b.owner, chain);
      // this member's columns further on: forward after block k, backward before it; the next of
      // its blocks first (its width: nb, or the last block's), then the rest
      const int lo = forward ? f_.cols.first_at_or_after(b.j + b.w, q) : 0;
      const int hi = forward ? lc : f_.cols.first_at_or_after(b.j, q);
      if (hi <= lo) continue;
      const int next_w = std::min(nb, hi - lo);
      const int c0 = forward ? lo : hi - next_w;  // the next block's local columns [c0, c0 + next_w)
      const float* rows = f_.t.data() + static_cast<std::size_t>(b.j) * f_.ldt;
      kernels::cols_dot(chain, rows + c0, f_.ldt, b.w, next_w, out + b.j, acc_.data() + c0, part_chain_.data());
      const int r0 = forward ? lo + next_w : lo, r1 = forward ? hi : hi - next_w;
      if (r1 > r0) {
        side_->ready.record(chain);
        side_->ready.wait(side);
        kernels::cols_dot(side, rows + r0, f_.ldt, b.w, r1 - r0, out + b.j, acc2_.data() + r0, part_side_.data());
        side_->steps[static_cast<std::size_t>(s)]->record(side);
        last_side = s;
      }
    }
    if (last_side >= 0) side_->steps[static_cast<std::size_t>(last_side)]->wait(chain);
    side_->joined.record(chain);
    side_->joined.wait(run_.stream);
  }

  /// v_ whole on every member after the fan-in sweeps: the blocks owned elsewhere zeroed, then
  /// summed over the members (each block is its owner's value plus zeros: the owner's bits).
  void gather_blocks() {
    for (int j = 0; j < n_; j += f_.nb) {
      const Block b = block(j);
      if (b.owner != f_.member) device_memset(v_.data() + j, 0, static_cast<std::size_t>(b.w) * sizeof(float), run_.stream);
    }
    comm_.allreduce_sum(v_.data(), static_cast<std::size_t>(n_), runtime::Element::f32, run_.stream);
  }

  void sweep_upper_transpose() {  // U^T z = v: forward, each block from the solved ones above it
    for (int j = 0; j < n_; j += f_.nb) {
      const Block b = block(j);
      if (b.owner == f_.member) {
        if (j > 0) subtract_wide(b.w, j, factor(b, 0), f_.ldt, v_.data(), v_.data() + j);
        apply_inverse(b, true, false);
      }
      broadcast(j, b.w, b.owner);
    }
  }
  void sweep_lower_transpose() {  // L^T v = z: backward, each block from the solved ones below it
    for (int j = (n_ - 1) / f_.nb * f_.nb; j >= 0; j -= f_.nb) {
      const Block b = block(j);
      const int rest = n_ - j - b.w;
      if (b.owner == f_.member) {
        if (rest > 0) subtract_wide(b.w, rest, factor(b, j + b.w), f_.ldt, v_.data() + j + b.w, v_.data() + j);
        apply_inverse(b, false, false);
      }
      broadcast(j, b.w, b.owner);
    }
  }

  /// The column pass over the local columns [c0, c1) on `stream`: C, the column norms (into
  /// col_) and A_s in t.
  void convert(cudaStream_t stream, int c0, int c1) {
    if (c1 <= c0) return;
    const std::size_t n = static_cast<std::size_t>(n_);
    kernels::piece_columns(stream, a_.data() + static_cast<std::size_t>(c0) * n, n_, n_, c1 - c0, row_scale_.data(),
                           col_.data() + c0, col_.data() + width_ + c0, col_.data() + 2 * width_ + c0,
                           f_.t.data() + c0, f_.ldt);
  }

  /// C and the column norms from every member's columns (an NCCL gather; once, after the column
  /// pass is whole).
  void gather_columns() {
    if (gathered_) return;
    gathered_ = true;
    const int q = comm_.size();
    DeviceBuffer<double> all(static_cast<std::size_t>(q) * col_.size());
    comm_.allgather(col_.data(), all.data(), col_.size() * sizeof(double), run_.stream);
    const std::vector<double> every = all.download(run_.stream);
    scales_.col.resize(n_);
    double n1 = 0, n1s = 0;
    for (int m = 0; m < q; ++m) {
      const double* c = every.data() + static_cast<std::size_t>(m) * col_.size();
      for (int j = 0; j < f_.cols.count(m); ++j) {
        scales_.col[f_.cols.global(j, m)] = c[j];
        n1 = std::max(n1, c[width_ + j]);
        n1s = std::max(n1s, c[2 * width_ + j]);
      }
    }
    norm_1_ = detail::scaled_norm(n1);
    norm_1_s_ = detail::scaled_norm(n1s);
    col_ = DeviceBuffer<double>();
  }

  cuda::DeviceRun run_;
  runtime::Communicator& comm_;
  cuda::PhaseClock clock_;
  int n_;
  DeviceBuffer<double> a_, x_, y_, v64_;
  std::unique_ptr<cuda::DeviceFactors64> f64_;  ///< the FP64 LU, on first need
  int zero64_ = -1;
  bool fp32_released_ = false;
  bool factored_ = false;  ///< t holds factors (a second factorize makes A_s again)
  DeviceBuffer<float> v_, w_, tmp_, partial_, ones_, acc_, acc2_, part_chain_, part_side_;
  /// The fan-in sweeps' second stream (on the member's device, made on first use) and its events.
  /// `chain`: the sweeps' chain (the NCCL sums, the block solves, the next block's products) at
  /// the device's greatest priority, so that its kernels take the SMs before the waiting blocks
  /// of `stream`'s products beyond the next block (the least priority), which would otherwise
  /// fill the GPU between two steps of the chain.
  struct SideStream {
    SideStream() {
      int least = 0, greatest = 0;
      TCSOLVE_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      TCSOLVE_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, least));
      const cudaError_t made = cudaStreamCreateWithPriority(&chain, cudaStreamNonBlocking, greatest);
      if (made != cudaSuccess) cudaStreamDestroy(stream);
      TCSOLVE_CUDA_CHECK(made);
    }
    ~SideStream() {
      cudaStreamDestroy(stream);
      cudaStreamDestroy(chain);
    }
    SideStream(const SideStream&) = delete;
    SideStream& operator=(const SideStream&) = delete;
    cudaStream_t stream = nullptr, chain = nullptr;
    cuda::StreamEvent ready, done[2], forked, joined;
    std::vector<std::unique_ptr<cuda::StreamEvent>> steps;  ///< sweep_fan_out: each step's side product done
  };
  std::unique_ptr<SideStream> side_;
  double residual_s_ = 0, solves_s_ = 0;
  cuda::DeviceFactors f_;
  DeviceBuffer<double> row_scale_, col_;  ///< R; the column pass's C and column norms (3 x width_)
  std::size_t width_ = 1;                 ///< the most local columns of a member
  int converted_ = 0;                     ///< local columns [0, converted_) of t hold A_s
  bool gathered_ = false;                 ///< scales_.col and the 1-norms are set
  Scales scales_;
  Eigen::MatrixXd rhs_;
  detail::ScaledNorm norm_inf_, norm_1_, norm_1_s_;
};

}  // namespace

namespace {
std::size_t device_piece_bytes(const Grid& grid, const Descriptor& desc_a, int member, bool share) {
  const std::size_t n = static_cast<std::size_t>(desc_a.n), lc = static_cast<std::size_t>(desc_a.local_cols(grid, member));
  const std::size_t nb = static_cast<std::size_t>(std::min(desc_a.nb, desc_a.n));
  const std::size_t ldt = static_cast<std::size_t>(cuda::factors_ld(static_cast<int>(lc)));
  return n * std::max<std::size_t>(lc, 1) * sizeof(double) + n * ldt * sizeof(float) + 3 * n * nb * sizeof(float) +
         (share ? 4 : 2) * nb * std::max<std::size_t>(lc, 1) * sizeof(float) + 8 * n * sizeof(double) +
         2 * (std::max<std::size_t>(lc, 1) + nb) * nb * sizeof(float);  // the diagonal blocks' inverses
}
}  // namespace

void check_device_piece(const Grid& grid, const Descriptor& desc_a, int member, bool share) {
  const std::size_t need = device_piece_bytes(grid, desc_a, member, share);
  const cuda::DeviceMemory m = cuda::device_memory();
  // a margin for the libraries' workspaces (cuBLAS, NCCL, the GEMM's splits)
  const std::size_t margin = std::size_t{2} << 30;
  if (need + margin > m.free)
    throw InvalidInput("n = " + std::to_string(desc_a.n) + " on a " + std::to_string(grid.rows) + "x" +
                       std::to_string(grid.cols) + " grid needs " + std::to_string(need) +
                       " bytes on member " + std::to_string(member) + "'s GPU (its columns of A in FP64 and the " +
                       "FP32 factors), and 2 GiB for workspaces; " + std::to_string(m.free) +
                       " bytes are free there: use more GPUs");
}

std::unique_ptr<DevicePiece> make_device_piece(cuda::Context& ctx, runtime::Communicator& comm, const Grid& grid,
                                               const Descriptor& desc_a, const double* A, PieceSource source,
                                               std::uint64_t seed, const SolveOptions& options, double& upload_s) {
  return std::make_unique<CudaPiece>(ctx, comm, grid, desc_a, A, source, seed, options, upload_s);
}

}  // namespace tcsolve::distributed
