// Hopper (sm_90a) kernels of the FP16 tensor-core variants: a split pass, then a warp-
// specialised, persistent wgmma GEMM fed by the bulk tensor copy engine (TMA).
//
//   1. split pass (both operands in one launch; the kernels are in wgmma_split.cuh): op(A) and
//      op(B) are read in FP32, scaled by the ec powers of two where given, split (or rounded)
//      with the same device conversions as the mma.sync kernels (fp16_split.cuh) and written
//      as FP16 hi / lo matrices, K contiguous,
//      zero-padded to whole tiles: Ah, Al (Mp x Kp) and Bh, Bl (Np x Kp). Cost: 4 bytes read
//      and 4 written per element of A and B, against the GEMM's reading every element Kp/128
//      times more; measured in docs/benchmark-history.md. The padding removes every bound check from
//      the main kernel but the epilogue's.
//   2. main kernel: 3 warpgroups. Warpgroup 0 (one thread) is the producer: for each output tile
//      and k-tile it waits for a free shared-memory stage and issues TMA loads of the 128 x 64
//      FP16 tiles (128-byte swizzle) that complete on the stage's mbarrier. Warpgroups 1 and 2
//      are the consumers: each owns 64 rows of the 128 x 128 output tile and issues
//      wgmma.m64n128k16 (FP32 accumulators, both operands from shared memory) with the variant's
//      accumulation scheme, the same as the mma.sync kernels' policies and the CPU emulation:
//        single    fp16-tc     acc += hi*hi
//        markidis  markidis    acc += lo*lo, lo*hi, hi*lo, hi*hi, one accumulator
//        halfhalf  ootomo-fp16 corr += lo*hi, hi*lo inside; part = hi*hi chained for `chunk`
//                  ec-fp16     k-steps of 16 from zero, then acc += part in FP32 RN outside;
//                              result acc + corr / 2^11
//        legemm    legemm      acc0 += hi*hi, acc1 += hi*lo, lo*hi; result acc0 + acc1 / 2^10
//      then the epilogue unscales (ec) and writes alpha * v + beta * C (FP32, no contraction),
//      reading and writing each element of C once, straight from the accumulator registers.
// The grid is persistent (one block per SM, tiles in groups of 8 columns for L2 reuse), so the
// producer loads the next tile's operands while the consumers run the epilogue. A unit of work
// is a tile of one member of a batch (cuda::gemm_batched: the members' split operands stacked
// in the same matrices) over one range of k (GemmOptions::split_k, batch.hpp): a split call's
// units store their raw sums (Epilogue::partial) and split_reduce_kernel adds the ranges in
// FP32 in order, unscales and applies alpha and beta.
// The epilogue is a template parameter (Epilogue): the stores of C in pairs (the common case)
// or element by element, or (cuda::nearest_columns) the nearest-column epilogue of
// wgmma_nearest.cuh, whose ec consumer overlaps it with the next tile's products. One epilogue
// per instance: with both stores in one kernel, ptxas spilled 128-152 bytes of the consumers'
// registers (ec-tf32 9% slower on the LU shape, docs/benchmark-history.md, session 16).
#include <cuda.h>  // CUtensorMap (types only; the encoder comes through the runtime)
#include <cuda_fp16.h>
#include <cudaTypedefs.h>
#include <math_constants.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "backend.hpp"
#include "exponent_range.cuh"
#include "tc_split.cuh"
#include "tcsolve/gemm/scaling.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"
#include "tcsolve/runtime/per_device.hpp"
#include "wgmma_gemm.hpp"

namespace tcsolve::cuda::detail {
namespace {

constexpr int kTileM = 128, kTileN = 128;  // output tile
constexpr int kRowBytes = 128;             // k-tile rows: 64 FP16 or 32 TF32 (one 128-byte swizzle row)
[[maybe_unused]] constexpr int kStepsPerTile = 4;           // wgmma k-steps per k-tile (k16 FP16, k8 TF32)
constexpr int kThreads = 384;              // producer + 2 consumer warpgroups
constexpr int kPartBytes = kTileM * kRowBytes;  // one 128-row operand tile: 16 KiB
constexpr int tile_k(bool tf32) { return tf32 ? 32 : 64; }
[[maybe_unused]] constexpr int kGroupN = 8;             // tile columns per raster group

constexpr bool uses_lo(WgmmaScheme s) { return s != WgmmaScheme::single; }
constexpr int stage_bytes(WgmmaScheme s) { return (uses_lo(s) ? 4 : 2) * kPartBytes; }
constexpr int stages(WgmmaScheme s) { return uses_lo(s) ? 3 : 6; }  // 192 KiB of operands
constexpr int smem_bytes(WgmmaScheme s) { return stages(s) * stage_bytes(s) + 1024 + 2 * 8 * 8; }

struct NearestBounds;  // wgmma_nearest.cuh
struct NearestExactColumn;

struct MainParams {
  int m, n, tiles_m, tiles_n, k_tiles;
  int want_fp16;        // auto: this kernel runs when (*use_fp16 != 0) == want_fp16
  float alpha, beta;
  float* C;
  int ldc;
  int chunk;            // halfhalf: k-steps of hi*hi chained before the outside add
  const int* shift_a;   // ec: scaling exponents (nullptr: none)
  const int* shift_b;
  const int* use_fp16;  // auto: device flag (nullptr: always run)
  const float* alpha_ptr;  // device scalars (cuBLAS's device pointer mode); nullptr: alpha, beta
  const float* beta_ptr;
  // auto, made here (instead of by auto_flag_kernel: one launch fewer): the choice from the two
  // range maxima choose_range[0..2) (auto_uses_fp16), written to *choice by block 0 (a TF32
  // choice also sets *tf32_needed when not null); the kernel then runs when the choice equals
  // want_fp16. Later launches (split_reduce_kernel, the TF32 path) read *choice as use_fp16.
  const int* choose_range = nullptr;
  int* choice = nullptr;
  int* tf32_needed = nullptr;
  // or, instead of choose_range, the split blocks' range slots (scale_split's range_slots: no
  // fill of two cells first): the maxima of choose_slots[0, slots_a) (op(A)'s blocks) and
  // [slots_a, slots_total) (op(B)'s), found by every warp alone (the same values)
  const int* choose_slots = nullptr;
  int slots_a = 0, slots_total = 0;
  // The nearest-column epilogue (Epilogue::nearest; GemmArgs::nearest): instead of
  // storing D, labels[i] = argmin_j (weights[j] - 2 D(i, j)) in FP64, the lowest j on ties, and
  // *changed += the labels that differ from before. Each block owns whole rows of tiles.
  const double* weights = nullptr;
  int* labels = nullptr;
  unsigned long long* changed = nullptr;
  // nearest: the row block's A k-tiles (hi and lo) loaded once into shared memory and kept for
  // its tiles; the stages then carry B only (resident_a_fits says when the k-tiles fit).
  int resident_a = 0;
  // nearest: the call's column data and bounds (wgmma_nearest.cuh, nearest_columns_prep_kernel)
  const float2* columns = nullptr;
  const NearestExactColumn* exact = nullptr;
  const NearestBounds* bounds = nullptr;
  // Batches (the stores and Epilogue::partial): member b's operand rows are rows
  // (b tiles_m + tm) 128 of the X maps and (b tiles_n + tn) 128 of the Y maps, its shifts
  // shift_a + b m and shift_b + b n, its C c_array[b] (when not null) or C + b stride_c.
  int batch = 1;
  long long stride_c = 0;
  float* const* c_array = nullptr;
  // k-splitting: `splits` ranges of split_tiles k-tiles (the last shorter); Epilogue::partial
  // writes range s of member b, element (i, j), to partial[(s batch + b) partial_stride + j
  // partial_ld + i] (raw sums: no unscaling, no alpha or beta; split_reduce_kernel does those)
  int splits = 1, split_tiles = 0;
  float* partial = nullptr;
  int partial_ld = 0;
  long long partial_stride = 0;
};

/// Bytes of shared memory of a kNearest kernel with resident A: the A region (k_tiles x hi, lo),
/// the B-only stages, the alignment slack and the barriers (full, empty per stage; A's two).
constexpr int resident_smem_bytes(WgmmaScheme s, int k_tiles) {
  return k_tiles * 2 * kPartBytes + stages(s) * 2 * kPartBytes + 1024 + (2 * stages(s) + 2) * 8;
}
constexpr int kMaxDynamicSmem = 227 * 1024;  ///< sm_90's opt-in limit per block

// ---------------------------------------------------------------------------------------------
// PTX wrappers (sm_90a; compiled only in that pass)
// ---------------------------------------------------------------------------------------------
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
/// Waits until the phase of parity `parity` of the barrier has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred P1;\nLAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}

/// TMA: the box at (inner, outer) of a 2-D tensor map into shared memory, completing on bar.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int inner,
                                            int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_u32(bar)), "r"(inner), "r"(outer)
      : "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/// Keeps the compiler from moving accesses of the accumulator registers across a wait.
__device__ __forceinline__ void fence_regs(float (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// acc += part in FP32 round-to-nearest on the CUDA cores: the schemes' sums outside the
/// tensor core (after the wait and the register fences).
__device__ __forceinline__ void add_rn(float (&acc)[64], const float (&part)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = __fadd_rn(acc[i], part[i]);
}

/// Shared-memory matrix descriptor of a K-major tile with 128-byte rows and the 128-byte
/// swizzle that TMA wrote: start address / 16, leading byte offset 16 (unused for this
/// layout), stride byte offset 1024 (8 rows of 128 bytes), swizzle mode 1 (128 B) in bits 62-63.
__device__ __forceinline__ std::uint64_t smem_desc(const void* tile) {
  const std::uint64_t addr = smem_u32(tile);
  return ((addr & 0x3FFFFu) >> 4) | (std::uint64_t{16 >> 4} << 16) | (std::uint64_t{1024 >> 4} << 32) |
         (std::uint64_t{1} << 62);
}

/// wgmma m64n128k16 (FP32 += FP16 x FP16) or, kTf32, m64n128k8 (FP32 += TF32 x TF32), both
/// operands from shared memory (K-major, 128-byte swizzle: 64 FP16 or 32 TF32 per row); d is
/// the warpgroup's 64 x 128 accumulator fragment (64 values per thread). scale_d = 0
/// overwrites d with the product (a fresh accumulator), 1 accumulates.
#define TCSOLVE_WGMMA_M64N128(SHAPE_TYPES, TAIL)                                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                     \
               "wgmma.mma_async.sync.aligned." SHAPE_TYPES " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1" TAIL ";\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                                                                             \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d))
template <bool kTf32>
__device__ __forceinline__ void wgmma_m64n128(float (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b,
                                              int scale_d) {
  if constexpr (kTf32) TCSOLVE_WGMMA_M64N128("m64n128k8.f32.tf32.tf32", "");  // K-major only, no transpose flags
  else TCSOLVE_WGMMA_M64N128("m64n128k16.f32.f16.f16", ", 0, 0");
}
#undef TCSOLVE_WGMMA_M64N128

/// The two cross products of a k-step into d in the emulation's order, op(A)'s lo times op(B)'s
/// hi first, then op(A)'s hi times op(B)'s lo. kSwap: the kernel computes D^T (Epilogue::
/// store_pairs: X is op(B), Y is op(A)), so X_hi Y_lo is the first of them. Without the swap a
/// transposed call chained the two in the other order and its bits differed from an untransposed
/// one's (C's alignment chose between them).
template <bool kTf32, bool kSwap>
__device__ __forceinline__ void cross_terms(float (&d)[64], std::uint64_t ah, std::uint64_t al, std::uint64_t bh,
                                            std::uint64_t bl, int scale_first) {
  if constexpr (kSwap) {
    wgmma_m64n128<kTf32>(d, ah, bl, scale_first);
    wgmma_m64n128<kTf32>(d, al, bh, 1);
  } else {
    wgmma_m64n128<kTf32>(d, al, bh, scale_first);
    wgmma_m64n128<kTf32>(d, ah, bl, 1);
  }
}

/// ec: one group, the three products (lo*hi, hi*lo, hi*hi) of k-steps 2 half and 2 half + 1 of
/// the k-tile into d, from zero, committed.
template <bool kTf32, bool kSwap = false>
__device__ __forceinline__ void ec_group(float (&d)[64], std::uint64_t ah, std::uint64_t al, std::uint64_t bh,
                                         std::uint64_t bl, int half) {
  wgmma_fence();
#pragma unroll
  for (int kk = 2 * half; kk < 2 * half + 2; ++kk) {
    const std::uint64_t o = 2 * kk;  // 32 bytes along k, in 16-byte units
    cross_terms<kTf32, kSwap>(d, ah + o, al + o, bh + o, bl + o, kk == 2 * half ? 0 : 1);
    wgmma_m64n128<kTf32>(d, ah + o, bh + o, 1);
  }
  wgmma_commit();
}

#endif

}  // namespace
}  // namespace tcsolve::cuda::detail

#include "wgmma_split.cuh"  // the split pass

namespace tcsolve::cuda::detail {
namespace {

/// auto's choice into *use_fp16; a TF32 choice also sets *tf32_needed (when not null).
__global__ void auto_flag_kernel(const int* max_range, int* use_fp16, int* tf32_needed) {
  const bool fp16 = auto_uses_fp16(max_range[0], max_range[1]);
  *use_fp16 = fp16 ? 1 : 0;
  if (!fp16 && tf32_needed != nullptr) *tf32_needed = 1;
}

// ---------------------------------------------------------------------------------------------
// Main kernel
// ---------------------------------------------------------------------------------------------

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// ldexpf(v, -(sa + sb)) as one or two exact power-of-two multiplications, branch-free: the
/// first factor 2^e1 with e1 = -(sa + sb) clamped to [-126, 127] (a normal FP32 number), the
/// second 2^(e - e1), which is 1 unless the row and column scalings together exceed FP32's
/// exponent range. One multiplication by a normal power of two rounds once, like ldexpf; the
/// second can round a second time only when the first result is subnormal (inputs whose rows
/// and columns both span the far ends of FP32's range).
__device__ __forceinline__ float unscale(float v, int sa, int sb) {
  const int e = -(sa + sb);
  const int e1 = min(127, max(-126, e));
  return __fmul_rn(__fmul_rn(v, scale_factor(e1)), scale_factor(min(127, max(-126, e - e1))));
}

/// Output tile `t` of the persistent sequence: groups of kGroupN tile columns, down M inside.
__device__ __forceinline__ void tile_coords(const MainParams& p, int t, int& tm, int& tn) {
  const int per_group = kGroupN * p.tiles_m;
  const int first_n = (t / per_group) * kGroupN;
  const int width = min(kGroupN, p.tiles_n - first_n);
  const int local = t % per_group;
  tm = local / width, tn = first_n + local % width;
}

/// Unit t of a batched, k-split call (the stores and Epilogue::partial): member b, range s,
/// tile (tm, tn) in tile_coords' order; a tile's ranges are adjacent units.
__device__ __forceinline__ void unit_coords(const MainParams& p, int t, int& b, int& tm, int& tn, int& s) {
  const int per_member = p.tiles_m * p.tiles_n * p.splits;
  b = t / per_member;
  const int r = t % per_member;
  s = r % p.splits;
  tile_coords(p, r / p.splits, tm, tn);
}

/// The persistent tile sequence of a block. Stores: t = blockIdx.x, + gridDim.x, ... in the
/// raster order of tile_coords. kNearest: the block takes whole rows of tiles (tm = blockIdx.x,
/// + gridDim.x, ...), each from tn = 0 to tiles_n - 1, so a row's minimum stays in registers.
template <bool kNearest>
__device__ __forceinline__ int first_tile(const MainParams& p) {
  return kNearest ? static_cast<int>(blockIdx.x) * p.tiles_n : static_cast<int>(blockIdx.x);
}
template <bool kNearest>
__device__ __forceinline__ int next_tile(const MainParams& p, int t) {
  if constexpr (!kNearest) return t + static_cast<int>(gridDim.x);
  return (t + 1) % p.tiles_n != 0 ? t + 1 : t + 1 + (static_cast<int>(gridDim.x) - 1) * p.tiles_n;
}
template <bool kNearest>
__device__ __forceinline__ void coords(const MainParams& p, int t, int& tm, int& tn) {
  if constexpr (kNearest) tm = t / p.tiles_n, tn = t % p.tiles_n;
  else tile_coords(p, t, tm, tn);
}

/// (s, j) < (best, best_j) lexicographically: a NaN score never wins.
__device__ __forceinline__ bool nearer(double s, int j, double best, int best_j) {
  return s < best || (s == best && j < best_j);
}
#endif

#include "wgmma_nearest.cuh"  // the nearest epilogue (uses unscale and nearer above)

/// What a kernel instance does with its tile of D = X Y^T (D: m x n).
///   store        alpha D + beta C into the column-major C, element by element (D is C).
///   store_pairs  the host passed op(B) as X and op(A) as Y, so D = C^T: a thread's pairs of
///                adjacent D columns are adjacent rows of C, moved by 8-byte loads and stores
///                (C 8-byte aligned, ldc even): the common case.
///   nearest      the nearest-column epilogue (wgmma_nearest.cuh) instead of any store.
///   partial      the raw sums of one k range into MainParams::partial (k-splitting).
enum class Epilogue { store, store_pairs, nearest, partial };

/// Elements of C a thread loads before it stores them (the epilogue's loads in flight). The
/// halfhalf scheme (ootomo-*: an outside add every k-step) takes batches of 16: with 32, ptxas
/// spilled 8-48 bytes of its registers and ootomo-fp16 ran 36% slower at the H100's own clocks.
/// halfhalf_tiles (ec-tf32) keeps 32: with 16 it is spill-free too, but the two more round
/// trips to C measured 3% slower than its 24 spilled bytes (docs/benchmark-history.md, session 16).
template <WgmmaScheme S>
constexpr int kStoreBatch = S == WgmmaScheme::halfhalf ? 16 : 32;

template <WgmmaScheme S>
struct Accumulators {
  float acc[64];
  // halfhalf: corr; legemm: acc1; ec: part0 (first chunk of each k-tile)
  float extra[S == WgmmaScheme::single || S == WgmmaScheme::markidis ? 1 : 64];
  // halfhalf: hi*hi chained for `chunk` k-steps; ec: part1 (second chunk of each k-tile)
  float part[S == WgmmaScheme::single || S == WgmmaScheme::markidis || S == WgmmaScheme::legemm ? 1 : 64];
};

template <WgmmaScheme S, bool kTf32, Epilogue E>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_ah, const __grid_constant__ CUtensorMap map_al,
                 const __grid_constant__ CUtensorMap map_bh, const __grid_constant__ CUtensorMap map_bl,
                 const MainParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kNearest = E == Epilogue::nearest;
  constexpr bool kSwap = E == Epilogue::store_pairs;  // X is op(B): the cross products swap (cross_terms)
  if (p.choose_range != nullptr || p.choose_slots != nullptr) {  // auto's choice made here
    int range_a = 0, range_b = 0;
    if (p.choose_slots != nullptr) {
#pragma unroll 8
      for (int i = threadIdx.x % 32; i < p.slots_total; i += 32) {
        const int v = p.choose_slots[i];
        if (i < p.slots_a) range_a = max(range_a, v);
        else range_b = max(range_b, v);
      }
      for (int off = 16; off > 0; off /= 2) {
        range_a = max(range_a, __shfl_xor_sync(0xffffffffu, range_a, off));
        range_b = max(range_b, __shfl_xor_sync(0xffffffffu, range_b, off));
      }
    } else {
      range_a = p.choose_range[0], range_b = p.choose_range[1];
    }
    const bool fp16 = auto_uses_fp16(range_a, range_b);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      *p.choice = fp16 ? 1 : 0;
      if (!fp16 && p.tf32_needed != nullptr) *p.tf32_needed = 1;
    }
    if (fp16 != (p.want_fp16 != 0)) return;
  } else if (p.use_fp16 != nullptr && (*p.use_fp16 != 0) != p.want_fp16) {
    return;  // auto chose the other
  }
  constexpr int kTileK = tile_k(kTf32);
  constexpr int kStages = stages(S);
  constexpr int kStageBytes = stage_bytes(S);
  extern __shared__ unsigned char smem_raw[];
  // 128-byte swizzled tiles need 1024-byte alignment
  unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) &
                                                         ~std::uintptr_t{1023});
  // resident A (kNearest, p.resident_a): smem = A region (k-tile kt: Ah | Al at 32 KiB kt) | stages
  // (Bh | Bl) | barriers; else stage s: Ah | Bh | Al | Bl, 16 KiB each | barriers
  const bool resident = kNearest && p.resident_a != 0;
  const int stage_bytes_used = resident ? 2 * kPartBytes : kStageBytes;
  unsigned char* stage_base = resident ? smem + p.k_tiles * 2 * kPartBytes : smem;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(stage_base + kStages * stage_bytes_used);
  std::uint64_t* empty = full + kStages;
  std::uint64_t* a_full = empty + kStages;  // resident: the row block's A arrived
  std::uint64_t* a_empty = a_full + 1;      // resident: the consumers are done with it
  // which: 0 Ah, 1 Bh, 2 Al, 3 Bl (of stage s, or with resident A of k-tile kt)
  auto part_ptr = [&](int s, int which, int kt) -> unsigned char* {
    if (!resident) return smem + s * kStageBytes + which * kPartBytes;
    if (which % 2 == 0) return smem + kt * 2 * kPartBytes + (which / 2) * kPartBytes;
    return stage_base + s * 2 * kPartBytes + (which / 2) * kPartBytes;
  };

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full + s, 1);
      mbar_init(empty + s, 8);  // lane 0 of each consumer warp
    }
    if (resident) {
      mbar_init(a_full, 1);
      mbar_init(a_empty, 8);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();
  // kNearest: tiles in rows (first_tile, next_tile); else units of unit_coords, a block's
  // t = blockIdx.x, + gridDim.x, ...
  const int tiles = kNearest ? p.tiles_m * p.tiles_n : p.tiles_m * p.tiles_n * p.splits * p.batch;

  if (warpgroup == 0) {
    // ---------------- producer ----------------
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      int stage = 0;
      unsigned phase = 0, a_phase = 0;
      for (int t = first_tile<kNearest>(p); t < tiles; t = next_tile<kNearest>(p, t)) {
        int tm, tn, b = 0, s = 0;
        if constexpr (kNearest) coords<kNearest>(p, t, tm, tn);
        else unit_coords(p, t, b, tm, tn, s);
        const int kt0 = kNearest ? 0 : s * p.split_tiles;
        const int kt1 = kNearest || p.splits == 1 ? p.k_tiles : min(p.k_tiles, kt0 + p.split_tiles);
        const int x_row = (b * p.tiles_m + tm) * kTileM, y_row = (b * p.tiles_n + tn) * kTileN;
        if (resident && tn == 0) {  // a new row block: its A k-tiles, once the last one is free
          mbar_wait(a_empty, a_phase ^ 1u);
          mbar_arrive_expect_tx(a_full, p.k_tiles * 2 * kPartBytes);
          for (int kt = 0; kt < p.k_tiles; ++kt) {
            tma_load_2d(part_ptr(0, 0, kt), &map_ah, a_full, kt * kTileK, tm * kTileM);
            tma_load_2d(part_ptr(0, 2, kt), &map_al, a_full, kt * kTileK, tm * kTileM);
          }
          a_phase ^= 1u;
        }
        for (int kt = kt0; kt < kt1; ++kt) {
          mbar_wait(empty + stage, phase ^ 1u);
          mbar_arrive_expect_tx(full + stage, stage_bytes_used);
          const int kx = kt * kTileK;
          if (!resident) tma_load_2d(part_ptr(stage, 0, kt), &map_ah, full + stage, kx, x_row);
          tma_load_2d(part_ptr(stage, 1, kt), &map_bh, full + stage, kx, y_row);
          if constexpr (uses_lo(S)) {
            if (!resident) tma_load_2d(part_ptr(stage, 2, kt), &map_al, full + stage, kx, x_row);
            tma_load_2d(part_ptr(stage, 3, kt), &map_bl, full + stage, kx, y_row);
          }
          if (++stage == kStages) stage = 0, phase ^= 1u;
        }
      }
    }
  } else {
    // ---------------- consumers ----------------
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = warpgroup - 1;  // rows [64 cw, 64 cw + 64) of the tile
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
    int stage = 0;
    unsigned phase = 0, a_phase = 0;
    // The wgmma descriptors of a stage's four parts for k-tile kt: A's hi and lo at this
    // warpgroup's 64 rows, B's hi and lo.
    struct StageDescs {
      std::uint64_t ah, bh, al, bl;
    };
    auto stage_descs = [&](int s, int kt) {
      return StageDescs{smem_desc(part_ptr(s, 0, kt) + cw * 64 * 128), smem_desc(part_ptr(s, 1, kt)),
                        smem_desc(part_ptr(s, 2, kt) + cw * 64 * 128), smem_desc(part_ptr(s, 3, kt))};
    };
    Accumulators<S> r;
    NearestRows rows;  // kNearest: the thread's two rows of the current row block
    if constexpr (kNearest && S == WgmmaScheme::ec) {
      // The nearest-column ec consumer. Per k-tile, the two groups (two k-steps of the three
      // products each, from zero) go into `extra` and `part`, and acc = ((0 + g0) + g1) + g2
      // + ..., the order of the stores' path: k-tile 0 ends with acc = g0 + g1 (0 + g0 = g0
      // but for the sign of a zero, which no score sees), the others add g0 while g1
      // computes. A tile's epilogue runs while the next tile's first group computes, on acc,
      // which is never a wgmma accumulator (ptxas would otherwise wait for the group). Every
      // k-tile ends with no group in flight (ptxas serialises the wgmmas of a group whose
      // registers stay in flight across a loop's back edge).
      const NearestBounds nb = *p.bounds;
      const int row_in_tile = cw * 64 + warp * 16 + lane / 4;
      const int col_in_tile = 2 * (lane % 4);
      int prev_tm = -1, prev_tn = 0;  // the tile whose sums (in acc) wait for their epilogue
      auto finish_tile = [&]() {
        nearest_score_tile(p, nb, r.acc, prev_tn * kTileN + col_in_tile, rows);
        if (prev_tn + 1 == p.tiles_n) nearest_finish_rows(p, prev_tm * kTileM + row_in_tile, lane, rows);
        prev_tm = -1;
      };
      for (int tm = static_cast<int>(blockIdx.x); tm < p.tiles_m; tm += static_cast<int>(gridDim.x)) {
        if (resident) {
          if (prev_tm >= 0) {  // the previous row block's A has been read for the last time
            if (lane == 0) mbar_arrive(a_empty);
            finish_tile();
          }
          mbar_wait(a_full, a_phase);
          a_phase ^= 1u;
        }
        for (int tn = 0; tn < p.tiles_n; ++tn) {
          for (int kt = 0; kt < p.k_tiles; ++kt) {
            mbar_wait(full + stage, phase);
            const StageDescs d = stage_descs(stage, kt);
            const std::uint64_t ah = d.ah, bh = d.bh, al = d.al, bl = d.bl;
            ec_group<kTf32>(r.extra, ah, al, bh, bl, 0);
            if (kt == 0) {
              if (prev_tm >= 0) finish_tile();  // beside this tile's first group
              if (tn == 0) nearest_rows_start(p, tm * kTileM + row_in_tile, rows);  // after the last one's finish
            }
            ec_group<kTf32>(r.part, ah, al, bh, bl, 1);
            wgmma_wait<1>();  // the first group (extra) is complete
            fence_regs(r.extra);
            fence_regs(r.acc);
            if (kt != 0) add_rn(r.acc, r.extra);
            wgmma_wait<0>();  // the second (part): the stage is free
            if (lane == 0) mbar_arrive(empty + stage);
            if (++stage == kStages) stage = 0, phase ^= 1u;
            fence_regs(r.part);
            fence_regs(r.acc);
            if (kt == 0) {
              fence_regs(r.extra);
#pragma unroll
              for (int i = 0; i < 64; ++i) r.acc[i] = __fadd_rn(r.extra[i], r.part[i]);
            } else {
              add_rn(r.acc, r.part);
            }
          }
          prev_tm = tm, prev_tn = tn;
        }
      }
      if (prev_tm >= 0) finish_tile();
    } else {  // every other scheme, and the stores
      for (int t = first_tile<kNearest>(p); t < tiles; t = next_tile<kNearest>(p, t)) {
        // The unit's k-tiles: a count only (the stages do not depend on which k-tiles; resident
        // A, nearest only, starts at 0). The unit's coordinates are decoded again for the
        // epilogue, so that none of them holds a register across the k loop (spills otherwise).
        int k_count = p.k_tiles;
        if constexpr (!kNearest) {
          if (p.splits != 1) k_count = min(p.k_tiles - (t % p.splits) * p.split_tiles, p.split_tiles);
        }
#pragma unroll
        for (int i = 0; i < 64; ++i) r.acc[i] = 0.0f;
        if constexpr (S == WgmmaScheme::halfhalf || S == WgmmaScheme::halfhalf_tiles || S == WgmmaScheme::legemm) {
#pragma unroll
          for (int i = 0; i < 64; ++i) r.extra[i] = 0.0f;
        }
        int steps = 0;  // halfhalf: k-steps (k-tiles) of hi*hi in `part` since the last outside add
        int held = -1;  // stage whose wgmmas may still be reading it
        if (resident && t % p.tiles_n == 0) {  // the row block's A (tn == 0)
          mbar_wait(a_full, a_phase);
          a_phase ^= 1u;
        }
        for (int kt = 0; kt < k_count; ++kt) {
          mbar_wait(full + stage, phase);
          const StageDescs d = stage_descs(stage, kt);
          const std::uint64_t ah = d.ah, bh = d.bh, al = d.al, bl = d.bl;
          if constexpr (S == WgmmaScheme::ec) {
            // two chunks of two k-steps per k-tile, in part0 and part1 alternately: the outside
            // add of one chunk runs on the CUDA cores while the tensor cores work on the next
            auto chunk = [&](float(&part)[64], float(&done)[64], int half) {
              ec_group<kTf32, kSwap>(part, ah, al, bh, bl, half);
              wgmma_wait<1>();  // all but this chunk's group: the previous chunk is complete
              if (half == 0 && held >= 0 && lane == 0) mbar_arrive(empty + held);  // last k-tile's stage
              fence_regs(done);
              fence_regs(r.acc);
              if (half == 1) add_rn(r.acc, done);
            };
            chunk(r.extra, r.part, 0);
            chunk(r.part, r.extra, 1);
            // part1 of this k-tile: added now (wait 0), so no accumulator is read across k-tiles
            wgmma_wait<0>();
            fence_regs(r.part);
            fence_regs(r.acc);
            add_rn(r.acc, r.part);
          } else {
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < kStepsPerTile; ++kk) {
              const std::uint64_t o = 2 * kk;  // 32 bytes along k (16 FP16, 8 TF32), in 16-byte units
              if constexpr (S == WgmmaScheme::single) {
                wgmma_m64n128<kTf32>(r.acc, ah + o, bh + o, 1);
              } else if constexpr (S == WgmmaScheme::markidis) {
                wgmma_m64n128<kTf32>(r.acc, al + o, bl + o, 1);
                cross_terms<kTf32, kSwap>(r.acc, ah + o, al + o, bh + o, bl + o, 1);
                wgmma_m64n128<kTf32>(r.acc, ah + o, bh + o, 1);
              } else if constexpr (S == WgmmaScheme::legemm) {  // hi*lo first (LE-GEMM's order)
                wgmma_m64n128<kTf32>(r.acc, ah + o, bh + o, 1);
                cross_terms<kTf32, !kSwap>(r.extra, ah + o, al + o, bh + o, bl + o, 1);
              } else if constexpr (S == WgmmaScheme::halfhalf_tiles) {  // part restarts at k-tile boundaries
                cross_terms<kTf32, kSwap>(r.extra, ah + o, al + o, bh + o, bl + o, 1);
                wgmma_m64n128<kTf32>(r.part, ah + o, bh + o, kk > 0 || steps > 0 ? 1 : 0);
              } else {  // halfhalf
                cross_terms<kTf32, kSwap>(r.extra, ah + o, al + o, bh + o, bl + o, 1);
                wgmma_m64n128<kTf32>(r.part, ah + o, bh + o, steps > 0 ? 1 : 0);
                if (++steps == p.chunk) {  // acc += part in FP32 RN on the CUDA cores
                  wgmma_commit();
                  wgmma_wait<0>();
                  fence_regs(r.part);
                  fence_regs(r.acc);
                  add_rn(r.acc, r.part);
                  steps = 0;
                  wgmma_fence();
                }
              }
            }
            wgmma_commit();
            bool waited = false;
            if constexpr (S == WgmmaScheme::halfhalf_tiles) {
              if (++steps == p.chunk) {  // p.chunk k-tiles of hi*hi: add outside
                wgmma_wait<0>();
                fence_regs(r.part);
                fence_regs(r.acc);
                add_rn(r.acc, r.part);
                steps = 0;
                waited = true;
              }
            }
            if (!waited) wgmma_wait<1>();  // every group but this k-tile's is complete
            if (held >= 0 && lane == 0) mbar_arrive(empty + held);
          }
          held = stage;
          if (++stage == kStages) stage = 0, phase ^= 1u;
        }
        wgmma_wait<0>();
        if (held >= 0 && lane == 0) mbar_arrive(empty + held);
        // resident: the row block's last tile has read A for the last time
        if (resident && (t + 1) % p.tiles_n == 0 && lane == 0) mbar_arrive(a_empty);
        fence_regs(r.acc);
        if constexpr (S == WgmmaScheme::halfhalf || S == WgmmaScheme::halfhalf_tiles) {
          fence_regs(r.extra);
          fence_regs(r.part);
          if (steps != 0) {
            add_rn(r.acc, r.part);
          }
        } else if constexpr (S == WgmmaScheme::legemm) {
          fence_regs(r.extra);
        }

#pragma unroll
        for (int i = 0; i < 64; ++i) {  // the variant's result into acc
          float v = r.acc[i];
          if constexpr (S == WgmmaScheme::halfhalf || S == WgmmaScheme::halfhalf_tiles)
            v = __fadd_rn(v, r.extra[i] * (1.0f / kOotomoScale));
          if constexpr (S == WgmmaScheme::legemm) v = __fadd_rn(v, r.extra[i] * (1.0f / kLegemmScale));
          r.acc[i] = v;
        }

        // epilogue: register i of thread (warp, lane) holds row 16 warp + lane/4 + 8 ((i/2) % 2),
        // column 8 (i/4) + 2 (lane % 4) + i % 2 of the warpgroup's 64 x 128 block. The values of
        // C come in batches of kStoreBatch<S> (independent loads, one latency a batch), each
        // loaded whole before any of its stores. The unit's coordinates are decoded here, once
        // the other accumulators are dead.
        int tm, tn, b = 0, s = 0;
        if constexpr (kNearest) coords<kNearest>(p, t, tm, tn);
        else unit_coords(p, t, b, tm, tn, s);
        const int row0 = tm * kTileM + cw * 64 + warp * 16 + lane / 4;
        const int col0 = tn * kTileN + 2 * (lane % 4);
        int sa[2] = {0, 0};
        if (p.shift_a != nullptr && E != Epilogue::partial) {  // member b's shifts start at b m (b n)
          if (row0 < p.m) sa[0] = p.shift_a[b * p.m + row0];
          if (row0 + 8 < p.m) sa[1] = p.shift_a[b * p.m + row0 + 8];
        }
        if constexpr (kNearest) {  // the raw sums scored (wgmma_nearest.cuh)
          if (tn == 0) nearest_rows_start(p, row0, rows);
          nearest_score_tile(p, *p.bounds, r.acc, col0, rows);
          if (tn + 1 == p.tiles_n) nearest_finish_rows(p, row0, lane, rows);
          continue;
        }
        if constexpr (E == Epilogue::partial) {  // the raw sums of range s (the whole padded tile)
          float* out = p.partial + (static_cast<std::size_t>(s) * p.batch + b) * p.partial_stride;
#pragma unroll
          for (int i = 0; i < 64; ++i) {
            const int gi = row0 + 8 * ((i / 2) % 2), gj = col0 + 8 * (i / 4) + i % 2;
            out[gi + static_cast<std::size_t>(gj) * p.partial_ld] = r.acc[i];
          }
          continue;
        }
        if (p.shift_a != nullptr) {  // unscale: one shift per column (two elements) and row half
          const int* shift_b = p.shift_b + b * p.n;
#pragma unroll
          for (int c = 0; c < 32; ++c) {
            const int gj = col0 + 8 * (c / 2) + c % 2;
            const int sb = gj < p.n ? shift_b[gj] : 0;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int i = 4 * (c / 2) + 2 * h + c % 2;
              r.acc[i] = unscale(r.acc[i], sa[h], sb);
            }
          }
        }
        const float alpha = p.alpha_ptr != nullptr ? *p.alpha_ptr : p.alpha;
        const float beta = p.beta_ptr != nullptr ? *p.beta_ptr : p.beta;
        const bool beta0 = beta == 0.0f;
        float* const C = p.c_array != nullptr ? p.c_array[b] : p.C + b * p.stride_c;
        if constexpr (E == Epilogue::store_pairs) {  // the pair (i, i + 1) is C[gj, gj + 1] of column gi
#pragma unroll
          for (int h = 0; h < 64; h += kStoreBatch<S>) {  // C in batches of kStoreBatch<S> loads in flight
            float2 old[kStoreBatch<S> / 2];
            if (!beta0) {
#pragma unroll
              for (int q = 0; q < kStoreBatch<S> / 2; ++q) {
                const int i = h + 2 * q;
                const int gi = row0 + 8 * ((i / 2) % 2), gj = col0 + 8 * (i / 4);
                const float* c = C + gj + static_cast<std::size_t>(gi) * p.ldc;
                if (gi < p.m && gj + 1 < p.n) old[q] = *reinterpret_cast<const float2*>(c);
                else old[q] = make_float2(gi < p.m && gj < p.n ? c[0] : 0.0f, 0.0f);
              }
            }
#pragma unroll
            for (int q = 0; q < kStoreBatch<S> / 2; ++q) {
              const int i = h + 2 * q;
              const int gi = row0 + 8 * ((i / 2) % 2), gj = col0 + 8 * (i / 4);
              if (gi >= p.m || gj >= p.n) continue;
              float* c = C + gj + static_cast<std::size_t>(gi) * p.ldc;
              float2 v = make_float2(__fmul_rn(alpha, r.acc[i]), __fmul_rn(alpha, r.acc[i + 1]));
              if (!beta0) v = make_float2(__fadd_rn(v.x, __fmul_rn(beta, old[q].x)), __fadd_rn(v.y, __fmul_rn(beta, old[q].y)));
              if (gj + 1 < p.n) *reinterpret_cast<float2*>(c) = v;
              else c[0] = v.x;
            }
          }
          continue;
        }
        // Epilogue::store: element (gi, gj) of D is C[gi + gj ldc]
        const std::size_t ldc = static_cast<std::size_t>(p.ldc);
#pragma unroll
        for (int h = 0; h < 64; h += kStoreBatch<S>) {  // C in batches of kStoreBatch<S> loads in flight
          float old[kStoreBatch<S>];
          if (!beta0) {
#pragma unroll
            for (int i = h; i < h + kStoreBatch<S>; ++i) {
              const int gi = row0 + 8 * ((i / 2) % 2), gj = col0 + 8 * (i / 4) + i % 2;
              old[i - h] = gi < p.m && gj < p.n ? C[gi + gj * ldc] : 0.0f;
            }
          }
#pragma unroll
          for (int i = h; i < h + kStoreBatch<S>; ++i) {
            const int gi = row0 + 8 * ((i / 2) % 2), gj = col0 + 8 * (i / 4) + i % 2;
            if (gi >= p.m || gj >= p.n) continue;
            const float v = r.acc[i];
            C[gi + gj * ldc] =
                beta0 ? __fmul_rn(alpha, v) : __fadd_rn(__fmul_rn(alpha, v), __fmul_rn(beta, old[i - h]));
          }
        }
      }
    }
  }
#endif
}

/// k-splitting's reduction: for every member b and element (i, j) of its C, the ranges' raw
/// sums added in FP32 RN in range order, v = ((P_0 + P_1) + P_2) + ..., then unscaled and
/// stored as the main kernel's epilogue stores (alpha v + beta C, C not read when beta is 0).
/// Gated by auto's flag as the main kernel. Consecutive threads take consecutive rows i, so the
/// partial sums and C are read and written coalesced.
__global__ void __launch_bounds__(256) split_reduce_kernel(const MainParams p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (p.use_fp16 != nullptr && (*p.use_fp16 != 0) != p.want_fp16) return;  // auto chose the other
  const float alpha = p.alpha_ptr != nullptr ? *p.alpha_ptr : p.alpha;
  const float beta = p.beta_ptr != nullptr ? *p.beta_ptr : p.beta;
  const long long total = static_cast<long long>(p.batch) * p.m * p.n;
  const std::size_t range_stride = static_cast<std::size_t>(p.batch) * p.partial_stride;
  for (long long idx = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(idx % p.m);
    const long long rest = idx / p.m;
    const int j = static_cast<int>(rest % p.n), b = static_cast<int>(rest / p.n);
    const float* part = p.partial + static_cast<std::size_t>(b) * p.partial_stride + i +
                        static_cast<std::size_t>(j) * p.partial_ld;
    float v = part[0];
    for (int s = 1; s < p.splits; ++s) v = __fadd_rn(v, part[s * range_stride]);
    if (p.shift_a != nullptr)
      v = unscale(v, p.shift_a[static_cast<std::size_t>(b) * p.m + i], p.shift_b[static_cast<std::size_t>(b) * p.n + j]);
    float* const C = p.c_array != nullptr ? p.c_array[b] : p.C + b * p.stride_c;
    float& c = C[i + static_cast<std::size_t>(j) * p.ldc];
    c = beta == 0.0f ? __fmul_rn(alpha, v) : __fadd_rn(__fmul_rn(alpha, v), __fmul_rn(beta, c));
  }
#endif
}

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

int round_up(int x, int m) { return ceil_div(x, m) * m; }

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult status{};
    TCSOLVE_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &status));
    if (status != cudaDriverEntryPointSuccess || f == nullptr)
      throw Unavailable("the CUDA driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

/// cudaFuncSetAttribute(kernel, MaxDynamicSharedMemorySize, bytes), once per device and kernel
/// (a process-wide flag would leave a second device unset; per call it cost a host microsecond
/// per product).
template <typename Kernel>
void allow_dynamic_smem(Kernel kernel, int bytes) {
  static tcsolve::detail::PerDeviceMap<const void*, bool> configured;
  configured.get(reinterpret_cast<const void*>(kernel), [&] {
    TCSOLVE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return true;
  });
}

/// Tensor map of a rows x kp FP16 (tf32: FP32-stored TF32) matrix, kp contiguous: boxes of
/// 128 rows x 128 bytes, 128-byte swizzle.
CUtensorMap operand_map(const void* base, int rows, int kp, bool tf32) {
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  const int elem_bytes = tf32 ? 4 : 2;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(kp), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(kp) * elem_bytes};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kRowBytes / elem_bytes), kTileM};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult rc = tensor_map_encoder()(
      &map, tf32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void*>(base),
      dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) throw Unavailable("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(rc) + ")");
  return map;
}

/// The four operand matrices in the workspace: Ah (mp x kp), Bh (np x kp), Al, Bl; or, for
/// the main kernel alone (which only reads them), given ones (prepared points beside B's split).
struct Operands {
  unsigned char *ah, *bh, *al, *bl;
  Operands(const unsigned char* a_hi, unsigned char* b_hi, const unsigned char* a_lo, unsigned char* b_lo)
      : ah(const_cast<unsigned char*>(a_hi)), bh(b_hi), al(const_cast<unsigned char*>(a_lo)), bl(b_lo) {}
  Operands(unsigned char* ws, int mp, int np, int kp, int elem_bytes) {
    const std::size_t a = static_cast<std::size_t>(mp) * kp * elem_bytes, b = static_cast<std::size_t>(np) * kp * elem_bytes;
    ah = ws, bh = ws + a, al = bh + b, bl = al + a;
  }
};

/// The member layouts of op(A) and op(B) of g (one member unless g.batch says otherwise).
MemberLayout layout_a(const GemmArgs& g, int mp) { return MemberLayout{g.batch.stride_a, g.batch.a_array, mp}; }
MemberLayout layout_b(const GemmArgs& g, int np) { return MemberLayout{g.batch.stride_b, g.batch.b_array, np}; }

/// Where split_both finishes the ec scaling (one member): the exponent ranges' keys of the m
/// rows of op(A), then the n columns of op(B) (hi keys, then lo keys: ec_gemm.cu's
/// ranges_kernel), and auto's two range maxima (nullptr: not wanted).
struct RangeKeys {
  const unsigned* hi = nullptr;
  const unsigned* lo = nullptr;
  int* max_range = nullptr;
};

/// Both operands of every member (g.batch) split into ws (Operands of batch mp and batch np
/// rows) in one launch; shift_a, shift_b: every member's shifts (batch m, batch n), found from
/// keys first when keys.hi is given.
template <Transform T, bool kTf32>
void split_both(const GemmArgs& g, int mp, int np, int kp, const int* shift_a, const int* shift_b, const int* flag,
                unsigned char* ws, const RangeKeys& keys = {}) {
  const int members = g.batch.count;
  const Operands o(ws, mp * members, np * members, kp, kTf32 ? 4 : 2);
  const bool finish = keys.hi != nullptr;
  if (finish && members != 1) throw Unavailable("the split pass finishes the scaling of one member only");
  auto u = [](unsigned char* p) { return reinterpret_cast<unsigned*>(p); };
  const SplitOperand a{g.A, g.lda, g.ta == Op::t, g.m, const_cast<int*>(shift_a), finish ? keys.hi : nullptr,
                       finish ? keys.lo : nullptr, finish ? keys.max_range : nullptr, u(o.ah), u(o.al),
                       layout_a(g, mp)};
  const SplitOperand b{g.B, g.ldb, g.tb == Op::n, g.n, const_cast<int*>(shift_b), finish ? keys.hi + g.m : nullptr,
                       finish ? keys.lo + g.m : nullptr,
                       finish && keys.max_range != nullptr ? keys.max_range + 1 : nullptr, u(o.bh), u(o.bl),
                       layout_b(g, np)};
  const long long blocks_a = static_cast<long long>(kp / kSplitK) * (mp / kSplitRows) * members;
  const long long blocks = blocks_a + static_cast<long long>(kp / kSplitK) * (np / kSplitRows) * members;
  if (blocks > INT_MAX) throw Unavailable("a split pass of more than 2^31 - 1 tiles");
  split_pass_kernel<T, kTf32><<<static_cast<unsigned>(blocks), kSplitThreads, 0, g.stream()>>>(a, b, blocks_a, g.k, kp,
                                                                                               flag);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

template <WgmmaScheme S, bool kTf32>
void launch_main(const GemmArgs& g, int mp, int np, int kp, const Operands& o, const MainParams& params) {
  // C^T = op(B)^T op(A)^T when C allows 8-byte accesses: the epilogue then moves pairs of
  // adjacent rows of C (Epilogue::store_pairs); the products and their order are the same (cross_terms swaps the two cross products back).
  MainParams p = params;
  const bool nearest = p.labels != nullptr;  // rows of D must be the points: no C^T
  const bool partial = p.splits > 1;         // the reduction reads D untransposed
  const bool trans = !nearest && !partial && p.c_array == nullptr && p.ldc % 2 == 0 &&
                     (reinterpret_cast<std::uintptr_t>(p.C) & 7u) == 0 && (p.batch == 1 || p.stride_c % 2 == 0);
  const unsigned char *xh = o.ah, *xl = o.al, *yh = o.bh, *yl = o.bl;
  int xp = mp, yp = np;  // rows of the X and Y operand matrices
  if (trans) {
    std::swap(p.m, p.n);
    std::swap(p.tiles_m, p.tiles_n);
    std::swap(p.shift_a, p.shift_b);
    std::swap(xh, yh), std::swap(xl, yl), std::swap(xp, yp);
  }
  const CUtensorMap m_ah = operand_map(xh, xp, kp, kTf32), m_bh = operand_map(yh, yp, kp, kTf32);
  const CUtensorMap m_al = uses_lo(S) ? operand_map(xl, xp, kp, kTf32) : m_ah;
  const CUtensorMap m_bl = uses_lo(S) ? operand_map(yl, yp, kp, kTf32) : m_bh;
  auto kernel = trans ? wgmma_kernel<S, kTf32, Epilogue::store_pairs> : wgmma_kernel<S, kTf32, Epilogue::store>;
  if constexpr (S == WgmmaScheme::ec || S == WgmmaScheme::halfhalf_tiles) {  // the production schemes
    if (nearest) kernel = wgmma_kernel<S, kTf32, Epilogue::nearest>;
    if (partial) kernel = wgmma_kernel<S, kTf32, Epilogue::partial>;
  } else if (nearest || partial || p.batch != 1) {
    throw Unavailable("the nearest-column epilogue, batches and k-splitting run on the ec path's wgmma schemes only");
  }
  if (nearest && (partial || p.batch != 1)) throw Unavailable("the nearest-column epilogue takes one unsplit product");
  if (nearest) {  // the epilogue's per-column data (wgmma_nearest.cuh): one small launch
    const std::size_t np = static_cast<std::size_t>(p.tiles_n) * kTileN;
    const std::size_t column_bytes = np * sizeof(float2), exact_bytes = np * sizeof(NearestExactColumn);
    unsigned char* ws = static_cast<unsigned char*>(
        g.ctx->take(GemmWorkspaces::of(*g.ctx).nearest, exact_bytes + column_bytes + sizeof(NearestBounds)));
    NearestExactColumn* exact = reinterpret_cast<NearestExactColumn*>(ws);  // 16-byte aligned first
    float2* columns = reinterpret_cast<float2*>(ws + exact_bytes);
    NearestBounds* bounds = reinterpret_cast<NearestBounds*>(ws + exact_bytes + column_bytes);
    nearest_columns_prep_kernel<<<1, 1024, 0, g.stream()>>>(p.n, static_cast<int>(np),
                                                            p.shift_a != nullptr ? p.shift_b : nullptr, p.weights,
                                                            columns, exact, bounds);
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
    p.columns = columns, p.exact = exact, p.bounds = bounds;
  }
  if (p.resident_a && resident_smem_bytes(S, p.k_tiles) > kMaxDynamicSmem) p.resident_a = 0;  // k too large
  const int smem = p.resident_a ? resident_smem_bytes(S, p.k_tiles) : smem_bytes(S);
  allow_dynamic_smem(kernel, kMaxDynamicSmem);  // the largest size any launch asks for
  // persistent: any grid gives the same result (each tile is computed by one block, alone;
  // nearest: each row of tiles)
  const long long units = nearest ? p.tiles_m : static_cast<long long>(p.tiles_m) * p.tiles_n * p.splits * p.batch;
  if (units > INT_MAX) throw Unavailable("a batched product of more than 2^31 - 1 tiles and k ranges");
  const int sms = g.ctx->sm_count(), budget = g.ctx->max_blocks;
  const int grid = g.ctx->tile_blocks
                       ? static_cast<int>(units)
                       : static_cast<int>(std::min<long long>(units, budget > 0 ? std::min(budget, sms) : sms));
  kernel<<<grid, kThreads, smem, g.stream()>>>(m_ah, m_al, m_bh, m_bl, p);
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  if (partial) {  // the ranges' sums added, unscaled and stored
    const long long elements = static_cast<long long>(p.batch) * p.m * p.n;
    const int blocks = static_cast<int>(std::min<long long>((elements + 255) / 256, 8LL * sms));
    split_reduce_kernel<<<blocks, 256, 0, g.stream()>>>(p);
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
  }
}

template <bool kTf32>
void run(WgmmaScheme scheme, const GemmArgs& g, int chunk_steps, const int* shift_a, const int* shift_b,
         const int* use_fp16) {
  constexpr int elem = kTf32 ? 4 : 2;
  const int mp = round_up(g.m, kTileM), np = round_up(g.n, kTileN), kp = round_up(g.k, kSplitK);
  const std::size_t bytes = 2 * (static_cast<std::size_t>(mp) + np) * kp * elem;  // hi and lo
  unsigned char* ws = static_cast<unsigned char*>(g.ctx->take(GemmWorkspaces::of(*g.ctx).split, bytes));
  PhaseTimer phases(g);
  phases.mark(kTf32 ? "split-tf32" : "split-fp16");
  switch (scheme) {
    case WgmmaScheme::single: split_both<Transform::round, kTf32>(g, mp, np, kp, shift_a, shift_b, use_fp16, ws); break;
    case WgmmaScheme::markidis:
    case WgmmaScheme::ec:  // both: lo = RN(a - hi), not scaled
      split_both<Transform::markidis, kTf32>(g, mp, np, kp, shift_a, shift_b, use_fp16, ws);
      break;
    case WgmmaScheme::halfhalf:
    case WgmmaScheme::halfhalf_tiles: split_both<Transform::ootomo, kTf32>(g, mp, np, kp, shift_a, shift_b, use_fp16, ws); break;
    case WgmmaScheme::legemm:
      if constexpr (!kTf32) split_both<Transform::legemm, kTf32>(g, mp, np, kp, shift_a, shift_b, use_fp16, ws);
      break;
  }
  phases.mark(kTf32 ? "main-tf32" : "main-fp16");
  const MainParams p{g.m, g.n, mp / kTileM, np / kTileN, kp / tile_k(kTf32), kTf32 ? 0 : 1, g.alpha, g.beta, g.C,
                     g.ldc, chunk_steps, shift_a, shift_b, use_fp16, g.alpha_device, g.beta_device};
  switch (scheme) {
    case WgmmaScheme::single: launch_main<WgmmaScheme::single, kTf32>(g, mp, np, kp, Operands(ws, mp, np, kp, kTf32 ? 4 : 2), p); break;
    case WgmmaScheme::markidis:
      if constexpr (!kTf32) launch_main<WgmmaScheme::markidis, kTf32>(g, mp, np, kp, Operands(ws, mp, np, kp, kTf32 ? 4 : 2), p);
      break;
    case WgmmaScheme::halfhalf: launch_main<WgmmaScheme::halfhalf, kTf32>(g, mp, np, kp, Operands(ws, mp, np, kp, kTf32 ? 4 : 2), p); break;
    case WgmmaScheme::halfhalf_tiles: {
      MainParams q = p;
      q.chunk = chunk_steps / kStepsPerTile;
      launch_main<WgmmaScheme::halfhalf_tiles, kTf32>(g, mp, np, kp, Operands(ws, mp, np, kp, kTf32 ? 4 : 2), q);
      break;
    }
    case WgmmaScheme::ec: launch_main<WgmmaScheme::ec, kTf32>(g, mp, np, kp, Operands(ws, mp, np, kp, kTf32 ? 4 : 2), p); break;
    case WgmmaScheme::legemm:
      if constexpr (!kTf32) launch_main<WgmmaScheme::legemm, kTf32>(g, mp, np, kp, Operands(ws, mp, np, kp, kTf32 ? 4 : 2), p);
      break;
  }
}

/// ec-fp16 / ec-tf32 / auto with the fused scaling and split (see the header).
/// The blocks of the fused scaling and split of rows_a and rows_b rows (launch_scale_split):
/// op(A)'s, and all.
struct ScaleSplitBlocks {
  long long a, total;
  ScaleSplitBlocks(long long rows_a, long long rows_b, int kp) {
    const int rows = kp <= kMaxStagedK ? kStagedRows : kSplitRows;
    a = rows_a / rows, total = (rows_a + rows_b) / rows;
  }
};

/// auto on the device takes the split blocks' range slots (no fill first) up to this many
/// blocks: the main kernel's warps read them all (32 a lane at most), beyond it the two cells.
constexpr int kMaxRangeSlots = 1024;

/// The fused scaling and split of rows_a rows of a, then rows_b rows of b (every member's,
/// stacked; rows_b 0: a alone): staged in shared memory up to kMaxStagedK, else
/// scale_split_kernel. The same bits either way. range_slots: ScaleSplitBlocks(...).total ints
/// (the kernels' range_slots), or nullptr: a.max_range and b.max_range by atomicMax.
template <Transform T, bool kTf32>
void launch_scale_split(cudaStream_t stream, const ScaleSplitOperand& a, long long rows_a,
                        const ScaleSplitOperand& b, long long rows_b, int k, int kp, int* range_slots = nullptr) {
  const ScaleSplitBlocks blocks(rows_a, rows_b, kp);
  if (kp <= kMaxStagedK) {
    auto kernel = scale_split_staged_kernel<T, kTf32>;
    allow_dynamic_smem(kernel, staged_smem_bytes(kMaxStagedK));
    kernel<<<static_cast<unsigned>(blocks.total), kSplitThreads, staged_smem_bytes(kp), stream>>>(
        a, b, static_cast<int>(blocks.a), k, kp, range_slots);
  } else {
    scale_split_kernel<T, kTf32><<<static_cast<unsigned>(blocks.total), kSplitThreads, 0, stream>>>(
        a, b, static_cast<int>(blocks.a), k, kp, range_slots);
  }
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

/// production()'s workspace: the split operands (hi and lo of every member's op(A) and op(B),
/// FP16, or FP32-stored TF32 where ec-tf32 or auto may need them), then, with g.split.count > 1,
/// each k range's partial sums (mp x np floats per member and range), 256-byte aligned.
struct ProductionLayout {
  std::size_t partial_offset, slots_offset, bytes;
  ProductionLayout(Variant variant, const GemmArgs& g) {
    const std::size_t mp = round_up(g.m, kTileM), np = round_up(g.n, kTileN), kp = round_up(g.k, kSplitK);
    const std::size_t members = g.batch.count;
    const std::size_t elem = variant == Variant::ec_tf32 || variant == Variant::auto_ ? 4 : 2;
    const std::size_t split_bytes = 2 * (mp + np) * members * kp * elem;
    partial_offset = (split_bytes + 255) / 256 * 256;
    slots_offset = partial_offset + (g.split.count > 1 ? g.split.count * members * mp * np * sizeof(float) : 0);
    bytes = slots_offset + (variant == Variant::auto_ ? kMaxRangeSlots * sizeof(int) : 0);  // auto's range slots
  }
};

bool production(Variant variant, const GemmArgs& g, int tf32_chunk_steps, int* shift, int* max_range, int* flag,
                const unsigned* range_keys, unsigned char* ws) {
  const int mp = round_up(g.m, kTileM), np = round_up(g.n, kTileN), kp = round_up(g.k, kSplitK);
  const int members = g.batch.count;  // every member's rows stacked: mp and np rows each
  const long long xp = static_cast<long long>(mp) * members, yp = static_cast<long long>(np) * members;
  if (xp > INT_MAX || yp > INT_MAX) throw Unavailable("a batched product of more than 2^31 - 1 rows over its members");
  const bool tf32_only = variant == Variant::ec_tf32, with_auto = variant == Variant::auto_;
  const ProductionLayout layout(variant, g);
  int* range = with_auto ? max_range : nullptr;
  // range_keys (one member): the rows' exponent ranges were found first (ec_gemm.cu); the split
  // pass finishes the scaling from them (and max_range, which was cleared with them)
  const bool shifts_ready = range_keys != nullptr;
  RangeKeys keys;
  if (shifts_ready) keys = RangeKeys{range_keys, range_keys + g.m + g.n, range};
  // auto on the device: the split blocks write their ranges to slots that the FP16 main kernel
  // reads (no fill launched first), where they are few enough; else the two cells, filled first
  const bool gated = with_auto && g.auto_on_device;
  const ScaleSplitBlocks blocks(xp, yp, kp);
  int* range_slots = gated && !shifts_ready && blocks.total <= kMaxRangeSlots
                         ? reinterpret_cast<int*>(ws + layout.slots_offset)
                         : nullptr;
  if (with_auto && !shifts_ready && range_slots == nullptr)
    TCSOLVE_CUDA_CHECK(cudaMemsetAsync(max_range, 0, 2 * sizeof(int), g.stream()));
  PhaseTimer phases(g);
  phases.mark(tf32_only ? "scale+split-tf32" : "scale+split-fp16");
  int* shift_b_all = shift + static_cast<std::size_t>(g.m) * members;  // every member's A shifts, then B's
  auto scale_split = [&](auto transform, auto tf32) {
    const Operands o(ws, static_cast<int>(xp), static_cast<int>(yp), kp, tf32 ? 4 : 2);
    const ScaleSplitOperand a{g.A, g.lda, g.ta == Op::t, g.m, shift, range,
                              reinterpret_cast<unsigned*>(o.ah), reinterpret_cast<unsigned*>(o.al), layout_a(g, mp)};
    const ScaleSplitOperand b{g.B, g.ldb, g.tb == Op::n, g.n, shift_b_all, range == nullptr ? nullptr : range + 1,
                              reinterpret_cast<unsigned*>(o.bh), reinterpret_cast<unsigned*>(o.bl), layout_b(g, np)};
    launch_scale_split<decltype(transform)::value, decltype(tf32)::value>(g.stream(), a, xp, b, yp, g.k, kp,
                                                                          range_slots);
  };
  const int* shift_a = shift;
  const int* shift_b = shift_b_all;
  MainParams p{g.m, g.n, mp / kTileM, np / kTileN, 0, 1, g.alpha, g.beta, g.C, g.ldc, 2, shift_a, shift_b, nullptr,
               g.alpha_device, g.beta_device};
  if (g.nearest != nullptr)
    p.weights = g.nearest->weights, p.labels = g.nearest->labels, p.changed = g.nearest->changed,
    p.resident_a = g.nearest->resident_a ? 1 : 0;
  p.batch = members, p.stride_c = g.batch.stride_c, p.c_array = g.batch.c_array;
  if (g.split.count > 1) {  // each range's raw sums, untransposed: mp x np per member and range
    p.splits = g.split.count;
    p.partial_ld = mp;
    p.partial_stride = static_cast<long long>(mp) * np;
    p.partial = reinterpret_cast<float*>(ws + layout.partial_offset);
  }
  // auto: the FP16 operands are made while the ranges are found; then either the choice is read
  // back (one synchronisation of the stream; launching both paths gated by the device flag cost
  // 0.04 ms of early-returning blocks at m = n = 16384, k = 512), or, with g.auto_on_device, the
  // FP16 main kernel makes the choice (MainParams::choose_range or choose_slots), writes the
  // flag, and the TF32 path is launched gated by it (no synchronisation; the return value is
  // then meaningless), or, with g.auto_tf32_needed too, only the FP16 path, and a TF32 choice
  // is reported there instead of computed (the caller redoes the work).
  bool fp16 = !tf32_only;
  const bool fp16_only = gated && g.auto_tf32_needed != nullptr;
  if (!tf32_only) {
    if (shifts_ready)
      split_both<Transform::markidis, false>(g, mp, np, kp, shift_a, shift_b, nullptr, ws, keys);
    else
      scale_split(std::integral_constant<Transform, Transform::markidis>{}, std::false_type{});
    if (with_auto && !gated) {
      auto_flag_kernel<<<1, 1, 0, g.stream()>>>(max_range, flag, nullptr);
      TCSOLVE_CUDA_CHECK(cudaGetLastError());
      int chose = 0;
      TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(&chose, flag, sizeof chose, cudaMemcpyDeviceToHost, g.stream()));
      TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(g.stream()));
      fp16 = chose != 0;
    }
  }
  const int xi = static_cast<int>(xp), yi = static_cast<int>(yp);
  if (fp16 || gated) {
    phases.mark("main-fp16");
    MainParams q = p;
    q.k_tiles = kp / tile_k(false);
    q.split_tiles = g.split.length / tile_k(false);
    if (gated) {
      if (range_slots != nullptr)
        q.choose_slots = range_slots, q.slots_a = static_cast<int>(blocks.a), q.slots_total = static_cast<int>(blocks.total);
      else
        q.choose_range = max_range;
      q.choice = flag, q.tf32_needed = fp16_only ? g.auto_tf32_needed : nullptr;
      q.use_fp16 = flag, q.want_fp16 = 1;  // for split_reduce_kernel
    }
    launch_main<WgmmaScheme::ec, false>(g, xi, yi, kp, Operands(ws, xi, yi, kp, 2), q);
  }
  if (!fp16 || (gated && !fp16_only)) {
    MainParams q = p;
    q.want_fp16 = 0;
    q.k_tiles = kp / tile_k(true);
    q.split_tiles = g.split.length / tile_k(true);
    q.chunk = tf32_chunk_steps / kStepsPerTile;
    if (tf32_only && shifts_ready) {
      split_both<Transform::ootomo, true>(g, mp, np, kp, shift_a, shift_b, nullptr, ws, keys);
    } else if (tf32_only) {
      scale_split(std::integral_constant<Transform, Transform::ootomo>{}, std::true_type{});
    } else {  // auto chose TF32 (or may have): the shifts are known, the plain split pass
      phases.mark("split-tf32");
      if (gated) q.use_fp16 = flag;
      split_both<Transform::ootomo, true>(g, mp, np, kp, shift_a, shift_b, gated ? flag : nullptr, ws);
    }
    phases.mark("main-tf32");
    launch_main<WgmmaScheme::halfhalf_tiles, true>(g, xi, yi, kp, Operands(ws, xi, yi, kp, 4), q);
  }
  return fp16;
}

bool production_prepared(Variant variant, const GemmArgs& g, const PreparedPoints& a, int tf32_chunk_steps,
                         int* shift_b, int* max_range, int* flag) {
  const bool with_auto = variant == Variant::auto_;
  const int np = round_up(g.n, kTileN), kp = round_up(g.k, kSplitK);
  // B's FP16 hi and lo; auto: room for both operands in TF32 (used only when it chooses TF32)
  const std::size_t bytes = with_auto ? 2 * (static_cast<std::size_t>(a.mp) + np) * kp * 4
                                      : 2 * static_cast<std::size_t>(np) * kp * 2;
  unsigned char* ws = static_cast<unsigned char*>(g.ctx->take(GemmWorkspaces::of(*g.ctx).split, bytes));
  unsigned char* bh = ws;
  unsigned char* bl = ws + static_cast<std::size_t>(np) * kp * 2;
  if (with_auto) {  // A's range as production()'s split finds it, B's from this call's split
    TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(max_range, a.range, sizeof(int), cudaMemcpyDeviceToDevice, g.stream()));
    TCSOLVE_CUDA_CHECK(cudaMemsetAsync(max_range + 1, 0, sizeof(int), g.stream()));
  }
  PhaseTimer phases(g);
  phases.mark("scale+split-fp16");
  const ScaleSplitOperand b{g.B, g.ldb, g.tb == Op::n, g.n, shift_b, with_auto ? max_range + 1 : nullptr,
                            reinterpret_cast<unsigned*>(bh), reinterpret_cast<unsigned*>(bl), MemberLayout{0, nullptr, np}};
  launch_scale_split<Transform::markidis, false>(g.stream(), b, 0, b, np, g.k, kp);
  bool fp16 = true;
  if (with_auto) {  // the choice read back, as production() without auto_on_device
    auto_flag_kernel<<<1, 1, 0, g.stream()>>>(max_range, flag, nullptr);
    TCSOLVE_CUDA_CHECK(cudaGetLastError());
    int chose = 0;
    TCSOLVE_CUDA_CHECK(cudaMemcpyAsync(&chose, flag, sizeof chose, cudaMemcpyDeviceToHost, g.stream()));
    TCSOLVE_CUDA_CHECK(cudaStreamSynchronize(g.stream()));
    fp16 = chose != 0;
  }
  MainParams p{g.m, g.n, a.mp / kTileM, np / kTileN, kp / tile_k(false), 1, 1.0f, 0.0f, nullptr, g.m, 2, a.shift,
               shift_b, nullptr, nullptr, nullptr};
  p.weights = g.nearest->weights, p.labels = g.nearest->labels, p.changed = g.nearest->changed;
  p.resident_a = g.nearest->resident_a ? 1 : 0;
  if (fp16) {
    phases.mark("main-fp16");
    launch_main<WgmmaScheme::ec, false>(g, a.mp, np, kp, Operands(a.hi, bh, a.lo, bl), p);
  } else {
    p.want_fp16 = 0;
    p.k_tiles = kp / tile_k(true);
    p.chunk = tf32_chunk_steps / kStepsPerTile;
    phases.mark("split-tf32");
    split_both<Transform::ootomo, true>(g, a.mp, np, kp, a.shift, shift_b, nullptr, ws);
    phases.mark("main-tf32");
    launch_main<WgmmaScheme::halfhalf_tiles, true>(g, a.mp, np, kp, Operands(ws, a.mp, np, kp, 4), p);
  }
  return fp16;
}

}  // namespace

std::size_t prepared_points_bytes(int m, int k) {
  return 2 * static_cast<std::size_t>(round_up(m, kTileM)) * round_up(k, kSplitK) * 2;
}

PreparedPoints prepared_points(const unsigned char* split, const int* shift, const int* range, int m, int k) {
  const int mp = round_up(m, kTileM), kp = round_up(k, kSplitK);
  return PreparedPoints{split, split + static_cast<std::size_t>(mp) * kp * 2, shift, range, m, k, mp, kp};
}

void wgmma_prepare_points(const GemmArgs& g, unsigned char* hi, unsigned char* lo, int* shift, int* range) {
  const int mp = round_up(g.m, kTileM), kp = round_up(g.k, kSplitK);
  TCSOLVE_CUDA_CHECK(cudaMemsetAsync(range, 0, sizeof(int), g.stream()));
  const ScaleSplitOperand a{g.A, g.lda, g.ta == Op::t, g.m, shift, range, reinterpret_cast<unsigned*>(hi),
                            reinterpret_cast<unsigned*>(lo), MemberLayout{0, nullptr, mp}};
  launch_scale_split<Transform::markidis, false>(g.stream(), a, mp, a, 0, g.k, kp);
}

bool wgmma_nearest_prepared(Variant variant, const GemmArgs& g, const PreparedPoints& a, int tf32_chunk_steps,
                            int* shift_b, int* max_range, int* flag) {
  if (g.m != a.m || g.k != a.k)
    throw InvalidInput("nearest_columns: the prepared points are " + std::to_string(a.m) + " x " + std::to_string(a.k) +
                       ", the call's " + std::to_string(g.m) + " x " + std::to_string(g.k));
  return production_prepared(variant, g, a, tf32_chunk_steps, shift_b, max_range, flag);
}

PhaseTimer::PhaseTimer(const GemmArgs& g) : ctx_(g.ctx->time_phases ? g.ctx : nullptr) {
  if (ctx_ == nullptr) return;
  TCSOLVE_CUDA_CHECK(cudaEventCreate(&start_));
  TCSOLVE_CUDA_CHECK(cudaEventCreate(&stop_));
}

PhaseTimer::~PhaseTimer() {
  if (ctx_ == nullptr) return;
  try {
    mark(nullptr);
  } catch (...) {  // destructors do not throw
  }
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void PhaseTimer::mark(const char* name) {
  if (ctx_ == nullptr) return;
  if (name_ != nullptr) {
    TCSOLVE_CUDA_CHECK(cudaEventRecord(stop_, ctx_->stream));
    TCSOLVE_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    TCSOLVE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    ctx_->phases.emplace_back(name_, 1e-3 * ms);
  }
  name_ = name;
  if (name_ != nullptr) TCSOLVE_CUDA_CHECK(cudaEventRecord(start_, ctx_->stream));
}

bool wgmma_available() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {  // no device: PerDevice would throw
    cudaGetLastError();
    return false;
  }
  static tcsolve::detail::PerDevice<bool> wgmma_code;  // a fact of each device: Hopper, and the build's code
  return wgmma_code.get([dev] {
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
      return false;
    if (major != 9 || minor != 0) return false;
    cudaFuncAttributes attr{};  // the build carries sm_90a code of the kernel
    return cudaFuncGetAttributes(&attr, wgmma_kernel<WgmmaScheme::single, false, Epilogue::store>) == cudaSuccess &&
           attr.binaryVersion >= 90;
  });
}

std::size_t wgmma_production_bytes(Variant variant, const GemmArgs& g) { return ProductionLayout(variant, g).bytes; }

bool wgmma_production(Variant variant, const GemmArgs& g, int tf32_chunk_steps, int* shift, int* max_range,
                      int* flag, const unsigned* range_keys, unsigned char* workspace) {
  if (tf32_chunk_steps < kStepsPerTile || tf32_chunk_steps % kStepsPerTile != 0)
    throw Unavailable("the wgmma ec-tf32 scheme adds outside after whole k-tiles of 4 k-steps, got " +
                      std::to_string(tf32_chunk_steps) + " k-steps");
  return production(variant, g, tf32_chunk_steps, shift, max_range, flag, range_keys, workspace);
}

void wgmma_gemm(WgmmaScheme scheme, bool tf32, const GemmArgs& g, int chunk_steps, const int* shift_a,
                const int* shift_b, const int* use_fp16) {
  if (tf32 && (scheme == WgmmaScheme::markidis || scheme == WgmmaScheme::legemm))
    throw Unavailable("the TF32 wgmma kernel serves the single, halfhalf(_tiles) and ec schemes only");
  if (scheme == WgmmaScheme::halfhalf_tiles && (chunk_steps < kStepsPerTile || chunk_steps % kStepsPerTile != 0))
    throw Unavailable("the wgmma halfhalf_tiles scheme adds outside after whole k-tiles of 4 k-steps, got " +
                      std::to_string(chunk_steps) + " k-steps");
  if (scheme == WgmmaScheme::ec && chunk_steps != 2)
    throw Unavailable("the wgmma ec scheme adds outside every 2 k-steps, got " + std::to_string(chunk_steps));
  if (tf32) run<true>(scheme, g, chunk_steps, shift_a, shift_b, use_fp16);
  else run<false>(scheme, g, chunk_steps, shift_a, shift_b, use_fp16);
}

}  // namespace tcsolve::cuda::detail
