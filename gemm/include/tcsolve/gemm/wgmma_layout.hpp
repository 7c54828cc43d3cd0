// Shared-memory operand layout and matrix descriptor of Hopper's wgmma.mma_async (PTX ISA,
// "Asynchronous Warpgroup Level Matrix Shared Memory Layout" and "Matrix Descriptor Format"),
// written once for host and device so that the layout the kernel stores and the descriptor it
// hands to the tensor cores can be checked against each other on the CPU (tests/test_probe.cpp).
//
// Only the no-swizzle ("interleave") K-major layout is used. Its unit is the core matrix:
// 8 rows x 16 bytes (8 FP16 or 16 FP8 values of K), stored as 128 contiguous bytes, row r of
// the core matrix at byte 16 r. A K-major operand of R rows (R = 64 for A, N = 8 for B) and
// 32 bytes of K per instruction (K = 16 FP16 or 32 FP8) is a grid of core matrices:
//   element (row, byte column bc) sits at
//     start + (row % 8) * 16 + (row / 8) * SBO + (bc / 16) * LBO + bc % 16,
// the canonical ((8, m), (T, 2)) : ((16 B, SBO), (1, LBO)) of the PTX ISA / CUTLASS
// (cute::GMMA::Layout_K_INTER_Atom): LBO ("leading dimension byte offset") is the distance
// between core matrices adjacent in K, SBO ("stride dimension byte offset") between core
// matrices adjacent in M or N.
#pragma once

#include <cstdint>

#include "tcsolve/gemm/config.hpp"

namespace tcsolve {

/// Byte offset of element (row, byte column bc) in the probe's K-major shared-memory image of
/// an operand with `row_groups` groups of 8 rows: core matrix (row / 8, bc / 16) is stored at
/// ((bc / 16) * row_groups + row / 8) * 128, i.e. the core matrices of one 16-byte column of K
/// first. Hence SBO = 128 and LBO = 128 * row_groups, and the k-step s of a chain (32 bytes
/// of K, two core-matrix columns) starts at byte 2 * s * 128 * row_groups.
TCSOLVE_HOST_DEVICE constexpr std::uint32_t wgmma_kmajor_offset(int row, int bc, int row_groups) {
  return static_cast<std::uint32_t>(((bc / 16) * row_groups + row / 8) * 128 + (row % 8) * 16 + bc % 16);
}

/// The LBO and SBO (bytes) of wgmma_kmajor_offset's layout.
TCSOLVE_HOST_DEVICE constexpr std::uint32_t wgmma_kmajor_lbo(int row_groups) {
  return static_cast<std::uint32_t>(128 * row_groups);
}
inline constexpr std::uint32_t kWgmmaKmajorSbo = 128;

/// 64-bit wgmma matrix descriptor: bits 0-13 start address >> 4 (a shared-memory address,
/// 16-byte aligned), 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 base offset (0: no swizzle
/// pattern to align), 62-63 swizzle mode (0: none, the interleave layout above).
TCSOLVE_HOST_DEVICE constexpr std::uint64_t wgmma_descriptor(std::uint32_t smem_address, std::uint32_t lbo,
                                                             std::uint32_t sbo) {
  return static_cast<std::uint64_t>((smem_address & 0x3ffffu) >> 4) |
         (static_cast<std::uint64_t>((lbo >> 4) & 0x3fffu) << 16) |
         (static_cast<std::uint64_t>((sbo >> 4) & 0x3fffu) << 32);
}

}  // namespace tcsolve
