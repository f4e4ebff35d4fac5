// FakeRoot: a temporary directory standing in for / in the cgroup tests, so the files
// Shoal writes and reads are checked for either cgroup layout on any host.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "common/files.h"

namespace shoal {

class FakeRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/shoal-cgroup-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  // Writes `text` to root_ + path, making its directories.
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(MakeDirectories(DirName(root_ + path)).ok());
    ASSERT_TRUE(WriteFileAtomic(root_ + path, text).ok());
  }
  std::string Read(const std::string& path) {
    auto text = ReadFile(root_ + path);
    return text.ok() ? *text : "(missing)";
  }
  std::string root_;
};

}  // namespace shoal
