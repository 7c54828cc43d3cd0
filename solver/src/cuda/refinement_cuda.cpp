// DeviceRefinement (refinement_cuda.hpp): the residual, the corrections and GMRES-IR on the device.
#include "refinement_cuda.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "../refinement_rules.hpp"
#include "kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/runtime/cuda_check.hpp"

namespace tcsolve::cuda {

DeviceRefinement::DeviceRefinement(const DeviceRun& run, const DeviceSystem& s, const DeviceLu& f,
                                   detail::ScaledNorm norm_a, Refinement method, PhaseClock& clock)
    : run_(run),
      s_(s),
      f_(f),
      method_(method == Refinement::gmres ? Refinement::gmres : Refinement::classical),  // auto: classical first
      clock_(clock),
      checker_(run, s, norm_a),
      x_(elements(s.n, s.nrhs)),
      best_(elements(s.n, s.nrhs)),
      d_(elements(s.n, s.nrhs)),
      y_(elements(f.order, s.nrhs)),
      solve_scratch_(kernels::lu_solve_scratch_ints(f.order, s.nrhs)),
      transformed_(f.rbt ? elements(f.order, s.nrhs) : 1),
      scratch_(static_cast<std::size_t>(s.nrhs)),
      exponent_(static_cast<std::size_t>(s.nrhs)),
      mask_(static_cast<std::size_t>(s.nrhs)) {
  if (method_ == Refinement::gmres) allocate_gmres();
}

void DeviceRefinement::allocate_gmres() {
  cycle_ = std::min(detail::kGmresCycle, s_.n);
  basis_ = DeviceBuffer<double>(elements(s_.n, cycle_ + 1));
  product_ = DeviceBuffer<double>(static_cast<std::size_t>(s_.n));
  coefficients_ = DeviceBuffer<double>(2 * static_cast<std::size_t>(cycle_ + 1));
  solution_ = DeviceBuffer<double>(static_cast<std::size_t>(cycle_));
}

void DeviceRefinement::switch_to_gmres() {
  if (method_ == Refinement::gmres) return;
  allocate_gmres();
  copy_device_to_device(x_.data(), best_.data(), x_.size() * sizeof(double), run_.stream);
  method_ = Refinement::gmres;
}

void DeviceRefinement::initial_solve() {
  clock_.mark("correction");
  lu_apply(s_.b.data(), x_.data(), s_.nrhs);
  clock_.mark(nullptr);
}

detail::Assessment DeviceRefinement::assess() {
  clock_.mark("residual");
  detail::Assessment a = checker_.assess(x_.data());
  clock_.mark(nullptr);
  return a;
}

std::vector<double> DeviceRefinement::correct(const std::vector<bool>& done) {
  const int n = s_.n, k = s_.nrhs;
  if (method_ == Refinement::classical) {
    clock_.mark("correction");
    lu_apply(checker_.r(), d_.data(), k);
  } else {
    clock_.mark("gmres");
    device_memset(d_.data(), 0, d_.size() * sizeof(double), run_.stream);  // the columns done keep d = 0
    for (int j = 0; j < k; ++j)
      if (!done[static_cast<std::size_t>(j)])
        inner_iterations_ += gmres(checker_.r() + elements(n, j), d_.data() + elements(n, j));
  }
  kernels::column_max_abs(run_.stream, d_.data(), n, n, k, nullptr, scratch_.data(), nullptr);
  clock_.mark(nullptr);
  return scratch_.download(run_.stream);
}

void DeviceRefinement::apply(const std::vector<bool>& done) {
  std::vector<int> mask(done.size());
  for (std::size_t j = 0; j < done.size(); ++j) mask[j] = done[j] ? 0 : 1;
  mask_.upload(mask, run_.stream);
  kernels::masked_add(run_.stream, x_.data(), d_.data(), s_.n, s_.nrhs, mask_.data());
}

Eigen::MatrixXd DeviceRefinement::best() const {
  Eigen::MatrixXd x(s_.n, s_.nrhs);
  copy_to_host(x.data(), best_.data(), best_.size() * sizeof(double), run_.stream);
  return x;
}

void DeviceRefinement::lu_apply(const double* rhs, double* out, int cols) {
  const int n = s_.n, m = f_.order;
  if (f_.rbt) {  // t = U^T pad(R rhs) in FP64, then P t scaled to FP32 (cpu: rbt_apply)
    const DeviceButterflies& b = *f_.rbt;
    kernels::butterfly_rhs(run_.stream, rhs, n, n, m, cols, f_.row_scale.data(), b.u_outer.data(), b.u_inner.data(),
                           transformed_.data());
    kernels::column_max_abs(run_.stream, transformed_.data(), m, m, cols, nullptr, scratch_.data(), exponent_.data());
    kernels::scale_permute_to_fp32(run_.stream, transformed_.data(), m, m, cols, nullptr, f_.perm.data(),
                                   exponent_.data(), y_.data());
  } else {
    kernels::column_max_abs(run_.stream, rhs, n, n, cols, f_.row_scale.data(), scratch_.data(), exponent_.data());
    kernels::scale_permute_to_fp32(run_.stream, rhs, n, n, cols, f_.row_scale.data(), f_.perm.data(), exponent_.data(),
                                   y_.data());
  }
  if (cublas_solves_) {
    // The row-major LU is T = (LU)^T in cuBLAS's terms: L y = r is T's unit upper part
    // transposed, U y = r its lower part transposed.
    const float one = 1.0f;
    cublasHandle_t h = run_.blas();
    TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                                     CUBLAS_DIAG_UNIT, m, cols, &one, f_.lu.data(), m, y_.data(), m));
    TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                     CUBLAS_DIAG_NON_UNIT, m, cols, &one, f_.lu.data(), m, y_.data(), m));
  } else {
    kernels::lu_solve(run_.stream, f_.lu.data(), m, m, y_.data(), cols, solve_scratch_.data(), f_.solve_inverses());
  }
  if (f_.rbt) {  // x = C (V double(y))[0, n) 2^e
    const DeviceButterflies& b = *f_.rbt;
    kernels::butterfly_solution(run_.stream, y_.data(), n, m, cols, b.v_outer.data(), b.v_inner.data(),
                                f_.col_scale.data(), exponent_.data(), out, n);
  } else {
    kernels::unscale_to_fp64(run_.stream, y_.data(), n, cols, f_.col_scale.data(), exponent_.data(), out);
  }
  if (woodbury_) woodbury_->correct(out, cols);
}

double DeviceRefinement::use_woodbury() {
  // built with the plain solves (woodbury_ is set only once it exists)
  auto w = std::make_unique<DeviceWoodbury>(run_, f_, [this](const double* rhs, double* out) { lu_apply(rhs, out, 1); });
  const double rcond = w->capacitance_rcond();
  woodbury_ = std::move(w);
  return rcond;
}

double DeviceRefinement::norm2(const double* v) {
  double norm = 0;
  TCSOLVE_CUBLAS_CHECK(cublasDnrm2(run_.blas(), s_.n, v, 1, &norm));
  return norm;
}

int DeviceRefinement::gmres(const double* r, double* d) {
  const int n = s_.n, m = cycle_;
  lu_apply(r, d, 1);  // z = M^-1 r
  const double beta = norm2(d);
  if (!(beta > 0) || !std::isfinite(beta)) return 0;  // d = z: r == 0 gives 0; non-finite propagates
  double* v = basis_.data();                          // n x (m + 1), leading dimension n
  auto column = [&](int i) { return v + elements(n, i); };
  kernels::divide(run_.stream, d, n, beta, column(0));  // v_0 = z / beta
  double* h1 = coefficients_.data();
  double* h2 = coefficients_.data() + (m + 1);
  std::vector<double> host(2 * static_cast<std::size_t>(m + 1));
  std::vector<double> h(static_cast<std::size_t>(m + 1));
  const double one = 1.0, zero = 0.0, minus_one = -1.0;
  cublasHandle_t handle = run_.blas();
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
    copy_to_host(host.data(), coefficients_.data(), host.size() * sizeof(double), run_.stream);
    for (int i = 0; i <= k; ++i)
      h[static_cast<std::size_t>(i)] =
          host[static_cast<std::size_t>(i)] + host[static_cast<std::size_t>(m + 1 + i)];
    if (h_next > 0) kernels::divide(run_.stream, w, n, h_next, w);
    if (ls.add_column(h.data(), h_next)) break;
  }
  const int k = ls.size();
  const Eigen::VectorXd y = ls.solve();
  copy_to_device(solution_.data(), y.data(), static_cast<std::size_t>(k) * sizeof(double), run_.stream);
  TCSOLVE_CUBLAS_CHECK(
      cublasDgemv(handle, CUBLAS_OP_N, n, k, &one, v, n, solution_.data(), 1, &zero, d, 1));  // d = V y
  return k;
}

void finish_solve(DeviceRun& run, const std::function<Eigen::MatrixXd()>& best, const std::string& lu_note,
                  double transfer, PhaseClock& clock, const LinearSystem& meta, Clock::time_point t_start,
                  Clock::time_point t_factored, SolveResult& res) {
  run.synchronize();
  const auto t_end = Clock::now();
  res.time_s.factorization = seconds(t_start, t_factored);
  res.time_s.refinement = seconds(t_factored, t_end);
  res.time_s.total = seconds(t_start, t_end);
  const auto t = Clock::now();
  res.x = best();
  transfer += seconds(t, Clock::now());
  res.time_s.phases.emplace_back("transfer", transfer);
  for (auto& phase : clock.totals()) res.time_s.phases.push_back(std::move(phase));
  if (!lu_note.empty()) res.note += "; " + lu_note;
  detail::finish_result(meta, res);
}

}  // namespace tcsolve::cuda
