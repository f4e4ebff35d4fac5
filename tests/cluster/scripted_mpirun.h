// ScriptedMpirun: Open MPI's mpirun as the mini cluster's AMs meet it (a ProcessLauncher
// that only ever runs mpirun). It reads the hostfile the AM wrote and, for each host,
// runs the real `shoal mpi-agent` exchange (RunMpiAgent) on a thread of its own, handing
// the AM that host's scripted orted; the task's container then runs it as a scripted
// program (scripted_processes.h). After `run_millis` of the cluster's time mpirun prints
// its script's output (into mpirun.log, as the real one does) and ends with its exit code,
// unless it was signalled first.
//
// Contract: Script() applies to the mpiruns started after it. Pids are far above any real
// pid. The destructor joins every thread: destroy it after the AMs that used it.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/process.h"

namespace shoal::testing {

struct MpirunScript {
  std::map<int, std::string> orteds;  // host rank -> its orted's script; "hang" for the others
  int64_t run_millis = 1'000;         // how long mpirun runs once it has launched every orted
  std::string output;                 // what it prints then
  int exit_code = 0;                  // and how it ends
};

class ScriptedMpirun final : public ProcessLauncher {
 public:
  explicit ScriptedMpirun(const Clock& clock) : clock_(clock) {}
  ~ScriptedMpirun() override;
  void Script(MpirunScript script);

  Result<pid_t> Spawn(const SpawnOptions& options) override;
  void Signal(pid_t pid, int sig) override;
  void SignalGroup(pid_t pgid, int sig) override { Signal(pgid, sig); }
  std::optional<ExitInfo> TryWait(pid_t pid) override;
  ExitInfo Wait(pid_t pid) override;

 private:
  struct Run {
    int signal = 0;                 // GUARDED_BY(mutex_)
    std::optional<ExitInfo> exit;   // GUARDED_BY(mutex_)
    std::thread thread;
    std::vector<std::thread> agents;  // one `shoal mpi-agent` per host
  };
  void Play(Run& run, MpirunScript script, std::vector<std::string> hosts, std::string am, std::string token, int out_fd);

  const Clock& clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  MpirunScript script_;                      // GUARDED_BY(mutex_)
  std::map<pid_t, std::unique_ptr<Run>> runs_;  // GUARDED_BY(mutex_)
  pid_t next_pid_ = 1 << 28;
};

}  // namespace shoal::testing
