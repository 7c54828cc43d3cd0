// gemm-bench on the cpu backend: host buffers, the reference by Eigen in double, wall-clock time
// (steady_clock) per call. No warm-up run: the emulated variants are slow, and a cold first run
// of Eigen costs little next to them.
#include <chrono>
#include <cstddef>
#include <vector>

#include "gemm_bench_backends.hpp"
#include "tcsolve/bench/statistics.hpp"
#include "tcsolve/gemm/metrics.hpp"

namespace tcsolve::bench::detail {
namespace {

class CpuGemmBench final : public GemmBench {
 public:
  explicit CpuGemmBench(const GemmProblem& p)
      : p_(p),
        C64_(reference_product(Op::n, Op::n, p.m, p.n, p.k, p.A.data(), p.m, p.B.data(), p.k)) {
    if (!p.C0.empty())  // C0 - A*B
      for (std::size_t i = 0; i < C64_.size(); ++i) C64_[i] = static_cast<double>(p.C0[i]) - C64_[i];
  }

  GemmMeasurement measure(Variant v, int repeats) override {
    GemmMeasurement r;
    std::vector<float> C(static_cast<std::size_t>(p_.m) * p_.n, 0.0f);
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(repeats));
    for (int i = 0; i < repeats; ++i) {
      if (!p_.C0.empty()) C = p_.C0;
      const auto t0 = std::chrono::steady_clock::now();
      r.info = gemm(Backend::cpu, v, Op::n, Op::n, p_.m, p_.n, p_.k, p_.alpha(), p_.A.data(), p_.m,
                    p_.B.data(), p_.k, p_.beta(), C.data(), p_.m, p_.options);
      const auto t1 = std::chrono::steady_clock::now();
      times.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    r.median_s = median(std::move(times));
    r.relative_residual = relative_residual(C.data(), p_.m, C64_.data(), p_.m, p_.n);
    r.max_relative_error = max_relative_error(C.data(), p_.m, C64_.data(), p_.m, p_.n);
    return r;
  }

 private:
  const GemmProblem& p_;
  std::vector<double> C64_;  ///< m x n, FP64 product of the FP32 A and B
};

}  // namespace

std::unique_ptr<GemmBench> make_cpu_gemm_bench(const GemmProblem& p) { return std::make_unique<CpuGemmBench>(p); }

}  // namespace tcsolve::bench::detail
