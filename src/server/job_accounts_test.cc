#include "server/job_accounts.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace shoal {
namespace {

JobSpec SubmittedBy(const std::string& user, const std::string& workdir = "/tmp") {
  JobSpec spec;
  spec.user = user;
  spec.workdir = workdir;
  return spec;
}

JobAccounts RootServer(std::string jobs_dir = "/tmp") {
  return JobAccounts({.server_is_root = true,
                      .server_owner = "root",
                      .run_as = "",
                      .jobs_dir = std::move(jobs_dir),
                      .linked = [](const std::string& user) -> std::optional<std::string> {
                        if (user == "ann") return "nobody";
                        if (user == "gone") return "no-such-account-here";
                        return std::nullopt;
                      }});
}

TEST(JobAccounts, AServerThatIsNotRootRunsEveryJobAsItself) {
  JobAccounts accounts({.server_is_root = false, .server_owner = "me", .run_as = "", .jobs_dir = "/tmp", .linked = {}});
  EXPECT_EQ(accounts.AccountFor(SubmittedBy("anyone")).value(), "");
  EXPECT_EQ(accounts.AccountFor(SubmittedBy("me")).value(), "");
}

TEST(JobAccounts, ARootServerRunsEachJobAsItsOwnersAccount) {
  JobAccounts accounts = RootServer();
  EXPECT_EQ(accounts.AccountFor(SubmittedBy("root")).value(), "") << "the owner's jobs run as the server's own";
  EXPECT_EQ(accounts.AccountFor(SubmittedBy("ann")).value(), "nobody");

  auto unlinked = accounts.AccountFor(SubmittedBy("bob"));
  ASSERT_FALSE(unlinked.ok());
  EXPECT_EQ(unlinked.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unlinked.status().message().find("shoal user add bob --unix-user ACCOUNT"), std::string::npos)
      << unlinked.status().message();

  auto gone = accounts.AccountFor(SubmittedBy("gone"));
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find("'no-such-account-here'"), std::string::npos) << gone.status().message();
}

TEST(JobAccounts, TheOwnersJobsRunAsTheAccountTheServerNames) {
  JobAccounts accounts({.server_is_root = true, .server_owner = "root", .run_as = "nobody", .jobs_dir = "/tmp",
                        .linked = {}});
  EXPECT_EQ(accounts.AccountFor(SubmittedBy("root")).value(), "nobody");
}

TEST(JobAccounts, AJobWhoseAccountCannotReachItsFoldersIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "/root is reachable only when these run as root";
  auto workdir = RootServer().AccountFor(SubmittedBy("ann", "/root"));
  ASSERT_FALSE(workdir.ok());
  EXPECT_NE(workdir.status().message().find("workdir: the job runs as Unix account nobody, which cannot reach /root"),
            std::string::npos)
      << workdir.status().message();

  auto jobs = RootServer("/root/.shoal/jobs").AccountFor(SubmittedBy("ann"));
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find("--jobs-dir"), std::string::npos) << jobs.status().message();
  EXPECT_EQ(RootServer("/root/.shoal/jobs").AccountFor(SubmittedBy("root")).value(), "") << "root reaches it";
}

}  // namespace
}  // namespace shoal
