// ScratchFolder: a folder for one unit test, a ScratchDirectory (made fresh with mkdtemp
// under $TMPDIR, removed with everything in it at destruction) that also writes files.
// Thread-safety: a value owned by one test.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/files.h"
#include "testing/scratch_directory.h"

namespace shoal::data {

class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& name) : dir_(name) {}
  const std::string& path() const { return dir_.path(); }
  void Write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(path() + "/" + rel).parent_path());
    ASSERT_TRUE(WriteFileAtomic(path() + "/" + rel, text).ok());
  }

 private:
  testing_support::ScratchDirectory dir_;
};

}  // namespace shoal::data
