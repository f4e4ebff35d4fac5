#include "container/stack_dump.h"

#include <unistd.h>

#include <filesystem>
#include <string_view>

#include "container/process_tree.h"

namespace shoal {
namespace {

// gdb's output for one process.
std::string RunGdb(ProcessLauncher& processes, pid_t pid, bool python, const StackDumpOptions& options) {
  std::vector<std::string> argv = {options.gdb, "-p", std::to_string(pid), "-batch", "-nx", "-ex", "set pagination off",
                                   "-ex", "thread apply all bt"};
  if (python) argv.insert(argv.end(), {"-ex", "py-bt"});
  auto out = RunAndCapture(processes, argv, options.timeout_ms);
  if (!out.ok()) return "cannot run gdb (" + out.status().message() + "); install gdb, and python3-dbg for Python stacks\n";
  std::string text = TidyGdbOutput(out->text);
  if (out->timed_out) text += "gdb did not finish within " + std::to_string(options.timeout_ms / 1000) + " s; stopped it\n";
  return text;
}

// A Python interpreter: its executable or its command's first word names python.
bool IsPython(pid_t pid, const std::string& command) {
  std::error_code error;
  std::string exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", error).filename().string();
  std::string first = command.substr(0, command.find(' '));
  return exe.starts_with("python") || first.substr(first.rfind('/') + 1).starts_with("python");
}

bool IsChatter(std::string_view line) {
  static constexpr std::string_view kStarts[] = {
      "[Thread debugging using libthread_db", "Using host libthread_db library", "[New LWP", "[Inferior ",
      "Missing separate debuginfo", "To enable execution of this file add", "line to your configuration file",
      "To completely disable this security protection add", "For more information about this security protection",
      "\"Auto-loading safe path\" section"};
  for (std::string_view start : kStarts) {
    if (line.starts_with(start)) return true;
  }
  return line.find("auto-load") != std::string_view::npos || line.find("Auto-loading safe path") != std::string_view::npos;
}

}  // namespace

std::string TidyGdbOutput(const std::string& text) {
  // What gdb prints before the first thread's stack is the frame where it attached.
  size_t threads = text.starts_with("Thread ") ? 0 : text.find("\nThread ");
  size_t start = threads == std::string::npos ? 0 : threads + (threads == 0 ? 0 : 1);
  std::string tidy;
  for (size_t at = start; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    if (line.starts_with("Undefined command: \"py-bt\"")) {
      tidy += "(no Python stack: install python3-dbg, whose gdb helpers give py-bt)\n";
    } else if (!IsChatter(line)) {
      tidy.append(line).push_back('\n');
    }
  }
  return tidy;
}

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
    std::string command = ProcessCommand(p->pid);
    text += "=== pid " + std::to_string(p->pid) + ": " + command + "\n";
    text += RunGdb(processes, p->pid, IsPython(p->pid, command), options);
  }
  return text;
}

}  // namespace shoal
