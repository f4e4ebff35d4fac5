#include "container/stack_dump.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "container/process_tree.h"
#include "testing/scratch_directory.h"

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

// Waits (up to a 30 s hang guard) until `pid` runs `comm` and sleeps in the kernel
// (state S in /proc/PID/stat), and `marker`, when given, exists: the program has reached
// the wait it was started to reach.
bool WaitUntilAsleep(pid_t pid, const std::string& comm, const std::string& marker = "") {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    bool asleep = stat.starts_with(std::to_string(pid) + " (" + comm + ") S ");
    if (asleep && (marker.empty() || std::filesystem::exists(marker))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// A real process and a real gdb: the stacks name where the program waits, and the
// program is still running afterwards.
TEST(StackDump, NativeAndPythonStacksOfARunningProgram) {
  auto& processes = RealProcessLauncher::Instance();
  testing_support::ScratchDirectory scratch("stack");
  const std::string marker = scratch / "asleep";
  auto python = processes.Spawn({.argv = {"/usr/bin/python3", "-c",
                                          "import sys, time\ndef wait_here():\n    time.sleep(60)\n"
                                          "open(sys.argv[1], 'w').close()\nwait_here()\n",
                                          marker},
                                 .env = CurrentEnvironment(),
                                 .new_process_group = true});
  ASSERT_TRUE(python.ok()) << python.status().ToString();
  ASSERT_TRUE(WaitUntilAsleep(*python, "python3", marker)) << "the interpreter never reached the sleep";
  std::string text = DumpStacks(processes, {*python});
  EXPECT_NE(text.find("=== pid " + std::to_string(*python) + ": /usr/bin/python3 -c"), std::string::npos) << text;
  EXPECT_NE(text.find("Thread 1"), std::string::npos) << "native stacks: " << text;
  EXPECT_NE(text.find("in wait_here"), std::string::npos) << "Python stacks (python3-dbg): " << text;
  EXPECT_FALSE(processes.TryWait(*python)) << "taking stacks must not stop the program";
  processes.SignalGroup(*python, SIGKILL);
  processes.Wait(*python);
}

TEST(StackDump, NativeProgramsGetNoPythonStackAndNoGdbChatter) {
  auto& processes = RealProcessLauncher::Instance();
  auto sleeper = processes.Spawn({.argv = {"sleep", "30"}, .env = CurrentEnvironment(), .new_process_group = true});
  ASSERT_TRUE(sleeper.ok());
  ASSERT_TRUE(WaitUntilAsleep(*sleeper, "sleep")) << "sleep never started sleeping";
  std::string text = DumpStacks(processes, {*sleeper});
  EXPECT_NE(text.find("Thread 1"), std::string::npos) << text;
  for (const char* chatter : {"py-bt", "python3-dbg", "libthread_db", "detached]"}) {
    EXPECT_EQ(text.find(chatter), std::string::npos) << chatter << " in: " << text;
  }
  processes.SignalGroup(*sleeper, SIGKILL);
  processes.Wait(*sleeper);
}

TEST(StackDump, TidyGdbOutputKeepsTheStacksAndErrorsOnly) {
  const std::string gdb =
      "[Thread debugging using libthread_db enabled]\n"
      "Using host libthread_db library \"/lib/x86_64-linux-gnu/libthread_db.so.1\".\n"
      "0x00007f in __GI___clock_nanosleep () at clock_nanosleep.c:71\n"
      "71\t../sysdeps/unix/sysv/linux/clock_nanosleep.c: No such file or directory.\n"
      "warning: File \"/opt/py/libpython3.11.so-gdb.py\" auto-loading has been declined by your `auto-load safe-path' set to \"$debugdir:$datadir/auto-load\".\n"
      "To enable execution of this file add\n"
      "\tadd-auto-load-safe-path /opt/py/libpython3.11.so-gdb.py\n"
      "line to your configuration file \"/root/.config/gdb/gdbinit\".\n"
      "\n"
      "Thread 1 (Thread 0x7f (LWP 7) \"python3\"):\n"
      "#0  0x00007f in __GI___clock_nanosleep () at clock_nanosleep.c:71\n"
      "#1  0x00005b in pysleep (timeout=<optimized out>) at ../Modules/timemodule.c:2162\n"
      "Undefined command: \"py-bt\".  Try \"help\".\n"
      "[Inferior 1 (process 7) detached]\n";
  std::string tidy = TidyGdbOutput(gdb);
  EXPECT_EQ(tidy,
            "Thread 1 (Thread 0x7f (LWP 7) \"python3\"):\n"
            "#0  0x00007f in __GI___clock_nanosleep () at clock_nanosleep.c:71\n"
            "#1  0x00005b in pysleep (timeout=<optimized out>) at ../Modules/timemodule.c:2162\n"
            "(no Python stack: install python3-dbg, whose gdb helpers give py-bt)\n");
  const std::string refused = "Could not attach to process.  If your uid matches the uid of the target\n"
                              "ptrace: Operation not permitted.\n";
  EXPECT_EQ(TidyGdbOutput(refused), refused) << "an error stays";
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
