// The distributed LU's entry points inside tcsolve::solver (distributed_lu.cpp), used by the
// distributed solve (distributed_solve.cpp). Internal.
#pragma once

#include "grid_comms.hpp"
#include "tcsolve/solver/distributed.hpp"

namespace tcsolve::distributed {

/// The LU of the local pieces on the grid of `g` (the checks done: check_system_piece).
DistributedLu factorize(GridComms& g, const Descriptor& desc, const double* A, Variant variant,
                        const GemmOptions& gemm_options);

/// Agreed over `world`: the grid matches the ranks, desc_a is valid and square with square
/// blocks, this rank's piece of A is finite (InvalidInput naming the problem, on every rank).
void check_system_piece(runtime::Communicator& world, const Grid& grid, const Descriptor& desc_a, const double* A);

}  // namespace tcsolve::distributed
