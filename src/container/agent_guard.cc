#include "container/agent_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "common/shell_quote.h"

namespace shoal {

Result<AgentGuard> StartAgentGuard(ProcessLauncher& launcher, const std::vector<pid_t>& groups,
                                   const std::map<std::string, std::string>& env,
                                   const std::vector<std::string>& pid_files) {
  AgentGuard guard;
  if (groups.empty()) return guard;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ResourceExhausted("cannot create the agent guard's pipe");
  std::string targets;
  for (pid_t group : groups) targets += " -" + std::to_string(group);
  // `read` returns at end-of-file: the agent is gone. Builtins only: no PATH needed.
  // (dash's kill takes process groups as negative pids after a numeric signal, not "--".)
  std::string script = "trap '' TERM INT HUP; read _; kill -9" + targets + " 2>/dev/null;";
  for (const std::string& file : pid_files) {
    // runc writes the pid without a newline, where `read` fails but still sets p.
    script += " p=; read p < " + ShellQuote(file) + " 2>/dev/null; [ -n \"$p\" ] && kill -9 -$p $p 2>/dev/null;";
  }
  script += " exit 0";
  auto pid = launcher.Spawn({.argv = {"/bin/sh", "-c", script}, .env = env, .new_process_group = true, .stdin_fd = fds[0]});
  close(fds[0]);
  if (!pid.ok()) {
    close(fds[1]);
    return pid.status();
  }
  guard.pid = *pid;
  guard.pipe_fd = fds[1];
  return guard;
}

void StopAgentGuard(ProcessLauncher& launcher, AgentGuard& guard) {
  if (guard.pid > 0) {
    launcher.Signal(guard.pid, SIGKILL);
    launcher.Wait(guard.pid);
    guard.pid = 0;
  }
  if (guard.pipe_fd >= 0) {
    close(guard.pipe_fd);
    guard.pipe_fd = -1;
  }
}

}  // namespace shoal
