// ScratchFolder: a folder under the system's temporary directory for one unit test,
// made empty at construction and removed with everything in it at destruction.
// Thread-safety: a value owned by one test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/files.h"

namespace shoal::data {

class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / ("shoal-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    EXPECT_TRUE(MakeDirectories(path_).ok());
  }
  ~ScratchFolder() { std::filesystem::remove_all(path_); }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return path_; }
  void Write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(path_ + "/" + rel).parent_path());
    ASSERT_TRUE(WriteFileAtomic(path_ + "/" + rel, text).ok());
  }

 private:
  std::string path_;
};

}  // namespace shoal::data
