// The cpu backend: Eigen for fp64 / fp32-simt, a faithful emulation for every other variant.
//
// Each emulated variant follows its paper's arithmetic step by step: where the inputs are
// split or rounded (split.hpp, rounding.hpp), which products go through one mma k-step of the
// tensor-core model (tc_model.hpp; k = 16 for FP16, 8 for TF32), which partial sums stay inside
// the tensor core (chained through the C operand of the next mma) and which are added outside
// in FP32 with round-to-nearest, and the final combination. The epilogue of every variant is
// D = alpha * acc + beta * C in FP32 (C not read when beta == 0).
//
// GemmOptions::interrupt is polled before each output column of the emulated variants (a column
// of m entries, each a k-long chain: well under a second at the solver's sizes) and once before
// the Eigen paths: a set flag throws Interrupted after the columns in flight are done.
#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <vector>

#include "tcsolve/gemm/convert.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/scaling.hpp"
#include "tcsolve/gemm/split.hpp"
#include "tcsolve/gemm/tc_model.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cpu {
namespace {

constexpr int kMmaKFp16 = 16;  // mma.m16n8k16 (FP16)
constexpr int kMmaKTf32 = 8;   // mma.m16n8k8 (TF32)

/// op(A) as rows (row i contiguous over k) and op(B) as columns (column j contiguous over k),
/// zero-padded to kp, a multiple of the mma k. Zero products leave every sum unchanged.
struct Operands {
  int m = 0, n = 0, k = 0, kp = 0;
  std::vector<float> a;  // m x kp
  std::vector<float> b;  // n x kp
  const float* row(int i) const { return a.data() + static_cast<std::size_t>(i) * kp; }
  const float* col(int j) const { return b.data() + static_cast<std::size_t>(j) * kp; }
};

Operands pack(Op ta, Op tb, int m, int n, int k, const float* A, int lda, const float* B, int ldb, int ks) {
  Operands o;
  o.m = m, o.n = n, o.k = k, o.kp = ceil_div(k, ks) * ks;
  o.a.assign(static_cast<std::size_t>(m) * o.kp, 0.0f);
  o.b.assign(static_cast<std::size_t>(n) * o.kp, 0.0f);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p)  // op(A)(i, p)
      o.a[static_cast<std::size_t>(i) * o.kp + p] =
          ta == Op::n ? A[i + static_cast<std::size_t>(p) * lda] : A[p + static_cast<std::size_t>(i) * lda];
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < k; ++p)  // op(B)(p, j)
      o.b[static_cast<std::size_t>(j) * o.kp + p] =
          tb == Op::n ? B[p + static_cast<std::size_t>(j) * ldb] : B[j + static_cast<std::size_t>(p) * ldb];
  return o;
}

/// The hi and lo parts of both operands, same layout as Operands.
struct SplitOperands {
  Operands hi, lo;
};

template <typename SplitFn>
SplitOperands split_operands(const Operands& o, SplitFn fn) {
  SplitOperands s{o, o};
  for (std::size_t i = 0; i < o.a.size(); ++i) {
    const SplitPair p = fn(o.a[i]);
    s.hi.a[i] = p.hi, s.lo.a[i] = p.lo;
  }
  for (std::size_t i = 0; i < o.b.size(); ++i) {
    const SplitPair p = fn(o.b[i]);
    s.hi.b[i] = p.hi, s.lo.b[i] = p.lo;
  }
  return s;
}

template <typename RoundFn>
Operands rounded(Operands o, RoundFn fn) {
  for (float& v : o.a) v = fn(v);
  for (float& v : o.b) v = fn(v);
  return o;
}

/// C(i, j) = alpha * value(i, j) + beta * C(i, j) for every element, columns in parallel. The
/// interrupt flag is read before each column; once set, the remaining columns are skipped and
/// Interrupted is thrown (C partly written).
template <typename ElementFn>
void for_each_output(int m, int n, float alpha, float beta, float* C, int ldc, const std::atomic<bool>* interrupt,
                     ElementFn value) {
  std::atomic<bool> stopped{false};
#pragma omp parallel for schedule(dynamic)
  for (int j = 0; j < n; ++j) {
    if (stopped.load(std::memory_order_relaxed)) continue;
    if (interrupt && interrupt->load(std::memory_order_relaxed)) {
      stopped.store(true, std::memory_order_relaxed);
      continue;
    }
    for (int i = 0; i < m; ++i) {
      float& c = C[i + static_cast<std::size_t>(j) * ldc];
      const float acc = value(i, j);
      c = beta == 0.0f ? alpha * acc : alpha * acc + beta * c;
    }
  }
  if (stopped.load()) check_interrupt(interrupt, "the product");
}

// ------------------------------------------------------------------------------------------
// Eigen paths
// ------------------------------------------------------------------------------------------

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using ConstMapF = Eigen::Map<const Mat<float>, 0, Eigen::OuterStride<>>;
using MapF = Eigen::Map<Mat<float>, 0, Eigen::OuterStride<>>;

template <typename T>
Mat<T> op_matrix(Op op, int rows, int cols, const float* X, int ld) {
  const ConstMapF stored(X, op == Op::n ? rows : cols, op == Op::n ? cols : rows, Eigen::OuterStride<>(ld));
  if (op == Op::n) return stored.cast<T>();
  return stored.transpose().cast<T>();
}

template <typename T>
void eigen_gemm(Op ta, Op tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B,
                int ldb, float beta, float* C, int ldc) {
  const Mat<T> a = op_matrix<T>(ta, m, k, A, lda);
  const Mat<T> b = op_matrix<T>(tb, k, n, B, ldb);
  Mat<T> prod = a * b;
  MapF c(C, m, n, Eigen::OuterStride<>(ldc));
  if (beta == 0.0f)
    c = (T(alpha) * prod).template cast<float>();
  else
    c = (T(alpha) * prod + T(beta) * c.template cast<T>()).template cast<float>();
}

// ------------------------------------------------------------------------------------------
// Emulated variants: value(i, j) of op(A) op(B) before the epilogue
// ------------------------------------------------------------------------------------------

/// One rounded-input product accumulated inside the tensor core (fp16-tc, tf32-tc).
float chain_single(const TensorCoreModel& tc, const Operands& o, int i, int j, int ks) {
  const float* a = o.row(i);
  const float* b = o.col(j);
  float acc = 0.0f;
  for (int p = 0; p < o.kp; p += ks) acc = tc.mma_fp32(a + p, b + p, ks, acc);
  return acc;
}

/// Markidis (Ootomo Code 2): four products chained in one tensor-core accumulator per k-step.
float markidis_value(const TensorCoreModel& tc, const SplitOperands& s, int i, int j) {
  const float *ah = s.hi.row(i), *al = s.lo.row(i), *bh = s.hi.col(j), *bl = s.lo.col(j);
  float acc = 0.0f;
  for (int p = 0; p < s.hi.kp; p += kMmaKFp16) {
    acc = tc.mma_fp32(al + p, bl + p, kMmaKFp16, acc);
    acc = tc.mma_fp32(al + p, bh + p, kMmaKFp16, acc);
    acc = tc.mma_fp32(ah + p, bl + p, kMmaKFp16, acc);
    acc = tc.mma_fp32(ah + p, bh + p, kMmaKFp16, acc);
  }
  return acc;
}

/// Ootomo Code 3 generalised: the correction lo*hi + hi*lo chained inside the tensor core; the
/// hi*hi product chained inside for `chunk` k-steps (1 = Ootomo's halfhalf/tf32tf32) and then
/// added outside in FP32 RN; at the end acc + corr / scale.
/// shared (the production path's FP16 scheme, ec-fp16, on scaled operands with unscaled lo):
/// lo*hi, hi*lo and hi*hi all chained in the chunk's accumulator from zero, no correction term.
/// The row/column scaling puts every row's largest element at 2^14, so lo needs no 2^11 (its
/// FP16 subnormal grid, 2^-24, is 2^-38 of the row's largest element), and two register sets per
/// output (acc, part) let the wgmma kernel double-buffer part.
/// p0, p1: the k range [p0, p1) (one of the ec path's k-splitting ranges; default all of k).
float halfhalf_value(const TensorCoreModel& tc, const SplitOperands& s, int i, int j, int ks, int chunk,
                     float scale, bool shared = false, int p0 = 0, int p1 = INT_MAX) {
  const float *ah = s.hi.row(i), *al = s.lo.row(i), *bh = s.hi.col(j), *bl = s.lo.col(j);
  float acc = 0.0f, corr = 0.0f, part = 0.0f;
  float& c = shared ? part : corr;
  int steps = 0;
  for (int p = p0; p < std::min(p1, s.hi.kp); p += ks) {
    c = tc.mma_fp32(al + p, bh + p, ks, c);
    c = tc.mma_fp32(ah + p, bl + p, ks, c);
    part = tc.mma_fp32(ah + p, bh + p, ks, part);
    if (++steps == chunk) {
      acc += part;  // FP32 RN on the CUDA cores
      part = 0.0f, steps = 0;
    }
  }
  if (steps != 0) acc += part;
  return shared ? acc : acc + corr / scale;
}

/// LE-GEMM Algorithm 1: acc0 = hi*hi and acc1 = hi*lo + lo*hi, both inside the tensor core.
float legemm_value(const TensorCoreModel& tc, const SplitOperands& s, int i, int j) {
  const float *ah = s.hi.row(i), *al = s.lo.row(i), *bh = s.hi.col(j), *bl = s.lo.col(j);
  float acc0 = 0.0f, acc1 = 0.0f;
  for (int p = 0; p < s.hi.kp; p += kMmaKFp16) {
    acc0 = tc.mma_fp32(ah + p, bh + p, kMmaKFp16, acc0);
    acc1 = tc.mma_fp32(ah + p, bl + p, kMmaKFp16, acc1);
    acc1 = tc.mma_fp32(al + p, bh + p, kMmaKFp16, acc1);
  }
  return acc0 + acc1 / kLegemmScale;
}

/// FP16/16: the FP16 accumulator chained inside the tensor core for all of K.
float fp16acc_value(const TensorCoreModel& tc, const Operands& o, int i, int j) {
  const float *a = o.row(i), *b = o.col(j);
  float acc = 0.0f;
  for (int p = 0; p < o.kp; p += kMmaKFp16) acc = tc.mma_fp16(a + p, b + p, kMmaKFp16, acc);
  return acc;
}

/// Two-stage: each k-step's FP16-accumulated mma (from zero) added to an FP32 register.
float twostage_value(const TensorCoreModel& tc, const Operands& o, int i, int j) {
  const float *a = o.row(i), *b = o.col(j);
  float acc = 0.0f;
  for (int p = 0; p < o.kp; p += kMmaKFp16) acc += tc.mma_fp16(a + p, b + p, kMmaKFp16, 0.0f);
  return acc;
}

/// RFC 0007 half_gemm_fp32_accum: scalar FP32 sum of products of saturating-FP16 operands.
float fp16_simt_value(const Operands& o, int i, int j) {
  const float *a = o.row(i), *b = o.col(j);
  float acc = 0.0f;
  for (int p = 0; p < o.k; ++p) acc += a[p] * b[p];  // FP16 x FP16 is exact in FP32
  return acc;
}

// ------------------------------------------------------------------------------------------
// Production path: power-of-two scaling (scaling.hpp) + halfhalf / tf32tf32
// ------------------------------------------------------------------------------------------

struct ExponentRange {
  int emax = INT_MIN, emin = INT_MAX;
  void add(float v) { fold_exponent(v, emax, emin); }
  bool any() const { return emax != INT_MIN; }
  int range() const { return any() ? emax - emin : 0; }
};

/// Exponent ranges of the rows of op(A) (first m) and the columns of op(B) (next n).
std::vector<ExponentRange> exponent_ranges(const Operands& o) {
  std::vector<ExponentRange> r(static_cast<std::size_t>(o.m + o.n));
  for (int i = 0; i < o.m; ++i)
    for (int p = 0; p < o.k; ++p) r[i].add(o.row(i)[p]);
  for (int j = 0; j < o.n; ++j)
    for (int p = 0; p < o.k; ++p) r[o.m + j].add(o.col(j)[p]);
  return r;
}

bool auto_picks_fp16(const std::vector<ExponentRange>& r, int m) {
  int range_a = 0, range_b = 0;
  for (int i = 0; i < m; ++i) range_a = std::max(range_a, r[i].range());
  for (std::size_t j = m; j < r.size(); ++j) range_b = std::max(range_b, r[j].range());
  return auto_uses_fp16(range_a, range_b);
}

/// The scaled product with k in split.count ranges (batch.hpp): each range's value from zero
/// (halfhalf_value over the range), the ranges' values added in FP32 RN in range order, as the
/// cuda kernel's partial sums and their reduction.
void ec_gemm(bool fp16, const Operands& o, const std::vector<ExponentRange>& ranges, const TensorCoreModel& tc,
             int chunk_k, const KSplit& split, float alpha, float beta, float* C, int ldc,
             const std::atomic<bool>* interrupt) {
  const int ks = fp16 ? kMmaKFp16 : kMmaKTf32;
  if (chunk_k < ks || chunk_k % ks != 0)
    throw InvalidInput(std::string(fp16 ? "ec_chunk_k" : "ec_chunk_k_tf32") + " must be a positive multiple of the mma k (" + std::to_string(ks) + ")");
  std::vector<int> shift(ranges.size());
  for (std::size_t r = 0; r < ranges.size(); ++r) shift[r] = scale_exponent(ranges[r].any(), ranges[r].emax);
  Operands scaled = o;
  for (int i = 0; i < o.m; ++i)
    for (int p = 0; p < o.k; ++p)
      scaled.a[static_cast<std::size_t>(i) * o.kp + p] = o.row(i)[p] * scale_factor(shift[i]);
  for (int j = 0; j < o.n; ++j)
    for (int p = 0; p < o.k; ++p)
      scaled.b[static_cast<std::size_t>(j) * o.kp + p] = o.col(j)[p] * scale_factor(shift[o.m + j]);
  // ec-fp16: one accumulator per chunk, lo unscaled (ec_value); ec-tf32: tf32tf32 with the
  // hi*hi chunk (halfhalf_value): the single accumulator measured up to 2.7x the blocked Eigen
  // residual for TF32 at chunk 32 (12 TF32 mmas chained per chunk) against 1.6x for this
  const SplitOperands s = fp16 ? split_operands(scaled, split_markidis) : split_operands(scaled, split_ootomo_tf32);
  const int chunk = chunk_k / ks;
  for_each_output(o.m, o.n, alpha, beta, C, ldc, interrupt, [&](int i, int j) {
    float v = 0.0f;
    for (int r = 0; r < split.count; ++r) {
      const int p0 = r * split.length;
      const float part = halfhalf_value(tc, s, i, j, ks, chunk, kOotomoScale, fp16, p0, p0 + split.length);
      v = r == 0 ? part : v + part;
    }
    return std::ldexp(v, -(shift[i] + shift[o.m + j]));
  });
}

/// ec-fp16, ec-tf32 or auto with the k ranges `split`. fp16: -1 as the variant says (auto
/// chooses from this product's ranges), 1 FP16, 0 TF32 (auto's choice made for a whole batch).
GemmInfo ec_call(Variant variant, Op ta, Op tb, int m, int n, int k, float alpha, const float* A, int lda,
                 const float* B, int ldb, float beta, float* C, int ldc, const GemmOptions& options,
                 const KSplit& split, int fp16_choice) {
  check_interrupt(options.interrupt, "the product");
  const TensorCoreModel tc(options.model);
  const Operands o = pack(ta, tb, m, n, k, A, lda, B, ldb, kMmaKFp16);  // a multiple of 16 is one of 8 too
  const auto ranges = exponent_ranges(o);
  bool fp16 = variant == Variant::ec_fp16 || (variant == Variant::auto_ && auto_picks_fp16(ranges, m));
  if (variant == Variant::auto_ && fp16_choice >= 0) fp16 = fp16_choice == 1;
  GemmInfo result;
  result.requested = variant;
  result.resolved = fp16 ? Variant::ec_fp16 : Variant::ec_tf32;
  result.backend = Backend::cpu;
  result.split_k = split.count;
  ec_gemm(fp16, o, ranges, tc, fp16 ? options.ec_chunk_k : options.ec_chunk_k_tf32, split, alpha, beta, C, ldc,
          options.interrupt);
  return result;
}

/// auto over a batch: FP16 when every member's ranges allow it (the cuda kernels' one choice).
bool batch_picks_fp16(Op ta, Op tb, int m, int n, int k, const float* A, int lda, const float* B, int ldb,
                      const Batch& batch) {
  for (int b = 0; b < batch.count; ++b) {
    const float* Ab = batch.arrays() ? batch.a_array[b] : A + b * batch.stride_a;
    const float* Bb = batch.arrays() ? batch.b_array[b] : B + b * batch.stride_b;
    if (!auto_picks_fp16(exponent_ranges(pack(ta, tb, m, n, k, Ab, lda, Bb, ldb, kMmaKFp16)), m)) return false;
  }
  return true;
}

}  // namespace

GemmInfo gemm_batched(Variant variant, Op ta, Op tb, int m, int n, int k, float alpha, const float* A, int lda,
                      const float* B, int ldb, float beta, float* C, int ldc, const Batch& batch,
                      const GemmOptions& options) {
  check_gemm_arguments(ta, tb, m, n, k, lda, ldb, ldc);
  check_batch(batch, m, n, ldc, "cpu::gemm_batched");
  GemmInfo info;
  info.requested = info.resolved = variant;
  info.backend = Backend::cpu;
  const bool ec = variant == Variant::ec_fp16 || variant == Variant::ec_tf32 || variant == Variant::auto_;
  const KSplit split = ec_k_split(m, n, k, batch.count, options.split_k);
  const int choice = variant == Variant::auto_ && batch.count > 0
                         ? (batch_picks_fp16(ta, tb, m, n, k, A, lda, B, ldb, batch) ? 1 : 0)
                         : -1;
  for (int b = 0; b < batch.count; ++b) {
    const float* Ab = batch.arrays() ? batch.a_array[b] : A + b * batch.stride_a;
    const float* Bb = batch.arrays() ? batch.b_array[b] : B + b * batch.stride_b;
    float* Cb = batch.arrays() ? batch.c_array[b] : C + b * batch.stride_c;
    info = ec ? ec_call(variant, ta, tb, m, n, k, alpha, Ab, lda, Bb, ldb, beta, Cb, ldc, options, split, choice)
              : gemm(variant, ta, tb, m, n, k, alpha, Ab, lda, Bb, ldb, beta, Cb, ldc, options);
  }
  return info;
}

GemmInfo gemm(Variant variant, Op ta, Op tb, int m, int n, int k, float alpha, const float* A, int lda,
              const float* B, int ldb, float beta, float* C, int ldc, const GemmOptions& options) {
  check_gemm_arguments(ta, tb, m, n, k, lda, ldb, ldc);
  GemmInfo result;
  result.requested = result.resolved = variant;
  result.backend = Backend::cpu;
  const TensorCoreModel tc(options.model);
  auto operands = [&](int ks) { return pack(ta, tb, m, n, k, A, lda, B, ldb, ks); };
  auto run = [&](auto value) { for_each_output(m, n, alpha, beta, C, ldc, options.interrupt, value); };
  check_interrupt(options.interrupt, "the product");

  switch (variant) {
    case Variant::fp64:
      eigen_gemm<double>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      break;
    case Variant::fp32_simt:
      eigen_gemm<float>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      break;
    case Variant::fp16_simt: {
      const Operands o = rounded(operands(1), [](float v) { return fp16_value(fp32_to_fp16_value(v, Fp16Mode::saturate)); });
      run([&](int i, int j) { return fp16_simt_value(o, i, j); });
      break;
    }
    case Variant::fp16_tc: {
      const Operands o = rounded(operands(kMmaKFp16), [](float v) { return round_fp16(v, Rounding::rn); });
      run([&](int i, int j) { return chain_single(tc, o, i, j, kMmaKFp16); });
      break;
    }
    case Variant::tf32_tc: {
      const Operands o = rounded(operands(kMmaKTf32), [](float v) { return round_tf32(v, Rounding::rna); });
      run([&](int i, int j) { return chain_single(tc, o, i, j, kMmaKTf32); });
      break;
    }
    case Variant::fp16_fp16acc: {
      const Operands o = rounded(operands(kMmaKFp16), [](float v) { return round_fp16(v, Rounding::rn); });
      run([&](int i, int j) { return fp16acc_value(tc, o, i, j); });
      break;
    }
    case Variant::fp16_twostage: {
      const Operands o = rounded(operands(kMmaKFp16), [](float v) { return round_fp16(v, Rounding::rn); });
      run([&](int i, int j) { return twostage_value(tc, o, i, j); });
      break;
    }
    case Variant::markidis: {
      const SplitOperands s = split_operands(operands(kMmaKFp16), split_markidis);
      run([&](int i, int j) { return markidis_value(tc, s, i, j); });
      break;
    }
    case Variant::ootomo_fp16: {
      const SplitOperands s = split_operands(operands(kMmaKFp16), split_ootomo_fp16);
      run([&](int i, int j) { return halfhalf_value(tc, s, i, j, kMmaKFp16, 1, kOotomoScale); });
      break;
    }
    case Variant::ootomo_tf32: {
      const SplitOperands s = split_operands(operands(kMmaKTf32), split_ootomo_tf32);
      run([&](int i, int j) { return halfhalf_value(tc, s, i, j, kMmaKTf32, 1, kOotomoScale); });
      break;
    }
    case Variant::legemm: {
      const SplitOperands s = split_operands(operands(kMmaKFp16), split_legemm);
      run([&](int i, int j) { return legemm_value(tc, s, i, j); });
      break;
    }
    case Variant::ec_fp16:
    case Variant::ec_tf32:
    case Variant::auto_:
      return ec_call(variant, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, options,
                     ec_k_split(m, n, k, 1, options.split_k), -1);
    case Variant::cublas_tf32:
    case Variant::cublas_fp16:
    default:
      throw Unavailable("variant " + std::string(to_string(variant)) +
                        " is a cuBLAS baseline and has no cpu implementation");
  }
  return result;
}

}  // namespace tcsolve::cpu
