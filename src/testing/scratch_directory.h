// ScratchDirectory: a fresh, empty directory for one test, made with mkdtemp under
// $TMPDIR (gtest's TempDir), so two test runs at once never share a path, and removed
// with everything in it when the object goes. Tests that need a file (a database, a
// home, a log) take a path inside one instead of building "/tmp/name-<pid>" by hand,
// which collided between concurrent runs and was left behind when a test forgot a
// suffix (SQLite's -wal and -shm) or failed before its own cleanup.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace shoal::testing_support {

class ScratchDirectory {
 public:
  // `label` names the test in the directory's name, to tell leftovers apart when a
  // test is killed before its destructor runs.
  explicit ScratchDirectory(std::string_view label = "test") {
    std::string pattern = ::testing::TempDir();
    if (pattern.empty() || pattern.back() != '/') pattern += '/';
    pattern += "shoal-" + std::string(label) + "-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "cannot make a scratch directory like " << pattern;
      return;
    }
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::string& path() const { return path_; }
  // A path inside the directory: scratch / "jobs.db".
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

}  // namespace shoal::testing_support
