// Batched products (cuda::gemm_batched, cpu::gemm_batched) and the ec path's k-splitting rule,
// shared by both backends and by the cuBLAS drop-in's policy. Pure C++, no CUDA.
//
// k-splitting (GemmOptions::split_k). The Hopper ec kernel computes each 128 x 128 output tile
// over its whole k on one multiprocessor, so a call with fewer tiles than the GPU has
// multiprocessors leaves most of it idle. With k split into `count` ranges of `length` k each
// (the last shorter), every (member, tile, range) is a unit of work; each range's sum starts
// from zero, and the ranges' sums are added in FP32, in range order, before the unscaling and
// the epilogue (alpha acc + beta C). The rule depends on the shape only, never on the device,
// so a given shape gives the same bits on every GPU and on the cpu emulation.
//
// Error bound. Without splits the kernel adds N = k / 32 chunk sums (each from zero inside the
// tensor core) one after the other in FP32 RN: every chunk sum passes through at most N - 1
// roundings, gamma(N - 1) sum |chunk|. With `count` ranges of at most L chunks, a chunk sum
// passes through at most (L - 1) + (count - 1) roundings, and L + count - 1 <= N whenever the
// last range holds at least one chunk ((count - 2)(L - 1) >= 0): the same bound, gamma(N - 1).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tcsolve {

/// A batch of products C_b = alpha op(A_b) op(B_b) + beta C_b, b = 0 .. count - 1, with the
/// same sizes, operations and scalars. Member b's matrices are A + b stride_a, B + b stride_b,
/// C + b stride_c (strides in elements: cublasSgemmStridedBatched), or, when the arrays are
/// given (all three), a_array[b], b_array[b], c_array[b] (cublasSgemmBatched; on cuda the arrays
/// themselves are in device memory, as cuBLAS takes them). Members must not overlap in C.
struct Batch {
  int count = 1;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  const float* const* a_array = nullptr;
  const float* const* b_array = nullptr;
  float* const* c_array = nullptr;
  bool arrays() const { return a_array != nullptr; }
};

/// The k-splitting of one (batched) ec product.
struct KSplit {
  int count = 1;   ///< ranges of k (1: none)
  int length = 0;  ///< k per range, a multiple of kSplitKAlign (the last range holds the rest)
};

inline constexpr int kSplitKAlign = 64;  ///< ranges start at multiples of 64 k: one FP16 k-tile, two TF32
inline constexpr int kSplitKMinLength = 256;  ///< automatic: at least 256 k per range
inline constexpr std::int64_t kSplitKUnits =
    256;  ///< automatic: split until about 256 units (two waves of 132 SMs)
inline constexpr std::int64_t kSplitKTiles = 128;  ///< automatic: calls with this many tiles are not split

/// The ranges for an m x n x k product of `batch` members. requested (GemmOptions::split_k):
/// 0 automatic (calls with fewer than kSplitKTiles output tiles of 128 x 128 over the batch are
/// split into ranges of at least kSplitKMinLength until about kSplitKUnits units), 1 never,
/// c >= 2 into c ranges (fewer when k has fewer than c multiples of kSplitKAlign).
inline KSplit ec_k_split(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, int requested) {
  const std::int64_t kp = (k + kSplitKAlign - 1) / kSplitKAlign * kSplitKAlign;
  KSplit s{1, static_cast<int>(kp)};
  if (requested == 1 || kp <= kSplitKAlign) return s;
  std::int64_t count = requested;
  if (requested <= 0) {
    const std::int64_t tiles = ((m + 127) / 128) * ((n + 127) / 128) * std::max<std::int64_t>(batch, 1);
    if (tiles >= kSplitKTiles) return s;
    count = std::min((kSplitKUnits + tiles - 1) / tiles, std::max<std::int64_t>(1, kp / kSplitKMinLength));
  }
  count = std::min(count, kp / kSplitKAlign);
  if (count <= 1) return s;
  const std::int64_t per = (kp + count - 1) / count;
  const std::int64_t length = (per + kSplitKAlign - 1) / kSplitKAlign * kSplitKAlign;
  s.count = static_cast<int>((kp + length - 1) / length);
  s.length = static_cast<int>(length);
  return s;
}

}  // namespace tcsolve
