// Where the tests find their data files (inputs/, tests/data/, README.md, docs/guide/): never
// through the source tree's path on the build machine, so that a copied test binary (a GPU
// bundle) passes.
//
// The build copies them next to the test binary (tests/CMakeLists.txt, target
// tcsolve_testdata): build/tests/testdata/{inputs,tests/data,README.md,docs/guide}; scripts/bundle-gpu puts
// the same folder beside the bundled binary (bundle/bin/testdata). test_data_path looks
//   1. in the folder given by the test binary's option --data-dir DIR (tests/main.cpp), then
//   2. in <folder of /proc/self/exe>/testdata,
// and throws, naming both places, when neither holds the file.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tcsolve::test {

/// The --data-dir option of tcsolve_tests; empty when not given. Set once by main().
inline std::string& data_dir_option() {
  static std::string dir;
  return dir;
}

/// The folder that the build fills: <folder of the running test binary>/testdata.
inline std::filesystem::path data_dir_beside_binary() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self.parent_path() / "testdata";
}

/// The path of a data file or folder named relative to the repository root, e.g.
/// test_data_path("inputs/iris.h5"), test_data_path("tests/data/rowmajor_3x3.h5"),
/// test_data_path("README.md"), test_data_path("docs/guide/cli.md"). Throws std::runtime_error
/// when it is found nowhere.
inline std::string test_data_path(const std::string& relative) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string looked;
  if (!data_dir_option().empty()) {
    const fs::path p = fs::path(data_dir_option()) / relative;
    if (fs::exists(p, ec)) return p.string();
    looked = p.string() + " (--data-dir)";
  }
  const fs::path beside = data_dir_beside_binary();
  if (!beside.empty()) {
    const fs::path p = beside / relative;
    if (fs::exists(p, ec)) return p.string();
    looked += (looked.empty() ? "" : ", ") + p.string() + " (beside the test binary)";
  }
  throw std::runtime_error(
      "test data '" + relative + "' not found; looked in " + (looked.empty() ? "nowhere" : looked) +
      ". Build the target tcsolve_testdata (it fills <build>/tests/testdata), or pass "
      "--data-dir DIR with DIR holding inputs/, tests/data/, README.md and docs/guide/ (the repository root "
      "will do)");
}

}  // namespace tcsolve::test
