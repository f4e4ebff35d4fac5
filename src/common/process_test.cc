#include "common/process.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(RealProcessLauncher, ReportsExitCodeAndSignal) {
  auto& launcher = RealProcessLauncher::Instance();
  auto env = CurrentEnvironment();
  auto pid = launcher.Spawn({.argv = {"/bin/sh", "-c", "exit 3"}, .env = env});
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ExitInfo exit = launcher.Wait(*pid);
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_EQ(exit.signal, 0);

  auto sleeper = launcher.Spawn({.argv = {"sleep", "30"}, .env = env, .new_session = true});
  ASSERT_TRUE(sleeper.ok());
  launcher.SignalGroup(*sleeper, SIGKILL);
  ExitInfo killed = launcher.Wait(*sleeper);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_NE(killed.Describe().find("signal 9"), std::string::npos);
}

TEST(RealProcessLauncher, MissingProgramIsAnErrorAtSpawn) {
  auto result = RealProcessLauncher::Instance().Spawn({.argv = {"/no/such/program"}, .env = CurrentEnvironment()});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("/no/such/program"), std::string::npos);

  auto bad_dir = RealProcessLauncher::Instance().Spawn(
      {.argv = {"true"}, .env = CurrentEnvironment(), .cwd = "/no/such/dir"});
  ASSERT_FALSE(bad_dir.ok());
  EXPECT_NE(bad_dir.status().message().find("/no/such/dir"), std::string::npos);
}

TEST(FindProcessesWithEnvironment, FindsAndKillsMarkedProcesses) {
  auto env = CurrentEnvironment();
  std::string marker = "SHOAL_TEST_MARK=" + std::to_string(getpid());
  env["SHOAL_TEST_MARK"] = std::to_string(getpid());
  // A grandchild that outlives its parent shell: the sweep must still find it.
  auto pid = RealProcessLauncher::Instance().Spawn(
      {.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"}, .env = env, .new_session = true});
  ASSERT_TRUE(pid.ok());
  for (int i = 0; i < 100 && FindProcessesWithEnvironment({marker}).size() < 3; ++i) usleep(10'000);
  EXPECT_EQ(FindProcessesWithEnvironment({marker}).size(), 3u);
  EXPECT_GE(KillProcessesWithEnvironment({marker}), 3);
  RealProcessLauncher::Instance().Wait(*pid);
  EXPECT_TRUE(FindProcessesWithEnvironment({marker}).empty());
}

}  // namespace
}  // namespace shoal
