// The distributed solve's numerics beyond the LU and classical refinement (issue 33 step 3),
// under mpirun on cpu ranks: equilibration, GMRES-IR and refine auto, the FP64 fallback, the
// condition estimate. (Being written: see the solver's distributed.hpp.)
#include <catch2/catch.hpp>
