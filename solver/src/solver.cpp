#include "tcsolve/solver/solver.hpp"

#include <hdf5.h>

namespace tcsolve {

std::string hdf5_library_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace tcsolve
