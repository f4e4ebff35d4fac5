#include "container/orphans.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "container/process_tree.h"

namespace shoal {
namespace {

pid_t ParentOf(pid_t pid) {
  for (const ProcessStat& p : ReadProcessTable()) {
    if (p.pid == pid) return p.ppid;
  }
  return 0;
}

// A program (a child of this process) that starts `sleep CHILD_SECONDS`, in a session of
// its own when `own_session`, then exits, or becomes `sleep 310` when `program_stays`.
struct ProgramAndChild {
  pid_t program = 0;
  pid_t child = 0;
};
ProgramAndChild StartProgramWithChild(const char* child_seconds, bool own_session, bool program_stays) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  pid_t program = fork();
  if (program == 0) {
    pid_t child = fork();
    if (child == 0) {
      if (own_session) setsid();
      execl("/bin/sleep", "sleep", child_seconds, static_cast<char*>(nullptr));
      _exit(127);
    }
    (void)!write(pipe_fds[1], &child, sizeof child);
    if (program_stays) execl("/bin/sleep", "sleep", "310", static_cast<char*>(nullptr));
    _exit(program_stays ? 127 : 0);
  }
  close(pipe_fds[1]);
  pid_t child = 0;
  EXPECT_EQ(read(pipe_fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  close(pipe_fds[0]);
  return {program, child};
}

// A program that starts `sleep 307` in a session of its own and exits, as
// `setsid env -i sleep 307 &` in a task's command does. Returns the daemon's pid.
pid_t StartDaemonAndExit() {
  ProgramAndChild started = StartProgramWithChild("307", /*own_session=*/true, /*program_stays=*/false);
  int status = 0;
  EXPECT_EQ(waitpid(started.program, &status, 0), started.program);
  return started.child;
}

TEST(Orphans, ADaemonThatLeftItsSessionIsAdoptedAndEnded) {
  ASSERT_TRUE(AdoptOrphans());
  pid_t own = fork();  // a child of its own (a board), which the caller ends itself
  if (own == 0) {
    execl("/bin/sleep", "sleep", "308", static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t daemon = StartDaemonAndExit();
  ASSERT_GT(daemon, 0);
  // Its parent exited: the kernel hands it to the nearest subreaper, this process.
  for (int i = 0; i < 200 && ParentOf(daemon) != getpid(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(ParentOf(daemon), getpid());
  for (int i = 0; i < 200 && ProcessCommand(daemon) != "sleep 307"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::vector<std::string> ended = EndAdoptedOrphans({own});
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0], "sleep 307");
  EXPECT_EQ(kill(daemon, 0), -1) << "ended and reaped";
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(kill(own, 0), 0) << "a child the caller keeps is left to it";
  kill(own, SIGKILL);
  waitpid(own, nullptr, 0);
  EXPECT_TRUE(EndAdoptedOrphans().empty()) << "nothing is left";
}

// What the agent reads at every task's end and every unconfined sample: its own subtree,
// not every process on the host.
TEST(ProcessTableBelow, HoldsItsAncestorAndEveryDescendantAndNoOtherProcess) {
  auto [child, grandchild] = StartProgramWithChild("309", /*own_session=*/false, /*program_stays=*/true);
  ASSERT_GT(grandchild, 0);
  std::vector<ProcessStat> below = ReadProcessTableBelow(getpid());
  auto find = [&](pid_t pid) -> const ProcessStat* {
    for (const ProcessStat& p : below) {
      if (p.pid == pid) return &p;
    }
    return nullptr;
  };
  ASSERT_NE(find(getpid()), nullptr);
  ASSERT_NE(find(child), nullptr);
  ASSERT_NE(find(grandchild), nullptr);
  EXPECT_EQ(find(grandchild)->ppid, child);
  EXPECT_EQ(find(getppid()), nullptr) << "the ancestor's parent is not below it";
  EXPECT_EQ(find(1), nullptr);
  EXPECT_LT(below.size(), ReadProcessTable().size());
  kill(grandchild, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace shoal
