// Entry point of tcsolve_mpi_tests, the distributed tier run under `mpirun -np P` on cpu ranks
// (ctest mpi_np1, mpi_np2, mpi_np3; CI as root: --allow-run-as-root --oversubscribe): MPI for
// the run's lifetime (runtime::MpiSession), then Catch2 with the options of tcsolve_tests
// (--data-dir). Every rank runs every test; a rank whose checks fail exits non-zero, and so does
// mpirun. Only rank 0 reports passing tests (the others' output goes to /dev/null unless they fail).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "../test_data.hpp"
#include "tcsolve/runtime/mpi.hpp"

int main(int argc, char* argv[]) {
  tcsolve::runtime::MpiSession mpi(&argc, &argv);
  Catch::Session session;
  std::string data_dir;
  using Catch::clara::Opt;
  session.cli(session.cli() | Opt(data_dir, "dir")["--data-dir"]("folder holding inputs/ (default: testdata/ beside this binary)"));
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  tcsolve::test::data_dir_option() = data_dir;
  const int failed = session.run();
  std::printf("rank %d of %d: %s\n", mpi.rank(), mpi.size(), failed ? "FAILED" : "passed");
  return failed;
}
