// What produced an output: the tcsolve version and git commit, the CUDA runtime and driver,
// cuBLAS and HDF5 versions; printed by `tcsolve --version` and as "versions" in every JSON.
#pragma once

#include <ostream>
#include <string>

#include "json.hpp"

namespace tcsolve::app {

/// The git commit the executable was built from (`git describe --always --dirty`), "unknown"
/// outside a git checkout; defined in the generated build_info.cpp (app/build_info.cmake).
const char* build_commit();

struct Versions {
  std::string tcsolve;       ///< project version ("0.3.0", tcsolve/version.h)
  std::string commit;        ///< build_commit()
  std::string cuda_runtime;  ///< "13.0"; "none" without CUDA
  std::string cuda_driver;   ///< "13.0"; "none" without a driver
  std::string cublas;        ///< "13.1.0"; "none" without CUDA
  std::string hdf5;          ///< "1.10.8"
};

/// The versions of this process (queried on every call: cheap, and no hidden state).
Versions versions();

/// `"versions": {tcsolve, commit, cuda_runtime, cuda_driver, cublas, hdf5}` as a member of the
/// object being written.
void write_versions(JsonWriter& w);

/// The text of `tcsolve --version`: one line per component.
void print_versions(std::ostream& out);

/// Ends a command's top-level JSON object: writes "versions", closes the object, finishes the
/// document. Every command's JSON ends through it (docs/architecture.md: every object carries
/// versions).
void finish_command_json(JsonWriter& w);

}  // namespace tcsolve::app
