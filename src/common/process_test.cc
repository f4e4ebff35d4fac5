#include "common/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

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
  std::vector<pid_t> found;
  for (int i = 0; i < 500 && (found = FindProcessesWithEnvironment({marker})).size() < 3; ++i) usleep(10'000);
  EXPECT_EQ(found.size(), 3u);
  // Found again while they exec (the shell's children are forked copies of it until then).
  EXPECT_EQ(FindProcessesWithEnvironment({marker}).size(), 3u);
  EXPECT_GE(KillProcessesWithEnvironment({marker}), 3);
  RealProcessLauncher::Instance().Wait(*pid);
  EXPECT_TRUE(FindProcessesWithEnvironment({marker}).empty());
}

TEST(FindProcessesWithEnvironment, FindsAProcessInTheMiddleOfAnExec) {
  // Its environment reads empty from the moment the kernel swaps in the new program until
  // it has set up its stack; a sweep then must not miss it. Each child starts a shell with
  // the marker, which execs `sleep`: once found, it must be found at every search after.
  const std::string marker = "SHOAL_EXEC_MARK=" + std::to_string(getpid());
  int missed = 0;
  for (int i = 0; i < 20; ++i) {
    pid_t child = fork();
    if (child == 0) {
      char* const env[] = {const_cast<char*>(marker.c_str()), nullptr};
      execle("/bin/sh", "sh", "-c", "exec /bin/sleep 5", nullptr, env);
      _exit(127);
    }
    bool seen = false;
    for (int search = 0; search < 2000; ++search) {
      std::vector<pid_t> found = FindProcessesWithEnvironment({marker});
      const bool now = std::ranges::find(found, child) != found.end();
      missed += seen && !now;
      seen = seen || now;
      std::ifstream command("/proc/" + std::to_string(child) + "/cmdline");
      std::string argv0;
      std::getline(command, argv0, '\0');
      if (seen && argv0 == "/bin/sleep") break;  // the exec is over
    }
    EXPECT_TRUE(seen);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  EXPECT_EQ(missed, 0) << "searches that missed a child they had found, while it exec'd";
}

}  // namespace
}  // namespace shoal
