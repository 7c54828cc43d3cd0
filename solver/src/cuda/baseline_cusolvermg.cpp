// The multi-GPU baseline (distributed.hpp, solve_generated_cusolvermg): cuSOLVER's cusolverMg
// getrf + getrs in FP64 on a 1 x G column block-cyclic layout (tile T_A), the layout of NVIDIA's
// cusolverMg samples, on the random-mode system made on the GPUs themselves (random_system.cu:
// cusolverMg's column tiles are the 1 x G block-cyclic map with nb = T_A, so every GPU makes its
// own columns, with the generator's bits). libcusolverMg is opened at run time (dlopen): a machine
// without it gets Unavailable, not a binary that does not start. Timed from getrf's start to
// getrs's end, every GPU synchronized; then A is made again in place and r = b - A x summed over
// the GPUs for the backward error; x_true gives the forward error.
#include <cublas_v2.h>
#include <cuda_runtime.h>
// cusolverMg is deprecated in CUDA 13 (still shipped): the baseline the issue names
#define DISABLE_CUSOLVERMG_DEPRECATED
#include <cusolverMg.h>
#include <dlfcn.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "../host_clock.hpp"
#include "distributed_kernels.hpp"
#include "libraries.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/device.hpp"
#include "tcsolve/runtime/group.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/solver/block_cyclic.hpp"
#include "tcsolve/solver/distributed.hpp"
#include "tcsolve/solver/generate.hpp"

namespace tcsolve {
namespace {

/// The cusolverMg entry points, from dlopen.
struct MgApi {
  void* lib = nullptr;
  decltype(&cusolverMgCreate) create = nullptr;
  decltype(&cusolverMgDestroy) destroy = nullptr;
  decltype(&cusolverMgDeviceSelect) select = nullptr;
  decltype(&cusolverMgCreateDeviceGrid) grid = nullptr;
  decltype(&cusolverMgDestroyGrid) destroy_grid = nullptr;
  decltype(&cusolverMgCreateMatrixDesc) desc = nullptr;
  decltype(&cusolverMgDestroyMatrixDesc) destroy_desc = nullptr;
  decltype(&cusolverMgGetrf_bufferSize) getrf_size = nullptr;
  decltype(&cusolverMgGetrf) getrf = nullptr;
  decltype(&cusolverMgGetrs_bufferSize) getrs_size = nullptr;
  decltype(&cusolverMgGetrs) getrs = nullptr;

  MgApi() {
    for (const char* name : {"libcusolverMg.so.12", "libcusolverMg.so.11", "libcusolverMg.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (lib == nullptr)
      throw Unavailable(std::string("baseline cusolvermg: libcusolverMg not found (") + dlerror() + ")");
    load(create, "cusolverMgCreate");
    load(destroy, "cusolverMgDestroy");
    load(select, "cusolverMgDeviceSelect");
    load(grid, "cusolverMgCreateDeviceGrid");
    load(destroy_grid, "cusolverMgDestroyGrid");
    load(desc, "cusolverMgCreateMatrixDesc");
    load(destroy_desc, "cusolverMgDestroyMatrixDesc");
    load(getrf_size, "cusolverMgGetrf_bufferSize");
    load(getrf, "cusolverMgGetrf");
    load(getrs_size, "cusolverMgGetrs_bufferSize");
    load(getrs, "cusolverMgGetrs");
  }
  template <class F>
  void load(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (f == nullptr) throw Unavailable(std::string("baseline cusolvermg: ") + name + " not in libcusolverMg");
  }
};

/// One device's arrays (allocated on it, freed there).
struct OnDevice {
  int device;
  cuda::DeviceBuffer<double> a, b, work;
  cuda::DeviceBuffer<int> ipiv;
};

void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw CudaError(std::string("baseline cusolvermg: ") + what + ": " + cuda::cusolver_status_name(s));
}

}  // namespace

SolveResult solve_generated_cusolvermg(int n, std::uint64_t seed, const std::vector<int>& devices, int tile) {
  if (n < 1 || tile < 1 || devices.empty())
    throw InvalidInput("baseline cusolvermg: n = " + std::to_string(n) + ", tile " + std::to_string(tile) + ", " +
                       std::to_string(devices.size()) + " GPUs");
  static const MgApi mg;  // the library's entry points: process-wide, the same for every device
  const int g = static_cast<int>(devices.size());
  const CyclicMap cols{n, tile, g};
  const std::size_t nn = static_cast<std::size_t>(n);
  const Eigen::MatrixXd x_true = random_x_true(n, 1, seed);
  std::vector<OnDevice> on;
  on.reserve(devices.size());
  for (int p = 0; p < g; ++p) {  // each GPU makes its columns of A; GPU 0 holds b (B's one tile)
    const runtime::DeviceScope scope(devices[static_cast<std::size_t>(p)]);
    const int lc = cols.count(p);
    const double need = 8.0 * nn * std::max(lc, 1) + 8.0 * nn * tile;
    if (need > static_cast<double>(cuda::device_memory().free))
      throw InvalidInput("baseline cusolvermg: n = " + std::to_string(n) + " needs " +
                         std::to_string(static_cast<long long>(need)) + " bytes on GPU " +
                         std::to_string(devices[static_cast<std::size_t>(p)]));
    OnDevice d{devices[static_cast<std::size_t>(p)], cuda::DeviceBuffer<double>(nn * std::max(lc, 1)),
               cuda::DeviceBuffer<double>(nn * tile), {}, cuda::DeviceBuffer<int>(static_cast<std::size_t>(std::max(lc, 1)))};
    cuda::kernels::random_columns(nullptr, seed, n, tile, p, g, lc, d.a.data(), n);
    if (p == 0) {
      cuda::DeviceBuffer<double> xd(nn);
      cuda::copy_to_device(xd.data(), x_true.data(), nn * sizeof(double));
      cuda::kernels::random_rhs(nullptr, seed, n, xd.data(), d.b.data());
      TCSOLVE_CUDA_CHECK(cudaDeviceSynchronize());
    }
    on.push_back(std::move(d));
  }
  Eigen::VectorXd b(n);
  {
    const runtime::DeviceScope scope(devices[0]);
    cuda::copy_to_host(b.data(), on[0].b.data(), nn * sizeof(double));
  }
  cusolverMgHandle_t h = nullptr;
  cudaLibMgGrid_t grid = nullptr;
  cudaLibMgMatrixDesc_t da = nullptr, db = nullptr;
  std::vector<int> ids(devices.begin(), devices.end());
  check(mg.create(&h), "cusolverMgCreate");
  struct Cleanup {
    const MgApi& mg;
    cusolverMgHandle_t& h;
    cudaLibMgGrid_t& grid;
    cudaLibMgMatrixDesc_t &da, &db;
    ~Cleanup() {
      if (da) mg.destroy_desc(da);
      if (db) mg.destroy_desc(db);
      if (grid) mg.destroy_grid(grid);
      if (h) mg.destroy(h);
    }
  } cleanup{mg, h, grid, da, db};
  check(mg.select(h, g, ids.data()), "cusolverMgDeviceSelect");
  check(mg.grid(&grid, 1, g, ids.data(), CUDALIBMG_GRID_MAPPING_COL_MAJOR), "cusolverMgCreateDeviceGrid");
  check(mg.desc(&da, n, n, n, tile, CUDA_R_64F, grid), "cusolverMgCreateMatrixDesc A");
  check(mg.desc(&db, n, 1, n, tile, CUDA_R_64F, grid), "cusolverMgCreateMatrixDesc B");
  std::vector<void*> pa, pb, pw;
  std::vector<int*> pi;
  for (OnDevice& d : on) {
    pa.push_back(d.a.data());
    pb.push_back(d.b.data());
    pi.push_back(d.ipiv.data());
  }
  int64_t lwork_f = 0, lwork_s = 0;
  check(mg.getrf_size(h, n, n, pa.data(), 1, 1, da, pi.data(), CUDA_R_64F, &lwork_f), "cusolverMgGetrf_bufferSize");
  check(mg.getrs_size(h, CUBLAS_OP_N, n, 1, pa.data(), 1, 1, da, pi.data(), pb.data(), 1, 1, db, CUDA_R_64F, &lwork_s),
        "cusolverMgGetrs_bufferSize");
  const int64_t lwork = std::max(lwork_f, lwork_s);
  for (OnDevice& d : on) {
    const runtime::DeviceScope scope(d.device);
    d.work = cuda::DeviceBuffer<double>(static_cast<std::size_t>(std::max<int64_t>(lwork, 1)));
    pw.push_back(d.work.data());
    TCSOLVE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  auto sync_all = [&] {
    for (const OnDevice& d : on) {
      const runtime::DeviceScope scope(d.device);
      TCSOLVE_CUDA_CHECK(cudaDeviceSynchronize());
    }
  };
  SolveResult res;
  res.backend = Backend::cuda;
  res.block_size = tile;
  res.resolved_variant = Variant::fp64;
  res.fp64_lu = true;
  const auto t0 = Clock::now();
  int info = 0;
  check(mg.getrf(h, n, n, pa.data(), 1, 1, da, pi.data(), CUDA_R_64F, pw.data(), lwork, &info), "cusolverMgGetrf");
  sync_all();
  const auto t1 = Clock::now();
  if (info != 0) throw InvalidInput("baseline cusolvermg: getrf info = " + std::to_string(info));
  check(mg.getrs(h, CUBLAS_OP_N, n, 1, pa.data(), 1, 1, da, pi.data(), pb.data(), 1, 1, db, CUDA_R_64F, pw.data(),
                 lwork, &info),
        "cusolverMgGetrs");
  sync_all();
  const auto t2 = Clock::now();
  res.time_s.factorization = seconds(t0, t1);
  res.time_s.refinement = seconds(t1, t2);
  res.time_s.total = seconds(t0, t2);
  res.x.resize(n, 1);
  {
    const runtime::DeviceScope scope(devices[0]);
    cuda::copy_to_host(res.x.data(), on[0].b.data(), nn * sizeof(double));
  }
  // r = b - A x: A made again, each GPU's columns times its entries of x (cublasDgemv), summed here
  Eigen::VectorXd ax = Eigen::VectorXd::Zero(n), row_sums = Eigen::VectorXd::Zero(n);
  for (int p = 0; p < g; ++p) {
    OnDevice& d = on[static_cast<std::size_t>(p)];
    const runtime::DeviceScope scope(d.device);
    const int lc = cols.count(p);
    if (lc == 0) continue;
    cuda::kernels::random_columns(nullptr, seed, n, tile, p, g, lc, d.a.data(), n);
    Eigen::VectorXd xl(lc);
    for (int l = 0; l < lc; ++l) xl[l] = res.x(cols.global(l, p), 0);
    cuda::DeviceBuffer<double> xd(static_cast<std::size_t>(lc)), yd(nn), sums(nn), maxima(nn);
    cuda::copy_to_device(xd.data(), xl.data(), static_cast<std::size_t>(lc) * sizeof(double));
    cublasHandle_t blas = nullptr;
    TCSOLVE_CUBLAS_CHECK(cublasCreate(&blas));
    const double one = 1, zero = 0;
    const cublasStatus_t st = cublasDgemv(blas, CUBLAS_OP_N, n, lc, &one, d.a.data(), n, xd.data(), 1, &zero, yd.data(), 1);
    cublasDestroy(blas);
    TCSOLVE_CUBLAS_CHECK(st);
    cuda::kernels::piece_row_max_sum(nullptr, d.a.data(), n, n, lc, maxima.data(), sums.data());
    Eigen::VectorXd y(n), rs(n);
    cuda::copy_to_host(y.data(), yd.data(), nn * sizeof(double));
    cuda::copy_to_host(rs.data(), sums.data(), nn * sizeof(double));
    ax += y;
    row_sums += rs;
  }
  const double norm_a = row_sums.maxCoeff(), norm_x = res.x.lpNorm<Eigen::Infinity>();
  const double norm_r = (b - ax).lpNorm<Eigen::Infinity>();
  res.backward_error = norm_r / (norm_a * norm_x + b.lpNorm<Eigen::Infinity>());
  res.converged = norm_r <= std::sqrt(static_cast<double>(n)) * norm_x * norm_a * 0x1p-53;
  res.history.push_back(res.backward_error);
  res.forward_error = (res.x - x_true).lpNorm<Eigen::Infinity>() / x_true.lpNorm<Eigen::Infinity>();
  res.note = "cusolverMg getrf + getrs (FP64, 1 x " + std::to_string(g) + " column block-cyclic, tile " +
             std::to_string(tile) + ")";
  return res;
}

}  // namespace tcsolve
