// cuda side of `tcsolve probe` (probe.hpp): the tensor cores compute the partial of one tile
// per launch (C = 0, `depth` k-steps chained inside), so the host can run the truncation sweep
// of seed 003 on what they really produced.
//   mma_sync_partial_kernel: one warp, a 16 x 8 tile, mma.sync (FP16/BF16/TF32, FP16
//     accumulation; E4M3 m16n8k32 from sm_89).
//   wgmma_partial_kernel: one warpgroup (128 threads), a 64 x 8 tile, wgmma.mma_async with both
//     operands in shared memory, no swizzle, K-major core matrices (wgmma_layout.hpp); sm_90a.
// Which of them this binary's code for the running device contains is asked of the device
// (features_kernel), not assumed: the build targets "80;90a", so an sm_89 GPU runs the sm_80
// code (no E4M3 mma.sync) and only an sm_90 GPU runs the sm_90a code (wgmma).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/probe.hpp"
#include "tcsolve/gemm/rounding.hpp"
#include "tcsolve/gemm/wgmma_layout.hpp"
#include "tcsolve/runtime/cuda_check.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::cuda {
namespace {

enum class Kind { f16_f32, bf16_f32, tf32_f32, f16_f16, e4m3_f32 };

/// Bits of features_kernel's answer: what the code compiled for the running device contains.
constexpr int kHasE4m3MmaSync = 1;  ///< code for sm_89 or later: mma.sync ... .e4m3
constexpr int kHasWgmma = 2;        ///< code for sm_90a: wgmma.mma_async

__global__ void features_kernel(int* out) {
  int f = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  f |= kHasE4m3MmaSync;
#endif
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  f |= kHasWgmma;
#endif
  *out = f;
}

__device__ unsigned pack16(Kind kind, float x0, float x1) {
  if (kind == Kind::bf16_f32) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x0, x1);
    return *reinterpret_cast<const unsigned*>(&h);
  }
  const __half2 h = __floats2half2_rn(x0, x1);
  return *reinterpret_cast<const unsigned*>(&h);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
/// Four E4M3 values (exact: the host drew them in E4M3) in one register, x0 in the low byte.
__device__ unsigned pack_e4m3(float x0, float x1, float x2, float x3) {
  return static_cast<unsigned>(e4m3_bits(x0, Rounding::rn)) | (static_cast<unsigned>(e4m3_bits(x1, Rounding::rn)) << 8) |
         (static_cast<unsigned>(e4m3_bits(x2, Rounding::rn)) << 16) |
         (static_cast<unsigned>(e4m3_bits(x3, Rounding::rn)) << 24);
}
#endif

/// a: 16 x K row-major; b: 8 x K (column j contiguous); d: 16 x 8 row-major. One warp.
/// Fragments as in the PTX ISA for m16n8k8/k16 (g = lane / 4, t = lane % 4) and for m16n8k32
/// E4M3: a register r holds A(g + 8 (r % 2), 4 t + 16 (r / 2) + byte), b register r holds
/// B(4 t + 16 r + byte, g), byte 0 the least significant.
__global__ void mma_sync_partial_kernel(Kind kind, int k, int depth, const float* a, const float* b, float* d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  const int K = k * depth;
  auto A = [&](int r, int c) { return a[r * K + c]; };
  auto B = [&](int r, int c) { return b[c * K + r]; };  // op(B)(k = r, n = c)
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  unsigned acc16[2] = {0u, 0u};
  for (int s = 0; s < depth; ++s) {
    const int k0 = s * k;
    if (kind == Kind::e4m3_f32) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
      unsigned ar[4], br[2];
      for (int r = 0; r < 4; ++r) {
        const int row = g + 8 * (r % 2), col = k0 + 4 * t + 16 * (r / 2);
        ar[r] = pack_e4m3(A(row, col), A(row, col + 1), A(row, col + 2), A(row, col + 3));
      }
      for (int r = 0; r < 2; ++r) {
        const int row = k0 + 4 * t + 16 * r;
        br[r] = pack_e4m3(B(row, g), B(row + 1, g), B(row + 2, g), B(row + 3, g));
      }
      asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                   : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]));
#else
      // not in this code (sm_80): probe() does not launch it here; NaN makes misuse visible
      acc[0] = acc[1] = acc[2] = acc[3] = __int_as_float(0x7fc00000);
#endif
      continue;
    }
    if (kind == Kind::tf32_f32) {
      const unsigned a0 = __float_as_uint(A(g, k0 + t)), a1 = __float_as_uint(A(g + 8, k0 + t));
      const unsigned a2 = __float_as_uint(A(g, k0 + t + 4)), a3 = __float_as_uint(A(g + 8, k0 + t + 4));
      const unsigned b0 = __float_as_uint(B(k0 + t, g)), b1 = __float_as_uint(B(k0 + t + 4, g));
      asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      continue;
    }
    const unsigned a0 = pack16(kind, A(g, k0 + 2 * t), A(g, k0 + 2 * t + 1));
    const unsigned a1 = pack16(kind, A(g + 8, k0 + 2 * t), A(g + 8, k0 + 2 * t + 1));
    const unsigned a2 = pack16(kind, A(g, k0 + 2 * t + 8), A(g, k0 + 2 * t + 9));
    const unsigned a3 = pack16(kind, A(g + 8, k0 + 2 * t + 8), A(g + 8, k0 + 2 * t + 9));
    const unsigned b0 = pack16(kind, B(k0 + 2 * t, g), B(k0 + 2 * t + 1, g));
    const unsigned b1 = pack16(kind, B(k0 + 2 * t + 8, g), B(k0 + 2 * t + 9, g));
    if (kind == Kind::f16_f32) {
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    } else if (kind == Kind::bf16_f32) {
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    } else {
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"
                   : "+r"(acc16[0]), "+r"(acc16[1])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  for (int r = 0; r < 4; ++r) {
    const int row = g + 8 * (r / 2), col = 2 * t + (r % 2);
    float v = acc[r];
    if (kind == Kind::f16_f16)
      v = __half2float(__ushort_as_half(static_cast<unsigned short>(acc16[r / 2] >> (16 * (r % 2)))));
    d[row * 8 + col] = v;
  }
}

// ---------------------------------------------------------------------------------------------
// wgmma (sm_90a)
// ---------------------------------------------------------------------------------------------

constexpr int kWgmmaM = 64, kWgmmaN = 8;
constexpr int kWgmmaKBytes = 32;  ///< bytes of K one wgmma reads per row (K = 16 FP16, 32 FP8)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// Keeps the compiler from moving accesses to an accumulator register across the asynchronous
/// wgmma that writes it (CUTLASS's warpgroup_fence_operand).
__device__ __forceinline__ void fence_operand(float& x) { asm volatile("" : "+f"(x)::"memory"); }
#endif

/// a: 64 x K row-major; b: 8 x K (column j contiguous); d: 64 x 8 row-major; K = kDepth * (16
/// FP16 or 32 FP8). One warpgroup of 128 threads. Both operands are copied into shared memory
/// in the K-major no-swizzle core-matrix layout of wgmma_layout.hpp (A: 8 groups of 8 rows,
/// B: one), the k-step s reads bytes [32 s, 32 s + 32) of K. The accumulator fragment of
/// m64n8 (PTX ISA, wgmma .f32 D): warp w of the warpgroup holds rows 16 w .. 16 w + 15 as the
/// 16 x 8 tile of mma.sync, register r at (16 w + g + 8 (r / 2), 2 t + r % 2).
template <bool kFp8, int kDepth>
__global__ void __launch_bounds__(128) wgmma_partial_kernel(const float* a, const float* b, float* d) {
  static_assert(kWgmmaM == 4 * 16, "the warpgroup's four warps hold 16 rows each");
  static_assert(kWgmmaKBytes == 2 * 16, "one instruction reads two 16-byte core-matrix columns of K");
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kEsize = kFp8 ? 1 : 2;
  constexpr int kK = kDepth * kWgmmaKBytes / kEsize;
  constexpr int kGroupsA = kWgmmaM / 8, kGroupsB = kWgmmaN / 8;
  __shared__ __align__(128) unsigned char sa[kWgmmaM * kDepth * kWgmmaKBytes];
  __shared__ __align__(128) unsigned char sb[kWgmmaN * kDepth * kWgmmaKBytes];
  // element (row, c) -> its bytes at wgmma_kmajor_offset(row, c * esize); exact conversions
  auto put = [&](unsigned char* base, int groups, int row, int c, float x) {
    unsigned char* p = base + wgmma_kmajor_offset(row, c * kEsize, groups);
    if constexpr (kFp8) {
      *p = e4m3_bits(x, Rounding::rn);
    } else {
      *reinterpret_cast<std::uint16_t*>(p) = fp16_bits(x, Rounding::rn);
    }
  };
  for (int i = tid; i < kWgmmaM * kK; i += blockDim.x) put(sa, kGroupsA, i / kK, i % kK, a[i]);
  for (int i = tid; i < kWgmmaN * kK; i += blockDim.x) put(sb, kGroupsB, i / kK, i % kK, b[i]);
  // generic-proxy stores read next by the tensor cores (async proxy): fence, then the barrier
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const auto sa_addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(sa));
  const auto sb_addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(sb));
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (float& x : acc) fence_operand(x);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int s = 0; s < kDepth; ++s) {
    // k-step s: two core-matrix columns of K further on
    const std::uint64_t da = wgmma_descriptor(sa_addr + 2u * s * wgmma_kmajor_lbo(kGroupsA), wgmma_kmajor_lbo(kGroupsA),
                                              kWgmmaKmajorSbo);
    const std::uint64_t db = wgmma_descriptor(sb_addr + 2u * s * wgmma_kmajor_lbo(kGroupsB), wgmma_kmajor_lbo(kGroupsB),
                                              kWgmmaKmajorSbo);
    // scale-d = 1: D = A B + D with D = 0 at the start, as the mma.sync paths add C = 0
    if constexpr (kFp8) {
      asm volatile(
          "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
          "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0,%1,%2,%3}, %4, %5, p, 1, 1;\n}\n"
          : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
          : "l"(da), "l"(db), "r"(1));
    } else {
      // imm-scale-a = imm-scale-b = 1 (no negation), imm-trans-a = imm-trans-b = 0 (K-major)
      asm volatile(
          "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
          "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
          : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
          : "l"(da), "l"(db), "r"(1));
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (float& x : acc) fence_operand(x);
#else
  // not in this code (no sm_90a): probe() does not launch it here; NaN makes misuse visible
  (void)a;
  (void)b;
  const float nan = __int_as_float(0x7fc00000);
  const float acc[4] = {nan, nan, nan, nan};
#endif
  for (int r = 0; r < 4; ++r) d[(16 * warp + g + 8 * (r / 2)) * kWgmmaN + 2 * t + r % 2] = acc[r];
}

Kind kind_of(const ProbePath& p) {
  if (p.fp16_output) return Kind::f16_f16;
  if (p.input == ProbePath::Input::bf16) return Kind::bf16_f32;
  if (p.input == ProbePath::Input::tf32) return Kind::tf32_f32;
  if (p.input == ProbePath::Input::e4m3) return Kind::e4m3_f32;
  return Kind::f16_f32;
}

/// Launches the path's kernel on one tile of device arrays (sizes as in PartialFn).
void launch_partial(const ProbePath& p, const float* da, const float* db, float* dd) {
  if (p.engine == ProbePath::Engine::mma_sync) {
    mma_sync_partial_kernel<<<1, 32>>>(kind_of(p), p.k, p.depth, da, db, dd);
  } else {
    const bool fp8 = p.input == ProbePath::Input::e4m3;
    if (p.fp16_output || (!fp8 && p.input != ProbePath::Input::fp16))
      throw InvalidInput("probe: no wgmma kernel for path '" + p.name + "'");
    if (fp8 && p.depth == 1) wgmma_partial_kernel<true, 1><<<1, 128>>>(da, db, dd);
    else if (fp8 && p.depth == 4) wgmma_partial_kernel<true, 4><<<1, 128>>>(da, db, dd);
    else if (!fp8 && p.depth == 1) wgmma_partial_kernel<false, 1><<<1, 128>>>(da, db, dd);
    else if (!fp8 && p.depth == 4) wgmma_partial_kernel<false, 4><<<1, 128>>>(da, db, dd);
    else throw InvalidInput("probe: no wgmma kernel of depth " + std::to_string(p.depth) + " for '" + p.name + "'");
  }
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
}

/// Empty when the device runs `p` with this binary's code, else why not.
std::string unavailable_reason(const ProbePath& p, int capability, int features) {
  const std::string sm = "sm_" + std::to_string(capability);
  if (p.engine == ProbePath::Engine::wgmma) {
    if (capability != 90) return "wgmma needs sm_90 (sm_90a code); device is " + sm;
    if (!(features & kHasWgmma)) return "this build has no sm_90a code (CMAKE_CUDA_ARCHITECTURES)";
    return {};
  }
  if (p.input == ProbePath::Input::e4m3) {
    if (capability < 89) return "E4M3 mma.sync needs sm_89 or later; device is " + sm;
    if (!(features & kHasE4m3MmaSync))
      return "this build's code for " + sm + " predates sm_89 (CMAKE_CUDA_ARCHITECTURES)";
  }
  return {};
}

}  // namespace

std::vector<ProbeResult> probe(int trials) {
  if (!device_available()) throw Unavailable("probe: no usable CUDA device");
  DeviceBuffer<int> dfeatures(1);
  features_kernel<<<1, 1>>>(dfeatures.data());
  TCSOLVE_CUDA_CHECK(cudaGetLastError());
  const int features = dfeatures.download()[0];
  const int capability = compute_capability();
  // one launch per tile: the sweep is small (14 paths x 4 distributions x trials tiles)
  std::vector<ProbeResult> out;
  std::uint64_t seed = 1;
  for (const ProbePath& path : probe_paths()) {
    const std::uint64_t path_seed = seed++;  // a path's inputs do not depend on which others ran
    const std::string why = unavailable_reason(path, capability, features);
    if (!why.empty()) {
      ProbeResult r;
      r.path = path;
      r.available = false;
      r.note = why;
      r.output_bits = path.fp16_output ? 10 : 23;
      out.push_back(r);
      continue;
    }
    const std::size_t K = static_cast<std::size_t>(path.k) * path.depth, M = path.m();
    DeviceBuffer<float> da(M * K), db(8 * K), dd(M * 8);
    const PartialFn partial = [&](const ProbePath& p, const std::vector<float>& a, const std::vector<float>& b,
                                  std::vector<float>& d) {
      copy_to_device(da.data(), a.data(), a.size() * sizeof(float));
      copy_to_device(db.data(), b.data(), b.size() * sizeof(float));
      launch_partial(p, da.data(), db.data(), dd.data());
      copy_to_host(d.data(), dd.data(), d.size() * sizeof(float));
    };
    out.push_back(probe_path(path, partial, trials, path_seed));
  }
  return out;
}

}  // namespace tcsolve::cuda
