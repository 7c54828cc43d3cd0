// The distributed LU's entry points inside tcsolve::solver (distributed_lu.cpp), used by the
// distributed solve (distributed_solve.cpp). Internal.
#pragma once

#include "grid_comms.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve::distributed {

/// The LU in T (float: trailing updates through tcsolve::gemm(Where(), variant); double: FP64,
/// variant ignored) of the local pieces on the grid of `g` (the checks done: check_system_piece).
/// An exact zero pivot stops it: zero_pivot = its zero-based column on every rank (the factors
/// are then incomplete), else -1.
template <class T>
DistributedFactors<T> factorize(GridComms& g, const Descriptor& desc, const double* A, Variant variant,
                                const GemmOptions& gemm_options, int& zero_pivot);

/// Agreed over `world`: the grid matches the ranks, desc_a is valid and square with square
/// blocks, this rank's piece of A is finite (InvalidInput naming the problem, on every rank).
void check_system_piece(runtime::Communicator& world, const Grid& grid, const Descriptor& desc_a, const double* A);

}  // namespace tcsolve::distributed
