// The two streams of the LU's look-ahead (blocked_lu.cpp, BlockedLu): the panel factorization
// of block k + 1 runs on `panel` while the trailing update of block k runs on `update`.
//
// The panel's leaf kernel is a 16-CTA thread-block cluster, which needs a whole GPC of free SMs.
// A persistent GEMM launched beside it on an ordinary stream spreads its blocks over every GPC,
// and the cluster then waits for the whole GEMM (measured on the H100: no cluster started while a
// persistent kernel held 100 of the 132 SMs). So `update` is a stream of a green context (CUDA's
// SM partitions) that holds all SMs but one co-scheduled group of `panel_sms`, and the GEMM
// is launched with at most `update_sms` blocks; `panel` is an ordinary stream of the primary
// context at the highest priority, which finds that group free. Internal to tcsolve::solver.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace tcsolve::cuda {

struct LookaheadStreams {
  cudaStream_t panel = nullptr;   ///< primary context, non-blocking, highest priority
  cudaStream_t update = nullptr;  ///< green context of update_sms SMs, non-blocking, lowest priority
  int update_sms = 0;             ///< SMs of the update's partition (the GEMM's block limit)
  int panel_sms = 0;              ///< SMs left to the panel (one co-scheduled group)
  std::string unavailable;        ///< why not, when the streams could not be made (then both null)
  void* green = nullptr;          ///< the update stream's green context (CUgreenCtx)
};

/// Makes look-ahead streams on the current device with `panel_sms` (16, 24, 32, 40, 48 or 64) SMs left to the
/// panel (SolverLibraries keeps them per context: green contexts are expensive to make).
/// `unavailable` is set, and the streams null, where the driver lacks green contexts or the
/// device cannot be split so that a 16-CTA cluster fits the panel's group (not compute
/// capability 9.0, fewer than 32 SMs).
LookaheadStreams make_lookahead_streams(unsigned panel_sms);

/// Destroys what make_lookahead_streams made (nothing when unavailable); errors are dropped.
void destroy_lookahead_streams(LookaheadStreams& streams) noexcept;

}  // namespace tcsolve::cuda
