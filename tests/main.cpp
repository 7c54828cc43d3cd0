// Catch2 v2 entry point for tcsolve_tests: Catch's own command line plus
//   --data-dir DIR   the folder holding the test data (inputs/, tests/data/, README.md, docs/guide/; the
//                    repository root will do); default: testdata/ beside the binary
//                    (test_data.hpp says where the tests look)
//   --devices LIST   CUDA builds: run the selected tests once per listed device ("0,1"), that
//                    device current, one after the other in this process, so that every [gpu]
//                    test is shown to pass on device 1 too (and state kept from device 0's pass
//                    would show); default: once, on the current device
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#if defined(TCSOLVE_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

#include "test_data.hpp"

int main(int argc, char* argv[]) {
  Catch::Session session;
  std::string data_dir, devices;
  using Catch::clara::Opt;
  session.cli(session.cli() |
              Opt(data_dir, "dir")["--data-dir"](
                  "folder holding inputs/, tests/data/, README.md and docs/guide/ (default: testdata/ beside "
                  "this binary)") |
              Opt(devices, "list")["--devices"]("run the tests once per CUDA device of the list (e.g. 0,1)"));
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  tcsolve::test::data_dir_option() = data_dir;
  if (devices.empty()) return session.run();
#if defined(TCSOLVE_HAVE_CUDA)
  int failed = 0;
  std::stringstream list(devices);
  for (std::string item; std::getline(list, item, ',');) {
    const int device = std::stoi(item);
    if (cudaSetDevice(device) != cudaSuccess) {
      std::fprintf(stderr, "--devices: device %d cannot be made current\n", device);
      return 2;
    }
    std::printf("=== tcsolve_tests on device %d ===\n", device);
    failed += session.run();
  }
  return failed;
#else
  std::fprintf(stderr, "--devices: this build has no CUDA\n");
  return 2;
#endif
}
