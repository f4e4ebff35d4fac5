// AttemptTracker: the application master's model of one job attempt. It holds every
// task's state and decides the attempt's fate; it does no I/O, so every rule (failure
// policy, heartbeat and registration timeouts, stopping services) is unit-tested with a
// FakeClock.
//
// Contract:
//  - Events come in (launched, registered, started, heartbeat, exited, container ended,
//    kill, tick); each bumps version() when it changes anything.
//  - Failure policy: a task that fails or is lost fails the attempt unless its role
//    tolerates failures. When every non-service task has finished, the attempt succeeds
//    and service tasks (ps) are stopped. Tasks stopped by Shoal end KILLED.
//  - TasksToStop() lists tasks whose containers must now be stopped; each is listed once.
//  - Preempt(notice): the server preempts the attempt, which ends KILLED with the reason.
//    Running tasks are not stopped through their containers at once: each agent learns it
//    from its next heartbeat reply (PreemptNoticeNow: the grace left), tells its program
//    (SIGTERM, the preemption file), and after the grace kills it and uploads its last
//    checkpoint; only a container still there protocol::kPreemptUploadAllowanceMs after the grace is
//    stopped. A Kill during the grace stops every container at once.
//  - Done() is true once the attempt is final and no container is left.
//  - Hangs: a running task whose heartbeats show no progress change, no metric and CPU
//    use under kIdleCpuPercent for timeouts.hang is flagged hung (and fails, with
//    timeouts.on_hang: fail); any activity clears the flag. An agent uploading the task's
//    outputs (after the program's exit) is active: an upload never looks like a hang.
//  - Heartbeats' resource samples and metric points wait in bounded per-task buffers
//    until TakeSeries() hands them to the AM's report.
// Thread-safety: not thread-safe; the AM guards it with its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/process.h"
#include "common/status.h"
#include "master/task_state.h"
#include "protocol/attempt_messages.h"
#include "protocol/task_messages.h"
#include "runtime/cluster_view.h"
#include "spec/job_spec.h"

namespace shoal {

// A task as the AM tracks it: what it reports (protocol::TaskView: role, index, rank,
// state, host, ports, GPUs, pid, progress, cpu, rss, exit, message, times, hung ...) and
// what only the AM needs.
struct TaskStatus : protocol::TaskView {
  bool tolerate_failure = false;
  std::string board_url;        // the board running beside this task, if any
  int64_t last_heard_ms = 0;    // monotonic, for heartbeat timeouts
  int64_t last_active_ms = 0;   // monotonic: the last progress, metric or CPU use seen
  bool stop_requested = false;
  bool container_ended = false;
  // An MPI task whose program (orted) exited 0 while the attempt's success is held: it
  // stays RUNNING until mpirun's verdict (ReleaseSuccess or FailTask) decides it.
  bool awaiting_verdict = false;
};

// The task as the AM reports it to the server.
protocol::TaskView ViewOf(const TaskStatus& task);

class AttemptTracker {
 public:
  AttemptTracker(const JobSpec& spec, std::string job_id, int attempt, std::vector<std::vector<int>> task_gpus,
                 const Clock& clock);

  // Events.
  void Launched(int rank, const std::string& container_id);
  void LaunchFailed(int rank, const std::string& reason);
  // `gpus`, when given, replaces the GPUs the server assigned (a cluster that assigns its own).
  Status Register(const std::string& role, int index, const std::string& host, std::vector<int> ports,
                  std::optional<std::vector<int>> gpus = std::nullopt);
  Status Started(const std::string& role, int index, int pid, const std::string& board_url = "");
  // Returns whether the task should keep running (false: it is being stopped).
  Result<bool> Heartbeat(const std::string& role, int index, const protocol::HeartbeatRequest& beat);
  // `terminated`: the task's agent was sent SIGTERM before its program ended. When the
  // AM did not stop the task itself, something outside Shoal did (Slurm's preemption, a
  // scancel): the task FAILED, whatever its program's exit code, saying so.
  Status Exited(const std::string& role, int index, const ExitInfo& exit, const std::string& message,
                bool terminated = false);
  void ContainerEnded(const std::string& container_id, const ExitInfo& exit);
  void Kill(const std::string& reason);
  void Preempt(const protocol::PreemptNotice& notice);
  // While the attempt is being preempted: the notice with the grace left (never below 0).
  std::optional<protocol::PreemptNotice> PreemptNoticeNow() const;
  // Fails the attempt for a reason outside any task (mpirun failed, say).
  void Fail(const std::string& reason);
  // An MPI attempt succeeds only once mpirun exited 0: its orteds end cleanly even when
  // a rank failed. HoldSuccess keeps the attempt, and every task whose program exits 0,
  // from succeeding until ReleaseSuccess; FailTask (mpirun named the rank that failed)
  // fails that task and the attempt, and the tasks that exited meanwhile end KILLED.
  void HoldSuccess() { success_held_ = true; }
  void ReleaseSuccess();
  void FailTask(int rank, const ExitInfo& exit, const std::string& reason);
  void Tick();

  // Queries.
  bool AllRegistered() const;
  ClusterView Cluster(const std::string& am_addr) const;
  std::vector<int> TasksToStop();
  bool Done() const;
  AttemptState state() const { return state_; }
  const std::string& message() const { return message_; }
  const std::vector<TaskStatus>& tasks() const { return tasks_; }
  int64_t version() const { return version_; }
  // O(1): tasks are stored by rank, each role's ranks one run.
  const TaskStatus* Find(const std::string& role, int index) const;
  // How many registrations were taken: the cluster's addresses change only with it.
  int64_t registrations() const { return registrations_; }
  // The attempt's state, message, tasks, version and board URL, for the AM's report.
  protocol::AttemptReport Snapshot() const;
  // The samples and metric points received since the last call, per task (each task
  // keeps at most kMaxPending of each).
  std::vector<TaskSeries> TakeSeries();
  bool HasSeries() const;
  static constexpr size_t kMaxPending = 20'000;
  static constexpr double kIdleCpuPercent = 2.0;

 private:
  TaskStatus* FindMutable(const std::string& role, int index);
  // Every change of a task's state goes through here (AllRegistered counts them).
  void SetState(TaskStatus& task, TaskState to);
  void Move(TaskStatus& task, TaskState to, const std::string& message);
  void Finish(AttemptState state, const std::string& message);
  void Evaluate();
  void CheckHang(TaskStatus& task, int64_t now);

  JobSpec spec_;
  std::string job_id_;
  int attempt_;
  const Clock& clock_;
  int64_t started_at_ms_;
  std::vector<TaskStatus> tasks_;
  std::map<std::string, std::pair<int, int>> role_ranks_;  // role -> its first rank, its instances
  int unregistered_ = 0;                                   // tasks PENDING or LAUNCHING
  int64_t registrations_ = 0;
  std::vector<std::vector<ResourceSample>> pending_samples_;  // per rank
  std::vector<std::vector<MetricPoint>> pending_metrics_;     // per rank
  AttemptState state_ = AttemptState::kStarting;
  bool success_held_ = false;
  std::optional<protocol::PreemptNotice> preempt_;
  int64_t preempt_grace_ends_ms_ = 0;  // monotonic
  int64_t preempt_stop_at_ms_ = 0;     // monotonic: containers still there are stopped from then
  std::string message_;
  int64_t version_ = 1;
};

}  // namespace shoal
