#include "common/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

TEST(MakePrivateFolder, MakesANewFolderOfTheCallersOwnEachTime) {
  testing_support::ScratchDirectory scratch("files");
  std::string pattern = scratch.path() + "/cache-XXXXXX";
  auto first = MakePrivateFolder(pattern, "a test");
  auto second = MakePrivateFolder(pattern, "a test");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_NE(*first, *second);
  for (const std::string& folder : {*first, *second}) {
    EXPECT_EQ(folder.rfind(scratch.path() + "/cache-", 0), 0u) << folder;
    EXPECT_NE(folder, pattern);
    struct stat info {};
    ASSERT_EQ(stat(folder.c_str(), &info), 0) << folder;
    EXPECT_TRUE(S_ISDIR(info.st_mode));
    EXPECT_EQ(info.st_mode & 07777, 0700u) << folder;
    EXPECT_EQ(info.st_uid, geteuid());
    EXPECT_TRUE(std::filesystem::is_empty(folder));
  }
}

TEST(MakePrivateFolder, FailureNamesThePatternThePurposeAndTheReason) {
  testing_support::ScratchDirectory scratch("files");
  std::string pattern = scratch.path() + "/missing/cache-XXXXXX";
  auto made = MakePrivateFolder(pattern, "Open MPI's session");
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(made.status().message().find(pattern), std::string::npos) << made.status().ToString();
  EXPECT_NE(made.status().message().find("for Open MPI's session"), std::string::npos);
  EXPECT_NE(made.status().message().find("No such file or directory"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(scratch.path() + "/missing"));
}

TEST(MakePrivateFolder, APatternWithoutTheSixXsIsRefused) {
  testing_support::ScratchDirectory scratch("files");
  auto made = MakePrivateFolder(scratch.path() + "/cache", "a test");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("Invalid argument"), std::string::npos) << made.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(scratch.path() + "/cache"));
}

}  // namespace
}  // namespace shoal
