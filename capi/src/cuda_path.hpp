// The C API on a cuda handle: everything that touches CUDA (device pointers, the handle's
// stream, tcsolve's C++ CUDA entry points) lives behind these few functions, in cuda_path.cpp
// (cuda_path_stub.cpp without CUDA: every function throws Unavailable), so that the handle can
// be rewired onto an explicit device context in one file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/runtime/context.hpp"
#include "tcsolve/solver/solver.hpp"

namespace tcsolve::capi {

/// A dense matrix argument of tcsolveDgesv: `outer` runs of `inner` contiguous elements, `ld`
/// apart (column-major: inner = rows, outer = columns; row-major the other way round).
struct Strided {
  std::int64_t inner = 0, outer = 0, ld = 0;
};

/// tcsolve::cuda::gemm on device pointers in the handle's context (on its stream); auto's choice
/// stays on the device, so nothing waits for the stream.
void cuda_gemm(cuda::Context& ctx, Variant variant, Op ta, Op tb, int m, int n, int k, float alpha, const float* A,
               int lda, const float* B, int ldb, float beta, float* C, int ldc);

/// C = beta C on the device (beta == 0: C set to 0, not read), on the context's stream.
void cuda_scale(cuda::Context& ctx, int m, int n, float beta, float* C, int ldc);

/// The solve of tcsolveDgesv on a cuda handle: A and B host or device pointers (each told
/// apart by cudaPointerGetAttributes), X likewise; `solve_host` solves the packed host copies
/// (ld = inner) and writes the packed host X.
using HostDgesv = SolveResult (*)(const SolveOptions& options, bool row_major, std::int64_t n, std::int64_t nrhs,
                                   const double* A, std::int64_t lda, const double* B, std::int64_t ldb, double* X,
                                   std::int64_t ldx);
SolveResult cuda_dgesv(cuda::Context& ctx, HostDgesv solve_host, const SolveOptions& options, bool row_major,
                       std::int64_t n, std::int64_t nrhs, const double* A, Strided a, const double* B, Strided b,
                       double* X, Strided x);

/// Where an array argument of a call on a cuda handle lives (cudaPointerGetAttributes): true for
/// device (or managed) memory, false for host memory, registered or not. Device memory of a
/// device other than `device` (the handle's): InvalidInput naming `name` and both devices.
bool on_device(const char* name, const void* p, int device);

/// `rows` rows of `width` bytes from src (`src_pitch` bytes apart) to dst (`dst_pitch` bytes
/// apart), each host or device memory (cudaMemcpyDefault), in the order of the context's stream;
/// returns when the copy is done.
void copy_rows(cuda::Context& ctx, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t rows);

}  // namespace tcsolve::capi
