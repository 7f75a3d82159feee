// TempDir: a fresh directory for one test, removed with everything in it afterwards, for the
// tests that write files (serialize, checkpoints, crash safety). <tmp>/ember_test_<pid>_<n>:
// the pid keeps parallel ctest processes apart, n the directories of one process.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace ember::test {

struct TempDir {
  std::filesystem::path dir;
  TempDir() {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("ember_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;  // a destructor must not throw: a file a test left open stays behind
    std::filesystem::remove_all(dir, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The path of `name` inside the directory.
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  /// Names in the directory other than `keep` (leftover temporaries).
  std::vector<std::string> others(const std::string& keep) const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().filename() != keep) out.push_back(e.path().filename().string());
    return out;
  }
};

}  // namespace ember::test
