// The system on the device and its residual check (device_system.hpp).
#include "device_system.hpp"

#include <cublas_v2.h>

#include <cmath>

#include "kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/gemm/cuda_check.hpp"

namespace tcsolve::cuda {

DeviceSystem upload(const DeviceRun& run, const LinearSystem& sys) {
  DeviceSystem d;
  d.n = sys.n();
  d.nrhs = sys.nrhs();
  d.a = DeviceBuffer<double>(elements(d.n, d.n));
  d.b = DeviceBuffer<double>(elements(d.n, d.nrhs));
  copy_to_device(d.a.data(), sys.A.data(), d.a.size() * sizeof(double), run.stream);  // Eigen: column-major
  copy_to_device(d.b.data(), sys.b.data(), d.b.size() * sizeof(double), run.stream);
  for (Eigen::Index j = 0; j < sys.b.cols(); ++j) d.b_norm.push_back(sys.b.col(j).lpNorm<Eigen::Infinity>());
  return d;
}

detail::ScaledNorm safe_norm(double sum, const Eigen::MatrixXd& A, bool rows) {
  if (std::isfinite(sum) && sum >= 0x1p-900 && sum <= 0x1p900) return detail::scaled_norm(sum);
  return rows ? detail::norm_inf(A) : detail::norm_1(A);
}

detail::ScaledNorm norm_inf(const DeviceRun& run, const DeviceSystem& s, const Eigen::MatrixXd& A) {
  DeviceBuffer<double> workspace(kernels::equilibrate_workspace_doubles(s.n));
  DeviceBuffer<double> norm(1);
  kernels::norm_inf(run.stream, s.a.data(), s.n, norm.data(), workspace.data());
  return safe_norm(norm.download(run.stream)[0], A, true);
}

detail::ScaledNorm norm_1(const DeviceRun& run, const DeviceBuffer<double>& col_sum, const Eigen::MatrixXd& A) {
  double largest = 0;
  for (const double v : col_sum.download(run.stream)) largest = std::isnan(v) || v > largest ? v : largest;
  return safe_norm(largest, A, false);
}

detail::Assessment DeviceChecker::assess(const double* x) {
  const int n = s_.n, k = s_.nrhs;
  copy_device_to_device(r_.data(), s_.b.data(), r_.size() * sizeof(double), run_.stream);
  const double minus_one = -1.0, one = 1.0;
  cublasHandle_t h = run_.blas();
  if (k == 1)
    TCSOLVE_CUBLAS_CHECK(
        cublasDgemv(h, CUBLAS_OP_N, n, n, &minus_one, s_.a.data(), n, x, 1, &one, r_.data(), 1));
  else
    TCSOLVE_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, k, n, &minus_one, s_.a.data(), n, x, n,
                                     &one, r_.data(), n));
  kernels::column_max_abs(run_.stream, r_.data(), n, n, k, nullptr, norms_.data(), nullptr);
  kernels::column_max_abs(run_.stream, x, n, n, k, nullptr, norms_.data() + k, nullptr);
  const std::vector<double> norms = norms_.download(run_.stream);
  const std::vector<double> r_norm(norms.begin(), norms.begin() + k),
      x_norm(norms.begin() + k, norms.end());
  return detail::assess_columns(r_norm, x_norm, s_.b_norm, norm_a_, n);
}

}  // namespace tcsolve::cuda
