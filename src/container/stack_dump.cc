#include "container/stack_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include "container/process_tree.h"

namespace shoal {
namespace {

// gdb's output for one process, read back from a scratch file.
std::string RunGdb(ProcessLauncher& processes, pid_t pid, const StackDumpOptions& options) {
  char scratch[] = "/tmp/shoal-stack-XXXXXX";
  int fd = mkstemp(scratch);
  if (fd < 0) return "cannot create a scratch file for gdb's output\n";
  unlink(scratch);
  auto spawned = processes.Spawn({.argv = {options.gdb, "-p", std::to_string(pid), "-batch", "-nx", "-ex",
                                           "set pagination off", "-ex", "thread apply all bt", "-ex", "py-bt"},
                                  .env = CurrentEnvironment(),
                                  .new_process_group = true,
                                  .stdout_fd = fd,
                                  .stderr_fd = fd});
  if (!spawned.ok()) {
    close(fd);
    return "cannot run gdb (" + spawned.status().message() + "); install gdb, and python3-dbg for Python stacks\n";
  }
  std::string note;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.timeout_ms);
  while (!processes.TryWait(*spawned)) {
    if (std::chrono::steady_clock::now() > deadline) {
      processes.SignalGroup(*spawned, SIGKILL);
      processes.Wait(*spawned);
      note = "gdb did not finish within " + std::to_string(options.timeout_ms / 1000) + " s; stopped it\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string text;
  lseek(fd, 0, SEEK_SET);
  char buffer[8192];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  close(fd);
  return text + note;
}

}  // namespace

std::string DumpStacks(ProcessLauncher& processes, const std::vector<pid_t>& programs, const StackDumpOptions& options) {
  std::vector<ProcessStat> table = ReadProcessTable();
  std::vector<const ProcessStat*> tree = TreeOf(table, programs);
  if (tree.empty()) return "no process of the task is running\n";
  std::string text;
  size_t dumped = 0;
  for (const ProcessStat* p : tree) {
    if (p->pid == getpid()) continue;
    if (dumped++ == options.max_processes) {
      text += "(" + std::to_string(tree.size() - options.max_processes) + " more processes not shown)\n";
      break;
    }
    text += "=== pid " + std::to_string(p->pid) + ": " + ProcessCommand(p->pid) + "\n";
    text += RunGdb(processes, p->pid, options);
  }
  return text;
}

}  // namespace shoal
