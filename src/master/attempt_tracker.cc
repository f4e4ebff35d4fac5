#include "master/attempt_tracker.h"

#include <algorithm>
#include <cmath>

#include "common/units.h"

namespace shoal {

protocol::TaskView ViewOf(const TaskStatus& task) { return task; }

AttemptTracker::AttemptTracker(const JobSpec& spec, std::string job_id, int attempt,
                               std::vector<std::vector<int>> task_gpus, const Clock& clock)
    : spec_(spec), job_id_(std::move(job_id)), attempt_(attempt), clock_(clock), started_at_ms_(clock.NowMillis()) {
  int rank = 0;
  for (const auto& role : spec.roles) {
    role_ranks_[role.name] = {rank, role.instances};
    for (int i = 0; i < role.instances; ++i, ++rank) {
      TaskStatus task;
      task.role = role.name;
      task.index = i;
      task.rank = rank;
      task.service = role.service;
      task.tolerate_failure = role.tolerate_failure;
      if (rank < static_cast<int>(task_gpus.size())) task.gpus = task_gpus[rank];
      task.last_heard_ms = started_at_ms_;
      tasks_.push_back(std::move(task));
      pending_samples_.emplace_back();
      pending_metrics_.emplace_back();
    }
  }
  unregistered_ = rank;
}

TaskStatus* AttemptTracker::FindMutable(const std::string& role, int index) {
  auto it = role_ranks_.find(role);
  if (it == role_ranks_.end() || index < 0 || index >= it->second.second) return nullptr;
  return &tasks_[static_cast<size_t>(it->second.first + index)];
}

namespace {

bool Unregistered(TaskState state) { return state == TaskState::kPending || state == TaskState::kLaunching; }

}  // namespace

void AttemptTracker::SetState(TaskStatus& task, TaskState to) {
  unregistered_ += static_cast<int>(Unregistered(to)) - static_cast<int>(Unregistered(task.state));
  task.state = to;
}

const TaskStatus* AttemptTracker::Find(const std::string& role, int index) const {
  return const_cast<AttemptTracker*>(this)->FindMutable(role, index);
}

void AttemptTracker::Move(TaskStatus& task, TaskState to, const std::string& message) {
  if (!CanMove(task.state, to)) return;
  SetState(task, to);
  if (!message.empty()) task.message = message;
  if (IsFinal(to) && task.finished_ms == 0) task.finished_ms = clock_.WallMillis();
  ++version_;
}

void AttemptTracker::Finish(AttemptState state, const std::string& message) {
  if (IsFinal(state_)) return;
  state_ = state;
  message_ = message;
  ++version_;
  for (auto& task : tasks_) {
    if (task.state == TaskState::kPending) Move(task, TaskState::kKilled, "not started: the attempt ended first");
    if (task.awaiting_verdict && state != AttemptState::kSucceeded) {
      task.awaiting_verdict = false;
      Move(task, TaskState::kKilled, "stopped: " + message);
    }
  }
}

void AttemptTracker::Launched(int rank, const std::string& container_id) {
  TaskStatus& task = tasks_.at(rank);
  task.container_id = container_id;
  // A fast container may have registered before its launch was recorded.
  if (task.state == TaskState::kPending) {
    task.last_heard_ms = clock_.NowMillis();
    Move(task, TaskState::kLaunching, "");
  }
}

void AttemptTracker::LaunchFailed(int rank, const std::string& reason) {
  TaskStatus& task = tasks_.at(rank);
  task.container_ended = true;
  Move(task, TaskState::kFailed, "could not start the container: " + reason);
  Evaluate();
}

Status AttemptTracker::Register(const std::string& role, int index, const std::string& host, std::vector<int> ports,
                                std::optional<std::vector<int>> gpus) {
  TaskStatus* task = FindMutable(role, index);
  if (!task) return NotFound("this attempt has no task " + role + "[" + std::to_string(index) + "]");
  if (IsFinal(state_) || IsFinal(task->state)) return Aborted("the attempt is ending; the container must exit");
  if (ports.empty()) return InvalidArgument("a task must reserve at least one port");
  task->host = host;
  task->ports = std::move(ports);
  if (gpus) task->gpus = std::move(*gpus);
  task->last_heard_ms = clock_.NowMillis();
  ++registrations_;
  if (task->state == TaskState::kPending) Move(*task, TaskState::kLaunching, "");
  if (task->state == TaskState::kLaunching) Move(*task, TaskState::kRegistered, "");
  if (state_ == AttemptState::kStarting && AllRegistered()) {
    state_ = AttemptState::kRunning;
    ++version_;
  }
  return Status::Ok();
}

Status AttemptTracker::Started(const std::string& role, int index, int pid, const std::string& board_url) {
  TaskStatus* task = FindMutable(role, index);
  if (!task) return NotFound("this attempt has no task " + role + "[" + std::to_string(index) + "]");
  task->pid = pid;
  task->board_url = board_url;
  task->started_ms = clock_.WallMillis();
  task->last_heard_ms = clock_.NowMillis();
  task->last_active_ms = task->last_heard_ms;
  Move(*task, TaskState::kRunning, "");
  return Status::Ok();
}

namespace {

// Appends the points to a bounded buffer, dropping the oldest beyond `cap`.
template <typename T>
void AppendBounded(std::vector<T>& buffer, const std::vector<T>& points, size_t cap) {
  buffer.insert(buffer.end(), points.begin(), points.end());
  if (buffer.size() > cap) buffer.erase(buffer.begin(), buffer.begin() + static_cast<long>(buffer.size() - cap));
}

}  // namespace

Result<bool> AttemptTracker::Heartbeat(const std::string& role, int index, const protocol::HeartbeatRequest& data) {
  TaskStatus* task = FindMutable(role, index);
  if (!task) return NotFound("this attempt has no task " + role + "[" + std::to_string(index) + "]");
  task->last_heard_ms = clock_.NowMillis();
  double progress = data.progress;
  bool active = false;
  if (data.rtt_ms >= 0) task->heartbeat_rtt_ms = data.rtt_ms;
  if (data.sample) {
    task->cpu = data.sample->cpu;
    active = task->cpu >= kIdleCpuPercent;
    task->rss = data.sample->rss;
    task->rss_peak = std::max({task->rss_peak, task->rss, data.sample->rss_peak.value_or(0)});
    AppendBounded(pending_samples_[task->rank], {*data.sample}, kMaxPending);
  }
  if (data.uploading) active = true;
  if (!data.metrics.empty()) {
    AppendBounded(pending_metrics_[task->rank], data.metrics, kMaxPending);
    active = true;
  }
  if (std::isfinite(progress)) {
    progress = std::clamp(progress, 0.0, 1.0);
    if (progress != task->progress) {
      task->progress = progress;
      active = true;
      ++version_;
    }
  }
  if (active) {
    task->last_active_ms = task->last_heard_ms;
    if (task->hung) {
      task->hung = false;
      task->hung_since_ms = 0;
      ++version_;
    }
  }
  return !IsFinal(state_) && !task->stop_requested && !IsFinal(task->state);
}

Status AttemptTracker::Exited(const std::string& role, int index, const ExitInfo& exit, const std::string& message,
                              bool terminated) {
  TaskStatus* task = FindMutable(role, index);
  if (!task) return NotFound("this attempt has no task " + role + "[" + std::to_string(index) + "]");
  if (IsFinal(task->state)) return Status::Ok();
  if (task->state == TaskState::kLaunching || task->state == TaskState::kRegistered) {
    // The program ran, even if its start report was lost.
    SetState(*task, TaskState::kRunning);
    if (task->started_ms == 0) task->started_ms = clock_.WallMillis();
  }
  task->exit_code = exit.exit_code;
  task->signal = exit.signal;
  if (task->stop_requested || (preempt_ && !task->awaiting_verdict)) {
    std::string why = preempt_ ? "preempted: " + preempt_->reason : "stopped by Shoal";
    Move(*task, TaskState::kKilled, task->message.empty() ? why : task->message);
  } else if (terminated) {
    Move(*task, TaskState::kFailed,
         "stopped from outside Shoal: its container got SIGTERM (on Slurm: preemption or a scancel) and the program "
         "ended with " + exit.Describe() + (message.empty() ? "" : " (" + message + ")"));
  } else if (exit.success() && success_held_ && !IsFinal(state_)) {
    task->awaiting_verdict = true;  // mpirun decides (ReleaseSuccess, FailTask)
    task->finished_ms = clock_.WallMillis();
    ++version_;
  } else if (exit.success()) {
    task->progress = 1.0;
    Move(*task, TaskState::kSucceeded, message);
  } else {
    Move(*task, TaskState::kFailed, message.empty() ? exit.Describe() : message);
  }
  Evaluate();
  return Status::Ok();
}

void AttemptTracker::ContainerEnded(const std::string& container_id, const ExitInfo& exit) {
  for (auto& task : tasks_) {
    if (task.container_id != container_id) continue;
    task.container_ended = true;
    ++version_;
    if (!IsFinal(task.state) && !task.awaiting_verdict) {
      if (task.stop_requested) {
        Move(task, TaskState::kKilled, task.message.empty() ? "stopped by Shoal" : task.message);
      } else {
        Move(task, TaskState::kFailed, "the container ended before its task did (" + exit.Describe() + ")");
      }
    }
  }
  Evaluate();
}

void AttemptTracker::ReleaseSuccess() {
  success_held_ = false;
  ++version_;
  for (auto& task : tasks_) {
    if (!task.awaiting_verdict) continue;
    task.awaiting_verdict = false;
    task.progress = 1.0;
    Move(task, TaskState::kSucceeded, "");
  }
  Evaluate();
}

namespace {

// "task worker[1] failed: exit code 3"; a reason that already names the task ("worker[1]
// used more than its 64M of memory ...") is the whole sentence.
std::string EndingSentence(const std::string& task, const std::string& verb, const std::string& reason) {
  if (reason.starts_with(task + " ")) return reason;
  return "task " + task + " " + verb + ": " + reason;
}

}  // namespace

void AttemptTracker::FailTask(int rank, const ExitInfo& exit, const std::string& reason) {
  if (rank < 0 || rank >= static_cast<int>(tasks_.size())) return Fail(reason);
  TaskStatus& task = tasks_[rank];
  task.awaiting_verdict = false;
  task.exit_code = exit.exit_code;
  task.signal = exit.signal;
  if (task.state == TaskState::kLaunching || task.state == TaskState::kRegistered) SetState(task, TaskState::kRunning);
  Move(task, TaskState::kFailed, reason);
  Finish(AttemptState::kFailed, EndingSentence(task.Name(), "failed", reason));
  Evaluate();
}

void AttemptTracker::Kill(const std::string& reason) {
  preempt_stop_at_ms_ = 0;  // no more waiting for the programs' checkpoints
  Finish(AttemptState::kKilled, reason);
  Evaluate();
}

void AttemptTracker::Preempt(const protocol::PreemptNotice& notice) {
  if (IsFinal(state_)) return;
  preempt_ = notice;
  int64_t now = clock_.NowMillis();
  preempt_grace_ends_ms_ = now + notice.grace_ms;
  preempt_stop_at_ms_ = preempt_grace_ends_ms_ + protocol::kPreemptUploadAllowanceMs;
  Finish(AttemptState::kKilled, "preempted: " + notice.reason);
  Evaluate();
}

std::optional<protocol::PreemptNotice> AttemptTracker::PreemptNoticeNow() const {
  if (!preempt_) return std::nullopt;
  protocol::PreemptNotice notice = *preempt_;
  notice.grace_ms = std::max<int64_t>(0, preempt_grace_ends_ms_ - clock_.NowMillis());
  return notice;
}

void AttemptTracker::Fail(const std::string& reason) {
  Finish(AttemptState::kFailed, reason);
  Evaluate();
}

void AttemptTracker::Tick() {
  if (IsFinal(state_)) return;
  int64_t now = clock_.NowMillis();
  for (auto& task : tasks_) {
    if (IsFinal(task.state) || task.stop_requested || task.state == TaskState::kPending || task.awaiting_verdict) continue;
    // Until the program starts, a container waits for the others: the registration
    // timeout applies; from then on, heartbeats.
    bool starting = task.state == TaskState::kLaunching || task.state == TaskState::kRegistered;
    int64_t limit = starting ? spec_.timeouts.register_ms : spec_.timeouts.heartbeat_ms;
    if (task.state == TaskState::kRunning) CheckHang(task, now);
    if (now - task.last_heard_ms > limit) {
      Move(task, TaskState::kLost,
           task.state == TaskState::kLaunching
               ? "did not register within timeouts.register (" + FormatDuration(limit) + ")"
           : task.state == TaskState::kRegistered
               ? "registered, but its program did not start within timeouts.register (" + FormatDuration(limit) +
                     "): its inputs or archives took longer to fetch, or it waited on a task that never registered"
               : "no heartbeat for " + FormatDuration(now - task.last_heard_ms) + " (timeouts.heartbeat is " +
                     FormatDuration(limit) + ")");
    }
  }
  if (spec_.timeouts.job_ms > 0 && now - started_at_ms_ > spec_.timeouts.job_ms) {
    Finish(AttemptState::kFailed, "the attempt ran longer than timeouts.job (" + FormatDuration(spec_.timeouts.job_ms) + ")");
  }
  Evaluate();
}

void AttemptTracker::CheckHang(TaskStatus& task, int64_t now) {
  const int64_t limit = spec_.timeouts.hang_ms;
  if (limit <= 0 || task.hung || now - task.last_active_ms <= limit) return;
  task.hung = true;
  task.hung_since_ms = clock_.WallMillis();
  ++version_;
  if (spec_.timeouts.hang_fails) {
    Move(task, TaskState::kFailed,
         "hung: no progress, metric or CPU use for " + FormatDuration(now - task.last_active_ms) +
             " (timeouts.hang is " + FormatDuration(limit) + ", on_hang: fail)");
  }
}

void AttemptTracker::Evaluate() {
  if (!IsFinal(state_)) {
    for (const auto& task : tasks_) {
      bool failed = task.state == TaskState::kFailed || task.state == TaskState::kLost;
      if (failed && !task.tolerate_failure) {
        Finish(AttemptState::kFailed,
               EndingSentence(task.Name(), task.state == TaskState::kLost ? "was lost" : "failed", task.message));
        break;
      }
    }
  }
  if (!IsFinal(state_)) {
    bool has_workers = false, workers_done = true, all_done = true;
    for (const auto& task : tasks_) {
      all_done = all_done && IsFinal(task.state);
      if (task.service) continue;
      has_workers = true;
      workers_done = workers_done && IsFinal(task.state);
    }
    if (((has_workers && workers_done) || all_done) && !success_held_) {
      Finish(AttemptState::kSucceeded, "every task finished");
      for (auto& task : tasks_) {
        if (task.service && !IsFinal(task.state)) task.message = "stopped after every worker finished";
      }
    }
  }
}

bool AttemptTracker::AllRegistered() const { return unregistered_ == 0; }

ClusterView AttemptTracker::Cluster(const std::string& am_addr) const {
  ClusterView view;
  view.job_id = job_id_;
  view.attempt = attempt_;
  view.am_addr = am_addr;
  for (const auto& task : tasks_) {
    view.tasks.push_back({task.role, task.index, task.rank, task.host, task.ports, task.gpus,
                          spec_.FindRole(task.role)->nproc_per_node});
  }
  return view;
}

std::vector<int> AttemptTracker::TasksToStop() {
  std::vector<int> ranks;
  if (!IsFinal(state_)) return ranks;
  // Preempted: a running program has its grace and its checkpoint's upload first.
  bool programs_have_their_grace = preempt_ && clock_.NowMillis() < preempt_stop_at_ms_;
  for (auto& task : tasks_) {
    if (task.stop_requested || task.container_ended || task.container_id.empty()) continue;
    // A task whose program has exited needs no stop; a lost or hung one may still be running.
    if (IsFinal(task.state) && task.state != TaskState::kLost && !task.hung) continue;
    if (programs_have_their_grace && task.state == TaskState::kRunning && !task.hung) continue;
    task.stop_requested = true;
    ranks.push_back(task.rank);
  }
  return ranks;
}

bool AttemptTracker::Done() const {
  if (!IsFinal(state_)) return false;
  return std::all_of(tasks_.begin(), tasks_.end(),
                     [](const TaskStatus& t) { return t.container_ended || t.container_id.empty(); });
}

bool AttemptTracker::HasSeries() const {
  for (size_t rank = 0; rank < tasks_.size(); ++rank) {
    if (!pending_samples_[rank].empty() || !pending_metrics_[rank].empty()) return true;
  }
  return false;
}

std::vector<TaskSeries> AttemptTracker::TakeSeries() {
  std::vector<TaskSeries> series;
  for (const auto& task : tasks_) {
    auto& samples = pending_samples_[task.rank];
    auto& metrics = pending_metrics_[task.rank];
    if (samples.empty() && metrics.empty()) continue;
    series.push_back({task.role, task.index, std::move(samples), std::move(metrics)});
    samples.clear();
    metrics.clear();
  }
  return series;
}

protocol::AttemptReport AttemptTracker::Snapshot() const {
  protocol::AttemptReport report;
  for (const auto& task : tasks_) report.tasks.push_back(ViewOf(task));
  report.state = state_;
  report.message = message_;
  report.version = version_;
  for (const auto& task : tasks_) {
    // The board is up while its task runs.
    if (!task.board_url.empty() && task.state == TaskState::kRunning) report.board_url = task.board_url;
  }
  return report;
}

}  // namespace shoal
