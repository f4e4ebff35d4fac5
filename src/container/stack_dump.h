// StackDump: where a task's processes are waiting, taken without stopping the task. gdb
// attaches to each process of the program's tree in turn, prints every thread's native
// stack and, for Python interpreters, the Python stack (py-bt, from the gdb helpers of
// python3-dbg), and detaches; the process goes on as before. Nothing is killed.
//
// Contract:
//  - DumpStacks returns one section per process: "=== pid P: COMMAND" and gdb's output
//    (TidyGdbOutput), with the Python stack asked only of Python interpreters.
//    A gdb that does not answer within timeout_ms is killed and the section says so.
//  - Without gdb the text says what to install; it is never an error that stops a task.
//  - Attaching needs ptrace rights over the process: root, or the same user with
//    kernel.yama.ptrace_scope at 0.
// Thread-safety: call from one thread at a time per ProcessLauncher wait rules.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/process.h"

namespace shoal {

struct StackDumpOptions {
  std::string gdb = "gdb";
  int timeout_ms = 20'000;  // per process
  size_t max_processes = 16;
};

std::string DumpStacks(ProcessLauncher& processes, const std::vector<pid_t>& programs,
                       const StackDumpOptions& options = {});

// gdb's output without its chatter: the frame it prints on attaching (the threads' stacks
// repeat it), libthread_db's notes, "[Inferior 1 (process P) detached]" and the auto-load
// safe-path warnings; a missing py-bt (a Python without python3-dbg) becomes a line
// saying what to install. Errors (a refused attach) stay.
std::string TidyGdbOutput(const std::string& text);

}  // namespace shoal
