// The FFN demo (ffn.hpp): seeded BERT-base data, the block through a GEMM variant on the host,
// its FP64 reference, and FfnBench with one implementation per backend (dispatch in make_impl).
#include "tcsolve/demos/ffn.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "ffn_cuda.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/metrics.hpp"
#include "tcsolve/gemm/random.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::demos {
namespace {

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

constexpr double kLayerNormEps = 1e-12;  ///< BERT's layer_norm_eps

std::size_t count(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

/// Standard normal values by Box-Muller from 53-bit uniforms of the Rng: the same numbers on
/// every platform for a seed (std::normal_distribution's algorithm is the library's choice).
class Normal {
 public:
  explicit Normal(Rng& rng) : rng_(rng) {}
  double operator()() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    constexpr double kTwoPi = 6.283185307179586476925;
    const double u1 = (static_cast<double>(rng_() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
    const double u2 = static_cast<double>(rng_() >> 11) * 0x1p-53;          // [0, 1)
    const double radius = std::sqrt(-2.0 * std::log(u1));
    spare_ = radius * std::sin(kTwoPi * u2);
    has_spare_ = true;
    return radius * std::cos(kTwoPi * u2);
  }

 private:
  Rng& rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

std::vector<float> normal_floats(Normal& normal, std::size_t n, double stddev) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(stddev * normal());
  return v;
}

/// The FP32 arrays of the problem as read-only double matrices.
MatD as_double(const std::vector<float>& v, int rows, int cols) {
  return Eigen::Map<const MatF>(v.data(), rows, cols).cast<double>();
}

MatD hidden_reference_matrix(const FfnProblem& p) {
  const FfnShape& s = p.shape;
  MatD H = as_double(p.W1, s.d_ff, s.d_model) * as_double(p.X, s.d_model, s.tokens);
  H.colwise() += as_double(p.b1, s.d_ff, 1).col(0);
  return H.unaryExpr([](double z) { return gelu(z); });
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

void check_repeats(int repeats, int warmups) {
  if (repeats < 1)
    throw InvalidInput("FfnBench::run: repeats must be at least 1, got " + std::to_string(repeats));
  if (warmups < 0)
    throw InvalidInput("FfnBench::run: warmups must be non-negative, got " + std::to_string(warmups));
}

}  // namespace

void check_shape(const FfnShape& shape) {
  const std::pair<const char*, int> sizes[] = {
      {"tokens", shape.tokens}, {"d_model", shape.d_model}, {"d_ff", shape.d_ff}};
  for (const auto& [name, value] : sizes)
    if (value < 1)
      throw InvalidInput(std::string("FFN ") + name + " must be a positive integer, got " +
                         std::to_string(value));
}

double ffn_flops(const FfnShape& s) {
  return 2.0 * (2.0 * static_cast<double>(s.tokens) * s.d_model * s.d_ff);
}

FfnProblem make_problem(const FfnShape& shape, std::uint64_t seed) {
  check_shape(shape);
  FfnProblem p;
  p.shape = shape;
  Rng rng(seed);
  Normal normal(rng);
  p.W1 = normal_floats(normal, count(shape.d_ff, shape.d_model), kBertInitStd);
  p.b1 = normal_floats(normal, count(shape.d_ff, 1), kBertInitStd);
  p.W2 = normal_floats(normal, count(shape.d_model, shape.d_ff), kBertInitStd);
  p.b2 = normal_floats(normal, count(shape.d_model, 1), kBertInitStd);
  // Tokens: N(0, 1), then LayerNorm per token (column) in double, one rounding to FP32.
  p.X.resize(count(shape.d_model, shape.tokens));
  std::vector<double> token(static_cast<std::size_t>(shape.d_model));
  for (int j = 0; j < shape.tokens; ++j) {
    double mean = 0;
    for (double& x : token) mean += (x = normal());
    mean /= shape.d_model;
    double var = 0;
    for (double x : token) var += (x - mean) * (x - mean);
    var /= shape.d_model;
    const double inv = 1.0 / std::sqrt(var + kLayerNormEps);
    for (int i = 0; i < shape.d_model; ++i)
      p.X[count(shape.d_model, j) + i] =
          static_cast<float>((token[static_cast<std::size_t>(i)] - mean) * inv);
  }
  return p;
}

std::string resolved_name(const FfnInfo& info) {
  const std::string first(to_string(info.first.resolved)), second(to_string(info.second.resolved));
  return first == second ? first : first + "+" + second;
}

// --- host block and references ---------------------------------------------------------------

namespace {

/// The block on the host into caller-owned H (d_ff x T) and Y (d_model x T).
FfnInfo forward_host(Variant variant, const FfnProblem& p, float* H, float* Y, const GemmOptions& options) {
  const FfnShape& s = p.shape;
  FfnInfo info;
  info.first = gemm(Backend::cpu, variant, Op::n, Op::n, s.d_ff, s.tokens, s.d_model, 1.0f, p.W1.data(),
                    s.d_ff, p.X.data(), s.d_model, 0.0f, H, s.d_ff, options);
  for (int j = 0; j < s.tokens; ++j) {
    float* h = H + count(s.d_ff, j);
    for (int i = 0; i < s.d_ff; ++i) h[i] = bias_gelu(h[i], p.b1[static_cast<std::size_t>(i)]);
  }
  info.second = gemm(Backend::cpu, variant, Op::n, Op::n, s.d_model, s.tokens, s.d_ff, 1.0f, p.W2.data(),
                     s.d_model, H, s.d_ff, 0.0f, Y, s.d_model, options);
  for (int j = 0; j < s.tokens; ++j) {
    float* y = Y + count(s.d_model, j);
    for (int i = 0; i < s.d_model; ++i) y[i] = y[i] + p.b2[static_cast<std::size_t>(i)];
  }
  return info;
}

void require_cpu_variant(Variant variant) {
  if (!available(variant, Backend::cpu))
    throw Unavailable("variant " + std::string(to_string(variant)) + " is not available on the cpu backend");
}

}  // namespace

std::vector<float> ffn_forward(Variant variant, const FfnProblem& problem, FfnInfo* info,
                               const GemmOptions& options) {
  check_shape(problem.shape);
  require_cpu_variant(variant);
  const FfnShape& s = problem.shape;
  std::vector<float> H(count(s.d_ff, s.tokens)), Y(count(s.d_model, s.tokens));
  const FfnInfo i = forward_host(variant, problem, H.data(), Y.data(), options);
  if (info) *info = i;
  return Y;
}

std::vector<double> ffn_reference(const FfnProblem& problem) {
  check_shape(problem.shape);
  const FfnShape& s = problem.shape;
  MatD Y = as_double(problem.W2, s.d_model, s.d_ff) * hidden_reference_matrix(problem);
  Y.colwise() += as_double(problem.b2, s.d_model, 1).col(0);
  return std::vector<double>(Y.data(), Y.data() + Y.size());
}

// --- FfnBench --------------------------------------------------------------------------------

namespace detail {

/// The interface behind FfnBench, one implementation per backend.
class FfnBackend {
 public:
  explicit FfnBackend(const FfnProblem& p) : shape(p.shape) {}
  virtual ~FfnBackend() = default;
  virtual Backend backend() const = 0;
  virtual FfnResult run(Variant variant, int repeats, int warmups, const GemmOptions& options) = 0;
  virtual std::vector<float> output() const = 0;

  FfnShape shape;
  bool ran = false;
};

}  // namespace detail

namespace {

/// cpu: host buffers, Y64 by Eigen in double, steady_clock around each block.
class CpuFfn final : public detail::FfnBackend {
 public:
  explicit CpuFfn(const FfnProblem& p)
      : FfnBackend(p),
        p_(p),
        Y64_(ffn_reference(p)),
        H_(count(p.shape.d_ff, p.shape.tokens), 0.0f),
        Y_(count(p.shape.d_model, p.shape.tokens), 0.0f) {}

  Backend backend() const override { return Backend::cpu; }

  FfnResult run(Variant variant, int repeats, int warmups, const GemmOptions& options) override {
    require_cpu_variant(variant);
    FfnResult r;
    r.variant = variant;
    for (int w = 0; w < warmups; ++w) forward_host(variant, p_, H_.data(), Y_.data(), options);
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      r.info = forward_host(variant, p_, H_.data(), Y_.data(), options);
      const auto t1 = std::chrono::steady_clock::now();
      times.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    ran = true;
    r.time_s = median(std::move(times));
    r.relative_error = relative_residual(Y_.data(), shape.d_model, Y64_.data(), shape.d_model, shape.tokens);
    return r;
  }

  std::vector<float> output() const override { return ran ? Y_ : std::vector<float>{}; }

 private:
  const FfnProblem p_;  ///< a copy: the bench outlives the caller's problem if need be
  std::vector<double> Y64_;
  std::vector<float> H_, Y_;
};

/// cuda: inputs uploaded once, Y64 on the device (W1 X by reference_product_device, FP64 bias +
/// GELU, DGEMM with the FP64 hidden activations, FP64 bias), metrics by the device reduction.
class CudaFfn final : public detail::FfnBackend {
 public:
  explicit CudaFfn(const FfnProblem& p)
      : FfnBackend(p),
        X_(p.X),
        W1_(p.W1),
        b1_(p.b1),
        W2_(p.W2),
        b2_(p.b2),
        H_(count(p.shape.d_ff, p.shape.tokens)),
        Y_(count(p.shape.d_model, p.shape.tokens)),
        Y64_(count(p.shape.d_model, p.shape.tokens)) {
    const FfnShape& s = shape;
    {
      cuda::DeviceBuffer<double> H64(count(s.d_ff, s.tokens));
      cuda::reference_product_device(context_, Op::n, Op::n, s.d_ff, s.tokens, s.d_model, W1_.data(), s.d_ff, X_.data(),
                                     s.d_model, H64.data());
      detail::bias_activation(H64.data(), b1_.data(), s.d_ff, s.tokens, true);
      detail::product_fp32_fp64(s.d_model, s.tokens, s.d_ff, W2_.data(), H64.data(), Y64_.data());
      detail::bias_activation(Y64_.data(), b2_.data(), s.d_model, s.tokens, false);
      cuda::device_synchronize();
    }
    // First touch of H and Y outside the timed runs.
    cuda::device_memset(H_.data(), 0, H_.size() * sizeof(float));
    cuda::device_memset(Y_.data(), 0, Y_.size() * sizeof(float));
    cuda::device_synchronize();
  }

  Backend backend() const override { return Backend::cuda; }

  FfnResult run(Variant variant, int repeats, int warmups, const GemmOptions& options) override {
    if (!available(variant, Backend::cuda))
      throw Unavailable("variant " + std::string(to_string(variant)) +
                        " is not available on the cuda backend here");
    FfnResult r;
    r.variant = variant;
    for (int w = 0; w < warmups; ++w) forward(variant, options);
    cuda::device_synchronize();
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
      timer_.start();
      r.info = forward(variant, options);
      times.push_back(timer_.stop_ms() * 1e-3);
    }
    ran = true;
    r.time_s = median(std::move(times));
    r.relative_error =
        cuda::error_metrics_device(Y_.data(), shape.d_model, Y64_.data(), shape.d_model, shape.tokens)
            .relative_residual;
    return r;
  }

  std::vector<float> output() const override { return ran ? Y_.download() : std::vector<float>{}; }

 private:
  FfnInfo forward(Variant variant, const GemmOptions& options) {
    const FfnShape& s = shape;
    FfnInfo info;
    info.first = cuda::gemm(context_, variant, Op::n, Op::n, s.d_ff, s.tokens, s.d_model, 1.0f, W1_.data(), s.d_ff,
                            X_.data(), s.d_model, 0.0f, H_.data(), s.d_ff, options);
    detail::bias_activation(H_.data(), b1_.data(), s.d_ff, s.tokens, true);
    info.second = cuda::gemm(context_, variant, Op::n, Op::n, s.d_model, s.tokens, s.d_ff, 1.0f, W2_.data(), s.d_model,
                             H_.data(), s.d_ff, 0.0f, Y_.data(), s.d_model, options);
    detail::bias_activation(Y_.data(), b2_.data(), s.d_model, s.tokens, false);
    return info;
  }

  cuda::Context context_;  ///< first: outlives the buffers' last use (the legacy default stream)
  cuda::DeviceBuffer<float> X_, W1_, b1_, W2_, b2_, H_, Y_;
  cuda::DeviceBuffer<double> Y64_;
  cuda::EventTimer timer_;
};

std::unique_ptr<detail::FfnBackend> make_impl(Backend backend, const FfnProblem& p) {
  check_shape(p.shape);
  switch (resolve_backend(backend)) {
    case Backend::cpu:
      return std::make_unique<CpuFfn>(p);
    case Backend::cuda:
      if (!cuda::device_available())
        throw Unavailable("FFN: the cuda backend needs a usable CUDA device (" + cuda::device_name() + ")");
      return std::make_unique<CudaFfn>(p);
    case Backend::automatic:
      break;
  }
  throw Error("FFN: backend not resolved");
}

}  // namespace

FfnBench::FfnBench(Backend backend, const FfnProblem& problem) : impl_(make_impl(backend, problem)) {}
FfnBench::~FfnBench() = default;
FfnBench::FfnBench(FfnBench&&) noexcept = default;
FfnBench& FfnBench::operator=(FfnBench&&) noexcept = default;

Backend FfnBench::backend() const { return impl_->backend(); }
const FfnShape& FfnBench::shape() const { return impl_->shape; }

FfnResult FfnBench::run(Variant variant, int repeats, int warmups, const GemmOptions& options) {
  check_repeats(repeats, warmups);
  FfnResult r = impl_->run(variant, repeats, warmups, options);
  r.tflops = ffn_flops(impl_->shape) / r.time_s / 1e12;
  return r;
}

std::vector<float> FfnBench::output() const { return impl_->output(); }

}  // namespace tcsolve::demos
