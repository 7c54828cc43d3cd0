// A fresh directory for one test (mkdtemp under the system's temporary directory), removed with
// everything in it when the test ends: the tests that write files share this one helper.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace tcsolve::test {

class TempDir {
 public:
  /// `prefix` names the directory (tcsolve_<prefix>_XXXXXX), to tell the tests' leftovers apart.
  explicit TempDir(const std::string& prefix = "test") {
    std::string pattern = (std::filesystem::temp_directory_path() / ("tcsolve_" + prefix + "_XXXXXX")).string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  /// The path of `name` inside the directory.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  /// Names in the directory, sorted (symbolic links, FIFOs and directories included).
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace tcsolve::test
