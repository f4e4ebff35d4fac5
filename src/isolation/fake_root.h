// FakeRoot: a temporary directory standing in for / in the cgroup tests, so the files
// Shoal writes and reads are checked for either cgroup layout on any host.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/files.h"
#include "testing/scratch_directory.h"

namespace shoal {

class FakeRoot : public ::testing::Test {
 protected:
  // Writes `text` to root_ + path, making its directories.
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(MakeDirectories(DirName(root_ + path)).ok());
    ASSERT_TRUE(WriteFileAtomic(root_ + path, text).ok());
  }
  std::string Read(const std::string& path) {
    auto text = ReadFile(root_ + path);
    return text.ok() ? *text : "(missing)";
  }
  testing_support::ScratchDirectory scratch_{"cgroup"};
  std::string root_ = scratch_.path();
};

}  // namespace shoal
