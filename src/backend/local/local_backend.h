// The local backend: job attempts and their tasks are processes on this machine.
//
// Contract:
//  - Capacity is the machine's (cores, MemTotal, GPUs listed by nvidia-smi) unless the
//    server's configuration sets it (tests declare fake GPUs this way).
//  - Each AM runs as `shoal am ...` in a session of its own, with SHOAL_JOB_ID and
//    SHOAL_ATTEMPT in its environment; every process of the attempt inherits them.
//  - KillAttempt sends the AM SIGTERM (it stops its containers and reports), waits up to
//    the grace period, then kills the AM's group and sweeps /proc for any process still
//    carrying the attempt's variables (SHOAL_ATTEMPT_DIR among them, so another server's
//    job of the same id is never touched), so nothing of the attempt survives.
//  - An AM left by an earlier server process is watched through its pid.
//  - With a TaskIsolation that holds a group (isolation/task_isolation.h), each attempt
//    gets a cgroup of its own: its AM runs in `am` below it and passes the attempt's group
//    to its LocalContainerLauncher (`shoal am --cgroup`), which puts each task's agent,
//    and so everything the task starts, in a group of the task's own, limited to the
//    task's memory (agent included, no swap beyond it), CPUs (a CFS quota) and
//    kTaskPidsLimit processes. KillAttempt and CleanUpAttempt end every process in the
//    attempt's group, daemons that left their session and `env -i` included, then
//    remove the groups. Without one, tasks run unlimited and TaskLimits says why.
//  - Identity: the job's folder and the attempt's are mode 0700, the account's the
//    attempt runs as. With a `run_as` account other than the server's own (a root
//    server), the AM starts as that account (its HOME, USER and LOGNAME too) and so do the
//    agents and programs it starts; the attempt's cgroup is delegated to it
//    (DelegateGroup) with the whole attempt's limits on it: its tasks' added up, and
//    kAmMemoryAllowance and one CPU for the AM and mpirun, so the account, which sets
//    its own tasks' limits, can never take more than the attempt asked for.
// Thread-safety: StartAttempt, PollAttempt and KillAttempt may be called from different
// threads; the set of children is guarded by a mutex.
#pragma once

#include <memory>
#include <mutex>
#include <set>

#include "backend/cluster_backend.h"
#include "common/child_watcher.h"
#include "isolation/task_isolation.h"
#include "isolation/unix_account.h"

namespace shoal {

// What an attempt's AM (with mpirun, for MPI jobs) may use beside its tasks, when the
// attempt runs as another account and its whole is limited.
inline constexpr int64_t kAmMemoryAllowance = 512LL << 20;

// The machine's own capacity: cores, memory and nvidia-smi's GPUs.
ClusterCapacity DetectLocalCapacity();

class LocalBackend final : public ClusterBackend {
 public:
  LocalBackend(ClusterCapacity capacity, std::string shoal_executable, ProcessLauncher& processes,
               TaskIsolation isolation = {}, int kill_grace_ms = 5000);

  std::string name() const override { return "local"; }
  ClusterCapacity Capacity() const override { return capacity_; }
  Result<AttemptHandle> StartAttempt(const AttemptLaunch& launch) override;
  std::optional<ExitInfo> PollAttempt(const AttemptHandle& handle) override;
  void KillAttempt(const AttemptLaunch& launch, const AttemptHandle& handle) override;
  bool AttemptAlive(const AttemptHandle& handle) const override;
  void CleanUpAttempt(const AttemptLaunch& launch) override;
  void SetChangeCallback(std::function<void()> changed) override;
  TaskLimitsNote TaskLimits() const override { return {isolation_.enforced(), isolation_.Describe()}; }
  std::vector<ClusterNode> Nodes() override;  // this machine, "up"; its allocation is admission's

 private:
  // The attempt's cgroup, made (and handed to `account` when given), or why not.
  Result<CgroupGroup> MakeAttemptGroup(const AttemptLaunch& launch, const UnixAccount* account);
  ClusterCapacity capacity_;
  TaskIsolation isolation_;
  UnixAccount own_account_;  // the server's
  std::unique_ptr<ChildWatcher> watcher_;  // wakes the scheduler when an AM exits
  std::string executable_;
  ProcessLauncher& processes_;
  int kill_grace_ms_;
  std::mutex mutex_;
  std::set<pid_t> children_;  // AMs this process started and has not reaped
};

// Starts containers as processes of the AM.
class LocalContainerLauncher final : public ContainerLauncher {
 public:
  // attempt_group: the attempt's cgroup (empty: tasks are not confined).
  explicit LocalContainerLauncher(ProcessLauncher& processes, CgroupGroup attempt_group = {})
      : processes_(processes), attempt_group_(std::move(attempt_group)) {}
  Result<std::string> Launch(const ContainerLaunch& launch) override;
  void Stop(const std::string& container_id, int grace_ms) override;
  void Kill(const std::string& container_id) override;
  std::vector<std::pair<std::string, ExitInfo>> Poll() override;
  std::string Host() const override { return "127.0.0.1"; }
  void SetChangeCallback(std::function<void()> changed) override;

 private:
  std::unique_ptr<ChildWatcher> watcher_;  // wakes the AM's loop when an agent exits
  struct Running {
    pid_t pid = 0;
    int64_t kill_at_ms = 0;  // when a stop escalates to SIGKILL; 0: not stopping
    CgroupGroup group;       // the task's cgroup, if confined
  };
  void KillContainer(const Running& container);
  ProcessLauncher& processes_;
  CgroupGroup attempt_group_;
  std::map<std::string, Running> running_;
};

}  // namespace shoal
