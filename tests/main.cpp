// Catch2 v2 entry point for tcsolve_tests: Catch's own command line plus
//   --data-dir DIR   the folder holding the test data (inputs/, tests/data/, README.md; the
//                    repository root will do); default: testdata/ beside the binary
// (test_data.hpp says where the tests look).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <string>

#include "test_data.hpp"

int main(int argc, char* argv[]) {
  Catch::Session session;
  std::string data_dir;
  using Catch::clara::Opt;
  session.cli(session.cli() |
              Opt(data_dir, "dir")["--data-dir"](
                  "folder holding inputs/, tests/data/ and README.md (default: testdata/ beside "
                  "this binary)"));
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  tcsolve::test::data_dir_option() = data_dir;
  return session.run();
}
