#include "isolation/unix_account.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/files.h"
#include "common/process.h"

namespace shoal {
namespace {

TEST(UnixAccount, LooksUpAnAccountWithItsGroups) {
  auto root = LookUpAccount("root");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(root->uid, 0u);
  EXPECT_TRUE(root->is_root());
  EXPECT_FALSE(root->groups.empty());

  auto missing = LookUpAccount("no-such-account-here");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("'no-such-account-here'"), std::string::npos);
  EXPECT_NE(missing.status().message().find("useradd"), std::string::npos);
}

class Folders : public ::testing::Test {
 protected:
  void SetUp() override {
    // Under /tmp rather than a ScratchDirectory in $TMPDIR: nobody must pass through every
    // folder above top_, and /tmp lets anyone through where $TMPDIR may not (mktemp -d: 0700).
    char pattern[] = "/tmp/unix-account-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    top_ = pattern;
    ASSERT_EQ(chmod(top_.c_str(), 0755), 0);
    ASSERT_TRUE(MakeDirectories(top_ + "/open/inner").ok());
    ASSERT_TRUE(MakeDirectories(top_ + "/closed/inner").ok());
    chmod((top_ + "/open").c_str(), 0755);
    chmod((top_ + "/open/inner").c_str(), 0755);
    chmod((top_ + "/closed").c_str(), 0700);
    chmod((top_ + "/closed/inner").c_str(), 0755);
    auto nobody = LookUpAccount("nobody");
    ASSERT_TRUE(nobody.ok());
    nobody_ = *nobody;
  }
  void TearDown() override { std::system(("rm -rf " + top_).c_str()); }
  std::string top_;
  UnixAccount nobody_;
};

TEST_F(Folders, ReachableOnlyThroughFoldersTheAccountMaySearch) {
  EXPECT_TRUE(CheckReachable(nobody_, top_ + "/open/inner").ok());
  Status closed = CheckReachable(nobody_, top_ + "/closed/inner");
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find("cannot pass through " + top_ + "/closed"), std::string::npos) << closed.message();
  EXPECT_NE(closed.message().find("mode 0700"), std::string::npos) << closed.message();
  // The folder itself must also be readable.
  chmod((top_ + "/open/inner").c_str(), 0711);
  EXPECT_FALSE(CheckReachable(nobody_, top_ + "/open/inner").ok());
  // Root reaches everything; the owner reaches its own.
  EXPECT_TRUE(CheckReachable(*LookUpAccount("root"), top_ + "/closed/inner").ok());
  if (geteuid() == 0) {
    ASSERT_TRUE(HandOver(top_ + "/closed", nobody_).ok());
    EXPECT_TRUE(CheckReachable(nobody_, top_ + "/closed/inner").ok());
    struct stat st {};
    ASSERT_EQ(stat((top_ + "/closed").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, nobody_.uid);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
}

TEST_F(Folders, ASpawnedChildRunsAsTheAccountItWasGiven) {
  if (geteuid() != 0) GTEST_SKIP() << "switching accounts needs root";
  std::string out = top_ + "/open/id.txt";
  chmod((top_ + "/open").c_str(), 0777);
  int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  auto& launcher = RealProcessLauncher::Instance();
  auto pid = launcher.Spawn({.argv = {"/bin/sh", "-c", "id -u; id -g; cat /etc/shadow 2>/dev/null || echo denied"},
                             .env = CurrentEnvironment(),
                             .stdout_fd = fd,
                             .identity = ProcessIdentity{nobody_.uid, nobody_.gid, nobody_.groups}});
  close(fd);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_TRUE(launcher.Wait(*pid).success());
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::to_string(nobody_.uid) + "\n" + std::to_string(nobody_.gid) + "\ndenied\n");

  // A working directory the account cannot enter fails the Spawn, naming it.
  auto refused = launcher.Spawn({.argv = {"true"},
                                 .env = CurrentEnvironment(),
                                 .cwd = top_ + "/closed/inner",
                                 .identity = ProcessIdentity{nobody_.uid, nobody_.gid, nobody_.groups}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(top_ + "/closed/inner"), std::string::npos);
}

}  // namespace
}  // namespace shoal
