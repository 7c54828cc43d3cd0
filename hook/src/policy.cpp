// The drop-in's policy (policy.hpp): the rules in the order the header lists them.
#include "policy.hpp"

#include <algorithm>
#include <climits>

#include "tcsolve/gemm/batch.hpp"

namespace tcsolve::hook {

std::string entry_name(Entry entry, bool is64) {
  std::string name;
  switch (entry) {
    case Entry::sgemm:
      name = "cublasSgemm_v2";
      break;
    case Entry::sgemm_strided_batched:
      name = "cublasSgemmStridedBatched";
      break;
    case Entry::sgemm_batched:
      name = "cublasSgemmBatched";
      break;
    case Entry::gemm_ex:
      name = "cublasGemmEx";
      break;
    case Entry::gemm_batched_ex:
      name = "cublasGemmBatchedEx";
      break;
    case Entry::gemm_strided_batched_ex:
      name = "cublasGemmStridedBatchedEx";
      break;
    case Entry::lt_matmul:
      name = "cublasLtMatmul";
      break;
  }
  return is64 ? name + "_64" : name;
}

const char* to_string(HookVariant v) {
  switch (v) {
    case HookVariant::auto_:
      return "auto";
    case HookVariant::ec_fp16:
      return "ec-fp16";
    case HookVariant::ec_tf32:
      return "ec-tf32";
    case HookVariant::off:
      return "off";
  }
  return "?";
}

double flops(const Request& r) {
  return 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) * static_cast<double>(r.k) *
         static_cast<double>(std::max<std::int64_t>(r.batch, 1));
}

double predicted_speedup(const Request& r, const CostModel& model) {
  const double m = static_cast<double>(r.m), n = static_cast<double>(r.n), k = static_cast<double>(r.k);
  const double batch = static_cast<double>(std::max<std::int64_t>(r.batch, 1));
  const double f = 2 * m * n * k * batch;
  const double operands = (m * k + k * n) * batch, output = m * n * batch;
  const double simt = std::max(f / model.simt_flops, 4 * (operands + output) / model.bandwidth);
  const double ec = model.fixed + f / model.tensor_flops + (16 * operands + 4 * output) / model.bandwidth;
  return simt / ec;
}

double work_units(const Request& r) {
  if (r.m < 1 || r.n < 1 || r.k < 1 || r.batch < 1) return 0;
  const double tiles = static_cast<double>((r.m + 127) / 128) * static_cast<double>((r.n + 127) / 128) *
                       static_cast<double>(r.batch);
  // ec_k_split multiplies tiles by batch in 64-bit integers: exact below 1e18, and a call of
  // that many tiles is never split (it has kSplitKTiles tiles and more)
  const int ranges = tiles < 1e18 ? ec_k_split(r.m, r.n, r.k, r.batch, 0).count : 1;
  return tiles * ranges;
}

namespace {

Decision pass(std::string reason) { return Decision{false, HookVariant::off, std::move(reason)}; }

const char* compute_reason(Compute c) {
  switch (c) {
    case Compute::f32_fast_tf32:
      return "compute type 32F_FAST_TF32";
    case Compute::f32_fast_16f:
      return "compute type 32F_FAST_16F";
    case Compute::f32_fast_16bf:
      return "compute type 32F_FAST_16BF";
    default:
      return "compute type not 32F";
  }
}

bool beyond_int(std::int64_t v) { return v > INT_MAX; }

bool valid_op(char t) { return t == 'N' || t == 'T' || t == 'C'; }

/// The first argument cuBLAS would reject with CUBLAS_STATUS_INVALID_VALUE, or nullptr: the
/// checks of BLAS's xGEMM (and cuBLAS's on the batch count, the scalars and the algorithm).
const char* invalid_argument(const Request& r) {
  if (!valid_op(r.ta)) return "invalid transa";
  if (!valid_op(r.tb)) return "invalid transb";
  if (r.m < 0) return "invalid m";
  if (r.n < 0) return "invalid n";
  if (r.k < 0) return "invalid k";
  if (r.batch < 0) return "invalid batch count";
  const std::int64_t a_rows = r.ta == 'N' ? r.m : r.k, b_rows = r.tb == 'N' ? r.k : r.n;
  if (r.lda < std::max<std::int64_t>(1, a_rows)) return "invalid lda";
  if (r.ldb < std::max<std::int64_t>(1, b_rows)) return "invalid ldb";
  if (r.ldc < std::max<std::int64_t>(1, r.m)) return "invalid ldc";
  if (r.null_scalars) return "invalid alpha or beta (NULL)";
  if (!r.algo_valid) return "invalid algo";
  return nullptr;
}

}  // namespace

Decision decide(const Request& r, const Settings& s) {
  if (s.variant == HookVariant::off) return pass("variant off");
  if (r.reentrant) return pass("reentrant");
  if (const char* invalid = invalid_argument(r)) return pass(invalid);
  if (!r.fp32_types) return pass("data type");
  const bool tf32_compute = r.compute == Compute::f32_fast_tf32;
  if (r.compute != Compute::f32 && r.compute != Compute::f32_pedantic && !(tf32_compute && s.tf32_replace))
    return pass(compute_reason(r.compute));
  if ((r.math == MathMode::tf32 || r.math == MathMode::legacy_tensor_op) && !s.tf32_replace)
    return pass(r.math == MathMode::tf32 ? "tf32 math mode" : "tensor-op math mode");
  if (r.math == MathMode::emulated_bf16x9) return pass("bf16x9 math mode");
  if (r.pointers == Pointers::vector) return pass("pointer mode vector");
  if (!r.unsupported.empty()) return pass(r.unsupported);
  if (r.m == 0 || r.n == 0 || r.batch == 0) return pass("empty");
  if (r.k == 0) return pass("k = 0");
  if (r.pointers == Pointers::host && r.alpha == 0.0f) return pass("alpha = 0");
  for (std::int64_t v : {r.m, r.n, r.k, r.lda, r.ldb, r.ldc, r.batch})
    if (beyond_int(v)) return pass("size beyond int");
  if (flops(r) < s.min_flops) return pass("below min flops");  // the whole call: one launch
  if (std::min({r.m, r.n, r.k}) < s.min_dim) return pass("below min dim");
  if (work_units(r) < static_cast<double>(s.min_tiles)) return pass("few output tiles");
  if (s.min_speedup > 0 && predicted_speedup(r) < s.min_speedup) return pass("predicted slower");
  return Decision{true, s.variant, {}};
}

}  // namespace tcsolve::hook
