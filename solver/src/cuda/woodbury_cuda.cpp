// beam's Woodbury correction on the device (woodbury_cuda.hpp).
#include "woodbury_cuda.hpp"

#include <cublas_v2.h>

#include <string>

#include "kernels.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {

DeviceWoodbury::DeviceWoodbury(const DeviceRun& run, const DeviceLu& f,
                               const std::function<void(const double* rhs, double* out)>& lu_apply)
    : run_(run), n_(f.n) {
  const int r = static_cast<int>(f.modifications.size());
  if (r > kMaxRank)
    throw InvalidInput("beam's woodbury correction on cuda takes at most " + std::to_string(kMaxRank) +
                       " modified pivots, got " + std::to_string(r) + " (--beam-correction gmres takes any)");
  if (r == 0) return;
  const std::vector<double> row_scale = f.row_scale.download(run.stream);
  const std::vector<double> col_scale = f.col_scale.download(run.stream);
  col_scale_at_.resize(r);
  z_ = DeviceBuffer<double>(static_cast<std::size_t>(n_) * r);
  std::vector<double> u(static_cast<std::size_t>(n_), 0.0);
  DeviceBuffer<double> column(static_cast<std::size_t>(n_));
  for (int k = 0; k < r; ++k) {  // Z(:, k) = lu_apply(R^-1 U_E(:, k)), U_E(:, k) = delta e_row
    const DeviceLu::Modification& m = f.modifications[static_cast<std::size_t>(k)];
    const int row = f.perm_host[static_cast<std::size_t>(m.column)];
    std::fill(u.begin(), u.end(), 0.0);
    u[static_cast<std::size_t>(row)] = m.delta / row_scale[static_cast<std::size_t>(row)];
    column.upload(u, run.stream);
    lu_apply(column.data(), z_.data() + static_cast<std::size_t>(k) * n_);
    columns_.push_back(m.column);
    col_scale_at_[k] = col_scale[static_cast<std::size_t>(m.column)];
  }
  d_columns_ = DeviceBuffer<int>(columns_.size());
  d_columns_.upload(columns_, run.stream);
  // K = I - (Z's rows at the modified columns) / C there
  w_ = DeviceBuffer<double>(static_cast<std::size_t>(r) * r);
  kernels::gather_rows(run.stream, z_.data(), n_, r, d_columns_.data(), r, w_.data());
  const std::vector<double> zr = w_.download(run.stream);
  Eigen::MatrixXd k = Eigen::MatrixXd::Identity(r, r);
  for (int j = 0; j < r; ++j)
    for (int i = 0; i < r; ++i) k(i, j) -= zr[static_cast<std::size_t>(i + j * r)] / col_scale_at_[i];
  capacitance_.compute(k);
  rcond_ = capacitance_.rcond();
}

void DeviceWoodbury::correct(double* x, int cols) {
  const int r = rank();
  if (r == 0 || cols <= 0) return;
  if (w_.size() < static_cast<std::size_t>(r) * cols) w_ = DeviceBuffer<double>(static_cast<std::size_t>(r) * cols);
  kernels::gather_rows(run_.stream, x, n_, cols, d_columns_.data(), r, w_.data());
  std::vector<double> host(static_cast<std::size_t>(r) * cols);
  copy_to_host(host.data(), w_.data(), host.size() * sizeof(double), run_.stream);
  Eigen::Map<Eigen::MatrixXd> w(host.data(), r, cols);
  for (int i = 0; i < r; ++i) w.row(i) /= col_scale_at_[i];
  w = capacitance_.solve(Eigen::MatrixXd(w));
  copy_to_device(w_.data(), host.data(), host.size() * sizeof(double), run_.stream);
  const double one = 1.0;
  TCSOLVE_CUBLAS_CHECK(cublasDgemm(run_.blas(), CUBLAS_OP_N, CUBLAS_OP_N, n_, cols, r, &one, z_.data(), n_,
                                   w_.data(), r, &one, x, n_));
}

}  // namespace tcsolve::cuda
