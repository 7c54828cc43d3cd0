// DeviceConditionOps (condition_cuda.hpp): the condition estimate's solves and products on the device.
#include "condition_cuda.hpp"

#include <cublas_v2.h>

#include <cstddef>

#include "kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

DeviceConditionOps::DeviceConditionOps(const DeviceRun& run, const DeviceSystem& s, const DeviceLu& f)
    : run_(run),
      s_(s),
      f_(f),
      y_(elements(f.order, kMaxColumns)),
      host_(elements(f.order, kMaxColumns)),
      scratch_(kernels::lu_solve_scratch_ints(f.order, kMaxColumns)),
      u_(static_cast<std::size_t>(s.n)),
      au_(static_cast<std::size_t>(s.n)) {}

void DeviceConditionOps::times_a(Eigen::MatrixXd& y) {
  const int n = s_.n;
  const double one = 1.0, zero = 0.0;
  if (y.cols() != 1) throw InvalidInput("DeviceConditionOps::times_a: one column");
  copy_to_device(u_.data(), y.data(), static_cast<std::size_t>(n) * sizeof(double), run_.stream);
  TCSOLVE_CUBLAS_CHECK(
      cublasDgemv(run_.blas(), CUBLAS_OP_N, n, n, &one, s_.a.data(), n, u_.data(), 1, &zero, au_.data(), 1));
  copy_to_host(y.data(), au_.data(), static_cast<std::size_t>(n) * sizeof(double), run_.stream);
}

int DeviceConditionOps::columns(const Eigen::MatrixXd& w) const {
  if (w.cols() < 1 || w.cols() > kMaxColumns) throw InvalidInput("DeviceConditionOps: 1 or 2 columns");
  return static_cast<int>(w.cols());
}

void DeviceConditionOps::solve(Eigen::MatrixXd& w) {
  const int n = s_.n, m = f_.order, k = columns(w);
  Eigen::MatrixXd t;
  if (f_.rbt) {  // P U^T pad(w) (the cpu's rbt_inverse)
    t = detail::pad_rows(w, m);
    f_.rbt->u.apply_transpose(t);
  }
  for (int c = 0; c < k; ++c)
    for (int i = 0; i < m; ++i)
      host_[elements(m, c) + static_cast<std::size_t>(i)] =
          static_cast<float>(f_.rbt ? t(f_.perm_host[static_cast<std::size_t>(i)], c)
                                    : w(f_.perm_host[static_cast<std::size_t>(i)], c));
  copy_to_device(y_.data(), host_.data(), elements(m, k) * sizeof(float), run_.stream);
  kernels::lu_solve(run_.stream, f_.lu.data(), m, m, y_.data(), k, scratch_.data(), f_.solve_inverses());
  copy_to_host(host_.data(), y_.data(), elements(m, k) * sizeof(float), run_.stream);
  if (f_.rbt) {  // V z, its first n rows
    for (int c = 0; c < k; ++c)
      for (int i = 0; i < m; ++i) t(i, c) = host_[elements(m, c) + static_cast<std::size_t>(i)];
    f_.rbt->v.apply(t);
    w = t.topRows(n);
    return;
  }
  for (int c = 0; c < k; ++c)
    for (int i = 0; i < n; ++i) w(i, c) = host_[elements(n, c) + static_cast<std::size_t>(i)];
}

void DeviceConditionOps::solve_transpose(Eigen::MatrixXd& w) {
  const int n = s_.n, m = f_.order, k = columns(w);
  Eigen::MatrixXd t;
  if (f_.rbt) {  // V^T pad(w)
    t = detail::pad_rows(w, m);
    f_.rbt->v.apply_transpose(t);
  }
  for (int c = 0; c < k; ++c)
    for (int i = 0; i < m; ++i)
      host_[elements(m, c) + static_cast<std::size_t>(i)] = static_cast<float>(f_.rbt ? t(i, c) : w(i, c));
  copy_to_device(y_.data(), host_.data(), elements(m, k) * sizeof(float), run_.stream);
  const float one = 1.0f;
  cublasHandle_t h = run_.blas();
  TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                   CUBLAS_DIAG_NON_UNIT, m, k, &one, f_.lu.data(), m, y_.data(), m));
  TCSOLVE_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                   CUBLAS_DIAG_UNIT, m, k, &one, f_.lu.data(), m, y_.data(), m));
  copy_to_host(host_.data(), y_.data(), elements(m, k) * sizeof(float), run_.stream);
  if (f_.rbt) {  // U P^T z, its first n rows
    for (int c = 0; c < k; ++c)
      for (int i = 0; i < m; ++i)
        t(f_.perm_host[static_cast<std::size_t>(i)], c) = host_[elements(m, c) + static_cast<std::size_t>(i)];
    f_.rbt->u.apply(t);
    w = t.topRows(n);
    return;
  }
  for (int c = 0; c < k; ++c)
    for (int i = 0; i < n; ++i)
      w(f_.perm_host[static_cast<std::size_t>(i)], c) = host_[elements(n, c) + static_cast<std::size_t>(i)];
}

}  // namespace tcsolve::cuda
