// Processes: every fork/exec, signal and wait that Shoal does goes through here.
//
// Contract:
//  - ProcessLauncher is the interface components take, so tests can substitute a fake.
//    RealProcessLauncher forks and execs for real.
//  - Spawn returns only after the child has exec'd (or reports why exec failed: the
//    program is missing, the working directory does not exist ...), so a bad command
//    is an error at the call, not a mysterious exit code later.
//  - The child gets exactly `env` as its environment, `cwd` as its directory, stdin from
//    /dev/null unless stdin_fd is given, and no other descriptors of the parent.
//  - new_session puts the child in a session and process group of its own (its pid),
//    so SignalGroup(pid, ...) reaches it and everything it starts that does not leave.
//  - parent_death_signal: the child receives this signal when the spawning thread exits.
//  - join_cgroups: a cgroup that cannot be joined fails the Spawn (Internal, naming it).
//  - identity: the child becomes that account (supplementary groups, then group, then
//    user) after joining its cgroups and before anything else it does, so its directory,
//    its program and everything it starts are reached as that account; it needs a root
//    parent, and failing to switch fails the Spawn. The fork server refuses it.
//  - A process that raises its own soft limit on open files for its needs (a server's
//    connections: FitToOpenFileLimit) records the limit it started with through
//    KeepChildrensOpenFileLimit, and every child it spawns gets that limit back.
// Thread-safety: RealProcessLauncher is stateless and safe from any thread. Only one
// component may wait for a given child.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace shoal {

// A Unix identity a child process takes on (isolation/unix_account.h finds one by name).
struct ProcessIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

struct SpawnOptions {
  std::vector<std::string> argv;             // argv[0] is looked up in PATH if it has no '/'
  std::map<std::string, std::string> env;    // the child's whole environment
  std::string cwd;                           // empty: inherit
  bool new_session = false;                  // setsid()
  bool new_process_group = false;            // setpgid(0, 0), same session
  int parent_death_signal = 0;               // prctl(PR_SET_PDEATHSIG) when non-zero
  int stdin_fd = -1;                         // -1: /dev/null
  int stdout_fd = -1;                        // -1: /dev/null
  int stderr_fd = -1;                        // -1: /dev/null
  // cgroup.procs files the child writes itself into before it runs its program, so that
  // every process it starts is in its control groups from the first
  // (isolation/cgroup_control.h). An exec'd child joins right after the fork; a fork
  // server's child joins after its own set-up (descriptors, session, environment), which
  // is Shoal's work and must not wait on the task's CPU quota.
  std::vector<std::string> join_cgroups;
  std::optional<ProcessIdentity> identity;   // none: the parent's own
};

struct ExitInfo {
  int exit_code = 0;  // meaningful when signal == 0
  int signal = 0;     // the terminating signal, or 0
  bool success() const { return signal == 0 && exit_code == 0; }
  // "exit code 3", "killed by signal 9 (Killed)".
  std::string Describe() const;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  virtual Result<pid_t> Spawn(const SpawnOptions& options) = 0;
  // Sends sig to one process; a process that is already gone is not an error.
  virtual void Signal(pid_t pid, int sig) = 0;
  // Sends sig to a process group; a group that is already gone is not an error.
  virtual void SignalGroup(pid_t pgid, int sig) = 0;
  // Non-blocking: the exit of a child of this process, once it has ended.
  virtual std::optional<ExitInfo> TryWait(pid_t pid) = 0;
  // Blocking wait for a child of this process.
  virtual ExitInfo Wait(pid_t pid) = 0;
};

class RealProcessLauncher final : public ProcessLauncher {
 public:
  Result<pid_t> Spawn(const SpawnOptions& options) override;
  void Signal(pid_t pid, int sig) override;
  void SignalGroup(pid_t pgid, int sig) override;
  std::optional<ExitInfo> TryWait(pid_t pid) override;
  ExitInfo Wait(pid_t pid) override;
  static RealProcessLauncher& Instance();
};

// Writes "0" into each cgroup.procs file, which moves the calling process into that group;
// async-signal-safe, for a child between fork and exec. False (errno set) if one cannot be written.
bool JoinCgroups(const std::vector<std::string>& procs_files);

// The current process's environment as a map.
std::map<std::string, std::string> CurrentEnvironment();

// Children spawned from now on get `soft` as their soft limit on open files.
void KeepChildrensOpenFileLimit(uint64_t soft);

// True while a process with this pid exists (it may be a zombie).
bool ProcessExists(pid_t pid);
// True while it exists and has not exited: a zombie waiting for its parent has ended.
bool ProcessRunning(pid_t pid);

// Pids of all processes whose environment holds every one of `markers` (NAME=value),
// found by reading /proc/*/environ. Processes of other users that cannot be read are skipped.
// A process caught in the middle of an exec (its environment reads empty until the new
// program's stack is set up) is read again until it shows one, for at most 20 ms.
std::vector<pid_t> FindProcessesWithEnvironment(const std::vector<std::string>& markers);

// Sends SIGKILL to every process found by FindProcessesWithEnvironment(markers), except
// the caller, repeating until none is left or `timeout_ms` passed. Returns how many it killed.
int KillProcessesWithEnvironment(const std::vector<std::string>& markers, int timeout_ms = 2000);

// The absolute path of the running executable (/proc/self/exe).
std::string SelfExecutable();

// Runs a short helper command (tar -t, gdb) to its end and returns its stdout and
// stderr together, with how it ended. The child gets a process group of its own; past
// timeout_ms the group is killed and `timed_out` is set. Only a failure to start is an error.
struct CapturedOutput {
  std::string text;
  ExitInfo exit;
  bool timed_out = false;
};
Result<CapturedOutput> RunAndCapture(ProcessLauncher& processes, std::vector<std::string> argv, int timeout_ms);

}  // namespace shoal
