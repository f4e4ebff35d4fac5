#include "container/stack_dump.h"

#include <unistd.h>

#include "container/process_tree.h"

namespace shoal {
namespace {

// gdb's output for one process.
std::string RunGdb(ProcessLauncher& processes, pid_t pid, const StackDumpOptions& options) {
  auto out = RunAndCapture(processes,
                           {options.gdb, "-p", std::to_string(pid), "-batch", "-nx", "-ex", "set pagination off", "-ex",
                            "thread apply all bt", "-ex", "py-bt"},
                           options.timeout_ms);
  if (!out.ok()) return "cannot run gdb (" + out.status().message() + "); install gdb, and python3-dbg for Python stacks\n";
  if (out->timed_out) out->text += "gdb did not finish within " + std::to_string(options.timeout_ms / 1000) + " s; stopped it\n";
  return out->text;
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
