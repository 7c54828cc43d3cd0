// gemm-bench on the cuda backend. A and B uploaded once; the reference C64 computed on the
// device (cuBLAS DGEMM on FP64 copies) and the metrics by a reduction kernel there, so nothing
// of size m x n crosses to the host (C64 alone is 2 GiB at m = n = 16384). Per variant: one
// untimed warm-up call, then `repeats` calls timed one by one with CUDA events (each waited
// for); the median counts.
//
// L2: when A, B and C together take less than 2x the L2 cache, the device holds enough copies
// of them (one "slot" each) to exceed 4x L2 in total, and every call -- warm-up and timed,
// across variants -- takes the next slot in turn, so no timed call finds its inputs in L2 from
// the previous one. All slots hold the same A and B, so every C is compared with the same C64.
// Plain C++ over tcsolve/gemm/cuda.hpp: without CUDA its entry points throw "built without CUDA".
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "gemm_bench_backends.hpp"
#include "tcsolve/bench/statistics.hpp"
#include "tcsolve/gemm/config.hpp"
#include "tcsolve/gemm/cuda.hpp"

namespace tcsolve::bench::detail {
namespace {

class CudaGemmBench final : public GemmBench {
 public:
  CudaGemmBench(const GemmProblem& p, const StepCallback& step)
      : m_(p.m),
        n_(p.n),
        k_(p.k),
        alpha_(p.alpha()),
        beta_(p.beta()),
        options_(p.options),
        size_a_(static_cast<std::size_t>(p.m) * p.k),
        size_b_(static_cast<std::size_t>(p.k) * p.n),
        size_c_(static_cast<std::size_t>(p.m) * p.n) {
    stride_a_ = round_up(size_a_), stride_b_ = round_up(size_b_), stride_c_ = round_up(size_c_);
    const std::size_t set_bytes = sizeof(float) * (size_a_ + size_b_ + size_c_);
    const std::size_t slot_bytes = sizeof(float) * (stride_a_ + stride_b_ + stride_c_);
    const std::size_t l2 = cuda::l2_cache_bytes();
    // Counted with the padding, so that tiny problems take about 4x L2 of memory, not more.
    slots_ = set_bytes < 2 * l2 ? ceil_div(4 * l2, slot_bytes) + 1 : 1;  // > 4x L2 in total
    step(std::string("uploading the inputs") +
         (slots_ > 1 ? " (" + std::to_string(slots_) + " copies rotate through L2)" : "") +
         ", FP64 reference on the device");

    A_ = cuda::DeviceBuffer<float>(slots_ * stride_a_);
    B_ = cuda::DeviceBuffer<float>(slots_ * stride_b_);
    C_ = cuda::DeviceBuffer<float>(slots_ * stride_c_);
    cuda::copy_to_device(A_.data(), p.A.data(), size_a_ * sizeof(float));
    cuda::copy_to_device(B_.data(), p.B.data(), size_b_ * sizeof(float));
    // Slots [0, s) copied to [s, 2s) until all are filled: log2(slots) copies of each array.
    for (std::size_t done = 1; done < slots_; done *= 2) {
      const std::size_t count = std::min(done, slots_ - done);
      cuda::copy_device_to_device(A_.data() + done * stride_a_, A_.data(), count * stride_a_ * sizeof(float));
      cuda::copy_device_to_device(B_.data() + done * stride_b_, B_.data(), count * stride_b_ * sizeof(float));
    }
    C64_ = cuda::DeviceBuffer<double>(size_c_);
    if (!p.C0.empty()) {
      C0_ = cuda::DeviceBuffer<float>(size_c_);
      cuda::copy_to_device(C0_.data(), p.C0.data(), size_c_ * sizeof(float));
    }
    context_.set_time_phases(p.time_phases);
    cuda::reference_product_device(context_, Op::n, Op::n, m_, n_, k_, A_.data(), m_, B_.data(), k_, C64_.data(), alpha_,
                                   C0_.size() ? C0_.data() : nullptr, beta_);
    cuda::device_synchronize();
  }

  GemmMeasurement measure(Variant v, int repeats) override {
    GemmMeasurement r;
    const std::size_t warm = next_slot();
    reset_c(warm);
    run(v, warm);  // warm-up: module loading, cuBLAS heuristics, workspaces
    cuda::device_synchronize();
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(repeats));
    std::size_t slot = 0;
    for (int i = 0; i < repeats; ++i) {
      slot = next_slot();
      reset_c(slot);  // untimed
      timer_.start();
      r.info = run(v, slot);
      times.push_back(timer_.stop_ms() * 1e-3);
    }
    r.median_s = median(std::move(times));
    const cuda::ErrorMetrics e = cuda::error_metrics_device(C_.data() + slot * stride_c_, m_, C64_.data(), m_, n_);
    r.relative_residual = e.relative_residual;
    r.max_relative_error = e.max_relative_error;
    return r;
  }

 private:
  /// Elements rounded up to 64 floats, so that every slot starts 256-byte aligned.
  static std::size_t round_up(std::size_t elements) { return ceil_div<std::size_t>(elements, 64) * 64; }

  std::size_t next_slot() {
    const std::size_t s = next_;
    next_ = (next_ + 1) % slots_;
    return s;
  }

  GemmInfo run(Variant v, std::size_t slot) {
    return cuda::gemm(context_, v, Op::n, Op::n, m_, n_, k_, alpha_, A_.data() + slot * stride_a_, m_,
                      B_.data() + slot * stride_b_, k_, beta_, C_.data() + slot * stride_c_, m_, options_);
  }

  /// The update: C of the slot = C0 before each call (C is read and updated in place).
  void reset_c(std::size_t slot) {
    if (C0_.size() != 0)
      cuda::copy_device_to_device(C_.data() + slot * stride_c_, C0_.data(), size_c_ * sizeof(float));
  }

  cuda::Context context_;  ///< first: outlives the buffers' last use (the legacy default stream)
  int m_, n_, k_;
  float alpha_, beta_;
  GemmOptions options_;
  std::size_t size_a_, size_b_, size_c_;                   ///< elements of A, B, C
  std::size_t stride_a_ = 0, stride_b_ = 0, stride_c_ = 0;  ///< elements between slots
  std::size_t slots_ = 1, next_ = 0;
  cuda::DeviceBuffer<float> A_, B_, C_;  ///< slots_ copies each, slot s at s * stride
  cuda::DeviceBuffer<double> C64_;       ///< m x n, leading dimension m
  cuda::DeviceBuffer<float> C0_;         ///< the update: the trailing matrix before it
  cuda::EventTimer timer_;
};

}  // namespace

std::unique_ptr<GemmBench> make_cuda_gemm_bench(const GemmProblem& p, const StepCallback& step) {
  return std::make_unique<CudaGemmBench>(p, step);
}

}  // namespace tcsolve::bench::detail
