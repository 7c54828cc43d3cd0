// The system on the device and its residual check (device_system.hpp).
#include "device_system.hpp"

#include <cublas_v2.h>

#include <cmath>

#include "kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/gemm/cuda_check.hpp"

namespace tcsolve::cuda {

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

detail::ScaledNorm safe_norm(double sum, const Eigen::MatrixXd& A, bool rows) {
  if (std::isfinite(sum) && sum >= 0x1p-900 && sum <= 0x1p900) return detail::scaled_norm(sum);
  return rows ? detail::norm_inf(A) : detail::norm_1(A);
}

detail::ScaledNorm norm_inf(const DeviceSystem& s, const Eigen::MatrixXd& A) {
  DeviceBuffer<double> workspace(kernels::equilibrate_workspace_doubles(s.n));
  DeviceBuffer<double> norm(1);
  kernels::norm_inf(s.a.data(), s.n, norm.data(), workspace.data());
  return safe_norm(norm.download()[0], A, true);
}

detail::ScaledNorm norm_1(const DeviceBuffer<double>& col_sum, const Eigen::MatrixXd& A) {
  double largest = 0;
  for (const double v : col_sum.download()) largest = std::isnan(v) || v > largest ? v : largest;
  return safe_norm(largest, A, false);
}

detail::Assessment DeviceChecker::assess(const double* x) {
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

}  // namespace tcsolve::cuda
