// What a handle keeps of its last tcsolveDgesv beyond tcsolveSolveInfo_t (tcsolve.h, "the last
// solve"): the backward-error history, the times and phases, the note and the warnings. Written
// by tcsolveDgesv (record_solve), read by the tcsolveGetLastSolve* functions (last_solve.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tcsolve {
struct SolveResult;
}

namespace tcsolve::capi {

/// The record of one solve; empty (all zero, no entries) before the first and after a
/// tcsolveDgesv that failed with a status other than NOT_CONVERGED.
struct LastSolve {
  std::vector<double> history;  ///< backward error after each iteration (index 0: the LU solve)
  double factorization = 0, refinement = 0, total = 0;           ///< seconds (SolveTimes)
  std::vector<std::pair<std::string, double>> phases;            ///< SolveTimes::phases
  std::string note;                                              ///< SolveResult::note
  std::vector<std::string> warnings;                             ///< SolveResult::warnings
  int block_size = 0;                                            ///< the nb the LU ran with
  int pivoting = 0;       ///< SolveResult::pivoting as tcsolveSolveParams_t codes it (0 partial, 1 rbt, 3 beam)
  int modifications = 0;  ///< SolveResult::modifications (beam)
  double growth = 0;      ///< SolveResult::growth (beam)
};

/// The record of `result` (a solve that returned SUCCESS or NOT_CONVERGED).
LastSolve record_solve(const SolveResult& result);

}  // namespace tcsolve::capi
