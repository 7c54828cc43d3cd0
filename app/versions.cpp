// Versions of tcsolve and of the libraries it runs on (versions.hpp).
#include "versions.hpp"

#include "tcsolve/gemm/gemm.hpp"
#include "tcsolve/io/hdf5_version.hpp"
#include "tcsolve/solver/solver.hpp"
#include "tcsolve/version.h"

namespace tcsolve::app {

Versions versions() {
  Versions v;
  v.tcsolve = TCSOLVE_VERSION_STRING;
  v.commit = build_commit();
  const cuda::RuntimeVersions cuda = cuda::runtime_versions();
  v.cuda_runtime = cuda.runtime;
  v.cuda_driver = cuda.driver;
  v.cublas = cuda.cublas;
  v.hdf5 = hdf5_library_version();
  return v;
}

void write_versions(JsonWriter& w) {
  const Versions v = versions();
  w.key("versions")
      .begin_object()
      .field("tcsolve", v.tcsolve)
      .field("commit", v.commit)
      .field("cuda_runtime", v.cuda_runtime)
      .field("cuda_driver", v.cuda_driver)
      .field("cublas", v.cublas)
      .field("hdf5", v.hdf5)
      .end_object();
}

void print_versions(std::ostream& out) {
  const Versions v = versions();
  out << "tcsolve " << v.tcsolve << " (commit " << v.commit << ")\n"
      << "CUDA runtime " << v.cuda_runtime << ", driver " << v.cuda_driver << ", cuBLAS " << v.cublas << '\n'
      << "HDF5 " << v.hdf5 << '\n';
}

void finish_command_json(JsonWriter& w) {
  write_versions(w);
  w.end_object().finish();
}

}  // namespace tcsolve::app
