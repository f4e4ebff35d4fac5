#include "container/agent_guard.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

// The program of a task as `sh -c` runs it without exec: the shell and its child `sleep`
// in one process group of their own.
pid_t StartProgram(ProcessLauncher& launcher) {
  auto pid = launcher.Spawn({.argv = {"/bin/sh", "-c", "sleep 309; true"}, .new_process_group = true});
  EXPECT_TRUE(pid.ok());
  return pid.ok() ? *pid : 0;
}

bool GroupAlive(pid_t group) { return kill(-group, 0) == 0; }

TEST(AgentGuard, TheAgentsDeathEndsItsProgramsGroups) {
  auto& launcher = RealProcessLauncher::Instance();
  pid_t program = StartProgram(launcher), board = StartProgram(launcher);
  ASSERT_GT(program, 0);
  ASSERT_GT(board, 0);
  auto guard = StartAgentGuard(launcher, {program, board}, {{"SHOAL_TEST", "guard"}});
  ASSERT_TRUE(guard.ok()) << guard.status().message();
  // SIGTERM to the guard (a cluster's signal to the whole step) does not end it.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its trap is set
  kill(guard->pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(GroupAlive(program));
  // The agent dies: the kernel closes its end of the pipe, as closing it here does.
  close(guard->pipe_fd);
  ExitInfo exit = launcher.Wait(program);
  EXPECT_EQ(exit.signal, SIGKILL) << exit.Describe();
  EXPECT_EQ(launcher.Wait(board).signal, SIGKILL);
  EXPECT_TRUE(launcher.Wait(guard->pid).success());
  // The shell's `sleep` too (reaped here if this process adopted it, as a subreaper does).
  for (int i = 0; i < 200 && GroupAlive(program); ++i) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(GroupAlive(program)) << "the program's child outlived its agent";
}

TEST(AgentGuard, TheAgentsDeathEndsAContainersProcessNamedInItsPidFile) {
  // A container's first process runs in a session of its own, out of its runtime's group:
  // the runtime writes its pid to a file, which the guard reads when the agent dies.
  auto& launcher = RealProcessLauncher::Instance();
  pid_t runtime = StartProgram(launcher);
  auto container = launcher.Spawn({.argv = {"/bin/sh", "-c", "sleep 308; true"}, .new_session = true});
  ASSERT_TRUE(container.ok());
  testing_support::ScratchDirectory folder("guard");
  std::string pid_file = folder / "container pid";  // a space: the path is quoted
  FILE* f = fopen(pid_file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fprintf(f, "%d", *container);
  fclose(f);
  auto guard = StartAgentGuard(launcher, {runtime}, {}, {pid_file, folder / "never written"});
  ASSERT_TRUE(guard.ok()) << guard.status().message();
  close(guard->pipe_fd);
  EXPECT_EQ(launcher.Wait(runtime).signal, SIGKILL);
  EXPECT_EQ(launcher.Wait(*container).signal, SIGKILL);
  EXPECT_TRUE(launcher.Wait(guard->pid).success());
}

TEST(AgentGuard, AStoppedGuardLeavesThePrograms) {
  auto& launcher = RealProcessLauncher::Instance();
  pid_t program = StartProgram(launcher);
  ASSERT_GT(program, 0);
  auto guard = StartAgentGuard(launcher, {program}, {});
  ASSERT_TRUE(guard.ok());
  StopAgentGuard(launcher, *guard);
  EXPECT_EQ(guard->pid, 0);
  EXPECT_EQ(guard->pipe_fd, -1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(GroupAlive(program));
  launcher.SignalGroup(program, SIGKILL);
  launcher.Wait(program);
  AgentGuard never_started;
  StopAgentGuard(launcher, never_started);  // safe
}

}  // namespace
}  // namespace shoal
