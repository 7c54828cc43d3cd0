// A tool for the GPU runs, not a test: the candidates for the small systems' FP64 LU path
// (issue 35 item 3, docs/BENCHMARKS.md "Small systems"). Per n it times, on one stream with data
// already on the device, each way the CUDA libraries offer to factor and solve A x = b in FP64:
//   getrf:   cusolverDnDgetrf (the compare baseline's), cusolverDnXgetrf with CUSOLVER_ALG_0 and
//            CUSOLVER_ALG_1, cublasDgetrfBatched with a batch of one
//   getrs:   cusolverDnDgetrs (the baseline's), cusolverDnXgetrs, cublasDgetrsBatched (batch 1)
//   also:    one FP64 residual (cublasDgemv), cudaMalloc + cudaFree of n^2 doubles, and the
//            sequence copy A, Dgetrf, copy b, Dgetrs launched call by call and replayed from a
//            CUDA graph captured once
// Each figure is the median of `reps` timings (CUDA events around one call) after 3 warm-ups; each
// getrf works on a fresh copy of A (the copy is outside the timing). Every factorization's x is
// checked: its backward error ||b - A x||_inf / (||A||_inf ||x||_inf) is printed beside the time.
//
//   tcsolve_small_lu_bench [--reps N] [N ...]      (default n: 200 256 384 512 768 1024 1536 2048
//                                                   3072 4096; default reps 21)
//   tcsolve_small_lu_bench --coop [--reps N] [N ...]
// --coop: cusolverDnDgetrf against this project's one-launch LU (kernels::coop_lu, panel widths 32
// and 16 where n fits, default grid, and the grid of one block), each followed by the same
// cusolverDnDgetrs; the backward error of each x, and whether the two LUs chose the same pivots.
//   tcsolve_small_lu_bench --apply [--reps N] [N ...]
// --apply: the solves of one cusolverDnDgetrf factorization: cusolverDnDgetrs against this
// project's one-launch solve (kernels::lu_apply, R = C = 1; up to its largest n), for one and two
// right-hand sides, each x's backward error beside, and the two triangular solves alone (no
// interchanges) by cublasDtrsv and by cublasDtrsm with one column.
//   tcsolve_small_lu_bench --fixed [--reps N] [N ...]
// --fixed: the FP64 path's fixed costs around the LU, each timed on a busy stream (a 256 MiB
// memset queued first, so that the events see the device's time, not the host's enqueueing):
// the equilibration (kernels::equilibrate_fp64 in one cluster, in one cooperative launch, and
// kernel by kernel; whether the three agree bitwise) and the residual with its norms
// (kernels::small_residual against the cuBLAS path: a copy of b, cublasDgemv, two column maxima);
// and the host's microseconds per call of each way (host_cl, host_co, host_ke for the
// equilibration, host_rk, host_rc for the residual: 32 calls enqueued behind the busy stream,
// timed on the host).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cuda/kernels.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuBLAS status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}
void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuSOLVER status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

struct Timer {
  cudaStream_t stream;
  cudaEvent_t a, b;
  explicit Timer(cudaStream_t s) : stream(s) {
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
  }
  template <class F>
  double median_ms(int reps, F&& f, const std::function<void()>& before = {}) {
    std::vector<float> t;
    for (int r = 0; r < reps + 3; ++r) {
      if (before) before();
      check(cudaEventRecord(a, stream), "record");
      f();
      check(cudaEventRecord(b, stream), "record");
      check(cudaEventSynchronize(b), "sync");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, a, b), "elapsed");
      if (r >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

/// A U(-1,1) system of order n (seed 1) on the host (ha, hb) and the device: A (a0) and a working
/// copy (a), b, x, the pivots and two infos.
struct System {
  int n;
  std::size_t nn;
  std::vector<double> ha, hb;
  double *a0 = nullptr, *a = nullptr, *b = nullptr, *x = nullptr;
  int *ipiv = nullptr, *info = nullptr;
  explicit System(int order) : n(order), nn(static_cast<std::size_t>(order) * order), ha(nn), hb(order) {
    std::mt19937_64 gen(1);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& v : ha) v = u(gen);
    for (double& v : hb) v = u(gen);
    check(cudaMalloc(&a0, nn * 8), "malloc");
    check(cudaMalloc(&a, nn * 8), "malloc");
    check(cudaMalloc(&b, n * 8), "malloc");
    check(cudaMalloc(&x, n * 8), "malloc");
    check(cudaMalloc(&ipiv, n * 4), "malloc");
    check(cudaMalloc(&info, 16), "malloc");
    check(cudaMemcpy(a0, ha.data(), nn * 8, cudaMemcpyHostToDevice), "copy");
    check(cudaMemcpy(b, hb.data(), n * 8, cudaMemcpyHostToDevice), "copy");
  }
  System(const System&) = delete;
  System& operator=(const System&) = delete;
  ~System() {
    for (void* p : {static_cast<void*>(a0), static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(x),
                    static_cast<void*>(ipiv), static_cast<void*>(info)})
      cudaFree(p);
  }
};

/// ||b - A x||_inf / (||A||_inf ||x||_inf) of the device x against the host A (column-major) and b.
double backward_error(const std::vector<double>& ha, const std::vector<double>& hb, const double* x, int n) {
  std::vector<double> hx(n);
  check(cudaMemcpy(hx.data(), x, n * 8, cudaMemcpyDeviceToHost), "copy");
  double rmax = 0, amax = 0, xmax = 0;
  for (int i = 0; i < n; ++i) {
    double s = hb[i], row = 0;
    for (int j = 0; j < n; ++j) {
      s -= ha[static_cast<std::size_t>(j) * n + i] * hx[j];
      row += std::abs(ha[static_cast<std::size_t>(j) * n + i]);
    }
    rmax = std::max(rmax, std::abs(s));
    amax = std::max(amax, row);
    xmax = std::max(xmax, std::abs(hx[i]));
  }
  return rmax / (amax * xmax);
}

/// --coop: one row per n (ms, medians of reps; each factorization of a fresh copy of A).
void coop_table(const std::vector<int>& sizes, int reps, cudaStream_t stream, cusolverDnHandle_t dn) {
  namespace k = tcsolve::cuda::kernels;
  Timer timer(stream);
  const int max32 = k::coop_lu_max_n(32), max16 = k::coop_lu_max_n(16);
  std::printf("coop_lu fits n <= %d (panel 32), n <= %d (panel 16)\n", max32, max16);
  std::printf("%6s %10s %10s %10s %10s %10s %10s  %s\n", "n", "Dgetrf", "coop32", "coop16", "coop32g1", "Dgetrs",
              "coop/Dgetrf", "backward errors (Dgetrf coop32 coop16), same pivots");
  for (int n : sizes) {
    const System sys(n);
    const std::size_t nn = sys.nn;
    double *a0 = sys.a0, *a = sys.a, *b = sys.b, *x = sys.x, *work = nullptr;
    int *ipiv = sys.ipiv, *info = sys.info;
    int lwork = 0;
    check(cusolverDnDgetrf_bufferSize(dn, n, n, a, n, &lwork), "bufferSize");
    check(cudaMalloc(&work, std::max<std::size_t>(static_cast<std::size_t>(lwork) * 8, 8)), "malloc");
    auto fresh = [&] { check(cudaMemcpyAsync(a, a0, nn * 8, cudaMemcpyDeviceToDevice, stream), "copy"); };
    auto solve = [&] {
      check(cudaMemcpyAsync(x, b, n * 8, cudaMemcpyDeviceToDevice, stream), "copy");
      check(cusolverDnDgetrs(dn, CUBLAS_OP_N, n, 1, a, n, ipiv, x, n, info + 1), "Dgetrs");
      check(cudaStreamSynchronize(stream), "sync");
      return backward_error(sys.ha, sys.hb, x, n);
    };
    auto pivots = [&] {
      std::vector<int> p(n);
      check(cudaMemcpy(p.data(), ipiv, n * 4, cudaMemcpyDeviceToHost), "copy");
      return p;
    };
    const double t_d = timer.median_ms(reps, [&] {
      check(cusolverDnDgetrf(dn, n, n, a, n, work, ipiv, info), "Dgetrf");
    }, fresh);
    const double t_rs = timer.median_ms(reps, [&] {
      check(cusolverDnDgetrs(dn, CUBLAS_OP_N, n, 1, a, n, ipiv, x, n, info + 1), "Dgetrs");
    }, [&] { check(cudaMemcpyAsync(x, b, n * 8, cudaMemcpyDeviceToDevice, stream), "copy"); });
    const double be_d = solve();
    const std::vector<int> p_d = pivots();
    double t_c[2] = {-1, -1}, be_c[2] = {-1, -1}, t_g1 = -1;
    bool same = true;
    for (int w = 0; w < 2; ++w) {
      const int nb = w == 0 ? 32 : 16;
      if (n > (w == 0 ? max32 : max16)) continue;
      t_c[w] = timer.median_ms(reps, [&] { k::coop_lu(stream, a, n, n, nb, ipiv, info); }, fresh);
      be_c[w] = solve();
      same = same && pivots() == p_d;
      if (w == 0)
        t_g1 = timer.median_ms(std::max(3, reps / 4), [&] { k::coop_lu(stream, a, n, n, nb, ipiv, info, 1); }, fresh);
    }
    const double best = t_c[0] > 0 && (t_c[1] < 0 || t_c[0] < t_c[1]) ? t_c[0] : t_c[1];
    std::printf("%6d %10.4f %10.4f %10.4f %10.4f %10.4f %10.3f  %.1e %.1e %.1e %s\n", n, t_d, t_c[0], t_c[1], t_g1,
                t_rs, best > 0 ? best / t_d : -1.0, be_d, be_c[0], be_c[1], same ? "yes" : "no");
    std::fflush(stdout);
    check(cudaFree(work), "free");
  }
}

}  // namespace

/// --apply: one row per n (ms, medians of reps; b copied to x before each timing, outside it).
void apply_table(const std::vector<int>& sizes, int reps, cudaStream_t stream, cusolverDnHandle_t dn,
                 cublasHandle_t blas) {
  namespace k = tcsolve::cuda::kernels;
  Timer timer(stream);
  std::printf("%6s %10s %10s %10s %10s %10s %10s  %s\n", "n", "Dgetrs", "lu_apply", "Dgetrs2", "lu_apply2", "Dtrsv2",
              "Dtrsm2", "backward errors (Dgetrs lu_apply)");
  for (int n : sizes) {
    System s(n);
    double *x2 = nullptr, *ones = nullptr, *b2 = nullptr;
    check(cudaMalloc(&x2, 2 * static_cast<std::size_t>(n) * 8), "malloc");
    check(cudaMalloc(&b2, 2 * static_cast<std::size_t>(n) * 8), "malloc");
    check(cudaMalloc(&ones, static_cast<std::size_t>(n) * 8), "malloc");
    std::vector<double> one(n, 1.0);
    check(cudaMemcpy(ones, one.data(), n * 8, cudaMemcpyHostToDevice), "copy");
    check(cudaMemcpy(b2, s.b, n * 8, cudaMemcpyDeviceToDevice), "copy");
    check(cudaMemcpy(b2 + n, s.b, n * 8, cudaMemcpyDeviceToDevice), "copy");
    int lwork = 0;
    check(cusolverDnDgetrf_bufferSize(dn, n, n, s.a, n, &lwork), "bufferSize");
    double* work = nullptr;
    check(cudaMalloc(&work, std::max(lwork, 1) * 8), "malloc");
    check(cudaMemcpy(s.a, s.a0, s.nn * 8, cudaMemcpyDeviceToDevice), "copy");
    check(cusolverDnDgetrf(dn, n, n, s.a, n, work, s.ipiv, s.info), "Dgetrf");
    check(cudaStreamSynchronize(stream), "sync");
    const auto fresh = [&] { check(cudaMemcpyAsync(s.x, s.b, n * 8, cudaMemcpyDeviceToDevice, stream), "copy"); };
    const auto fresh2 = [&] { check(cudaMemcpyAsync(x2, b2, 2 * n * 8, cudaMemcpyDeviceToDevice, stream), "copy"); };
    const double t_rs = timer.median_ms(reps, [&] {
      check(cusolverDnDgetrs(dn, CUBLAS_OP_N, n, 1, s.a, n, s.ipiv, s.x, n, s.info + 1), "Dgetrs");
    }, fresh);
    const double e_rs = backward_error(s.ha, s.hb, s.x, n);
    const bool apply_ok = n <= k::kLuApplyMaxN;
    const double t_ap = apply_ok ? timer.median_ms(reps, [&] { k::lu_apply(stream, s.a, n, s.ipiv, ones, ones, s.x, 1, s.x); },
                                                   fresh)
                                 : NAN;
    const double e_ap = apply_ok ? backward_error(s.ha, s.hb, s.x, n) : NAN;
    // the two triangular solves alone (no interchanges): cublasDtrsv, and cublasDtrsm with one column
    const double one_d = 1.0;
    const double t_sv = timer.median_ms(reps, [&] {
      check(cublasDtrsv(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n, s.a, n, s.x, 1), "Dtrsv");
      check(cublasDtrsv(blas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, s.a, n, s.x, 1), "Dtrsv");
    }, fresh);
    const double t_sm = timer.median_ms(reps, [&] {
      check(cublasDtrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n, 1, &one_d, s.a,
                        n, s.x, n), "Dtrsm");
      check(cublasDtrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, 1, &one_d,
                        s.a, n, s.x, n), "Dtrsm");
    }, fresh);
    const double t_rs2 = timer.median_ms(reps, [&] {
      check(cusolverDnDgetrs(dn, CUBLAS_OP_N, n, 2, s.a, n, s.ipiv, x2, n, s.info + 1), "Dgetrs");
    }, fresh2);
    const double t_ap2 =
        apply_ok ? timer.median_ms(reps, [&] { k::lu_apply(stream, s.a, n, s.ipiv, ones, ones, x2, 2, x2); }, fresh2)
                 : NAN;
    std::printf("%6d %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f  %.1e %.1e\n", n, t_rs, t_ap, t_rs2, t_ap2, t_sv, t_sm,
                e_rs, e_ap);
    cudaFree(work);
    cudaFree(x2);
    cudaFree(b2);
    cudaFree(ones);
  }
}

/// --fixed: one row per n (us, medians of reps, each after a busy predecessor).
void fixed_table(const std::vector<int>& sizes, int reps, cudaStream_t stream, cublasHandle_t blas) {
  namespace k = tcsolve::cuda::kernels;
  Timer timer(stream);
  void* busy = nullptr;
  const std::size_t busy_bytes = std::size_t{256} << 20;
  check(cudaMalloc(&busy, busy_bytes), "malloc");
  const auto queue_busy = [&] { check(cudaMemsetAsync(busy, 0, busy_bytes, stream), "memset"); };
  std::printf("%6s %10s %10s %10s %8s %10s %10s %8s %8s %8s %8s %8s %8s\n", "n", "eq_clust", "eq_coop", "eq_kern",
              "same", "res_kern", "res_cublas", "blocks", "host_cl", "host_co", "host_ke", "host_rk", "host_rc");
  for (int n : sizes) {
    System s(n);
    const std::size_t m = static_cast<std::size_t>(n);
    double *work = nullptr, *scratch = nullptr, *r = nullptr, *norms = nullptr;
    const std::size_t ws = k::equilibrate_workspace_doubles(n);
    // per launch kind: row, col, sum, norm, a_s (n^2), zero
    double* out[3] = {};
    const std::size_t each = 3 * m + 1 + m * m + 1;
    for (auto& o : out) check(cudaMalloc(&o, each * 8), "malloc");
    check(cudaMalloc(&work, ws * 8), "malloc");
    const bool small = n <= k::kSmallResidualMaxN;
    check(cudaMalloc(&scratch, std::max<std::size_t>(k::small_residual_scratch_doubles(n, 1), 1) * 8), "malloc");
    check(cudaMalloc(&r, m * 8), "malloc");
    check(cudaMalloc(&norms, 2 * 8), "malloc");
    const k::Fp64Equilibration how[3] = {k::Fp64Equilibration::cluster, k::Fp64Equilibration::cooperative,
                                         k::Fp64Equilibration::kernels};
    double t_eq[3];
    for (int w = 0; w < 3; ++w) {
      double* o = out[w];
      t_eq[w] = 1e3 * timer.median_ms(reps, [&] {
        k::equilibrate_fp64(stream, s.a0, n, o, o + m, o + 2 * m, o + 3 * m, o + 3 * m + 1,
                            reinterpret_cast<int*>(o + 3 * m + 1 + m * m), work, how[w]);
      }, queue_busy);
    }
    // the host's cost of each way's launches: 32 calls enqueued back to back behind a busy
    // stream (the queue never drains), the enqueueing timed on the host, per call
    double host_eq[3];
    for (int w = 0; w < 3; ++w) {
      double* o = out[w];
      check(cudaStreamSynchronize(stream), "sync");
      queue_busy();
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < 32; ++r)
        k::equilibrate_fp64(stream, s.a0, n, o, o + m, o + 2 * m, o + 3 * m, o + 3 * m + 1,
                            reinterpret_cast<int*>(o + 3 * m + 1 + m * m), work, how[w]);
      host_eq[w] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 32;
    }
    check(cudaStreamSynchronize(stream), "sync");
    std::vector<double> h[3];
    for (int w = 0; w < 3; ++w) {
      h[w].resize(each - 1);  // all but zero
      check(cudaMemcpy(h[w].data(), out[w], (each - 1) * 8, cudaMemcpyDeviceToHost), "copy");
    }
    const bool same = h[0] == h[1] && h[0] == h[2];
    const double t_rk = small ? 1e3 * timer.median_ms(reps, [&] {
      k::small_residual(stream, s.a0, n, s.b, s.b, r, norms, 1, scratch);
    }, queue_busy) : NAN;
    const double minus_one = -1.0, one = 1.0;
    const double t_rc = 1e3 * timer.median_ms(reps, [&] {
      check(cudaMemcpyAsync(r, s.b, m * 8, cudaMemcpyDeviceToDevice, stream), "copy");
      check(cublasDgemv(blas, CUBLAS_OP_N, n, n, &minus_one, s.a0, n, s.b, 1, &one, r, 1), "Dgemv");
      k::column_max_abs(stream, r, n, n, 1, nullptr, norms, nullptr);
      k::column_max_abs(stream, s.b, n, n, 1, nullptr, norms + 1, nullptr);
    }, queue_busy);
    const auto host_us = [&](const std::function<void()>& f) {  // as host_eq
      check(cudaStreamSynchronize(stream), "sync");
      queue_busy();
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < 32; ++r) f();
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 32;
      check(cudaStreamSynchronize(stream), "sync");
      return us;
    };
    const double host_rk = small ? host_us([&] { k::small_residual(stream, s.a0, n, s.b, s.b, r, norms, 1, scratch); })
                                 : NAN;
    const double host_rc = host_us([&] {
      check(cudaMemcpyAsync(r, s.b, m * 8, cudaMemcpyDeviceToDevice, stream), "copy");
      check(cublasDgemv(blas, CUBLAS_OP_N, n, n, &minus_one, s.a0, n, s.b, 1, &one, r, 1), "Dgemv");
      k::column_max_abs(stream, r, n, n, 1, nullptr, norms, nullptr);
      k::column_max_abs(stream, s.b, n, n, 1, nullptr, norms + 1, nullptr);
    });
    std::printf("%6d %10.2f %10.2f %10.2f %8s %10.2f %10.2f %8d %8.2f %8.2f %8.2f %8.2f %8.2f\n", n, t_eq[0], t_eq[1],
                t_eq[2], same ? "yes" : "NO", t_rk, t_rc, k::small_residual_blocks(), host_eq[0], host_eq[1], host_eq[2],
                host_rk, host_rc);
    std::fflush(stdout);
    for (void* p : {static_cast<void*>(work), static_cast<void*>(scratch), static_cast<void*>(r),
                    static_cast<void*>(norms), static_cast<void*>(out[0]), static_cast<void*>(out[1]),
                    static_cast<void*>(out[2])})
      cudaFree(p);
  }
  cudaFree(busy);
}

int main(int argc, char** argv) {
  int reps = 21;
  bool coop = false, apply = false, fixed = false;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: tcsolve_small_lu_bench [--coop | --apply | --fixed] [--reps N] [N ...]\n");
      return 0;
    }
    if (a == "--coop") {
      coop = true;
      continue;
    }
    if (a == "--apply") {
      apply = true;
      continue;
    }
    if (a == "--fixed") {
      fixed = true;
      continue;
    }
    if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
      continue;
    }
    sizes.push_back(std::atoi(a.c_str()));
  }
  if (sizes.empty()) sizes = {200, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cusolverDnHandle_t dn;
  check(cusolverDnCreate(&dn), "cusolverDnCreate");
  check(cusolverDnSetStream(dn, stream), "cusolverDnSetStream");
  cublasHandle_t blas;
  check(cublasCreate(&blas), "cublasCreate");
  check(cublasSetStream(blas, stream), "cublasSetStream");
  if (apply) {
    apply_table(sizes, reps, stream, dn, blas);
    return 0;
  }
  if (fixed) {
    fixed_table(sizes, reps, stream, blas);
    return 0;
  }
  if (coop) {
    coop_table(sizes, reps, stream, dn);
    return 0;
  }
  cusolverDnParams_t params[2];
  for (int k = 0; k < 2; ++k) {
    check(cusolverDnCreateParams(&params[k]), "params");
    check(cusolverDnSetAdvOptions(params[k], CUSOLVERDN_GETRF, k == 0 ? CUSOLVER_ALG_0 : CUSOLVER_ALG_1), "adv");
  }
  Timer timer(stream);
  std::printf("%6s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s  %s\n", "n", "Dgetrf", "Xgetrf0", "Xgetrf1",
              "batched", "Dgetrs", "Xgetrs", "batchrs", "gemv", "malloc", "sequence", "graph",
              "backward errors (D X0 X1 batched graph)");
  for (int n : sizes) {
    const System sys(n);
    const std::size_t nn = sys.nn;
    const std::vector<double>&ha = sys.ha, &hb = sys.hb;
    double *a0 = sys.a0, *a = sys.a, *b = sys.b, *x = sys.x, *r = nullptr, *work = nullptr;
    int *ipiv = sys.ipiv, *info = sys.info;
    int64_t* ipiv64 = nullptr;
    check(cudaMalloc(&r, n * 8), "malloc");
    check(cudaMalloc(&ipiv64, n * 8), "malloc");
    int lwork = 0;
    check(cusolverDnDgetrf_bufferSize(dn, n, n, a, n, &lwork), "bufferSize");
    std::size_t dev_bytes = 0, host_bytes = 0, dev1 = 0, host1 = 0;
    check(cusolverDnXgetrf_bufferSize(dn, params[0], n, n, CUDA_R_64F, a, n, CUDA_R_64F, &dev_bytes, &host_bytes),
          "Xbuf");
    check(cusolverDnXgetrf_bufferSize(dn, params[1], n, n, CUDA_R_64F, a, n, CUDA_R_64F, &dev1, &host1), "Xbuf");
    dev_bytes = std::max({dev_bytes, dev1, static_cast<std::size_t>(lwork) * 8});
    host_bytes = std::max(host_bytes, host1);
    check(cudaMalloc(&work, std::max<std::size_t>(dev_bytes, 8)), "malloc");
    std::vector<char> host_work(std::max<std::size_t>(host_bytes, 1));
    double** aptr;
    double** bptr;
    check(cudaMalloc(&aptr, sizeof(double*)), "malloc");
    check(cudaMalloc(&bptr, sizeof(double*)), "malloc");
    check(cudaMemcpy(aptr, &a, sizeof(double*), cudaMemcpyHostToDevice), "copy");
    check(cudaMemcpy(bptr, &x, sizeof(double*), cudaMemcpyHostToDevice), "copy");
    auto fresh = [&] { check(cudaMemcpyAsync(a, a0, nn * 8, cudaMemcpyDeviceToDevice, stream), "copy"); };
    auto rhs = [&] { check(cudaMemcpyAsync(x, b, n * 8, cudaMemcpyDeviceToDevice, stream), "copy"); };
    // backward error of x against a0, b (host)
    auto backward = [&] { return backward_error(ha, hb, x, n); };
    const double t_d = timer.median_ms(reps, [&] {
      check(cusolverDnDgetrf(dn, n, n, a, n, work, ipiv, info), "Dgetrf");
    }, fresh);
    const double t_drs = timer.median_ms(reps, [&] {
      check(cusolverDnDgetrs(dn, CUBLAS_OP_N, n, 1, a, n, ipiv, x, n, info + 1), "Dgetrs");
    }, rhs);
    const double be_d = backward();
    double t_x[2], be_x[2], t_xrs = 0;
    for (int k = 0; k < 2; ++k) {
      t_x[k] = timer.median_ms(reps, [&] {
        check(cusolverDnXgetrf(dn, params[k], n, n, CUDA_R_64F, a, n, ipiv64, CUDA_R_64F, work, dev_bytes,
                               host_work.data(), host_bytes, info),
              "Xgetrf");
      }, fresh);
      const double t = timer.median_ms(reps, [&] {
        check(cusolverDnXgetrs(dn, params[k], CUBLAS_OP_N, n, 1, CUDA_R_64F, a, n, ipiv64, CUDA_R_64F, x, n, info + 1),
              "Xgetrs");
      }, rhs);
      if (k == 0) t_xrs = t;
      be_x[k] = backward();
    }
    const double t_bf = timer.median_ms(reps, [&] {
      check(cublasDgetrfBatched(blas, n, aptr, n, ipiv, info, 1), "DgetrfBatched");
    }, fresh);
    int binfo = 0;
    const double t_brs = timer.median_ms(reps, [&] {
      check(cublasDgetrsBatched(blas, CUBLAS_OP_N, n, 1, aptr, n, ipiv, bptr, n, &binfo, 1), "DgetrsBatched");
    }, rhs);
    const double be_b = backward();
    const double one = 1, minus_one = -1;
    const double t_gemv = timer.median_ms(reps, [&] {
      check(cublasDgemv(blas, CUBLAS_OP_N, n, n, &minus_one, a0, n, x, 1, &one, r, 1), "gemv");
    });
    // The same work replayed from a CUDA graph: the copy of A, dgetrf, the copy of b, dgetrs
    // (captured once; the times are of cudaGraphLaunch to the end of its work), against the same
    // sequence launched call by call.
    auto sequence = [&] {
      check(cudaMemcpyAsync(a, a0, nn * 8, cudaMemcpyDeviceToDevice, stream), "copy");
      check(cusolverDnDgetrf(dn, n, n, a, n, work, ipiv, info), "Dgetrf");
      check(cudaMemcpyAsync(x, b, n * 8, cudaMemcpyDeviceToDevice, stream), "copy");
      check(cusolverDnDgetrs(dn, CUBLAS_OP_N, n, 1, a, n, ipiv, x, n, info + 1), "Dgetrs");
    };
    const double t_seq = timer.median_ms(reps, sequence);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    double t_graph = -1, be_g = -1;
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
      sequence();
      if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
        check(cudaMemsetAsync(x, 0, n * 8, stream), "memset");
        t_graph = timer.median_ms(reps, [&] { check(cudaGraphLaunch(exec, stream), "graph launch"); });
        be_g = backward();
      } else {
        std::fprintf(stderr, "n = %d: capture failed: %s\n", n, cudaGetErrorString(cudaGetLastError()));
      }
    } else {
      std::fprintf(stderr, "n = %d: capture refused\n", n);
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    // cudaMalloc + cudaFree of n^2 doubles (host clock through events on the legacy stream is
    // not what we want: time them on the host)
    std::vector<double> mt;
    for (int k = 0; k < 11; ++k) {
      check(cudaStreamSynchronize(stream), "sync");
      const auto t0 = std::chrono::steady_clock::now();
      double* p = nullptr;
      check(cudaMalloc(&p, nn * 8), "malloc");
      check(cudaFree(p), "free");
      mt.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(mt.begin(), mt.end());
    std::printf("%6d %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f  %.1e %.1e %.1e %.1e %.1e\n",
                n, t_d, t_x[0], t_x[1], t_bf, t_drs, t_xrs, t_brs, t_gemv, mt[mt.size() / 2], t_seq, t_graph, be_d,
                be_x[0], be_x[1], be_b, be_g);
    std::fflush(stdout);
    for (void* p : {static_cast<void*>(r), static_cast<void*>(ipiv64), static_cast<void*>(work),
                    static_cast<void*>(aptr), static_cast<void*>(bptr)})
      check(cudaFree(p), "free");
  }
  return 0;
}
