// compare's ScaLAPACK baseline where the build has none (scalapack_baseline.hpp): it is absent,
// and compare says why.
#include "scalapack_baseline.hpp"
#include "tcsolve/runtime/error.hpp"

namespace tcsolve::app {

bool have_scalapack() { return false; }

std::string scalapack_absent_reason() {
#ifdef TCSOLVE_STUB_WITHOUT_MPI
  return "scalapack-pdgesv: not run: this build has no MPI (configure with TCSOLVE_MPI on and "
         "libscalapack-openmpi-dev installed)";
#else
  return "scalapack-pdgesv: not run: this build found no ScaLAPACK (install libscalapack-openmpi-dev, as "
         "scripts/bootstrap does, and configure again)";
#endif
}

ScalapackSolve scalapack_pdgesv(const Grid&, int, const Descriptor&, const double*, const Descriptor&,
                                const double*) {
  throw Unavailable(scalapack_absent_reason());
}

}  // namespace tcsolve::app
