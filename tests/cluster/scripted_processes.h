// ScriptedProcesses: a ProcessLauncher whose "programs" are scripts run on threads of the
// test process, for the mini cluster. A task's command is read as a script of steps:
//
//   print:TEXT   write TEXT and a newline to stdout
//   sleep:MS     wait MS milliseconds on the cluster's clock (a stop or kill cuts it short)
//   exit:CODE    end with that exit code (the default end is exit:0)
//   hang         wait until stopped or killed
//   only-attempt:N   end here (exit 0) unless this is attempt N (SHOAL_ATTEMPT)
//
// e.g. "print:started sleep:50 exit:3". SIGTERM and SIGKILL end a script at once, as
// killed by that signal. Pids are far above any real pid, so nothing real is signalled.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "common/process.h"

namespace shoal::testing {

class ScriptedProcesses final : public ProcessLauncher {
 public:
  explicit ScriptedProcesses(const Clock& clock) : clock_(clock) {}
  ~ScriptedProcesses() override;
  Result<pid_t> Spawn(const SpawnOptions& options) override;
  void Signal(pid_t pid, int sig) override;
  void SignalGroup(pid_t pgid, int sig) override { Signal(pgid, sig); }
  std::optional<ExitInfo> TryWait(pid_t pid) override;
  ExitInfo Wait(pid_t pid) override;
  // How many scripts have not ended yet.
  int Running();

 private:
  struct Script {
    std::optional<ExitInfo> exit;
    int signal = 0;  // set by Signal: the script ends with it
    std::thread thread;
  };
  void Run(pid_t pid, std::string script, std::string attempt, int out_fd);

  const Clock& clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<pid_t, std::unique_ptr<Script>> scripts_;  // GUARDED_BY(mutex_)
  pid_t next_pid_ = 4'100'000;                         // GUARDED_BY(mutex_)
};

}  // namespace shoal::testing
