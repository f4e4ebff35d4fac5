#include "container/localizer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

class LocalizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string setup = "mkdir -p " + dir_ + "/src/d " + dir_ + "/task && cd " + dir_ +
                        "/src && echo hi > d/a && mkfifo d/fifo && ln -s /etc/passwd d/sym"
                        " && tar -cf ../fifo.tar d/a d/fifo && tar -cf ../sym.tar d/sym && tar -cf ../ok.tar d/a";
    ASSERT_EQ(std::system(setup.c_str()), 0);
  }

  Status Unpack(const std::string& archive) {
    std::map<std::string, std::string> env;
    return Localize({}, {{dir_ + "/" + archive, "lib", {}}}, dir_ + "/task", RealProcessLauncher::Instance(), env);
  }

  testing_support::ScratchDirectory scratch_{"localizer"};
  std::string dir_ = scratch_.path();
};

TEST_F(LocalizerTest, TheUnpackerRefusesLinksDevicesAndFifosBeforeUnpackingAnything) {
  Status fifo = Unpack("fifo.tar");
  EXPECT_FALSE(fifo.ok());
  EXPECT_NE(fifo.message().find("holds the FIFO 'd/fifo'"), std::string::npos) << fifo.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/task/lib/d/a")) << "nothing of it was unpacked";
  Status link = Unpack("sym.tar");
  EXPECT_NE(link.message().find("holds the symbolic link 'd/sym -> /etc/passwd'"), std::string::npos) << link.ToString();
  EXPECT_TRUE(Unpack("ok.tar").ok());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/task/lib/d/a"));
}

TEST_F(LocalizerTest, WhatWasUnpackedIsCheckedForLinksDevicesAndFifos) {
  std::string folder = dir_ + "/src";
  EXPECT_EQ(FirstUnsafeEntry(folder + "/d/a"), "") << "not a folder: nothing under it";
  std::filesystem::remove(folder + "/d/sym");
  std::filesystem::remove(folder + "/d/fifo");
  EXPECT_EQ(FirstUnsafeEntry(folder), "");
  ASSERT_EQ(::mkfifo((folder + "/d/fifo").c_str(), 0600), 0);
  EXPECT_EQ(FirstUnsafeEntry(folder), "the special file 'd/fifo'");
  std::filesystem::remove(folder + "/d/fifo");
  std::filesystem::create_symlink("/etc/passwd", folder + "/d/sym");
  EXPECT_EQ(FirstUnsafeEntry(folder), "the symbolic link 'd/sym'");
  std::filesystem::remove(folder + "/d/sym");
  std::filesystem::create_hard_link(folder + "/d/a", folder + "/d/b");
  EXPECT_NE(FirstUnsafeEntry(folder).find("the hard link 'd/"), std::string::npos);
}

}  // namespace
}  // namespace shoal
