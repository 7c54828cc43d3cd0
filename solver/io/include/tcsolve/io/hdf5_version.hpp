// The version of the HDF5 library tcsolve::io reads and writes files with (for --version and the
// JSON "versions" object), without pulling HDF5's headers into the caller.
#pragma once

#include <string>

namespace tcsolve {

/// "major.minor.release" of the HDF5 library linked at run time (H5get_libversion).
std::string hdf5_library_version();

}  // namespace tcsolve
