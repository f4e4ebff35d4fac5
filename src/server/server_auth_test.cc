#include "server/server_auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/files.h"
#include "server/job_access.h"
#include "server/user_tokens.h"
#include "testing/scratch_directory.h"

namespace shoal {
namespace {

class AuthHome : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeDirectories(home_).ok()); }
  static int Mode(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 0777) : -1;
  }
  testing_support::ScratchDirectory scratch_{"auth"};
  std::string home_ = scratch_ / "home";
};

TEST(ServerAuth, KnowsLoopbackAddresses) {
  for (const char* host : {"127.0.0.1", "127.0.1.1", "::1", "[::1]", "localhost"}) EXPECT_TRUE(IsLoopbackHost(host)) << host;
  for (const char* host : {"0.0.0.0", "10.1.2.3", "::", "example.org", "127.0.0.1.example.org", "127.evil", "localhost.evil",
                           "[::1", ""}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST(ServerAuth, ALoopbackServerAnswersOnlyRequestsAddressedToLoopback) {
  EXPECT_EQ(HostOfHeader("127.0.0.1:7480"), "127.0.0.1");
  EXPECT_EQ(HostOfHeader("[::1]:7480"), "[::1]");
  EXPECT_EQ(HostOfHeader("localhost"), "localhost");
  ServerAuth loopback = ServerAuth::WithToken("t", true);
  for (const char* host : {"127.0.0.1:7480", "localhost:7480", "[::1]:7480", "127.0.0.1", ""}) {
    EXPECT_TRUE(loopback.AcceptsHost(host)) << host;
  }
  for (const char* host : {"evil.example.com", "evil.example.com:7480", "127.0.0.1.evil.example.com:7480", "0.0.0.0:7480",
                           "192.168.1.2:7480"}) {
    EXPECT_FALSE(loopback.AcceptsHost(host)) << host << ": a rebound name";
  }
  EXPECT_TRUE(ServerAuth::WithToken("t", false).AcceptsHost("evil.example.com")) << "beyond loopback, tokens decide";
}

TEST_F(AuthHome, EveryServerHasATokenOnlyItsOwnerReadsKeptAcrossRestarts) {
  auto auth = ServerAuth::ForServer("127.0.0.1", home_, "ann");
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  EXPECT_EQ(auth->token().size(), 64u);
  EXPECT_EQ(Mode(TokenPath(home_)), 0600);
  std::ifstream file(TokenPath(home_));
  std::string written;
  file >> written;
  EXPECT_EQ(written, auth->token());
  EXPECT_EQ(ServerAuth::ForServer("0.0.0.0", home_, "ann")->token(), auth->token())
      << "a restart keeps the token, so running AMs and users' CLIs keep working";
  chmod(TokenPath(home_).c_str(), 0644);
  EXPECT_NE(ServerAuth::ForServer("127.0.0.1", home_, "ann")->token(), auth->token())
      << "a token others could read is replaced";
  EXPECT_EQ(Mode(TokenPath(home_)), 0600);

  auto caller = auth->Identify("Bearer " + auth->token());
  ASSERT_TRUE(caller);
  EXPECT_EQ(caller->user, "ann");
  EXPECT_TRUE(caller->admin);
  EXPECT_FALSE(auth->Identify("Bearer " + auth->token() + "x"));
  EXPECT_FALSE(auth->Identify(auth->token())) << "the Bearer scheme is required";
  EXPECT_FALSE(auth->Identify(""));
}

TEST(ServerAuth, StateChangesAlwaysNeedATokenReadsOnlyBeyondLoopback) {
  ServerAuth loopback = ServerAuth::WithToken("t", true);
  EXPECT_TRUE(loopback.Requires("POST", "/api/v1/jobs/job-1/kill"));
  EXPECT_TRUE(loopback.Requires("POST", "/api/v1/jobs"));
  EXPECT_TRUE(loopback.Requires("DELETE", "/api/v1/jobs/job-1"));
  EXPECT_TRUE(loopback.Requires("POST", "/internal/v1/jobs/job-1/attempts/1/report"));
  EXPECT_FALSE(loopback.Requires("GET", "/api/v1/jobs"));
  EXPECT_FALSE(loopback.Requires("GET", "/metrics"));
  ServerAuth beyond = ServerAuth::WithToken("t", false);
  EXPECT_TRUE(beyond.Requires("POST", "/api/v1/jobs"));
  EXPECT_TRUE(beyond.Requires("GET", "/api/v1/jobs"));
  EXPECT_TRUE(beyond.Requires("GET", "/internal/v1/jobs/job-1/attempts/1"));
  EXPECT_TRUE(beyond.Requires("GET", "/metrics"));
  for (const ServerAuth* auth : {&loopback, &beyond}) {
    EXPECT_FALSE(auth->Requires("GET", "/api/v1/health"));
    EXPECT_FALSE(auth->Requires("GET", "/"));
    EXPECT_FALSE(auth->Requires("GET", "/static/app.js"));
  }
}

TEST_F(AuthHome, UsersGetTokensOfTheirOwnInAFileOnlyTheOwnerReads) {
  auto ann = AddUser(home_, "ann", false);
  auto ops = AddUser(home_, "ops", true);
  ASSERT_TRUE(ann.ok() && ops.ok());
  EXPECT_EQ(Mode(UsersPath(home_)), 0600);
  UserTokens users(UsersPath(home_));
  ASSERT_TRUE(users.Find(*ann));
  EXPECT_EQ(users.Find(*ann)->user, "ann");
  EXPECT_FALSE(users.Find(*ann)->admin);
  EXPECT_TRUE(users.Find(*ops)->admin);
  EXPECT_FALSE(users.Find("nobody's token, long enough to look like one"));

  auto renewed = AddUser(home_, "ann", false);
  ASSERT_TRUE(renewed.ok());
  EXPECT_FALSE(users.Find(*ann)) << "a new token replaces the old one at once";
  EXPECT_EQ(users.Find(*renewed)->user, "ann");

  ASSERT_TRUE(WriteFileAtomic(UsersPath(home_), "{\"users\": {\"ann\": {\"token\": \"short\"}}}").ok());
  EXPECT_EQ(users.Find(*renewed)->user, "ann") << "a broken file keeps the last good table";
  EXPECT_FALSE(AddUser(home_, "bob", false).ok()) << "and is not overwritten";
  for (const char* bad : {"", "../x", "a b", "-x", "a\nb"}) EXPECT_FALSE(CheckUserName(bad).ok()) << bad;
}

TEST(JobAccess, OwnersAndAdministratorsMayActOthersMayNot) {
  Caller ann{"ann", false}, bob{"bob", false}, ops{"ops", true};
  EXPECT_TRUE(CheckJobAccess(ann, JobAction::kChange, "job-1", "ann").ok());
  EXPECT_TRUE(CheckJobAccess(ops, JobAction::kChange, "job-1", "ann").ok());
  Status denied = CheckJobAccess(bob, JobAction::kRead, "job-1", "ann");
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("job-1 belongs to ann"), std::string::npos) << denied.message();
  EXPECT_TRUE(CheckJobAccess(std::nullopt, JobAction::kRead, "job-1", "ann").ok()) << "loopback reads";
  EXPECT_FALSE(CheckJobAccess(std::nullopt, JobAction::kChange, "job-1", "ann").ok());
  EXPECT_EQ(SubmitterName(ann, "bob"), "ann");
  EXPECT_EQ(SubmitterName(ops, "bob"), "bob");
  EXPECT_EQ(SubmitterName(ops, ""), "ops");
}

}  // namespace
}  // namespace shoal
