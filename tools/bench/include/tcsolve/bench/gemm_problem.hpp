// The inputs of `gemm-bench`: C (m x n) = A (m x k) * B (k x n), column-major FP32, drawn from
// one Rng seeded by the setup's seed (A first, then B, then C0), so a (seed, dist, dist_b,
// shape) names the inputs exactly; and the memory a run needs, checked before drawing them.
#pragma once

#include <cstdint>
#include <vector>

#include "tcsolve/bench/memory.hpp"
#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/gemm/random.hpp"

namespace tcsolve::bench {

/// What to draw. `update`: the LU's trailing update C = C0 - A*B (alpha -1, beta 1, C read and
/// written; C0 drawn like A, n = m, k the block size); otherwise C = A*B (alpha 1, beta 0).
struct GemmSetup {
  int m = 256, n = 256, k = 256;
  bool update = false;
  Distribution dist, dist_b;  ///< of A (and C0), of B
  std::uint64_t seed = 1;
  GemmOptions options;  ///< what the variants run with (ec_chunk_k, cuda_kernels)
  /// cuda: the production GEMM times its phases (Context::set_time_phases; waits after each)
  /// into GemmRow::phases.
  bool time_phases = false;
};

/// The inputs, on the host.
struct GemmProblem {
  int m = 0, n = 0, k = 0;
  std::vector<float> A;  ///< m x k, column-major, lda = m
  std::vector<float> B;  ///< k x n, column-major, ldb = k
  /// The update: the trailing matrix C0 (m x n) and C = C0 - A*B; otherwise empty, C = A*B.
  std::vector<float> C0;
  GemmOptions options;
  bool time_phases = false;  ///< GemmSetup::time_phases
  float alpha() const { return C0.empty() ? 1.0f : -1.0f; }
  float beta() const { return C0.empty() ? 0.0f : 1.0f; }
};

/// Draws the inputs of `setup`.
GemmProblem make_gemm_problem(const GemmSetup& setup);

/// Host: A, B, C0 and C in FP32 with FP64 copies of A and B and the FP64 product C64 (12 bytes
/// per element); device (cuda): the FP32 operands (one copy when larger than the L2 rotation
/// needs), the FP64 reference and 64 MiB of workspace.
MemoryNeed gemm_memory(int m, int n, int k, Backend backend);

}  // namespace tcsolve::bench
