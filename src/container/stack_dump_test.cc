#include "container/stack_dump.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "container/process_tree.h"

namespace shoal {
namespace {

TEST(ProcessTree, RootsTheirDescendantsAndTheirGroupsOnce) {
  std::vector<ProcessStat> table = {
      {.pid = 10, .ppid = 1, .pgid = 10}, {.pid = 11, .ppid = 10, .pgid = 10}, {.pid = 12, .ppid = 11, .pgid = 10},
      {.pid = 13, .ppid = 1, .pgid = 10},  // left its parent, stayed in the group
      {.pid = 20, .ppid = 1, .pgid = 20},  // not ours
  };
  std::vector<pid_t> pids;
  for (const ProcessStat* p : TreeOf(table, {10})) pids.push_back(p->pid);
  EXPECT_EQ(pids, (std::vector<pid_t>{10, 11, 12, 13}));
  EXPECT_TRUE(TreeOf(table, {99}).empty());
}

// A real process and a real gdb: the stacks name where the program waits, and the
// program is still running afterwards.
TEST(StackDump, NativeAndPythonStacksOfARunningProgram) {
  auto& processes = RealProcessLauncher::Instance();
  auto python = processes.Spawn({.argv = {"/usr/bin/python3", "-c",
                                          "import time\ndef wait_here():\n    time.sleep(60)\nwait_here()\n"},
                                 .env = CurrentEnvironment(),
                                 .new_process_group = true});
  ASSERT_TRUE(python.ok()) << python.status().ToString();
  usleep(500'000);  // let the interpreter reach the sleep
  std::string text = DumpStacks(processes, {*python});
  EXPECT_NE(text.find("=== pid " + std::to_string(*python) + ": /usr/bin/python3 -c"), std::string::npos) << text;
  EXPECT_NE(text.find("Thread 1"), std::string::npos) << "native stacks: " << text;
  EXPECT_NE(text.find("in wait_here"), std::string::npos) << "Python stacks (python3-dbg): " << text;
  EXPECT_FALSE(processes.TryWait(*python)) << "taking stacks must not stop the program";
  processes.SignalGroup(*python, SIGKILL);
  processes.Wait(*python);
}

TEST(StackDump, SaysWhatToInstallWithoutGdb) {
  auto& processes = RealProcessLauncher::Instance();
  auto sleeper = processes.Spawn({.argv = {"sleep", "30"}, .env = CurrentEnvironment(), .new_process_group = true});
  ASSERT_TRUE(sleeper.ok());
  std::string text = DumpStacks(processes, {*sleeper}, {.gdb = "/nonexistent/gdb"});
  EXPECT_NE(text.find("install gdb"), std::string::npos) << text;
  processes.SignalGroup(*sleeper, SIGKILL);
  processes.Wait(*sleeper);
}

}  // namespace
}  // namespace shoal
