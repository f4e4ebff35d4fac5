// AgentGuard: ends a task's programs when its agent dies without ending them itself
// (kill -9 of `shoal container`, the kernel's OOM killer). The agent is a child subreaper
// and ends everything it started when it exits normally (orphans.h), but a killed agent
// runs no code: its programs' children (a program started by `sh -c` without exec) would
// be handed to init and run on after their job ended, where no cgroup holds the task (a
// Slurm node without proctrack/cgroup).
//
// A guard is a small shell process reading a pipe whose only writer is the agent (the
// write end is close-on-exec, so no program holds it). Nothing is ever written: when the
// agent dies, the kernel closes its end, the guard reads end-of-file and SIGKILLs the
// programs' process groups. When the agent ends its programs itself, it stops the guard
// first (SIGKILL, so the guard does nothing), so a group id the kernel may have reused is
// never signalled.
//
// Contract:
//  - StartAgentGuard(launcher, groups, env, pid_files) starts the guard in a process group
//    of its own, ignoring SIGTERM, SIGINT and SIGHUP (a cluster's signal to the whole step
//    must not end it before the agent); `env` is its environment (the task's markers, so
//    leak checks see it). Each of `pid_files` that holds a pid when the agent dies names
//    one more process and group to kill: a container's first process, which its runtime
//    starts in a session of its own (isolation/oci_bundle.h).
//  - StopAgentGuard kills and reaps it and closes the pipe; safe on a guard never started.
// Thread-safety: call from the thread that supervises the programs.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/status.h"

namespace shoal {

struct AgentGuard {
  pid_t pid = 0;
  int pipe_fd = -1;  // the write end: the agent holds it until it dies or stops the guard
};

Result<AgentGuard> StartAgentGuard(ProcessLauncher& launcher, const std::vector<pid_t>& groups,
                                   const std::map<std::string, std::string>& env,
                                   const std::vector<std::string>& pid_files = {});
void StopAgentGuard(ProcessLauncher& launcher, AgentGuard& guard);

}  // namespace shoal
