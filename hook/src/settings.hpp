// The drop-in's configuration from its environment (the only way into a preloaded library):
//   TCSOLVE_HOOK_VARIANT=auto|ec-fp16|ec-tf32|off   what runs instead of SGEMM (default auto)
//   TCSOLVE_HOOK_TF32=respect|replace               TF32 requests pass (default) or are replaced
//   TCSOLVE_HOOK_MIN_FLOPS=N                        calls of fewer flops (2mnk x batch) pass
//   TCSOLVE_HOOK_MIN_DIM=N                          products with min(m, n, k) < N pass
//   TCSOLVE_HOOK_MIN_TILES=N                        calls of fewer work units (128^2 output
//                                                   tiles x k ranges, over the batch) pass
//   TCSOLVE_HOOK_MIN_SPEEDUP=X                      calls the cost model predicts at less than
//                                                   X times SGEMM's speed pass (default 1.1)
//   TCSOLVE_HOOK_LOG=FILE                           one JSON line per call (appended)
//   TCSOLVE_HOOK_REPORT=1                           a summary on stderr at exit
//   TCSOLVE_HOOK_GRAPHS=1|0                         a product's kernels replayed from a cached
//                                                   CUDA graph from the third call with the same
//                                                   arguments (GemmOptions::cuda_launch; default 1)
// A value that does not parse leaves the default and is named in `problems` (the hook writes
// them to stderr once): a typo must not silently change what runs.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "policy.hpp"

namespace tcsolve::hook {

/// Every variable parse_config reads (docs/guide/drop-in.md's table of them is tested against this list).
inline constexpr std::array<const char*, 9> kVariables = {
    "TCSOLVE_HOOK_VARIANT",     "TCSOLVE_HOOK_TF32",    "TCSOLVE_HOOK_MIN_FLOPS", "TCSOLVE_HOOK_MIN_TILES",
    "TCSOLVE_HOOK_MIN_SPEEDUP", "TCSOLVE_HOOK_MIN_DIM", "TCSOLVE_HOOK_LOG",       "TCSOLVE_HOOK_REPORT",
    "TCSOLVE_HOOK_GRAPHS"};

struct Config {
  Settings policy;
  std::string log_path;  ///< empty: no log
  bool report = false;
  bool graphs = true;  ///< TCSOLVE_HOOK_GRAPHS
  std::vector<std::string> problems;
};

/// The configuration from `lookup` (getenv in the hook; a map in the tests): nullptr for unset.
Config parse_config(const std::function<const char*(const char*)>& lookup);

}  // namespace tcsolve::hook
