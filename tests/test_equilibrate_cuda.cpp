// [gpu] tests of the device equilibration in parts (kernels::equilibrate_rows and
// equilibrate_columns, solver/src/cuda/equilibrate.cu), and in one launch for the FP64 path
// (equilibrate_fp64 in one cluster, one cooperative launch or the kernels one by one, bitwise the
// parts and scale_copy): the LU converts its first block's columns
// before the first panel and the rest beside it, so any split of the columns, in any order, must
// give bitwise the scales and the FP32 A_s of the one-call equilibrate(), and A_s must be
// fp32_rn((r_i a_ij) c_j) in row-major order (a transposition slip or a missed tile shows as a
// wrong element). The scales against the cpu path's are in test_solver_cuda.cpp. Skipped, with a
// warning, without a GPU.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "cuda/kernels.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace {

using namespace tcsolve;

struct Equilibrated {
  std::vector<double> row_scale, col_scale;
  std::vector<float> a_s;
  double norm = 0;
};

TEST_CASE("the device equilibration in column parts, in any order, gives bitwise the one-call result", "[gpu]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device: skipping the split equilibration (" << cuda::device_name() << ")");
    return;
  }
  // n = 777: tiles of 32 that do not divide n, parts that do not start on a tile; rows and
  // columns scaled over 2^-40..2^40 so that neither scale is the identity.
  const int n = 777;
  std::mt19937 rng(77);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Eigen::MatrixXd A(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A(i, j) = dist(rng) * std::ldexp(1.0, (i * 7) % 41 - 20 + (j * 3) % 37 - 18);
  const std::vector<double> host(A.data(), A.data() + A.size());
  cuda::DeviceBuffer<double> a(host);
  cuda::DeviceBuffer<double> workspace(cuda::kernels::equilibrate_workspace_doubles(n));

  auto run = [&](const std::vector<std::pair<int, int>>& parts) {
    cuda::DeviceBuffer<double> row(static_cast<std::size_t>(n)), col(static_cast<std::size_t>(n)), norm(1);
    cuda::DeviceBuffer<float> a_s(static_cast<std::size_t>(n) * n);
    if (parts.empty()) {
      cuda::kernels::equilibrate(nullptr, a.data(), n, row.data(), col.data(), a_s.data(), norm.data(), workspace.data());
    } else {
      cuda::kernels::equilibrate_rows(nullptr, a.data(), n, row.data(), norm.data(), workspace.data());
      for (const auto& [c0, c1] : parts)
        cuda::kernels::equilibrate_columns(nullptr, a.data(), n, row.data(), col.data(), a_s.data(), c0, c1);
    }
    return Equilibrated{row.download(), col.download(), a_s.download(), norm.download()[0]};
  };
  const Equilibrated whole = run({});
  // The definition, from the device's scales: row-major fp32_rn((r_i a_ij) c_j).
  Eigen::Index wrong = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (whole.a_s[static_cast<std::size_t>(i) * n + j] !=
          static_cast<float>((whole.row_scale[i] * A(i, j)) * whole.col_scale[j]))
        ++wrong;
  CHECK(wrong == 0);
  // ||A||_inf: the row sums in another order than Eigen's, each within n u64 of the exact sum.
  const double norm = A.cwiseAbs().rowwise().sum().maxCoeff();
  CHECK(std::abs(whole.norm - norm) <= 2.0 * n * 0x1p-53 * norm);
  for (const auto& parts : std::vector<std::vector<std::pair<int, int>>>{
           {{0, 512}, {512, n}}, {{300, n}, {0, 100}, {100, 300}}, {{0, 1}, {1, 33}, {33, n}}}) {
    const Equilibrated split = run(parts);
    INFO("parts: " << parts.size() << ", the first at " << parts.front().first);
    CHECK(split.row_scale == whole.row_scale);
    CHECK(split.col_scale == whole.col_scale);
    CHECK(split.norm == whole.norm);
    CHECK(split.a_s == whole.a_s);
  }
}

TEST_CASE("the FP64 path's equilibration in one cluster or one cooperative launch: bitwise the kernels' results",
          "[gpu]") {
  if (!cuda::device_available()) {
    WARN("no CUDA device: skipping the one-launch equilibration (" << cuda::device_name() << ")");
    return;
  }
  // n from 1 to past the grid's blocks (more columns than SMs, several row blocks and chunks;
  // the cluster's: past its 256 warps, one and more 256-row blocks, 1023 its largest n); 2047:
  // the kernels one by one (from n = 1024), which must give the same
  using How = cuda::kernels::Fp64Equilibration;
  for (const auto& [n, how] : std::vector<std::pair<int, How>>{
           {1, How::automatic}, {7, How::cluster}, {200, How::automatic}, {256, How::cluster}, {257, How::cluster},
           {777, How::automatic}, {1023, How::cluster}, {7, How::cooperative}, {200, How::cooperative},
           {777, How::cooperative}, {200, How::kernels}, {2047, How::automatic}}) {
    INFO("n = " << n << ", launch " << static_cast<int>(how));
    std::mt19937 rng(static_cast<unsigned>(n));
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    Eigen::MatrixXd A(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) A(i, j) = dist(rng) * std::ldexp(1.0, (i * 7) % 41 - 20 + (j * 3) % 37 - 18);
    const std::size_t m = static_cast<std::size_t>(n);
    cuda::DeviceBuffer<double> a(std::vector<double>(A.data(), A.data() + A.size()));
    cuda::DeviceBuffer<double> workspace(cuda::kernels::equilibrate_workspace_doubles(n));
    cuda::DeviceBuffer<double> row(m), col(m), sum(m), norm(1), a_s(m * m);
    cuda::DeviceBuffer<double> row2(m), col2(m), sum2(m), norm2(1), a_s2(m * m);
    cuda::DeviceBuffer<int> zero(std::vector<int>{12345});
    cuda::kernels::equilibrate_rows(nullptr, a.data(), n, row.data(), norm.data(), workspace.data());
    cuda::kernels::equilibrate_columns(nullptr, a.data(), n, row.data(), col.data(), nullptr, 0, n, sum.data());
    cuda::kernels::scale_copy(nullptr, a.data(), n, row.data(), col.data(), a_s.data());
    const How ran = cuda::kernels::equilibrate_fp64(nullptr, a.data(), n, row2.data(), col2.data(), sum2.data(),
                                                    norm2.data(), a_s2.data(), zero.data(), workspace.data(), how);
    const How expected = n >= cuda::kernels::kFp64OneLaunchBelow ? How::kernels
                         : how != How::automatic                  ? how
                         : n < cuda::kernels::kFp64ClusterBelow   ? How::cluster
                                                                  : How::cooperative;
    CHECK(ran == expected);  // (an H200 has cooperative launches)
    CHECK(row2.download() == row.download());
    CHECK(col2.download() == col.download());
    CHECK(sum2.download() == sum.download());
    CHECK(norm2.download() == norm.download());
    CHECK(zero.download()[0] == 0);
    const std::vector<double> s = a_s2.download(), r = row.download(), c = col.download();
    CHECK(s == a_s.download());
    Eigen::Index wrong = 0;  // the definition: (r_i a_ij) c_j, column-major
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if (s[static_cast<std::size_t>(j) * m + static_cast<std::size_t>(i)] != (r[i] * A(i, j)) * c[j]) ++wrong;
    CHECK(wrong == 0);
  }
}

}  // namespace

#endif  // TCSOLVE_HAVE_CUDA
