// tcsolve::solver -- blocked LU on the corrected GEMMs with iterative refinement (issue 4).
// This foundation only links the library (HDF5 included) into the build; the algorithm lands
// with the solver issue.
#pragma once

#include <string>

namespace tcsolve {

/// Version of the HDF5 library the solver reads systems with ("1.10.8").
std::string hdf5_library_version();

}  // namespace tcsolve
