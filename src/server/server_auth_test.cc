#include "server/server_auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/files.h"

namespace shoal {
namespace {

TEST(ServerAuth, LoopbackServersNeedNoToken) {
  for (const char* host : {"127.0.0.1", "127.0.1.1", "::1", "localhost"}) EXPECT_TRUE(IsLoopbackHost(host)) << host;
  for (const char* host : {"0.0.0.0", "10.1.2.3", "::", "example.org"}) EXPECT_FALSE(IsLoopbackHost(host)) << host;
  ServerAuth open = ServerAuth::Open();
  EXPECT_FALSE(open.Requires("POST", "/api/v1/jobs/job-1/kill"));
  EXPECT_TRUE(open.Allows(""));
}

TEST(ServerAuth, OtherAddressesGetATokenFileOnlyTheUserCanRead) {
  std::string home = "/tmp/shoal-auth-test-" + std::to_string(getpid());
  ASSERT_TRUE(MakeDirectories(home).ok());
  auto auth = ServerAuth::ForHost("0.0.0.0", home);
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  ASSERT_TRUE(auth->enabled());
  EXPECT_EQ(auth->token().size(), 64u);
  struct stat st {};
  ASSERT_EQ(stat(TokenPath(home).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  std::ifstream file(TokenPath(home));
  std::string written;
  file >> written;
  EXPECT_EQ(written, auth->token());
  EXPECT_NE(ServerAuth::ForHost("0.0.0.0", home)->token(), auth->token()) << "a new token at every start";

  EXPECT_TRUE(auth->Requires("POST", "/api/v1/jobs"));
  EXPECT_TRUE(auth->Requires("POST", "/internal/v1/jobs/job-1/attempts/1/report"));
  EXPECT_TRUE(auth->Requires("GET", "/api/v1/jobs"));
  EXPECT_TRUE(auth->Requires("GET", "/metrics"));
  EXPECT_FALSE(auth->Requires("GET", "/api/v1/health"));
  EXPECT_FALSE(auth->Requires("GET", "/"));
  EXPECT_FALSE(auth->Requires("GET", "/static/app.js"));
  EXPECT_TRUE(auth->Allows("Bearer " + auth->token()));
  EXPECT_FALSE(auth->Allows("Bearer " + auth->token() + "x"));
  EXPECT_FALSE(auth->Allows(auth->token()));
  EXPECT_FALSE(auth->Allows(""));

  ASSERT_TRUE(ServerAuth::ForHost("127.0.0.1", home).ok());
  EXPECT_NE(access(TokenPath(home).c_str(), F_OK), 0) << "a loopback server removes a stale token";
  rmdir(home.c_str());
}

}  // namespace
}  // namespace shoal
