// ForkServer: starts processes that run one of this binary's own commands (the AM's
// `shoal container` agents) without an exec. Exec'ing the `shoal` binary costs about
// 13 ms of dynamic loading (41 shared libraries) where a fork costs well under one, and
// an AM starts one agent per task.
//
// Start() forks a helper from the calling process while it is still single-threaded;
// the helper forks each served process from that clean image and runs `entry` there, as
// `main` would have after an exec. The helper forks twice and lets the middle process end,
// while the caller is a child subreaper, so each served process becomes the caller's own
// child: TryWait, Wait, pidfds and signals work on it exactly as on a RealProcessLauncher
// child.
//
// Contract:
//  - Start() must run before the process starts any thread (a fork of a threaded process
//    may hold another thread's locks); it is the caller's first act.
//  - Spawn serves `options` when argv is [this executable, `command`, ...]; anything else
//    is exec'd by RealProcessLauncher. A served process gets what SpawnOptions promise:
//    exactly `env` as its environment, `cwd`, the three descriptors and no other, a session or
//    group of its own, the parent death signal (tied to the caller's main thread). Spawn
//    returns once the process is set up, or why it could not be (a missing working
//    directory is NotFound, as for an exec).
//  - /proc/PID/cmdline and /proc/PID/environ (what `ps` and the leak sweeps read) show
//    the served process's own arguments and environment, written over the caller's
//    exec-time blocks, which a fork would otherwise show with the caller's secrets. They
//    are only as large as the caller's: what does not fit whole is left out there (the
//    last arguments; the environment after Shoal's SHOAL_* markers), never from the
//    process itself.
//    The helper itself shows as `shoal fork-server`.
//  - When the helper is gone (it died, or the caller could not start it), Spawn execs.
//  - The helper ends when the caller does (its socket closes; a parent death signal too).
// Thread-safety: Spawn may be called from any thread (one request at a time); the rest is
// RealProcessLauncher's.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/process.h"

namespace shoal {

class ForkServer final : public ProcessLauncher {
 public:
  // Runs a served command: `args` from the command's name on (as main passes argc - 1,
  // argv + 1); its return value is the process's exit code.
  using Entry = std::function<int(std::vector<std::string> args)>;

  static Result<std::unique_ptr<ForkServer>> Start(const std::string& command, Entry entry);
  ~ForkServer() override;

  Result<pid_t> Spawn(const SpawnOptions& options) override;
  void Signal(pid_t pid, int sig) override { RealProcessLauncher::Instance().Signal(pid, sig); }
  void SignalGroup(pid_t pgid, int sig) override { RealProcessLauncher::Instance().SignalGroup(pgid, sig); }
  std::optional<ExitInfo> TryWait(pid_t pid) override { return RealProcessLauncher::Instance().TryWait(pid); }
  ExitInfo Wait(pid_t pid) override { return RealProcessLauncher::Instance().Wait(pid); }

  // Whether Spawn would serve `argv` through the helper.
  bool Serves(const std::vector<std::string>& argv) const;

 private:
  ForkServer(std::string command, std::string executable, int socket, pid_t helper)
      : command_(std::move(command)), executable_(std::move(executable)), socket_(socket), helper_(helper) {}
  Result<pid_t> Request(const SpawnOptions& options);

  const std::string command_;
  const std::string executable_;
  std::mutex mutex_;
  int socket_;   // GUARDED_BY(mutex_); -1 once the helper is gone
  pid_t helper_;
};

}  // namespace shoal
