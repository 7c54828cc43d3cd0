// `ffn`'s harness: the BERT-base feed-forward block of tcsolve::demos (inputs, FP64 reference,
// timing: tcsolve/demos/ffn.hpp) run through each variant, one row per variant
// (variant_rows.hpp) with the relative error ||Y - Y64||_F / ||Y64||_F of the whole block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tcsolve/bench/memory.hpp"
#include "tcsolve/bench/variant_rows.hpp"
#include "tcsolve/demos/ffn.hpp"

namespace tcsolve::bench {

/// One row of ffn's output; tflops counts the block's two GEMMs (4 T d_model d_ff flops).
struct FfnRow : VariantRow {
  double relative_error = kNaN;
};

/// The peak of ffn_rows, X (d_model x T), W1, W2 (d_ff x d_model, d_model x d_ff), H (d_ff x T)
/// and Y (d_model x T) counted apart (ffn_bench.cpp has the sums). cpu: the inputs twice (the
/// caller's and the bench's copy), the FP64 reference with FP64 copies of the inputs and of H
/// (the GELU makes a second), then Y64 beside the FP32 H and Y and what an emulated GEMM copies
/// of its operands. cuda: the inputs on the host; on the device the FP32 inputs, H and Y, the
/// FP64 reference Y64 and, while it is formed, H64 and FP64 copies of W1 and X, and 64 MiB of
/// workspace.
MemoryNeed ffn_memory(const demos::FfnShape& shape, Backend backend);

/// The fallback notes of the block's two GEMMs, once each.
std::string ffn_note(const demos::FfnInfo& info);

/// Draws the block's inputs (seed), computes its FP64 reference on `backend`, and measures
/// `variants`: `repeats` timed runs after `warmups` untimed ones, the median counts.
std::vector<FfnRow> ffn_rows(const demos::FfnShape& shape, std::uint64_t seed, const std::vector<Variant>& variants,
                             Backend backend, int repeats, int warmups, const StepCallback& step);

}  // namespace tcsolve::bench
